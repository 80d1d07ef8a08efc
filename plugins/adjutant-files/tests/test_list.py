"""``fs.list``: what a directory holds, caged, links never followed, secrets not entered."""

import os
from pathlib import Path

import pytest

from adjutant_files import FsList
from adjutant_files._list import MAX_ENTRIES
from adjutant_hookspecs import ToolContext

from .helpers import make_cage, run

pytestmark = pytest.mark.anyio


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ctx = make_cage(tmp_path)
    cage = Path(ctx.cwd)
    (cage / "docs" / "api").mkdir(parents=True)
    (cage / "docs" / "guide.md").write_text("# guide\n")
    (cage / "docs" / "api" / "ref.md").write_text("x" * 2048)
    (cage / ".hidden").write_text("h")
    (cage / ".git" / "objects").mkdir(parents=True)
    (cage / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return ctx


def names(stdout: str) -> list[str]:
    """The entry column of each line (after the header)."""
    return [line.split("  ")[-1] for line in stdout.splitlines()[1:]]


async def test_lists_one_level_sorted_with_kinds_and_sizes(ctx: ToolContext) -> None:
    result = await run(FsList(), ctx)
    assert result.status == "ok", result.stderr
    assert result.stdout.splitlines()[0] == "./: 5 entries"
    assert names(result.stdout) == ["docs/", "notes.old", "notes.txt", "out/", "src/"]
    line = next(x for x in result.stdout.splitlines() if x.endswith("notes.txt"))
    assert line.startswith("file") and "12 B" in line


async def test_depth_and_glob(ctx: ToolContext) -> None:
    deep = await run(FsList(), ctx, path="docs", depth=3)
    assert names(deep.stdout) == ["docs/api/", "docs/api/ref.md", "docs/guide.md"]
    assert "2.0 KiB" in deep.stdout
    only_md = await run(FsList(), ctx, depth=3, glob="*.md")
    assert names(only_md.stdout) == ["docs/api/ref.md", "docs/guide.md"]


async def test_hidden_entries_on_request_and_git_never_entered(ctx: ToolContext) -> None:
    plain = await run(FsList(), ctx, depth=2)
    assert not [n for n in names(plain.stdout) if n.startswith(".")]
    hidden = await run(FsList(), ctx, depth=3, hidden=True)
    assert ".hidden" in names(hidden.stdout) and ".git/" in names(hidden.stdout)
    assert [n for n in names(hidden.stdout) if n.startswith(".git")] == [".git/"]


async def test_links_are_shown_never_followed(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    (outside / "inner" / "loot.txt").write_text("x")
    os.symlink(outside, Path(ctx.cwd) / "escape")
    result = await run(FsList(), ctx, depth=5)
    assert f"escape -> {outside}" in result.stdout
    assert "loot.txt" not in result.stdout and "inner" not in result.stdout
    refused = await run(FsList(), ctx, path="escape")
    assert refused.status == "error" and "symbolic link" in refused.stderr


async def test_protected_directories_are_named_but_not_entered(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("key")
    (home / "project").mkdir()
    ctx = ToolContext(cwd=str(home), cages=(str(home),), home=str(home),
                      data_home=str(tmp_path / "data"))
    result = await run(FsList(), ctx, depth=3, hidden=True)
    assert ".ssh/" in names(result.stdout) and "project/" in names(result.stdout)
    assert "id_ed25519" not in result.stdout
    direct = await run(FsList(), ctx, path=".ssh")
    assert direct.status == "error" and "protected" in direct.stderr


async def test_refusals_are_clear(ctx: ToolContext) -> None:
    for args, rule in (({"path": "nope"}, "missing"), ({"path": "../"}, "traversal"),
                       ({"path": "notes.txt"}, "not-a-directory"), ({"path": "/"}, "cage")):
        result = await run(FsList(), ctx, **args)
        assert result.status == "error" and f"[rule: {rule}]" in result.stderr, (args, result)


async def test_dry_run_says_what_would_be_listed(ctx: ToolContext) -> None:
    result = await run(FsList(), ctx, dry=True, path="docs", depth=2, glob="*.md")
    assert result.status == "dry_run"
    assert result.dry_run_diff == "list docs/ (depth 2, names matching *.md)"


async def test_long_listings_are_capped_with_a_marker(ctx: ToolContext) -> None:
    many = Path(ctx.cwd) / "many"
    many.mkdir()
    for i in range(MAX_ENTRIES + 7):
        (many / f"f{i:05}").touch()
    result = await run(FsList(), ctx, path="many")
    lines = result.stdout.splitlines()
    assert lines[0] == f"many/: {MAX_ENTRIES + 7} entries"
    assert len(lines) == MAX_ENTRIES + 2 and "7 more entries not shown" in lines[-1]
