"""What each tool does on a real repository, as the user sees it."""

from pathlib import Path
from typing import Any

import pytest

from adjutant.safety import sandbox
from adjutant.testing import needs_sandbox
from adjutant_git import GitBranch, GitCommit, GitDiff, GitLog, GitStatus, GitSwitch
from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext

from .helpers import ctx_for, make_repo, sh

pytestmark = [pytest.mark.anyio,
              needs_sandbox]


async def run(tool: Any, ctx: ToolContext, *, dry: bool = False, **args: Any) -> ExecutionResult:
    call = ToolCall(tool=tool.declaration.name, args=args)
    return await (tool.dry_run(call, ctx) if dry else tool.execute(call, ctx))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


async def test_status_lists_branch_and_changes(repo: Path) -> None:
    (repo / "notes.txt").write_text("two\n")
    (repo / "new.txt").write_text("new\n")
    result = await run(GitStatus(), ctx_for(repo))
    assert result.status == "ok", result.stderr
    assert result.stdout == "## main\n M notes.txt\n?? new.txt\n"
    quiet = await run(GitStatus(), ctx_for(repo), untracked=False)
    assert quiet.stdout == "## main\n M notes.txt\n"


async def test_diff_unstaged_staged_and_against_a_ref(repo: Path) -> None:
    (repo / "notes.txt").write_text("two\n")
    diff = await run(GitDiff(), ctx_for(repo))
    assert "-one\n+two\n" in diff.stdout and diff.stdout.startswith("diff --git a/notes.txt")
    assert (await run(GitDiff(), ctx_for(repo), staged=True)).stdout == ""
    sh(repo, "add", "notes.txt")
    assert "+two" in (await run(GitDiff(), ctx_for(repo), staged=True)).stdout
    assert "+two" in (await run(GitDiff(), ctx_for(repo), ref="HEAD")).stdout
    only_readme = await run(GitDiff(), ctx_for(repo), ref="HEAD", paths=["README.md"])
    assert only_readme.stdout == ""


async def test_diff_preview_is_the_command(repo: Path) -> None:
    preview = await run(GitDiff(), ctx_for(repo), dry=True, staged=True, paths=["a b.txt"])
    assert preview.status == "dry_run"
    assert preview.dry_run_diff == sandbox.preview(
        ["git", f"--git-dir={repo / '.git'}", f"--work-tree={repo}", "diff", "--no-ext-diff",
         "--no-textconv", "--no-color", "--no-renames", "--no-relative", "--src-prefix=a/",
         "--dst-prefix=b/", "--cached", "--", "a b.txt"], cwd=str(repo))


async def test_log_lists_commits_and_refuses_an_unborn_branch(repo: Path, tmp_path: Path) -> None:
    (repo / "notes.txt").write_text("two\n")
    sh(repo, "commit", "-q", "-am", "second")
    log = await run(GitLog(), ctx_for(repo))
    lines = log.stdout.splitlines()
    assert [line.split("\t")[1] for line in lines] == ["second", "initial"]
    assert " 2026-01-01 Ada Tester\t" in lines[0]
    assert len((await run(GitLog(), ctx_for(repo), max_count=1)).stdout.splitlines()) == 1
    readme = await run(GitLog(), ctx_for(repo), path="README.md")
    assert readme.stdout.endswith("\tinitial\n") and "second" not in readme.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    sh(empty, "init", "-q", "-b", "trunk")
    unborn = await run(GitLog(), ctx_for(empty))
    assert unborn.status == "error" and "`no-commits`" in unborn.stderr


async def test_commit_paths_previews_then_commits_exactly(repo: Path) -> None:
    (repo / "new.txt").write_text("fresh\n")
    (repo / "notes.txt").write_text("two\n")
    preview = await run(GitCommit(), ctx_for(repo), dry=True, message="Add new",
                        paths=["new.txt"])
    head = sh(repo, "rev-parse", "HEAD").strip()
    assert preview.status == "dry_run", preview.stderr
    text = preview.dry_run_diff or ""
    assert text.startswith(f"commit on refs/heads/main, parent {head}\ntree ")
    assert ("author Ada Tester <ada@example.com>\nfiles:\n  A\tnew.txt\nmessage:\n"
            "    Add new") in text
    assert sh(repo, "status", "--short") == " M notes.txt\n?? new.txt\n", "dry-run changed"
    result = await run(GitCommit(), ctx_for(repo), message="Add new", paths=["new.txt"])
    assert result.status == "ok", result.stderr
    tree = text.split("\n")[1].removeprefix("tree ")
    assert sh(repo, "rev-parse", "HEAD^{tree}").strip() == tree
    assert sh(repo, "log", "-1", "--format=%s|%an|%P").strip() == f"Add new|Ada Tester|{head}"
    assert sh(repo, "status", "--short") == " M notes.txt\n", "the index matches the commit"
    assert result.stdout.startswith("[main ") and result.stdout.endswith("] Add new\nA\tnew.txt")


async def test_commit_all_and_multiline_and_option_like_messages(repo: Path) -> None:
    (repo / "notes.txt").write_text("two\n")
    message = "--amend\n\n-m is not an option here\n"
    result = await run(GitCommit(), ctx_for(repo), message=message, all=True)
    assert result.status == "ok", result.stderr
    assert sh(repo, "log", "-1", "--format=%B") == message + "\n"
    assert sh(repo, "rev-list", "--count", "HEAD").strip() == "2", "no amend: a new commit"


async def test_commit_refuses_nothing_and_detached_head(repo: Path) -> None:
    nothing = await run(GitCommit(), ctx_for(repo), message="empty")
    assert nothing.status == "error" and "`nothing-to-commit`" in nothing.stderr
    # with `all`, it says nothing changed, not "set `all`" (stop 54, from the dock)
    clean = await run(GitCommit(), ctx_for(repo), message="wip", all=True)
    assert "no tracked file changed since the last commit" in clean.stderr
    assert "set `all`" not in clean.stderr
    sh(repo, "switch", "-q", "--detach")
    (repo / "notes.txt").write_text("two\n")
    detached = await run(GitCommit(), ctx_for(repo), message="x", all=True)
    assert detached.status == "error" and "`detached-head`" in detached.stderr


async def test_first_commit_of_an_empty_repository(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    sh(root, "init", "-q", "-b", "main")
    sh(root, "config", "user.name", "Bo")
    sh(root, "config", "user.email", "bo@example.com")
    (root / "a.txt").write_text("a\n")
    preview = await run(GitCommit(), ctx_for(root), dry=True, message="first", paths=["a.txt"])
    assert "the first commit of the branch" in (preview.dry_run_diff or ""), preview.stderr
    result = await run(GitCommit(), ctx_for(root), message="first", paths=["a.txt"])
    assert result.status == "ok", result.stderr
    assert sh(root, "log", "--format=%s %D") == "first HEAD -> main\n"


async def test_commit_without_identity_says_how_to_set_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "anon"
    root.mkdir()
    sh(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.gitconfig
    result = await run(GitCommit(), ctx_for(root), message="x", paths=["a.txt"])
    assert result.status == "error"
    assert "`identity`" in result.stderr and "git config --global user.name" in result.stderr


async def test_preview_follows_the_content(repo: Path) -> None:
    """A file changed after the preview changes the preview (its tree id), so an
    approval bound to the first preview does not cover the commit."""
    (repo / "notes.txt").write_text("two\n")
    first = await run(GitCommit(), ctx_for(repo), dry=True, message="m", all=True)
    (repo / "notes.txt").write_text("three\n")
    second = await run(GitCommit(), ctx_for(repo), dry=True, message="m", all=True)
    assert first.dry_run_diff != second.dry_run_diff


async def test_branch_create_and_switch(repo: Path) -> None:
    head = sh(repo, "rev-parse", "HEAD").strip()
    preview = await run(GitBranch(), ctx_for(repo), dry=True, name="feature/login")
    assert preview.dry_run_diff == (
        f"create refs/heads/feature/login at {head} (from HEAD)\n"
        f"switch HEAD: refs/heads/main -> refs/heads/feature/login ({head})\n"
        "files that change: none (same commit)")
    (repo / "notes.txt").write_text("uncommitted\n")
    result = await run(GitBranch(), ctx_for(repo), name="feature/login")
    assert result.stdout == f"created branch feature/login at {head[:7]}, switched to " \
                            "feature/login\n"
    assert sh(repo, "symbolic-ref", "--short", "HEAD") == "feature/login\n"
    assert (repo / "notes.txt").read_text() == "uncommitted\n", "local changes kept"
    again = await run(GitBranch(), ctx_for(repo), name="feature/login")
    assert again.status == "error" and "`branch-exists`" in again.stderr


async def test_branch_from_a_start_without_switching(repo: Path) -> None:
    first = sh(repo, "rev-parse", "HEAD").strip()
    (repo / "notes.txt").write_text("two\n")
    sh(repo, "commit", "-q", "-am", "second")
    result = await run(GitBranch(), ctx_for(repo), name="old", start="HEAD~1", switch=False)
    assert result.status == "ok", result.stderr
    assert sh(repo, "rev-parse", "old").strip() == first
    assert sh(repo, "symbolic-ref", "--short", "HEAD") == "main\n"


@pytest.mark.parametrize("name", ["bad..name", "a b", "x.lock", "@", "@{-1}", "tail/", "a~1",
                                  "", "-D", "--force"])
async def test_bad_branch_names_are_refused(repo: Path, name: str) -> None:
    result = await run(GitBranch(), ctx_for(repo), dry=True, name=name)
    assert result.status == "error"
    assert any(f"`{rule}`" in result.stderr
               for rule in ("branch-name", "schema", "no-option-injection")), result.stderr


async def test_switch_changes_files_and_previews_them(repo: Path) -> None:
    sh(repo, "switch", "-q", "-c", "other")
    (repo / "notes.txt").write_text("other\n")
    sh(repo, "commit", "-q", "-am", "on other")
    preview = await run(GitSwitch(), ctx_for(repo), dry=True, branch="main")
    assert "files that change:\n  M\tnotes.txt" in (preview.dry_run_diff or ""), preview
    result = await run(GitSwitch(), ctx_for(repo), branch="main")
    assert result.status == "ok", result.stderr
    assert (repo / "notes.txt").read_text() == "one\n"
    same = await run(GitSwitch(), ctx_for(repo), branch="main")
    assert "`already-there`" in same.stderr
    missing = await run(GitSwitch(), ctx_for(repo), branch="nope")
    assert "`unknown-branch`" in missing.stderr


async def test_outside_a_repository(tmp_path: Path) -> None:
    result = await run(GitStatus(), ctx_for(tmp_path))
    assert result.status == "error" and "`not-a-repository`" in result.stderr
