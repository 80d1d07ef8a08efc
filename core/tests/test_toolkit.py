"""`adjutant.toolkit`: the helpers a tool author uses to touch files (the same code the
shipped file tools run), each refusal named by its rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adjutant.toolkit import (
    Refused,
    confine,
    read_text,
    refusal,
    unified_diff,
    write_text,
)
from adjutant_hookspecs import ToolCall, ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("one\n")
    return ToolContext(cwd=str(work), cages=(str(work),))


def rule(call: object) -> str:
    with pytest.raises(Refused) as caught:
        call()  # type: ignore[operator]
    return caught.value.rule


def test_paths_are_confined_to_the_cages(ctx: ToolContext, tmp_path: Path) -> None:
    assert confine(ctx, "notes.txt").shown == "notes.txt"
    assert confine(ctx, f"{ctx.cwd}/sub/a.txt").shown == "sub/a.txt"
    assert rule(lambda: confine(ctx, "../secret")) == "traversal"
    assert rule(lambda: confine(ctx, str(tmp_path / "elsewhere.txt"))) == "cage"
    assert rule(lambda: confine(ctx, ".env")) == "protected"
    assert rule(lambda: confine(ToolContext(cwd=ctx.cwd), "notes.txt")) == "cage"


def test_reads_never_follow_a_link_or_open_what_is_not_a_file(ctx: ToolContext,
                                                              tmp_path: Path) -> None:
    work = Path(ctx.cwd)
    (tmp_path / "outside.txt").write_text("secret\n")
    (work / "link.txt").symlink_to(tmp_path / "outside.txt")
    (work / "dir").symlink_to(tmp_path)
    os.mkfifo(work / "pipe")
    assert read_text(ctx, "notes.txt") == "one\n"
    assert read_text(ctx, "new.txt", missing_ok=True) is None
    assert rule(lambda: read_text(ctx, "new.txt")) == "missing"
    assert rule(lambda: read_text(ctx, "link.txt")) == "symlink"
    assert rule(lambda: read_text(ctx, "dir/outside.txt")) == "symlink"
    assert rule(lambda: read_text(ctx, "pipe")) == "not-a-file"  # and it did not block
    (work / "big.txt").write_text("x" * 100)
    assert rule(lambda: read_text(ctx, "big.txt", limit=10)) == "too-large"
    (work / "bin").write_bytes(b"\x00\x01")
    assert rule(lambda: read_text(ctx, "bin")) == "binary"


def test_writes_are_atomic_and_bound_to_what_was_previewed(ctx: ToolContext) -> None:
    work = Path(ctx.cwd)
    old = read_text(ctx, "notes.txt")
    (work / "notes.txt").write_text("changed behind our back\n")
    assert rule(lambda: write_text(ctx, "notes.txt", "two\n", expect=old)) == "changed"
    assert (work / "notes.txt").read_text() == "changed behind our back\n"
    write_text(ctx, "notes.txt", "two\n", expect="changed behind our back\n")
    assert (work / "notes.txt").read_text() == "two\n"
    write_text(ctx, "fresh.txt", "new\n", expect=None)  # None: must not exist yet
    assert rule(lambda: write_text(ctx, "fresh.txt", "again\n", expect=None)) == "changed"
    os.link(work / "fresh.txt", work / "other-name.txt")
    assert rule(lambda: write_text(ctx, "fresh.txt", "x\n")) == "hardlink"
    assert sorted(p.name for p in work.iterdir()) == [
        "fresh.txt", "notes.txt", "other-name.txt"]  # no temporary file left behind


def test_the_preview_and_the_refusal_a_tool_returns() -> None:
    assert unified_diff("a.txt", "one\n", "one\ntwo\n") == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n one\n+two\n")
    assert unified_diff("a.txt", None, "x").startswith("--- /dev/null\n+++ b/a.txt\n")
    result = refusal(ToolCall(tool="my.write", args={"path": "../x"}),
                     Refused("traversal", "`..` is not allowed"))
    assert (result.status, result.stderr) == (
        "error", "my.write: refused: `..` is not allowed [rule: traversal]\n")
