"""The mlx-lm server (Apple silicon) for Adjutant, over its OpenAI-compatible API.

Provider ``mlx``: chat completions; no structured output (the server ignores it and
answers with nothing), so the planner validates and retries; the model is chosen per
request. ``ADJUTANT_MLX_URL`` (default ``http://127.0.0.1:8080``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import Provider

    from ._provider import MlxLm

__all__ = ["MlxLm", "register_providers"]

__getattr__ = lazy_exports(__name__, dict.fromkeys(["MlxLm"], "._provider"))


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    from ._provider import MlxLm

    register(MlxLm.from_environment())
