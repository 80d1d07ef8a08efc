"""The plugin registers what it says (by itself, and found by its entry point), and the
operator's bulletin carries what its providers gather."""

from pathlib import Path
from typing import Any

import msgspec
import pytest

import adjutant_context
from adjutant import ModelPreset, Profile
from adjutant.testing import Harness, needs_sandbox
from adjutant.testing.plugin_checks import assert_entry_point, assert_registers
from adjutant_hookspecs import ActivitySnapshot, Response

from .helpers import fake_program, make_repo

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = {"context_providers": ["git", "shell-history", "focus", "clipboard",
                                   "selected-files", "service-logs", "project"]}
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(adjutant_context, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, adjutant_context, REGISTERS, tmp_path, monkeypatch)


async def _bulletin(h: Harness) -> dict[str, Any]:
    """Ask the operator something; return the bulletin it logged (checked against the
    event it published)."""
    outcome = await h.run("hi", reply=Response(text="ok"))
    assert outcome.status != "failed", outcome
    (snapshot,) = [e for e in outcome.of_type(ActivitySnapshot) if e.activity_type == "context"]
    content: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(snapshot.content))
    assert outcome.logged("context")[-1]["bulletin"] == content
    return content


def _clipboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(tmp_path / "bin", "xclip", "printf 'from the clipboard'\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("DISPLAY", ":99")


@pytest.mark.anyio
@needs_sandbox
async def test_bulletin_has_git_state_and_recent_shell_not_the_clipboard(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (Path.home() / ".bash_history").write_text("ls\nexport API_KEY=abc123\nmake test\n")
    _clipboard(tmp_path, monkeypatch)
    async with Harness(adjutant_context) as h:
        head = make_repo(h.workspace, branch="feature")
        (h.workspace / "draft.txt").write_text("x")
        bulletin = await _bulletin(h)
        workspace = h.workspace
    assert bulletin["cwd"] == str(workspace)
    assert bulletin["git"] == {"root": str(workspace.resolve()), "branch": "feature",
                               "head": head, "dirty": True, "changed": ["draft.txt"],
                               "unavailable": None}
    assert bulletin["recent_shell"] == ["ls", "export API_KEY=[REDACTED]", "make test"]
    assert bulletin["clipboard"] is None  # off by default, though readable


@pytest.mark.anyio
async def test_bulletin_has_the_clipboard_when_the_profile_enables_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clipboard(tmp_path, monkeypatch)
    profile = Profile(model=ModelPreset(provider="scripted"), context_providers={"clipboard": True})
    async with Harness(adjutant_context, profile=profile) as h:
        bulletin = await _bulletin(h)
    assert bulletin["clipboard"] == "from the clipboard"


@pytest.mark.anyio
async def test_a_provider_switched_off_contributes_nothing(tmp_path: Path) -> None:
    (Path.home() / ".bash_history").write_text("ls\n")
    profile = Profile(model=ModelPreset(provider="scripted"),
                      context_providers={"shell-history": False})
    async with Harness(adjutant_context, profile=profile) as h:
        (h.workspace / "package.json").write_text('{"name": "web", "version": "2.0.0"}')
        bulletin = await _bulletin(h)
    assert bulletin["recent_shell"] == []
    assert bulletin["project"] == {"name": "web", "version": "2.0.0", "language": "javascript",
                                   "files": ["package.json"]}
