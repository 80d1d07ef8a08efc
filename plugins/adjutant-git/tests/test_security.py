"""Attacks from the repository and from the call's arguments (SECURITY.md's git classes).

Every "code" an attack plants writes a marker file inside the git directory, which is
writable while a write tool runs: so a marker that stays absent means the code never
ran, not merely that the sandbox stopped its write.
"""

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adjutant import sandbox
from adjutant_git import TOOLS, GitBranch, GitCommit, GitDiff, GitLog, GitStatus, GitSwitch
from adjutant_git._git import git
from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext

from .helpers import ctx_for, make_repo, sh

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(sandbox.available() is not None, reason="no bubblewrap")]


async def run(tool: Any, ctx: ToolContext, *, dry: bool = False, **args: Any) -> ExecutionResult:
    call = ToolCall(tool=tool.declaration.name, args=args)
    return await (tool.dry_run(call, ctx) if dry else tool.execute(call, ctx))


def payload(repo: Path, name: str) -> str:
    """An executable that leaves ``.git/<name>`` behind if anything runs it."""
    script = repo / ".git" / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{repo / '.git' / name}'\ncat\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def hostile(tmp_path: Path) -> Path:
    """A repository with a second branch, `side`, made before any trap is set."""
    repo = make_repo(tmp_path)
    sh(repo, "branch", "side")
    return repo


async def every_tool(repo: Path) -> list[ExecutionResult]:
    """One call of each tool, dry-runs and executions, in an order that all can work."""
    ctx = ctx_for(repo)
    (repo / "notes.txt").write_text("changed\n")
    results = [await run(GitStatus(), ctx), await run(GitDiff(), ctx),
               await run(GitDiff(), ctx, ref="HEAD"), await run(GitLog(), ctx)]
    for dry in (True, False):
        results += [await run(GitCommit(), ctx, dry=dry, message="m", all=True),
                    await run(GitBranch(), ctx, dry=dry, name="b2"),
                    await run(GitSwitch(), ctx, dry=dry, branch="side")]
    return results


@pytest.mark.parametrize("setting", [
    ("core.fsmonitor", "{x}"), ("core.pager", "{x}"), ("pager.log", "{x}"),
    ("diff.external", "{x}"), ("core.editor", "{x}"), ("sequence.editor", "{x}"),
    ("gpg.program", "{x}"), ("core.sshCommand", "{x}"), ("core.askPass", "{x}"),
    ("credential.helper", "!{x}"), ("core.hooksPath", "{hooks}"),
])
async def test_repository_config_cannot_run_code(tmp_path: Path, setting: Any) -> None:
    repo = hostile(tmp_path)
    key, template = setting
    hooks = repo / ".git" / "evil-hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-commit", "reference-transaction", "post-checkout"):
        os.symlink(payload(repo, "hook-ran"), hooks / hook)
    sh(repo, "config", key, template.format(x=payload(repo, "ran"), hooks=hooks))
    sh(repo, "config", "commit.gpgSign", "true")
    results = await every_tool(repo)
    assert [r.status for r in results] == ["ok"] * 4 + ["dry_run"] * 3 + ["ok"] * 3, \
        [r.stderr for r in results if r.status not in ("ok", "dry_run")]
    assert not (repo / ".git" / "ran").exists() and not (repo / ".git" / "hook-ran").exists()


async def test_default_hooks_never_run(tmp_path: Path) -> None:
    repo = hostile(tmp_path)
    for hook in ("pre-commit", "commit-msg", "post-commit", "reference-transaction",
                 "post-checkout", "pre-auto-gc", "post-index-change"):
        os.symlink(payload(repo, "hook-ran"), repo / ".git" / "hooks" / hook)
    results = await every_tool(repo)
    assert all(r.status in ("ok", "dry_run") for r in results), [r.stderr for r in results]
    assert sh(repo, "log", "-1", "--format=%s", "main") == "m\n"
    assert not (repo / ".git" / "hook-ran").exists()


async def test_textconv_and_external_diff_drivers_are_not_used(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / ".gitattributes").write_text("*.txt diff=evil\n")
    sh(repo, "config", "diff.evil.textconv", payload(repo, "ran"))
    sh(repo, "config", "diff.evil.command", payload(repo, "ran"))
    (repo / "notes.txt").write_text("two\n")
    diff = await run(GitDiff(), ctx_for(repo))
    log = await run(GitLog(), ctx_for(repo))
    assert "-one\n+two\n" in diff.stdout and log.status == "ok"
    assert not (repo / ".git" / "ran").exists()


@pytest.mark.parametrize("key", ["filter.evil.clean", "filter.evil.smudge",
                                 "filter.evil.process", "merge.evil.driver",
                                 "core.alternateRefsCommand", "uploadpack.packObjectsHook",
                                 "include.path"])
async def test_program_keys_that_cannot_be_neutralised_are_refused(
        tmp_path: Path, key: str) -> None:
    repo = hostile(tmp_path)
    (repo / ".gitattributes").write_text("* filter=evil merge=evil\n")
    if key == "include.path":  # the program key arrives through an included file
        included = repo / ".git" / "more.cfg"
        included.write_text(f"[filter \"evil\"]\n\tclean = {payload(repo, 'ran')}\n")
        sh(repo, "config", key, str(included))
    else:
        sh(repo, "config", key, payload(repo, "ran"))
    results = await every_tool(repo)
    assert all(r.status == "error" and "`repository-config-runs-code`" in r.stderr
               for r in results), [r.stderr for r in results]
    assert not (repo / ".git" / "ran").exists()


async def test_a_read_cannot_write_even_if_code_ran(tmp_path: Path) -> None:
    """The last layer on its own: code git runs during a read is sandboxed read-only."""
    repo = make_repo(tmp_path)
    marker = repo / ".git" / "ran"
    escaped = tmp_path / "escaped"
    result = await git(["-c", f"alias.x=!touch {marker}; touch {escaped}", "x"],
                       cwd=str(repo), check=False)
    assert "Read-only file system" in result.stderr  # (the tmp_path write hit a tmpfs)
    assert not marker.exists() and not escaped.exists()


@pytest.mark.parametrize(("tool", "args"), [
    (GitDiff, {"ref": "--output=/tmp/adjutant-pwned"}),
    (GitLog, {"ref": "--output=/tmp/adjutant-pwned"}),
    (GitBranch, {"name": "-D"}), (GitBranch, {"name": "x", "start": "--orphan"}),
    (GitSwitch, {"branch": "--detach"}), (GitSwitch, {"branch": "-"}),
])
async def test_option_injection_is_refused(tmp_path: Path, tool: Any, args: Any) -> None:
    repo = make_repo(tmp_path)
    for dry in (True, False):
        result = await run(tool(), ctx_for(repo), dry=dry, **args)
        assert result.status == "error" and "`no-option-injection`" in result.stderr
    assert not Path("/tmp/adjutant-pwned").exists()
    assert sh(repo, "branch", "--format=%(refname:short)") == "main\n"


async def test_option_like_paths_are_paths(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    out = repo / "pwned"
    diff = await run(GitDiff(), ctx_for(repo), paths=[f"--output={out}"])
    commit = await run(GitCommit(), ctx_for(repo), message="m", paths=[f"--output={out}"])
    assert diff.status == "ok" and diff.stdout == ""
    assert commit.status == "error" and "did not match any files" in commit.stderr
    assert not out.exists()


async def test_paths_are_literal(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "README.md").write_text("changed\n")
    for spec in ["*.md", ":(exclude)notes.txt", ":!notes.txt", ":/README.md"]:
        diff = await run(GitDiff(), ctx_for(repo), paths=[spec])
        assert diff.stdout == "", spec
    assert "+changed" in (await run(GitDiff(), ctx_for(repo), paths=["README.md"])).stdout


async def test_refs_are_resolved_before_use(tmp_path: Path) -> None:
    """A branch named like a file cannot be confused with one: the ref is a commit id."""
    repo = make_repo(tmp_path)
    sh(repo, "branch", "notes.txt")
    preview = await run(GitLog(), ctx_for(repo), dry=True, ref="notes.txt")
    head = sh(repo, "rev-parse", "HEAD").strip()
    assert f"--end-of-options {head} --" in (preview.dry_run_diff or "")
    unknown = await run(GitDiff(), ctx_for(repo), ref="no-such-ref")
    assert "`unknown-ref`" in unknown.stderr


async def test_writes_outside_the_cages_are_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "notes.txt").write_text("two\n")
    uncaged = ToolContext(cwd=str(repo), cages=(str(tmp_path / "elsewhere"),))
    before = sh(repo, "for-each-ref")
    for tool, args in [(GitCommit, {"message": "m", "all": True}), (GitBranch, {"name": "b"}),
                       (GitSwitch, {"branch": "main"})]:
        result = await run(tool(), uncaged, **args)
        assert result.status == "error"
    assert sh(repo, "for-each-ref") == before


async def test_a_worktree_whose_repository_is_outside_the_cage(tmp_path: Path) -> None:
    """A linked worktree's objects and refs live in the main repository: writing there
    needs that repository in a cage too, however the worktree's `.git` file points."""
    repo = make_repo(tmp_path)
    linked = tmp_path / "linked"
    sh(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "notes.txt").write_text("two\n")
    result = await run(GitCommit(), ctx_for(linked), message="m", all=True)
    assert result.status == "error" and "`cage`" in result.stderr
    assert str(repo / ".git") in result.stderr
    allowed = ToolContext(cwd=str(linked), cages=(str(linked), str(repo)))
    ok = await run(GitCommit(), allowed, message="m", all=True)
    assert ok.status == "ok", ok.stderr


async def test_the_callers_git_environment_does_not_leak(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "x").mkdir()
    other = make_repo(tmp_path / "x")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /tmp/x'")
    (repo / "notes.txt").write_text("two\n")
    result = await run(GitStatus(), ctx_for(repo))
    assert result.stdout == "## main\n M notes.txt\n"


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(TOOLS), st.dictionaries(
    st.sampled_from(["name", "branch", "ref", "start", "message", "paths", "path", "all",
                     "staged", "switch", "max_count", "untracked", "other"]),
    st.one_of(st.text(max_size=12), st.booleans(), st.integers(-3, 300),
              st.lists(st.text(max_size=8), max_size=3), st.none()), max_size=3))
async def test_any_arguments_are_refused_or_previewed(tmp_path: Path, tool: Any,
                                                      args: dict[str, Any]) -> None:
    repo = tmp_path / "repo"
    if not repo.exists():
        make_repo(tmp_path)
    result = await run(tool(), ctx_for(repo), dry=True, **args)
    assert result.status in ("dry_run", "error")
    if result.status == "error":
        assert "refused by rule `" in result.stderr
