"""What each tool does when the call is fine."""

import io
import zipfile
from pathlib import Path

import pytest

from adjutant.testing import needs_sandbox
from adjutant_files import CompressZip, EditorPatch, FsAppend, FsDiff, FsRead, FsWrite, SearchGrep
from adjutant_hookspecs import ToolContext

from .helpers import make_cage, run

pytestmark = pytest.mark.anyio
needs_rg = needs_sandbox


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_cage(tmp_path)


def cage(ctx: ToolContext) -> Path:
    return Path(ctx.cwd)


async def test_read(ctx: ToolContext) -> None:
    assert (await run(FsRead(), ctx, path="notes.txt")).stdout == "hello\nworld\n"
    assert (await run(FsRead(), ctx, path="notes.txt", max_bytes=3)).stdout == "hel"
    (cage(ctx) / "u.txt").write_text("aé")
    assert (await run(FsRead(), ctx, path="u.txt", max_bytes=2)).stdout == "a"
    abs_path = str(cage(ctx) / "notes.txt")
    assert (await run(FsRead(), ctx, path=abs_path)).status == "ok"


async def test_write_previews_exact_diff_then_writes(ctx: ToolContext) -> None:
    preview = await run(FsWrite(), ctx, dry=True, path="notes.txt", content="hello\nthere\n")
    assert preview.dry_run_diff == ("--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n"
                                    " hello\n-world\n+there\n")
    result = await run(FsWrite(), ctx, path="notes.txt", content="hello\nthere\n")
    assert result.status == "ok", result.stderr
    assert (cage(ctx) / "notes.txt").read_text() == "hello\nthere\n"
    assert sorted(p.name for p in cage(ctx).iterdir()) == ["notes.old", "notes.txt", "out", "src"]


async def test_write_creates(ctx: ToolContext) -> None:
    preview = await run(FsWrite(), ctx, dry=True, path="src/new.txt", content="x")
    assert preview.dry_run_diff is not None
    assert preview.dry_run_diff.startswith("create src/new.txt (1 bytes)\n--- /dev/null\n")
    assert "\\ No newline at end of file" in preview.dry_run_diff
    assert (await run(FsWrite(), ctx, path="src/new.txt", content="x")).status == "ok"
    assert (cage(ctx) / "src/new.txt").read_text() == "x"


async def test_write_keeps_mode(ctx: ToolContext) -> None:
    (cage(ctx) / "notes.txt").chmod(0o600)
    await run(FsWrite(), ctx, path="notes.txt", content="x\n")
    assert (cage(ctx) / "notes.txt").stat().st_mode & 0o777 == 0o600


async def test_append(ctx: ToolContext) -> None:
    preview = await run(FsAppend(), ctx, dry=True, path="notes.txt", content="more\n")
    assert preview.dry_run_diff is not None and "+more\n" in preview.dry_run_diff
    assert (await run(FsAppend(), ctx, path="notes.txt", content="more\n")).status == "ok"
    assert (cage(ctx) / "notes.txt").read_text() == "hello\nworld\nmore\n"
    missing = await run(FsAppend(), ctx, path="nope.txt", content="x")
    assert (missing.status, "[rule: missing]" in missing.stderr) == ("error", True)


async def test_diff(ctx: ToolContext) -> None:
    result = await run(FsDiff(), ctx, a="notes.old", b="notes.txt")
    assert result.stdout == "--- a/notes.old\n+++ b/notes.txt\n@@ -1 +1,2 @@\n hello\n+world\n"


async def test_patch_applies_and_creates(ctx: ToolContext) -> None:
    patch = ("diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n"
             "@@ -1,2 +1,3 @@\n hello\n-world\n+there\n+again\n"
             "--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
             "\\ No newline at end of file\n")
    preview = await run(EditorPatch(), ctx, dry=True, patch=patch)
    assert preview.dry_run_diff == (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,3 @@\n hello\n-world\n+there\n+again\n"
        "--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        "\\ No newline at end of file\n")
    result = await run(EditorPatch(), ctx, patch=patch)
    assert result.status == "ok", result.stderr
    assert (cage(ctx) / "notes.txt").read_text() == "hello\nthere\nagain\n"
    assert (cage(ctx) / "src/new.py").read_text() == "a\nb"


async def test_zip(ctx: ToolContext) -> None:
    (cage(ctx) / "src" / ".env").write_text("SECRET=1")
    (cage(ctx) / "src" / "link").symlink_to("/etc/passwd")
    preview = await run(CompressZip(), ctx, dry=True, paths=["src", "notes.txt"], output="a.zip")
    assert preview.dry_run_diff == ("create a.zip with 2 file(s):\n  src/app.py\n  notes.txt\n"
                                    "  skipped link: src/link\n"
                                    "  withheld (protected): src/.env: src/.env matches "
                                    "**/.env, protected as an environment file (it usually "
                                    "holds API keys)\n")
    assert (await run(CompressZip(), ctx, paths=["src", "notes.txt"], output="a.zip")).status \
        == "ok"
    with zipfile.ZipFile(io.BytesIO((cage(ctx) / "a.zip").read_bytes())) as archive:
        assert archive.namelist() == ["src/app.py", "notes.txt"]
        assert archive.read("notes.txt") == b"hello\nworld\n"
    again = await run(CompressZip(), ctx, paths=["notes.txt"], output="a.zip")
    assert (again.status, "[rule: exists]" in again.stderr) == ("error", True)
    assert not [p for p in cage(ctx).iterdir() if p.name.startswith(".adjutant-")]


@needs_rg
async def test_grep_finds_with_options(ctx: ToolContext) -> None:
    result = await run(SearchGrep(), ctx, pattern="todo", ignore_case=True, glob="*.py")
    assert (result.status, result.stdout) == ("ok", "./src/app.py:2:    return 1  # TODO\n")
    none = await run(SearchGrep(), ctx, pattern="absent-word", paths=["src"])
    assert (none.status, none.stdout) == ("ok", "")
    preview = await run(SearchGrep(), ctx, dry=True, pattern="x", paths=["src"])
    assert preview.dry_run_diff is not None
    assert preview.dry_run_diff.startswith("run: rg --no-config ")
    assert "-e x -- src" in preview.dry_run_diff


@needs_rg
async def test_grep_output_is_capped(ctx: ToolContext) -> None:
    (cage(ctx) / "big.txt").write_text("match line\n" * 60000)
    result = await run(SearchGrep(), ctx, pattern="match", paths=["big.txt"])
    assert result.status == "ok"
    assert len(result.stdout) < 300_000 and "output truncated" in result.stdout
