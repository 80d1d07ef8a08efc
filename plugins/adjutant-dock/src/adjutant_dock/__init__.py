"""The Copilot Dock: a local web app on Adjutant's AG-UI event stream.

``adjutant dock`` serves it on loopback; approvals are AG-UI interrupts answered
from the page, through the same operator, safety pipeline and action log as the
terminal. Cheap to import: the web stack loads when the dock starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import Command, hookimpl, lazy

if TYPE_CHECKING:
    from adjutant_hookspecs import Frontend

__all__ = ["register_commands", "register_frontends"]


@hookimpl
def register_commands(register: Callable[[Command], None]) -> None:
    register(Command(name="dock", help="the Copilot Dock: a local web page (mode, chat, "
                     "plan and approvals, action log)", run=lazy("adjutant_dock._serve:run"),
                     configure=lazy("adjutant_dock._serve:configure")))


@hookimpl
def register_frontends(register: Callable[[Frontend], None]) -> None:
    from ._serve import DockFrontend

    register(DockFrontend())
