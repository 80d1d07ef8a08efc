"""A real HTTP/1.1 server on loopback for faithful fakes of model backends.

Fakes answer real sockets, so clients are tested with their real transport:
timeouts, closed connections (a cancelled stream is a disconnect the fake sees),
status codes and headers. A route handler gets a `FakeRequest` and returns a
`FakeResponse` whose body is bytes or an iterable of bytes and pauses (floats)::

    def chat(request):
        yield_events = [b'data: {"choices":[...]}\\n\\n', 0.05, b"data: [DONE]\\n\\n"]
        return FakeResponse(200, body=yield_events, content_type="text/event-stream")

    with FakeServer({("POST", "/v1/chat/completions"): chat}) as server:
        provider = MyProvider(server.url)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeRequest", "FakeResponse", "FakeServer", "sse", "sse_json"]


@dataclass(frozen=True)
class FakeRequest:
    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass(frozen=True)
class FakeResponse:
    status: int = 200
    #: Bytes, or an iterable of bytes (each written and flushed) and floats (pauses).
    body: bytes | Iterable[bytes | float] = b""
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, payload: Any, **headers: str) -> FakeResponse:
        return cls(status, json.dumps(payload).encode(), headers=headers)


def sse(data: str, sep: str = "\n") -> bytes:
    """One SSE event (``sep`` is ``"\\n"`` or ``"\\r\\n"``, as servers differ)."""
    return f"data: {data}{sep}{sep}".encode()


def sse_json(payload: Any, sep: str = "\n") -> bytes:
    return sse(json.dumps(payload), sep)


Handler = Callable[[FakeRequest], FakeResponse]


class FakeServer:
    """Routes ``(method, path)`` to handlers on ``127.0.0.1:<free port>``.

    ``requests`` lists every request received; ``disconnects`` counts streamed
    responses the client abandoned (what a cancelled generation looks like)."""

    def __init__(self, routes: Mapping[tuple[str, str], Handler] | None = None) -> None:
        self.routes: dict[tuple[str, str], Handler] = dict(routes or {})
        self.requests: list[FakeRequest] = []
        self.disconnects = 0
        self.completed_streams = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first (use `with`)"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def route(self, method: str, path: str) -> Callable[[Handler], Handler]:
        def add(handler: Handler) -> Handler:
            self.routes[(method, path)] = handler
            return handler
        return add

    def __enter__(self) -> FakeServer:
        fake = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _serve(self) -> None:
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                request = FakeRequest(self.command, path, query,
                                      {k.lower(): v for k, v in self.headers.items()},
                                      self.rfile.read(length) if length else b"")
                with fake._lock:
                    fake.requests.append(request)
                handler = fake.routes.get((self.command, path))
                response = (handler(request) if handler is not None else
                            FakeResponse(404, b"Not Found", content_type="text/plain"))
                self._send(response)

            def _send(self, response: FakeResponse) -> None:
                streamed = not isinstance(response.body, bytes)
                self.send_response(response.status)
                self.send_header("Content-Type", response.content_type)
                for name, value in response.headers.items():
                    self.send_header(name, value)
                if streamed:  # the body ends when the connection closes
                    self.send_header("Connection", "close")
                    self.close_connection = True
                else:
                    assert isinstance(response.body, bytes)
                    self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                if not streamed:
                    assert isinstance(response.body, bytes)
                    self.wfile.write(response.body)
                    return
                try:
                    for part in response.body:
                        if isinstance(part, float | int):
                            time.sleep(part)
                            continue
                        self.wfile.write(part)
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    with fake._lock:
                        fake.disconnects += 1
                    return
                with fake._lock:
                    fake.completed_streams += 1

            do_GET = do_POST = do_DELETE = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        # shutdown() waits for the next poll; the default 0.5 s cost every test that much
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_for_disconnect(self, timeout: float = 5.0) -> bool:
        """Block until a streamed response was abandoned by its client."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.disconnects:
                return True
            time.sleep(0.01)
        return False
