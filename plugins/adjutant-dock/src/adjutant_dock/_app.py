"""The dock's ASGI app (Starlette): one ``routes`` list of module-level endpoints,
which reach the dock through ``request.app.state.dock`` (a `DockState`), behind the
`Guard` middleware (token, Host, Origin).

The endpoints live by concern: the page and side APIs in `_api`, the run stream in
`_stream`, voice in `_voice`, the Co-Pilot panel in
`_copilot_panel`, the Tasks view in `_tasks_panel`; the page's scripts and styles are `static/`.
"""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from . import _api, _copilot_panel, _settings_edit, _stream, _tasks_panel, _voice
from ._access import Guard
from ._state import DockState

__all__ = ["build_app", "routes"]


class Assets(StaticFiles):
    """The page's files, each with its exact type: module scripts load only when served
    as JavaScript (whatever the system's MIME table says), and nosniff holds them to it."""

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result,
                      scope: Scope, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        if str(full_path).endswith(".js"):
            response.headers["Content-Type"] = "text/javascript; charset=utf-8"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response


routes = [
    *_api.routes,
    *_copilot_panel.routes,
    *_settings_edit.routes,
    *_stream.routes,
    *_tasks_panel.routes,
    *_voice.routes,
    Mount("/static", Assets(directory=_api.STATIC), name="static"),
]


def build_app(dock: DockState) -> Starlette:
    app = Starlette(routes=routes, middleware=[Middleware(Guard)])
    app.state.dock = dock
    return app
