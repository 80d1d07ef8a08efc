"""editor.patch judges every path a patch names like a direct write.

The guard sees only a tool's path arguments; a patch carries its paths inside one
string, so the tool checks each header itself with the deny rules of `fs.write`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adjutant.safety.protection import Shield
from adjutant_files import EditorPatch
from adjutant_files._patch import named_paths
from adjutant_hookspecs import ToolContext

from .helpers import make_cage, run, snapshot

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ctx = make_cage(tmp_path)
    cage = Path(ctx.cwd)
    (cage / ".git" / "info").mkdir(parents=True)
    (cage / "keys").mkdir()
    return ToolContext(cwd=ctx.cwd, cages=ctx.cages, home=str(tmp_path / "home"),
                       data_home=str(tmp_path / "data"))


async def refused_both(ctx: ToolContext, root: Path, patch: str) -> str:
    """Dry-run and execute both refused as protected; nothing changed."""
    before = snapshot(root)
    for dry in (True, False):
        result = await run(EditorPatch(), ctx, dry=dry, patch=patch)
        assert result.status == "error", result
        assert "[rule: protected]" in result.stderr, result.stderr
    assert snapshot(root) == before
    return str(result.stderr)


def creating(path: str) -> str:
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"


@pytest.mark.parametrize(("path", "rule"), [
    (".git/commondir", "**/.git/**"), (".git/info/attributes", "**/.git/**"),
    (".envrc", "**/.envrc"), ("keys/id_ed25519", "**/id_ed25519"),
    ("sub/.vscode/mcp.json", "**/.vscode/mcp.json"), (".git", "**/.git"),
])
async def test_a_new_file_at_a_protected_path_is_refused_naming_path_and_rule(
        ctx: ToolContext, tmp_path: Path, path: str, rule: str) -> None:
    stderr = await refused_both(ctx, tmp_path, creating(path))
    assert f"names {path!r}" in stderr and rule in stderr, stderr
    # the verdict the guard gives fs.write for the same path (the same rules)
    assert Shield.for_context(ctx).write_refusal(os.path.join(ctx.cwd, path)) is not None


async def test_every_header_is_checked_not_only_the_new_name(
        ctx: ToolContext, tmp_path: Path) -> None:
    notes = "@@ -1,2 +1,2 @@\n-hello\n+hi\n world\n"
    # an old name that is protected, with an ordinary new one
    stderr = await refused_both(ctx, tmp_path, f"--- a/.envrc\n+++ b/notes.txt\n{notes}")
    assert "line 1 names '.envrc'" in stderr
    # renames, copies and mode changes name their targets on other lines
    for header in ("rename from notes.txt\nrename to .git/commondir",
                   "copy from notes.txt\ncopy to .envrc",
                   "diff --git a/.git/info/attributes b/.git/info/attributes\nold mode 100644\n"
                   "new mode 100755",
                   "diff --git a/keys/id_ed25519 b/keys/id_ed25519\ndeleted file mode 100644",
                   "diff --git a/.envrc b/.envrc\nnew file mode 100644"):
        stderr = await refused_both(ctx, tmp_path, f"{header}\n--- a/notes.txt\n"
                                                   f"+++ b/notes.txt\n{notes}")
        assert "protected as" in stderr, stderr


async def test_an_ordinary_patch_still_applies(ctx: ToolContext, tmp_path: Path) -> None:
    patch = ("diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
             "@@ -1,2 +1,2 @@\n-hello\n+hi\n world\n" + creating("docs/.envrc.md")
             .replace("docs/", ""))
    result = await run(EditorPatch(), ctx, patch=patch)
    assert result.status == "ok", result
    assert (Path(ctx.cwd) / "notes.txt").read_text() == "hi\nworld\n"
    assert (Path(ctx.cwd) / ".envrc.md").read_text() == "x\n"


def test_named_paths_reads_every_kind_of_header() -> None:
    text = ("diff --git a/x y b/x y\nrename from a\nrename to b\ncopy from c\ncopy to d\n"
            "Binary files a/e and b/f differ\n--- a/g\t2024-01-01\n+++ b/h\n--- /dev/null\n")
    assert [name for _, name in named_paths(text)] == [
        "x y", "x y", "a", "b", "c", "d", "e", "f", "g", "h"]
    # an ambiguous diff --git line yields every reading
    assert {"a", "c b/d", "a b/c", "d"} <= {n for _, n in named_paths("diff --git a/a b/c b/d")}
