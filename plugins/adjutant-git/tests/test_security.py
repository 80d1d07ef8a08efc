"""Attacks from the repository and from the call's arguments (config,
hooks, filters, paths outside).

Every "code" an attack plants writes a marker file inside the git directory, which is
writable while a write tool runs: so a marker that stays absent means the code never
ran, not merely that the sandbox stopped its write.
"""

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adjutant.testing import needs_sandbox
from adjutant_git import TOOLS, GitBranch, GitCommit, GitDiff, GitLog, GitStatus, GitSwitch
from adjutant_git._git import git
from adjutant_hookspecs import ExecutionResult, ToolCall, ToolContext

from .helpers import ctx_for, make_repo, sh

#: Where the attacks' homes and repositories live: outside /tmp, which the sandbox
#: replaces with an empty one.
VISIBLE = "/var/tmp"

pytestmark = [pytest.mark.anyio,
              needs_sandbox]


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


# -- indirect reads: git reads nothing outside the cage, and a
# -- diff never shows what fs.read would refuse -----------------------------------------

MARKER = "SECRET-MARKER-7f3a"


@pytest.fixture
def root() -> Iterator[Path]:
    """A directory the sandbox sees (it mounts a fresh /tmp): a home or a repository
    outside the cage must be really there for git, or the attacks prove nothing."""
    root = Path(tempfile.mkdtemp(prefix="adjutant-git-test-", dir=VISIBLE))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fake_home(root: Path) -> Path:
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARKER}\n")
    return home


def caged(repo: Path, home: Path, *cages: Path) -> ToolContext:
    return ToolContext(cwd=str(repo), cages=tuple(map(str, cages or (repo,))), home=str(home))


def name_in_index(repo: Path, name: str) -> None:
    """An index entry for ``name`` holding the empty blob: a diff shows the file's
    content as added lines, without the set-up ever reading the file."""
    empty = sh(repo, "hash-object", "-w", "--stdin").strip()
    sh(repo, "update-index", "--add", "--cacheinfo", f"100644,{empty},{name}")


async def every_read(ctx: ToolContext) -> list[ExecutionResult]:
    return [await run(GitStatus(), ctx), await run(GitDiff(), ctx),
            await run(GitDiff(), ctx, staged=True), await run(GitDiff(), ctx, ref="HEAD"),
            await run(GitLog(), ctx), await run(GitDiff(), ctx, dry=True),
            await run(GitCommit(), ctx, dry=True, message="m", all=True),
            await run(GitBranch(), ctx, dry=True, name="b")]


def assert_refused(results: list[ExecutionResult], *words: str) -> None:
    for result in results:
        assert result.status == "error" and "`cage`" in result.stderr, result
        assert all(word in result.stderr for word in words), result.stderr
        assert MARKER not in result.stdout + result.stderr + (result.dry_run_diff or "")


async def test_a_work_tree_outside_the_cage_is_refused(root: Path) -> None:
    """The reproduction: `core.worktree = $HOME`, an index naming `.ssh/id_rsa`."""
    home = fake_home(root)
    repo = make_repo(root)
    sh(repo, "config", "core.worktree", str(home))
    name_in_index(repo, ".ssh/id_rsa")
    assert_refused(await every_read(caged(repo, home)), "work tree", str(home))


async def test_a_work_tree_inside_the_cage_is_used(root: Path) -> None:
    home = fake_home(root)
    repo = make_repo(root)
    (repo / "tree").mkdir()
    sh(repo, "config", "core.worktree", str(repo / "tree"))
    (repo / "tree" / "new.txt").write_text("x\n")
    status = await run(GitStatus(), caged(repo, home))
    assert status.status == "ok" and "new.txt" in status.stdout, status


async def test_a_git_file_or_commondir_pointing_out_is_refused(root: Path) -> None:
    home = fake_home(root)
    outside = make_repo(root)
    work = root / "work"
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    assert_refused(await every_read(caged(work, home)), "git directory")
    # a git directory inside the cage whose commondir is the repository outside
    inner = root / "work2"
    (inner / ".git").mkdir(parents=True)
    for name in ("HEAD", "commondir"):
        (inner / ".git" / name).write_text(
            {"HEAD": "ref: refs/heads/main\n", "commondir": f"{outside / '.git'}\n"}[name])
    assert_refused(await every_read(caged(inner, home)), "common directory")


async def test_alternates_outside_the_cage_are_refused(root: Path) -> None:
    home = fake_home(root)
    (root / "other").mkdir()
    other = make_repo(root / "other")
    repo = make_repo(root)
    info = repo / ".git" / "objects" / "info"
    info.mkdir(exist_ok=True)
    (info / "alternates").write_text(f"# a comment\n{other / '.git' / 'objects'}\n")
    assert_refused(await every_read(caged(repo, home)), "alternate object directory")
    # the same repository with both in the cage is fine
    ok = await run(GitLog(), caged(repo, home, root))
    assert ok.status == "ok", ok.stderr
    # a link in place of the alternates file is never followed
    (info / "alternates").unlink()
    (info / "alternates").symlink_to(home / ".ssh" / "id_rsa")
    assert_refused(await every_read(caged(repo, home, root)))


async def test_a_config_include_outside_the_cage_is_refused(root: Path) -> None:
    home = fake_home(root)
    (home / "shared.gitconfig").write_text(f"[user]\n\tname = {MARKER}\n")
    repo = make_repo(root)
    sh(repo, "config", "include.path", str(home / "shared.gitconfig"))
    assert_refused(await every_read(caged(repo, home)), "configuration file")


async def test_a_config_include_of_a_secret_never_shows_it(root: Path) -> None:
    # The sandbox hides the call's home secrets from git, so the include reads nothing
    # (and the audit has nothing to refuse): either way no byte of the secret comes back.
    home = fake_home(root)
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[user]\n\tname = {MARKER}\n")
    repo = make_repo(root)
    sh(repo, "config", "include.path", str(home / ".aws" / "credentials"))
    for result in await every_read(caged(repo, home)):
        assert MARKER not in result.stdout + result.stderr + (result.dry_run_diff or "")


def secrets_in_repo(root: Path) -> tuple[Path, Path]:
    """A repository whose files include a hard link to the home's key, a copy of a key
    under keys/ and an environment file, each showing MARKER in a diff."""
    home = fake_home(root)
    repo = make_repo(root)
    (repo / "keys").mkdir()
    (repo / "keys" / "id_rsa").write_text("old\n")
    (repo / "sub dir").mkdir()
    (repo / "sub dir" / ".env").write_text("old\n")
    (repo / 'we"ird').mkdir()
    (repo / 'we"ird' / ".env.local").write_text("old\n")
    sh(repo, "add", ".")
    sh(repo, "commit", "-q", "-m", "files")
    for path in ("keys/id_rsa", "sub dir/.env", 'we"ird/.env.local'):
        (repo / path).write_text(f"{MARKER}\n")
    os.link(home / ".ssh" / "id_rsa", repo / "h")
    name_in_index(repo, "h")
    (repo / "notes.txt").write_text("two\n")
    return repo, home


async def test_a_diff_withholds_protected_files(root: Path) -> None:
    repo, home = secrets_in_repo(root)
    ctx = caged(repo, home)
    diff = await run(GitDiff(), ctx)
    assert diff.status == "ok", diff.stderr
    assert MARKER not in diff.stdout
    assert "-one\n+two\n" in diff.stdout  # the rest is still shown
    assert diff.stdout.count("[withheld by Adjutant:") == 4
    assert "h is a hard link to" in diff.stdout
    sh(repo, "add", "keys/id_rsa", "sub dir/.env", 'we"ird/.env.local', "notes.txt")
    for args in ({"staged": True}, {"ref": "HEAD"}, {"paths": ["keys", "h"]},
                 {"ref": "HEAD", "paths": ["sub dir/.env"]}):
        result = await run(GitDiff(), ctx, **args)
        assert result.status == "ok" and MARKER not in result.stdout, (args, result)


@pytest.mark.parametrize("name", ["a b.txt", "x b/y.txt", "b a/ b/c.txt", 'q"uote.txt',
                                  "tab\there.txt", "ünï code.txt", " lead.txt", "-n.txt"])
async def test_a_diff_of_unprotected_odd_names_is_shown(root: Path, name: str) -> None:
    home = fake_home(root)
    repo = make_repo(root)
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text("one\n")
    sh(repo, "add", ".")
    sh(repo, "commit", "-q", "-m", "odd")
    (repo / name).write_text("two\n")
    diff = await run(GitDiff(), caged(repo, home))
    assert "-one\n+two\n" in diff.stdout and "withheld" not in diff.stdout, diff.stdout
    (repo / name).unlink()
    os.link(home / ".ssh" / "id_rsa", repo / name)  # the same name, now the key
    diff = await run(GitDiff(), caged(repo, home))
    assert MARKER not in diff.stdout and "[withheld by Adjutant:" in diff.stdout, diff.stdout


async def test_a_commit_never_copies_a_protected_file_into_the_repository(root: Path) -> None:
    repo, home = secrets_in_repo(root)
    ctx = caged(repo, home)
    before = sh(repo, "rev-parse", "HEAD")
    for args in ({"paths": ["keys/id_rsa"]}, {"paths": ["h"]}, {"all": True},
                 {"paths": ["sub dir/.env", "notes.txt"]}):
        for dry in (True, False):
            result = await run(GitCommit(), ctx, dry=dry, message="m", **args)
            assert result.status == "error" and "`protected`" in result.stderr, (args, result)
            assert MARKER not in result.stderr + (result.dry_run_diff or "")
    assert sh(repo, "rev-parse", "HEAD") == before
    sh(repo, "update-index", "--force-remove", "h")  # the planted entry, else committed too
    ok = await run(GitCommit(), ctx, message="notes only", paths=["notes.txt"])
    assert ok.status == "ok", ok.stderr
