"""structlog set-up: human-readable by default, JSON lines when asked.

structlog is imported on first use, not at start-up: a clean ``adjutant --help``
never pays for it.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, Literal

__all__ = ["configure_logging", "get_logger"]

Format = Literal["console", "json"]
_configured = False


def configure_logging(fmt: Format | None = None, level: str | None = None) -> None:
    """Send structured logs to stderr.

    :param fmt: ``json`` for one JSON object per line, ``console`` for humans
        (the default, coloured on a terminal); ``ADJUTANT_LOG_FORMAT`` sets it too.
    :param level: ``debug`` … ``error`` (default ``ADJUTANT_LOG_LEVEL`` or ``warning``).
    """
    import structlog  # only with -v or --log-format: ~20 ms of every start-up otherwise

    global _configured
    fmt = fmt or os.environ.get("ADJUTANT_LOG_FORMAT", "console")  # type: ignore[assignment]
    level_name = (level or os.environ.get("ADJUTANT_LOG_LEVEL") or "warning").upper()
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
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level_name, logging.WARNING)
        ),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
    _configured = True


def get_logger(**context: Any) -> Any:
    """A structlog logger bound to ``context`` (configures defaults on first use)."""
    import structlog  # see configure_logging

    if not _configured:
        configure_logging()
    return structlog.get_logger("adjutant").bind(**context)
