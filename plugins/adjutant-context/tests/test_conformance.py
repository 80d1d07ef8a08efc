"""The standard context-provider checks, for every provider, in an empty directory and in
the situations where each has something to say."""

from pathlib import Path

import pytest

from adjutant.testing.conformance import ContextProviderConformance
from adjutant_context import (
    PROVIDERS,
    ClipboardProvider,
    FocusProvider,
    GitProvider,
    ProjectProvider,
    SelectedFilesProvider,
    ServiceLogsProvider,
    ShellHistoryProvider,
    select,
)

from .helpers import fake_program, make_repo


class TestEveryProviderInAnEmptyDirectory(ContextProviderConformance):
    @pytest.fixture(params=PROVIDERS, ids=lambda cls: cls.name)
    def context_provider(self, request: pytest.FixtureRequest) -> object:
        return request.param()


class TestGitInARepository(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self) -> GitProvider:
        return GitProvider()

    @pytest.fixture
    def cwd(self, tmp_path: Path) -> str:
        make_repo(tmp_path / "repo")
        (tmp_path / "repo" / "new.txt").write_text("x")
        return str(tmp_path / "repo")


class TestShellHistoryWithHistory(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self) -> ShellHistoryProvider:
        (Path.home() / ".bash_history").write_text("ls\nmake\n")
        return ShellHistoryProvider()


class TestFocusWithAFakeXprop(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FocusProvider:
        fake_program(tmp_path / "bin", "xprop", """
if [ "$1" = "-root" ]; then echo '_NET_ACTIVE_WINDOW(WINDOW): window id # 0x1'
else echo '_NET_WM_NAME(UTF8_STRING) = "editor"'; fi
""")
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
        monkeypatch.setenv("DISPLAY", ":99")
        return FocusProvider()


class TestClipboardWithAFakeXclip(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> ClipboardProvider:
        fake_program(tmp_path / "bin", "xclip", "printf 'copied'\n")
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
        monkeypatch.setenv("DISPLAY", ":99")
        return ClipboardProvider()


class TestSelectedFilesWithASelection(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self, tmp_path: Path) -> SelectedFilesProvider:
        (tmp_path / "a.py").write_text("")
        select(tmp_path / "adjutant", [tmp_path / "a.py"])
        return SelectedFilesProvider()


class TestServiceLogsWithLogs(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self, tmp_path: Path) -> ServiceLogsProvider:
        (tmp_path / "app.log").write_text("started\n")
        (tmp_path / "adjutant").mkdir()
        (tmp_path / "adjutant" / "context.json").write_text(
            '{"logs": ["app.log", "missing.log"]}')
        return ServiceLogsProvider()


class TestProjectWithAPyproject(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self, tmp_path: Path) -> ProjectProvider:
        (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "1.0"\n')
        return ProjectProvider()
