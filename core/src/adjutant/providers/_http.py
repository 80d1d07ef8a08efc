"""What every HTTP provider shares: a lazily made client, retries that honour
``Retry-After``, and failures turned into `ProviderError` with something to do."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from adjutant_hookspecs import ProviderError

__all__ = ["HttpBackend"]

#: Statuses worth a retry before anything was streamed: busy, loading, rate limited.
RETRYABLE = frozenset({408, 429, 502, 503, 504})


class HttpBackend:
    """Base of the HTTP providers. Subclasses set ``name``, ``label`` (for messages)
    and ``start_hint`` (what to do when the backend cannot be reached)."""

    name = "http"
    label = "the model server"
    start_hint = "check that it is running and that its URL is right"
    key_hint = "check the API key"

    def __init__(self, base_url: str, *, api_key: str | None = None,
                 headers: Mapping[str, str] | None = None, timeout: float = 300.0,
                 connect_timeout: float = 5.0, retries: int = 3,
                 max_retry_wait: float = 30.0, transport: Any = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.headers = dict(headers or {})
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.retries, self.max_retry_wait = retries, max_retry_wait
        self._transport = transport
        self._http: Any = None

    # -- the client ------------------------------------------------------------------

    def _client(self) -> Any:
        if self._http is None:
            # Provider plugins import this module at every `adjutant` start-up (even
            # --help); httpx (~60 ms) loads at the first request (bench/startup.py).
            import httpx

            headers = dict(self.headers)
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            self._http = httpx.AsyncClient(
                base_url=self.base_url, headers=headers, transport=self._transport,
                timeout=httpx.Timeout(self.timeout, connect=self.connect_timeout))
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            client, self._http = self._http, None
            await client.aclose()

    # -- requests --------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def stream(self, method: str, path: str,
                     body: Any = None) -> AsyncIterator[Any]:
        """An open streaming response with a 2xx status, after retries; the connection
        closes when the block exits (which is how a generation is cancelled)."""
        import anyio  # both on first use, as in _client
        import httpx

        for attempt in range(self.retries + 1):
            streaming = False
            try:
                async with self._client().stream(method, path, json=body) as response:
                    if response.status_code >= 400:
                        error = self.error_for(response.status_code, await response.aread(),
                                               response.headers)
                        wait = self._wait(attempt, error, response.headers)
                        if wait is None:
                            raise error
                    else:
                        streaming = True
                        yield response
                        return
            except httpx.TransportError as exc:
                if streaming:
                    raise self.transport_error(exc, streaming=True) from exc
                error = self.transport_error(exc, streaming=False)
                wait = self._wait(attempt, error, {})
                if wait is None:
                    raise error from exc
            await anyio.sleep(wait)

    async def request_json(self, method: str, path: str, body: Any = None) -> Any:
        """A whole JSON answer (model lists, load calls), with the same retries."""
        async with self.stream(method, path, body) as response:
            raw = await response.aread()
        try:
            return json.loads(raw) if raw.strip() else None
        except ValueError:
            return raw.decode("utf-8", errors="replace")

    # -- errors ----------------------------------------------------------------------

    def _wait(self, attempt: int, error: ProviderError,
              headers: Mapping[str, str]) -> float | None:
        """Seconds to wait before the next attempt, or None to give up now."""
        if not error.retryable or attempt >= self.retries:
            return None
        after = _retry_after(headers.get("retry-after"))
        if after is None:
            return float(min(self.max_retry_wait, 0.25 * 2 ** attempt))
        return after if after <= self.max_retry_wait else None

    def error_for(self, status: int, body: bytes,
                  headers: Mapping[str, str]) -> ProviderError:
        """A non-2xx answer as a `ProviderError`; subclasses add backend-specific hints."""
        detail = error_message(body)
        message = f"{self.label} answered HTTP {status}: {detail}"
        after = _retry_after(headers.get("retry-after"))
        if status in (401, 403):
            return ProviderError(message, hint=self.key_hint, status=status)
        if status == 404:
            return ProviderError(message, hint="check the model name (list the models the "
                                 "server has)", status=status)
        if status == 429:
            wait = f"wait {after:g} s and " if after is not None else ""
            return ProviderError(message, hint=f"rate limited: {wait}try again",
                                 status=status, retryable=True)
        if status in RETRYABLE:
            return ProviderError(message, hint="the server is busy or still loading a "
                                 "model; try again shortly", status=status, retryable=True)
        return ProviderError(message, hint=self.start_hint if status >= 500 else
                             "the request was refused; see the message", status=status)

    def transport_error(self, exc: Exception, *, streaming: bool) -> ProviderError:
        import httpx  # loaded already when it raised (see _client)

        if streaming:
            return ProviderError(f"{self.label} dropped the stream ({type(exc).__name__})",
                                 hint="try again; if it repeats, look at the server's log",
                                 retryable=True)
        if isinstance(exc, httpx.TimeoutException):
            return ProviderError(f"{self.label} at {self.base_url} did not answer in time",
                                 hint=self.start_hint, retryable=True)
        return ProviderError(f"{self.label} at {self.base_url} is not reachable "
                             f"({type(exc).__name__})", hint=self.start_hint, retryable=True)


def error_message(body: bytes | str | Any) -> str:
    """The human part of any backend's error body (OpenAI, Ollama, mlx, FastAPI)."""
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            body = json.loads(text)
        except ValueError:
            return text.strip()[:500] or "(empty body)"
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body))
        if isinstance(error, dict):
            return str(error.get("message") or error.get("detail") or error)[:500]
        return str(error)[:500]
    return str(body)[:500]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # an HTTP date: rare, and the email package is slow to import

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
