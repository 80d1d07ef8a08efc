"""The hook reference: every hook documented, docs/hooks.md current, the CLI honest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from adjutant.docs import hooks, render, undocumented
from adjutant_hookspecs import hookspec

REPO = Path(__file__).resolve().parents[2]
REGENERATE = "python -m adjutant.docs --write docs/hooks.md"


class ToySpec:
    """A throwaway spec with one fault of each kind."""

    # -- good ---------------------------------------------------------------------------

    @hookspec
    def fine(self, register: Any) -> None:
        """Register things.

        :param register: Call once per thing.

        Returns nothing.

        .. versionadded:: 0.2
        """

    # -- broken -------------------------------------------------------------------------

    @hookspec
    def half_documented(self, register: Any, mode: str) -> None:
        """Register things, depending on the mode.

        :param register: Call once per thing.

        Returns nothing.

        .. versionadded:: 0.2
        """

    @hookspec
    def bare(self, kernel: Any) -> None:
        pass

    @hookspec
    def stray(self, kernel: Any) -> None:
        """Start.

        :param kernel: The kernel.
        :param colour: Not an argument at all.

        Returns nothing.

        .. versionadded:: 0.2
        """

    @hookspec
    def vague(self, check: Any) -> None:
        """Check something.

        :param check: Returns an int (a "Returns" here is the callback's, not the hook's).
        """

    def helper(self) -> None:  # no marker: not a hook, so not checked
        pass


def test_the_real_spec_is_fully_documented() -> None:
    assert hooks(), "no hooks discovered: is the marker attribute right?"
    assert undocumented() == []


def test_each_fault_is_reported_by_hook_and_argument() -> None:
    assert [name for name, _ in hooks(ToySpec)] == [
        "fine", "half_documented", "bare", "stray", "vague"]
    assert undocumented(ToySpec) == [
        "half_documented: argument 'mode' has no ':param mode:'",
        "bare: no docstring",
        "stray: ':param colour:' documents no argument",
        "vague: no return contract (a sentence with 'Returns')",
        "vague: no '.. versionadded::'",
    ]


def test_render_shows_signature_params_prose_and_version() -> None:
    text = render(ToySpec).partition("## Registered objects")[0]  # the hooks part
    assert "## Good\n\n### `fine`\n\n```python\nfine(register: Any) -> None\n```" in text
    assert "## Broken\n" in text
    assert "- `register`: Call once per thing." in text
    assert "- `mode`:" not in text  # undocumented arguments are not invented
    assert "*Added in 0.2.*" in text
    assert "(self" not in text


def test_render_of_the_real_spec() -> None:
    text = render()
    assert text == render()  # deterministic
    assert ("pre_tool_use(call: ToolCall, declaration: ToolDeclaration, mode: str)"
            " -> Verdict | None") in text
    assert "- `mode`: The operator mode: `off`, `listen-only`, `propose-only`," in text
    assert "an object satisfying [`Provider`](#provider)" in text  # reST role -> link
    # Module-level Literal aliases are spelled out; camelCase wire names are shown.
    assert "- `level`: `Literal['read', 'write', 'destructive']` = `'read'`" in text
    assert "- `run_seq`: `int` (wire: `runSeq`)" in text
    for heading in ("## Registration", "## Safety", "## Lifecycle", "### `KeyValueStore`",
                    "### `Envelope`", "## Data contracts"):
        assert f"\n{heading}\n" in text


def test_docs_hooks_md_is_up_to_date() -> None:
    path = REPO / "docs" / "hooks.md"
    assert path.is_file(), f"docs/hooks.md is missing; run: {REGENERATE}"
    current = path.read_text(encoding="utf-8")
    assert current == render(), f"docs/hooks.md is stale; run: {REGENERATE}"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adjutant.docs", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False)


def test_cli_check_fails_on_a_stale_or_missing_file(tmp_path: Path) -> None:
    (tmp_path / "hooks.md").write_text(render().replace("Returns nothing.", "Returns."))
    stale = run_cli("--check", "hooks.md", cwd=tmp_path)
    assert stale.returncode == 1
    assert "hooks.md is stale; run: python -m adjutant.docs --write hooks.md" in stale.stderr

    missing = run_cli("--check", "absent.md", cwd=tmp_path)
    assert missing.returncode == 1
    assert "absent.md is stale" in missing.stderr


def test_cli_write_then_check_passes(tmp_path: Path) -> None:
    written = run_cli("--write", "hooks.md", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "hooks.md").read_text(encoding="utf-8") == render()
    checked = run_cli("--check", "hooks.md", cwd=tmp_path)
    assert (checked.returncode, checked.stderr) == (0, "")
    printed = run_cli(cwd=tmp_path)
    assert printed.stdout == render()
