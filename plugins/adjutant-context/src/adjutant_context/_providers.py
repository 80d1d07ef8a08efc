"""Every provider class of the plugin, in registration (and merge) order."""

from __future__ import annotations

from ._desktop import ClipboardProvider, FocusProvider
from ._files import SelectedFilesProvider, ServiceLogsProvider
from ._git import GitProvider
from ._history import ShellHistoryProvider
from ._project import ProjectProvider

__all__ = ["PROVIDERS"]

PROVIDERS: tuple[type, ...] = (GitProvider, ShellHistoryProvider, FocusProvider,
                               ClipboardProvider, SelectedFilesProvider, ServiceLogsProvider,
                               ProjectProvider)
