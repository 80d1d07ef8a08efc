"""structlog set-up: human-readable by default, JSON lines when asked.

structlog is imported at the first message that passes the level, not at start-up
nor by `get_logger`: a command that logs nothing worth showing (the default level is
``warning``) never pays for it (~20 ms, and ~15 ms more for ``logging``).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Literal

__all__ = ["configure_logging", "get_logger"]

Format = Literal["console", "json"]
_LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
_configured = False
_level: int | None = None  # the threshold configured (None: from the environment)


def configure_logging(fmt: Format | None = None, level: str | None = None) -> None:
    """Send structured logs to stderr.

    :param fmt: ``json`` for one JSON object per line, ``console`` for humans
        (the default, coloured on a terminal); ``ADJUTANT_LOG_FORMAT`` sets it too.
    :param level: ``debug`` … ``error`` (default ``ADJUTANT_LOG_LEVEL`` or ``warning``).
    """
    import structlog  # only with -v or --log-format: ~20 ms of every start-up otherwise

    global _configured, _level
    fmt = fmt or os.environ.get("ADJUTANT_LOG_FORMAT", "console")  # type: ignore[assignment]
    _level = _threshold(level)
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
        # Tracebacks as data, without frame locals (they may hold secrets).
        extra: list[Any] = [structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False))]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        extra = []
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            *extra,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    _configured = True


def _threshold(level: str | None = None) -> int:
    name = (level or os.environ.get("ADJUTANT_LOG_LEVEL") or "warning").lower()
    return _LEVELS.get(name, _LEVELS["warning"])


class _Logger:
    """What `get_logger` returns: binds like structlog's logger and hands it a message
    only when the message passes the level (importing and configuring structlog then)."""

    def __init__(self, context: dict[str, Any]) -> None:
        self._context = context

    def bind(self, **context: Any) -> _Logger:
        return _Logger({**self._context, **context})

    def _emit(self, level: str, event: str, fields: dict[str, Any]) -> None:
        if _LEVELS[level] < (_level if _level is not None else _threshold()):
            return
        import structlog  # see the module's docstring

        if not _configured:
            configure_logging()
        getattr(structlog.get_logger("adjutant").bind(**self._context), level)(event, **fields)

    def debug(self, event: str, **fields: Any) -> None:
        self._emit("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._emit("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._emit("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._emit("error", event, fields)

    def critical(self, event: str, **fields: Any) -> None:
        self._emit("critical", event, fields)


def get_logger(**context: Any) -> Any:
    """A logger bound to ``context``, with structlog's ``bind``, ``debug`` ...
    ``critical`` (configured with the defaults at its first message if nothing
    configured logging before)."""
    return _Logger(context)
