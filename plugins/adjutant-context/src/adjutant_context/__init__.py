"""Context providers for Adjutant: what the operator knows before it answers.

- ``git``: root, branch, HEAD, dirty, changed paths (git run in the OS sandbox only);
- ``shell-history``: the last commands from bash, zsh and fish histories;
- ``focus``: the active X11 window's title (``xprop``);
- ``clipboard``: the clipboard's text (off unless the profile switches it on);
- ``selected-files``: files the user selected (``$ADJUTANT_HOME/selected_files.json``);
- ``service-logs``: tails of the log files named in ``$ADJUTANT_HOME/context.json``;
- ``project``: name, version, language from pyproject.toml, package.json, Cargo.toml, go.mod.

Every string passes through `redact_text` before it reaches the bulletin. Cheap to
import: the sandbox (and anyio) load on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from adjutant_hookspecs import hookimpl, lazy_exports

if TYPE_CHECKING:  # imported on first use (`lazy_exports`): start-up stays cheap
    from adjutant_hookspecs import ContextProvider

    from ._desktop import ClipboardProvider, FocusProvider
    from ._files import SelectedFilesProvider, ServiceLogsProvider, clear, select, selected
    from ._git import GitProvider
    from ._history import ShellHistoryProvider
    from ._project import ProjectProvider
    from ._providers import PROVIDERS
    from ._redact import redact, redact_text

__all__ = ["PROVIDERS", "ClipboardProvider", "FocusProvider", "GitProvider", "ProjectProvider",
           "SelectedFilesProvider", "ServiceLogsProvider", "ShellHistoryProvider", "clear",
           "redact", "redact_text", "register_context_providers", "select", "selected"]

__getattr__ = lazy_exports(__name__, {
    "ClipboardProvider": "._desktop", "FocusProvider": "._desktop",
    "SelectedFilesProvider": "._files", "ServiceLogsProvider": "._files", "clear": "._files",
    "select": "._files", "selected": "._files", "GitProvider": "._git",
    "ShellHistoryProvider": "._history", "ProjectProvider": "._project",
    "PROVIDERS": "._providers", "redact": "._redact", "redact_text": "._redact"})


@hookimpl
def register_context_providers(register: Callable[[ContextProvider], None]) -> None:
    """Hand the kernel one instance of each provider."""
    from ._providers import PROVIDERS

    for cls in PROVIDERS:
        register(cls())
