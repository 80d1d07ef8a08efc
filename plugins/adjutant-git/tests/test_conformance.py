"""The standard tool checks for every git tool, on a real repository."""

from pathlib import Path

import pytest

import adjutant_git
from adjutant.testing.conformance import ToolConformance
from adjutant_hookspecs import ToolContext

from .helpers import ctx_for, make_repo, sh


@pytest.fixture
def repo_ctx(tmp_path: Path) -> ToolContext:
    """Every example is valid here: a change to commit, branches to switch to."""
    repo = make_repo(tmp_path)
    sh(repo, "branch", "feature/notes")
    (repo / "notes.txt").write_text("two\n")
    (repo / "README.md").write_text("# demo, edited\n")
    sh(repo, "switch", "-q", "-c", "work")
    return ctx_for(repo)


@pytest.mark.parametrize("cls", adjutant_git.TOOLS, ids=lambda c: c.declaration.name)
class TestGitTool(ToolConformance):
    @pytest.fixture
    def tool(self, cls: type) -> object:
        return cls()

    @pytest.fixture
    def ctx(self, repo_ctx: ToolContext) -> ToolContext:
        return repo_ctx

    @pytest.mark.anyio
    async def test_examples_preview_here(self, tool: object, repo_ctx: ToolContext) -> None:
        """In this repository every declared example is a valid call: it previews."""
        from adjutant_hookspecs import ToolCall

        for args in tool.declaration.examples:  # type: ignore[attr-defined]
            call = ToolCall(tool=tool.declaration.name, args=dict(args))  # type: ignore[attr-defined]
            result = await tool.dry_run(call, repo_ctx)  # type: ignore[attr-defined]
            assert result.status == "dry_run", result.stderr
