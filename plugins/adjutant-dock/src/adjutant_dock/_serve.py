"""``adjutant dock``: the dock's server on loopback (uvicorn), until interrupted."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

    from adjutant_hookspecs import Kernel

__all__ = ["DockServer", "configure", "run"]

DEFAULT_PORT = 8767


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free one)")
    parser.add_argument("--no-browser", action="store_true",
                        help="print the address, do not open a browser")


class DockServer:
    """The hub and its app under uvicorn on 127.0.0.1; ``url`` once started."""

    def __init__(self, kernel: Kernel, *, port: int = DEFAULT_PORT, ping_s: float = 15.0,
                 **hub_options: Any) -> None:
        from ._access import token_file
        from ._app import build_app
        from ._runs import Hub
        from ._state import DockState

        self.kernel = kernel
        self.hub = Hub(kernel, **hub_options)
        self.token = token_file(Path(kernel.home)).read_text(encoding="utf-8").strip()
        self.state = DockState(self.hub, self.token, port, ping_s)
        self.app = build_app(self.state)
        self.port = port
        self.server: uvicorn.Server | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The address to open once: it carries the token, the page then a cookie."""
        return f"{self.base}/?token={self.token}"

    async def serve(self, *, ready: Callable[[], None] | None = None) -> None:
        """Serve until cancelled; ``ready()`` is called once the port is bound."""
        import anyio
        import uvicorn

        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                log_level="warning", lifespan="off",
                                timeout_graceful_shutdown=2)
        self.server = server = uvicorn.Server(config)

        async def run_server() -> None:
            # shielded: a cancelled uvicorn leaves its sockets open; it is asked to
            # exit instead (below) and closes them itself
            with anyio.CancelScope(shield=True):
                await server.serve()
            outer.cancel_scope.cancel()  # stopped by ^C: the dock stops with it

        async with anyio.create_task_group() as outer:
            outer.start_soon(run_server)
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self.hub.serve)
                    while not server.started:
                        if server.should_exit:
                            raise OSError(f"the dock could not listen on 127.0.0.1:{self.port}")
                        await anyio.sleep(0.01)
                    self.port = self.state.port = \
                        server.servers[0].sockets[0].getsockname()[1]
                    if ready is not None:
                        ready()
                    await anyio.sleep_forever()
            finally:
                self.hub.voice.close()  # the ambient streams end, so nothing waits on them
                server.should_exit = True


async def run(kernel: Kernel, args: argparse.Namespace) -> int:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        print("adjutant dock: needs the asyncio backend (uvicorn): unset "
              "ADJUTANT_ASYNC_BACKEND", file=sys.stderr)
        return 2
    dock = DockServer(kernel, port=args.port)

    def ready() -> None:
        print(f"adjutant dock: {dock.url}", flush=True)
        print("adjutant dock: open that address once (it carries this install's token); "
              "^C stops the dock", file=sys.stderr, flush=True)
        if not args.no_browser:
            import webbrowser

            webbrowser.open(dock.url)

    await dock.serve(ready=ready)
    return 0


class DockFrontend:
    """The dock as a `Frontend` (``register_frontends``): serves on the default port."""

    name = "dock"

    async def serve(self, kernel: Kernel) -> None:
        await DockServer(kernel).serve()
