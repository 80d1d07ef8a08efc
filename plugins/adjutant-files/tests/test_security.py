"""Adversarial tests, one or more per bug class of SECURITY.md. Every refusal is an
error result naming its rule, and leaves the file system exactly as it was."""

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from adjutant_files import CompressZip, EditorPatch, FsAppend, FsRead, FsWrite, SearchGrep
from adjutant_hookspecs import ToolContext

from .helpers import make_cage, run, snapshot

pytestmark = pytest.mark.anyio
needs_rg = pytest.mark.skipif(shutil.which("rg") is None or shutil.which("bwrap") is None,
                              reason="ripgrep or bubblewrap missing")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ctx = make_cage(tmp_path)
    evil = tmp_path / "proj-evil"
    evil.mkdir()
    (evil / "secret.txt").write_text("outside secret\n")
    return ctx


async def refused(rule: str, tool: Any, ctx: ToolContext, root: Path, **args: Any) -> str:
    """Dry-run and execute are both refused naming ``rule``; nothing changes under root."""
    before = snapshot(root)
    for dry in (True, False):
        result = await run(tool, ctx, dry=dry, **args)
        assert result.status == "error", result
        assert f"[rule: {rule}]" in result.stderr, result.stderr
    assert snapshot(root) == before
    return result.stderr


WRITERS = [FsWrite(), FsAppend()]


@pytest.mark.parametrize("path", ["../proj-evil/secret.txt", "src/../../proj-evil/secret.txt",
                                  "a/../notes.txt"])
async def test_traversal(ctx: ToolContext, tmp_path: Path, path: str) -> None:
    await refused("traversal", FsRead(), ctx, tmp_path, path=path)
    for tool in WRITERS:
        await refused("traversal", tool, ctx, tmp_path, path=path, content="x")


async def test_prefix_confusion(ctx: ToolContext, tmp_path: Path) -> None:
    outside = str(tmp_path / "proj-evil" / "secret.txt")
    await refused("cage", FsRead(), ctx, tmp_path, path=outside)
    await refused("cage", FsWrite(), ctx, tmp_path, path=outside, content="x")
    await refused("cage", FsRead(), ctx, tmp_path, path="/etc/passwd")


async def test_no_cage_fails_closed(tmp_path: Path) -> None:
    ctx = make_cage(tmp_path)
    await refused("cage", FsRead(), ToolContext(cwd=ctx.cwd), tmp_path, path="notes.txt")


async def test_symlink_in_cage_pointing_out(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "link.txt").symlink_to(tmp_path / "proj-evil" / "secret.txt")
    await refused("symlink", FsRead(), ctx, tmp_path, path="link.txt")
    await refused("symlink", FsWrite(), ctx, tmp_path, path="link.txt", content="pwned")
    await refused("symlink", FsAppend(), ctx, tmp_path, path="link.txt", content="pwned")
    await refused("symlink", CompressZip(), ctx, tmp_path, paths=["link.txt"], output="o.zip")


async def test_parent_directory_is_a_symlink(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    await refused("symlink", FsRead(), ctx, tmp_path, path="evil/secret.txt")
    await refused("symlink", FsWrite(), ctx, tmp_path, path="evil/new.txt", content="x")
    await refused("symlink", CompressZip(), ctx, tmp_path, paths=["notes.txt"],
                  output="evil/o.zip")


async def test_symlink_swapped_in_between_dry_run_and_execute(
    ctx: ToolContext, tmp_path: Path
) -> None:
    cage = Path(ctx.cwd)
    preview = await run(FsWrite(), ctx, dry=True, path="src/app.py", content="x\n")
    assert preview.status == "dry_run"
    (cage / "src").rename(cage / "src-real")
    (cage / "src").symlink_to(tmp_path / "proj-evil")  # parent swapped for a link
    await refused("symlink", FsWrite(), ctx, tmp_path, path="src/app.py", content="x\n")
    preview = await run(FsWrite(), ctx, dry=True, path="notes.txt", content="x\n")
    assert preview.status == "dry_run"
    (cage / "notes.txt").unlink()
    (cage / "notes.txt").symlink_to(tmp_path / "proj-evil" / "secret.txt")  # file swapped
    await refused("symlink", FsWrite(), ctx, tmp_path, path="notes.txt", content="x\n")
    assert (tmp_path / "proj-evil" / "secret.txt").read_text() == "outside secret\n"


async def test_hardlink_to_a_file_outside(ctx: ToolContext, tmp_path: Path) -> None:
    os.link(tmp_path / "proj-evil" / "secret.txt", Path(ctx.cwd) / "hard.txt")
    await refused("hardlink", FsWrite(), ctx, tmp_path, path="hard.txt", content="pwned")
    await refused("hardlink", FsAppend(), ctx, tmp_path, path="hard.txt", content="pwned")
    patch = "--- a/hard.txt\n+++ b/hard.txt\n@@ -1 +1 @@\n-outside secret\n+pwned\n"
    await refused("hardlink", EditorPatch(), ctx, tmp_path, patch=patch)


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", ".mcp.json", ".env",
                                  ".env.local", "sub/.ENV", ".bashrc", ".vscode/mcp.json",
                                  ".Git/Config"])
async def test_protected_even_when_missing(ctx: ToolContext, tmp_path: Path, path: str) -> None:
    await refused("protected", FsWrite(), ctx, tmp_path, path=path, content="[core]\n")
    await refused("protected", FsRead(), ctx, tmp_path, path=path)
    patch = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"
    await refused("protected", EditorPatch(), ctx, tmp_path, patch=patch)


async def test_missing_parent_is_refused_not_created(ctx: ToolContext, tmp_path: Path) -> None:
    await refused("missing", FsWrite(), ctx, tmp_path, path="no/such/dir/f.txt", content="x")


async def test_huge_and_binary_files(tmp_path: Path) -> None:
    ctx = make_cage(tmp_path)
    cage = Path(ctx.cwd)
    (cage / "big.txt").write_bytes(b"a" * 2048)
    (cage / "bin.dat").write_bytes(b"\x7fELF\x00\x01")
    small = FsRead(max_file_bytes=1024)
    await refused("too-large", small, ctx, tmp_path, path="big.txt")
    assert (await run(small, ctx, path="big.txt", max_bytes=10)).stdout == "a" * 10
    await refused("argument-size", FsWrite(max_file_bytes=1024), ctx, tmp_path, path="n.txt",
                  content="x" * 2000)
    result = await run(FsRead(), ctx, path="bin.dat")
    assert "[rule: binary]" in result.stderr and "binary file" in result.stderr
    await refused("binary", FsWrite(), ctx, tmp_path, path="bin.dat", content="x")


async def test_fifo_and_directories_are_not_files(ctx: ToolContext, tmp_path: Path) -> None:
    os.mkfifo(Path(ctx.cwd) / "fifo")
    await refused("not-a-file", FsRead(), ctx, tmp_path, path="fifo")
    await refused("not-a-file", FsRead(), ctx, tmp_path, path="src")


async def test_unknown_arguments_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    await refused("unknown-argument", FsRead(), ctx, tmp_path, path="notes.txt", follow=True)


PATCHES = {
    "malformed-patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-hello\n+hi\n",
    "fuzzy-patch": "--- a/notes.txt\n+++ b/notes.txt\n@@ -2,1 +2,1 @@\n-hello\n+hi\n",
    "traversal": "--- a/../proj-evil/secret.txt\n+++ b/../proj-evil/secret.txt\n"
                 "@@ -1 +1 @@\n-outside secret\n+pwned\n",
    "cage": "--- /dev/null\n+++ /tmp/adjutant-files-escape.txt\n@@ -0,0 +1 @@\n+x\n",
    "unsupported-patch": "--- a/notes.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-hello\n-world\n",
}


@pytest.mark.parametrize("rule", list(PATCHES))
async def test_bad_patches_change_nothing(ctx: ToolContext, tmp_path: Path, rule: str) -> None:
    # a good first file, then the bad one: atomic, so the first is not applied either
    good = "--- a/notes.old\n+++ b/notes.old\n@@ -1 +1 @@\n-hello\n+changed\n"
    await refused(rule, EditorPatch(), ctx, tmp_path, patch=good + PATCHES[rule])
    assert not Path("/tmp/adjutant-files-escape.txt").exists()


async def test_patch_through_symlinked_target(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    patch = ("--- a/notes.old\n+++ b/notes.old\n@@ -1 +1 @@\n-hello\n+changed\n"
             "--- a/evil/secret.txt\n+++ b/evil/secret.txt\n@@ -1 +1 @@\n-outside secret\n+x\n")
    await refused("symlink", EditorPatch(), ctx, tmp_path, patch=patch)


async def test_zip_refuses_overwrite_and_escape(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "have.zip").write_bytes(b"keep")
    await refused("exists", CompressZip(), ctx, tmp_path, paths=["src"], output="have.zip")
    await refused("traversal", CompressZip(), ctx, tmp_path, paths=["src"],
                  output="../proj-evil/o.zip")
    await refused("cage", CompressZip(), ctx, tmp_path,
                  paths=[str(tmp_path / "proj-evil" / "secret.txt")], output="o.zip")


@needs_rg
@pytest.mark.parametrize("args", [
    {"pattern": "x", "pre": "sh"},
    {"pattern": "x", "hostname_bin": "/bin/sh"},
    {"pattern": "x", "search_zip": True},
    {"pattern": "x", "glob": "--pre=sh"},
    {"pattern": "x", "glob": "{a,b}/**/[x]"},
    {"pattern": "x", "paths": ["--pre=sh"]},
    {"pattern": "x", "paths": ["-e"]},
    {"pattern": "x", "paths": ["../proj-evil"]},
    {"pattern": "x", "paths": ["evil"]},
])
async def test_grep_option_injection_refused(ctx: ToolContext, tmp_path: Path,
                                             args: dict[str, Any]) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    result = await run(SearchGrep(), ctx, **args)
    assert result.status == "error" and "[rule: " in result.stderr, result


@needs_rg
async def test_grep_pattern_starting_with_dash_is_only_a_pattern(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (Path(ctx.cwd) / "opts.txt").write_text("--pre=touch\n")
    result = await run(SearchGrep(), ctx, pattern="--pre=touch", fixed_strings=True)
    assert (result.status, result.stdout) == ("ok", "./opts.txt:1:--pre=touch\n")


@needs_rg
async def test_grep_does_not_follow_links_out(ctx: ToolContext, tmp_path: Path) -> None:
    (Path(ctx.cwd) / "evil").symlink_to(tmp_path / "proj-evil")
    (Path(ctx.cwd) / "leak.txt").symlink_to(tmp_path / "proj-evil" / "secret.txt")
    result = await run(SearchGrep(), ctx, pattern="secret")
    assert (result.status, result.stdout) == ("ok", "")
