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

from adjutant_hookspecs import ContextProvider, hookimpl

from ._desktop import ClipboardProvider, FocusProvider
from ._files import SelectedFilesProvider, ServiceLogsProvider, clear, select, selected
from ._git import GitProvider
from ._history import ShellHistoryProvider
from ._project import ProjectProvider
from ._redact import redact, redact_text

__all__ = ["PROVIDERS", "ClipboardProvider", "FocusProvider", "GitProvider", "ProjectProvider",
           "SelectedFilesProvider", "ServiceLogsProvider", "ShellHistoryProvider", "clear",
           "redact", "redact_text", "register_context_providers", "select", "selected"]

#: Every provider class of the plugin, in registration (and merge) order.
PROVIDERS: tuple[type, ...] = (GitProvider, ShellHistoryProvider, FocusProvider,
                               ClipboardProvider, SelectedFilesProvider, ServiceLogsProvider,
                               ProjectProvider)


@hookimpl
def register_context_providers(register: Callable[[ContextProvider], None]) -> None:
    """Hand the kernel one instance of each provider."""
    for cls in PROVIDERS:
        register(cls())
