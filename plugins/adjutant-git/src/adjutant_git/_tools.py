"""The git tools: status, diff, log (read); commit, branch, switch (write).

Each call is checked (`_Args`), then planned: the plan is what the dry-run shows and
exactly what execution does. Refs are resolved to object ids once, in the plan.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from typing import Any

from adjutant.safety.regular import open_regular
from adjutant_hookspecs import ARG_ROLE, ExecutionResult, ToolCall, ToolContext, ToolDeclaration
from adjutant_hookspecs import ToolSafety as Safety

from ._diffs import DIFF_FORMAT, unquoted, withhold
from ._git import EMPTY_TREE, ZERO, GitRefusal, Repo, git, identity, open_repo

__all__ = ["TOOLS", "GitBranch", "GitCommit", "GitDiff", "GitLog", "GitStatus", "GitSwitch"]

MAX_MESSAGE = 10_000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _schema(properties: dict[str, Any], required: list[str],
            requests: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False, "x-adjutant-requests": requests}


#: Names git takes hold no whitespace (``git check-ref-format``); the planner's grammar
#: then ends a name at the first space ("hotfix/x off release/1.0").
_ONE_WORD = r"^\S+$"
_REF = {"type": "string", "minLength": 1, "maxLength": 256, "pattern": _ONE_WORD,
        "description": "A branch, tag or commit (e.g. `main`, `HEAD~2`, `v1.0`); never an "
                       "option."}
_PATHS = {"type": "array", ARG_ROLE: "paths", "maxItems": 1000,
          "items": {"type": "string", "minLength": 1, "maxLength": 4096},
          "description": "Files or directories, relative to the working directory; matched "
                         "literally (no globs, no pathspec magic)."}


class _Args:
    """The checked arguments of a call; each getter raises `GitRefusal` on bad input."""

    def __init__(self, call: ToolCall, allowed: set[str]) -> None:
        self.args = call.args
        if unknown := sorted(set(call.args) - allowed):
            raise GitRefusal("schema", f"unknown argument(s) {unknown}")

    def flag(self, name: str, default: bool) -> bool:
        value = self.args.get(name, default)
        if not isinstance(value, bool):
            raise GitRefusal("schema", f"`{name}` must be true or false")
        return value

    def text(self, name: str, *, required: bool = False, limit: int = 256) -> str | None:
        value = self.args.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            raise GitRefusal("schema", f"`{name}` must be a non-empty string of at most "
                             f"{limit} characters")
        if "\x00" in value:
            raise GitRefusal("schema", f"`{name}` contains a NUL byte")
        return value

    def word(self, name: str, *, required: bool = False) -> str | None:
        """A ref or branch name: one word that can never be read as an option."""
        value = self.text(name, required=required)
        if value is None:
            return None
        if value.startswith("-"):
            raise GitRefusal("no-option-injection", f"`{name}` {value!r} starts with `-`; "
                             "git would read it as an option")
        if _CONTROL.search(value) or any(c.isspace() for c in value):
            raise GitRefusal("schema", f"`{name}` {value!r} contains spaces or control "
                             "characters")
        return value

    def paths(self, name: str) -> list[str]:
        value = self.args.get(name, [])
        if not isinstance(value, list) or not all(isinstance(p, str) and p and "\x00" not in p
                                                  for p in value):
            raise GitRefusal("schema", f"`{name}` must be an array of non-empty strings")
        return list(value)

    def count(self, name: str, default: int, high: int) -> int:
        value = self.args.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
            raise GitRefusal("schema", f"`{name}` must be an integer from 1 to {high}")
        return value


async def _commit(repo: Repo, ref: str) -> str:
    """The commit id ``ref`` names (resolved once: later steps use only the id)."""
    found = await git(["rev-parse", "-q", "--verify", "--end-of-options", f"{ref}^{{commit}}"],
                      cwd=repo.cwd, repo=repo, check=False)
    if found.returncode != 0 or not found.stdout.strip():
        raise GitRefusal("unknown-ref", f"{ref!r} names no commit in this repository")
    return str(found.stdout.strip())


def _result(call: ToolCall, **fields: Any) -> ExecutionResult:
    return ExecutionResult(tool=call.tool, args=dict(call.args), **fields)


class _GitTool:
    """Shared shape: ``_plan`` checks and prepares; dry-run shows it; execute runs it."""

    declaration: ToolDeclaration

    async def _plan(self, call: ToolCall, ctx: ToolContext) -> tuple[Repo, Any, str]:
        raise NotImplementedError

    async def _run(self, repo: Repo, plan: Any, ctx: ToolContext) -> tuple[str, str]:
        raise NotImplementedError

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        try:
            _, _, text = await self._plan(call, ctx)
        except GitRefusal as refusal:
            return _refused(call, refusal)
        return _result(call, status="dry_run", dry_run_diff=text)

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        try:
            repo, plan, _ = await self._plan(call, ctx)
            stdout, stderr = await self._run(repo, plan, ctx)
        except GitRefusal as refusal:
            return _refused(call, refusal)
        return _result(call, status="ok", stdout=stdout, stderr=stderr)


def _refused(call: ToolCall, refusal: GitRefusal) -> ExecutionResult:
    return _result(call, status="error", stderr=f"{call.tool}: {refusal}")


class _ReadTool(_GitTool):
    """Reads: the preview is the git command line and where it runs."""

    async def _args(self, call: ToolCall, repo: Repo) -> list[str]:
        raise NotImplementedError

    async def _plan(self, call: ToolCall, ctx: ToolContext) -> tuple[Repo, Any, str]:
        repo = await open_repo(ctx.cwd, ctx.cages, _shield(ctx, self.declaration))
        args = await self._args(call, repo)
        from adjutant.safety import sandbox

        return repo, args, sandbox.preview(["git", *repo.location(), *args], cwd=repo.cwd)

    async def _run(self, repo: Repo, plan: Any, ctx: ToolContext) -> tuple[str, str]:
        result = await git(plan, cwd=repo.cwd, repo=repo)
        return result.stdout, result.stderr


class GitStatus(_ReadTool):
    declaration = ToolDeclaration(
        name="git.status", version="0.1.0",
        summary="Show the git status",
        description="Show the current branch and which files are modified, staged or "
                    "untracked (git status, short form).",
        args_schema=_schema(
            {"untracked": {"type": "boolean",
                           "description": "List untracked files too (default true)."}},
            [], ["what changed in this repository?", "git status", "which files did I modify?"]),
        safety=Safety(writes=False, level="read", network=False),
        examples=({}, {"untracked": False}),
    )

    async def _args(self, call: ToolCall, repo: Repo) -> list[str]:
        untracked = _Args(call, {"untracked"}).flag("untracked", True)
        return ["status", "--short", "--branch",
                f"--untracked-files={'all' if untracked else 'no'}"]


class GitDiff(_ReadTool):
    declaration = ToolDeclaration(
        name="git.diff", version="0.1.0",
        summary="Show the changes[ against {ref}][ in {paths}]",
        description="Show changes as a unified diff: the working tree against the index, "
                    "the staged changes, or the working tree against a commit.",
        args_schema=_schema(
            {"staged": {"type": "boolean",
                        "description": "Show the staged changes (what a commit would "
                                       "contain) instead of the unstaged ones."},
             "ref": {**_REF, "description": "Compare against this commit instead of the "
                                            "index (e.g. `HEAD~1`, `main`)."},
             "paths": _PATHS},
            [], ["show me the diff", "what did I change in src/app.py?",
                 "what is staged for commit?"]),
        safety=Safety(writes=False, level="read", network=False),
        examples=({}, {"staged": True}, {"paths": ["README.md"]}),
    )

    async def _args(self, call: ToolCall, repo: Repo) -> list[str]:
        args = _Args(call, {"staged", "ref", "paths"})
        staged, ref, paths = args.flag("staged", False), args.word("ref"), args.paths("paths")
        line = ["diff", "--no-ext-diff", "--no-textconv", "--no-color", *DIFF_FORMAT]
        if staged:
            line.append("--cached")
        if ref is not None:
            line += ["--end-of-options", await _commit(repo, ref)]
        return [*line, "--", *paths]

    async def _run(self, repo: Repo, plan: Any, ctx: ToolContext) -> tuple[str, str]:
        """The diff, with every protected file's changes withheld (`withhold`)."""
        from adjutant.safety.protection import Shield

        try:
            shield = Shield.for_context(ctx, self.declaration)
        except ValueError as exc:  # an unusable deny pattern: fail closed
            raise GitRefusal("protection", f"the deny rules cannot be applied: {exc}") from None
        stdout, stderr = await super()._run(repo, plan, ctx)
        return withhold(stdout, repo.top, shield), stderr


class GitLog(_ReadTool):
    declaration = ToolDeclaration(
        name="git.log", version="0.1.0",
        summary="Show recent commits[ of {ref}][ touching {path}]",
        description="List recent commits (short id, date, author, subject), newest first, "
                    "optionally of one branch or one file.",
        args_schema=_schema(
            {"max_count": {"type": "integer", "minimum": 1, "maximum": 200,
                           "description": "How many commits to list, most recent first "
                                          "(default 10)."},
             "ref": {**_REF, "description": "Start from this branch or commit (default "
                                            "HEAD)."},
             "path": {"type": "string", ARG_ROLE: "path", "minLength": 1, "maxLength": 4096,
                      "description": "Only commits touching this file or directory."}},
            [], ["show the last commits", "who changed README.md recently?",
                 "git log of the main branch"]),
        safety=Safety(writes=False, level="read", network=False),
        examples=({}, {"max_count": 3}, {"path": "README.md", "max_count": 5}),
    )

    async def _args(self, call: ToolCall, repo: Repo) -> list[str]:
        args = _Args(call, {"max_count", "ref", "path"})
        count, ref = args.count("max_count", 10, 200), args.word("ref")
        path = args.text("path", limit=4096)
        start = await _commit(repo, ref) if ref is not None else repo.head
        if start is None:
            raise GitRefusal("no-commits", f"branch {repo.branch} has no commits yet")
        return ["log", "--no-color", "--no-ext-diff", "--no-textconv", "--date=short",
                "--format=%h %ad %an%x09%s", f"--max-count={count}", "--end-of-options",
                start, "--", *([path] if path else [])]


class GitCommit(_GitTool):
    """Commit with plumbing: the staged tree is computed first (in a private index and,
    for the dry-run, a private object store), so the preview names the exact tree,
    and the branch moves only from the commit the preview named."""

    declaration = ToolDeclaration(
        name="git.commit", version="0.1.0",
        summary="Commit “{message}”[ ({paths})]",
        description="Record a commit on the current branch with the given message: what "
                    "is staged, plus the listed paths or all tracked changes. Never "
                    "amends, never pushes, runs no hooks.",
        args_schema=_schema(
            {"message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE,
                         "description": "The commit message (first line: a short summary)."},
             "paths": {**_PATHS, "description": "Files to add before committing (new or "
                                                "changed), relative to the working "
                                                "directory; matched literally."},
             "all": {"type": "boolean",
                     "description": "Also commit every change to already tracked files "
                                    "(like `git commit -a`)."}},
            ["message"], ["commit my changes with message 'fix typo'",
                          "commit README.md saying 'update docs'",
                          "record everything I changed as a commit"]),
        safety=Safety(writes=True, level="write", network=False),
        examples=({"message": "Update the notes", "paths": ["notes.txt"]},
                  {"message": "Fix a typo in the README", "all": True}),
    )

    async def _plan(self, call: ToolCall, ctx: ToolContext) -> tuple[Repo, Any, str]:
        args = _Args(call, {"message", "paths", "all"})
        message = args.text("message", required=True, limit=MAX_MESSAGE) or ""
        paths, every = args.paths("paths"), args.flag("all", False)
        repo = await open_repo(ctx.cwd, ctx.cages, _shield(ctx, self.declaration))
        if repo.ref is None:
            raise GitRefusal("detached-head", "HEAD is detached; switch to a branch first")
        author = await identity(repo)
        with tempfile.TemporaryDirectory(prefix="adjutant-git-") as scratch:
            tree, changes = await _stage(repo, scratch, paths, every, quarantine=True)
        _refuse_protected(repo, changes, ctx, self.declaration)
        parent = (f"parent {repo.head}" if repo.head else "the first commit of the branch")
        text = "\n".join([
            f"commit on {repo.ref}, {parent}", f"tree {tree}",
            f"author {author['GIT_AUTHOR_NAME']} <{author['GIT_AUTHOR_EMAIL']}>",
            "files:", *(f"  {line}" for line in changes.splitlines()), "message:",
            *(f"    {line}" for line in message.splitlines())])
        return repo, (message, paths, every, tree, author), text

    async def _run(self, repo: Repo, plan: Any, ctx: ToolContext) -> tuple[str, str]:
        message, paths, every, tree, author = plan
        writable = repo.writable(ctx.cages)
        real_index = os.path.join(repo.git_dir, "index")
        before = _read(real_index)
        scratch = tempfile.mkdtemp(prefix="adjutant-index-", dir=repo.git_dir)
        try:
            staged, changes = await _stage(repo, scratch, paths, every, quarantine=False,
                                           writable=writable)
            if staged != tree:
                raise GitRefusal("changed-since-preview", "the files changed after the "
                                 "preview; preview the commit again")
            parents = ["-p", repo.head] if repo.head else []
            made = await git(["commit-tree", tree, *parents, "-F", "-"], cwd=repo.cwd, repo=repo,
                             writable=writable, env=author, stdin=message.encode())
            commit = made.stdout.strip()
            subject = message.splitlines()[0]
            await git(["update-ref", "-m", f"commit (adjutant): {subject}", "--end-of-options",
                       repo.ref or "", commit, repo.head or ZERO], cwd=repo.cwd, repo=repo,
                      writable=writable)
            if _read(real_index) == before:  # else the user staged meanwhile: keep theirs
                os.replace(os.path.join(scratch, "index"), real_index)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return f"[{repo.branch} {commit[:7]}] {subject}\n{changes}", ""


def _refuse_protected(repo: Repo, changes: str, ctx: ToolContext,
                      declaration: ToolDeclaration) -> None:
    """A commit reads every file it adds into the repository: one the deny rules refuse
    to `fs.read` (a key, ``.env``, a hard link to a secret) is refused here too."""
    from adjutant.safety.protection import Shield

    try:
        shield = Shield.for_context(ctx, declaration)
    except ValueError as exc:
        raise GitRefusal("protection", f"the deny rules cannot be applied: {exc}") from None
    for line in changes.splitlines():
        status, tab, path = line.partition("\t")
        if not tab or status.startswith("D"):
            continue  # a deletion reads nothing
        name = unquoted(path)
        if name is None:
            raise GitRefusal("protection", f"the changed path {path!r} cannot be read back "
                             "to be checked")
        if why := shield.read_refusal(os.path.join(repo.top, name)):
            raise GitRefusal("protected", f"the commit would copy {name} into the "
                             f"repository: {why}")


def _read(path: str) -> bytes | None:
    try:
        with open_regular(path) as handle:  # a FIFO in the worktree is refused, not waited on
            return handle.read()
    except FileNotFoundError:
        return None


def _copy_index(repo: Repo, scratch: str) -> str:
    """A private copy of the index, with its mtime: git's racy-clean check needs it."""
    index, real = os.path.join(scratch, "index"), os.path.join(repo.git_dir, "index")
    if os.path.exists(real):
        shutil.copy2(real, index)
    return index


async def _stage(repo: Repo, scratch: str, paths: Sequence[str], every: bool, *,
                 quarantine: bool, writable: Sequence[str] = ()) -> tuple[str, str]:
    """Stage into a private copy of the index; return the tree and the changed files.

    With ``quarantine`` new objects go to ``scratch`` (the repository is only read)."""
    index = _copy_index(repo, scratch)
    env = {"GIT_INDEX_FILE": index}
    if quarantine:
        objects = os.path.join(scratch, "objects")
        os.mkdir(objects)
        env |= {"GIT_OBJECT_DIRECTORY": objects,
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.path.join(repo.common_dir, "objects")}
    cage = [scratch, *writable]
    if every:
        await git(["add", "--update", "--", repo.top], cwd=repo.cwd, repo=repo, writable=cage,
                  env=env)
    if paths:
        await git(["add", "--", *paths], cwd=repo.cwd, repo=repo, writable=cage, env=env)
    tree = (await git(["write-tree"], cwd=repo.cwd, repo=repo, writable=cage,
                      env=env)).stdout.strip()
    changes = (await git(["diff-index", "--cached", "--name-status", "--no-renames",
                          "--end-of-options", repo.head or EMPTY_TREE, "--"],
                         cwd=repo.cwd, repo=repo, writable=cage, env=env)).stdout.strip()
    if not changes:  # with `all`, no tracked file changed at all: say so, not "set all"
        raise GitRefusal("nothing-to-commit", "no tracked file changed since the last "
                         "commit" if every and not paths else "nothing is staged and no "
                         "listed path changed; name the files to commit or set `all`")
    return tree, changes


async def _check_branch_name(repo: Repo, name: str) -> str:
    ref = f"refs/heads/{name}"
    if "@{" in name or name == "@":
        raise GitRefusal("branch-name", f"{name!r} is not a valid branch name")
    valid = await git(["check-ref-format", ref], cwd=repo.cwd, repo=repo, check=False)
    if valid.returncode != 0:
        raise GitRefusal("branch-name", f"{name!r} is not a valid branch name "
                         "(see `git help check-ref-format`)")
    return ref


async def _switch_preview(repo: Repo, ref: str, target: str) -> list[str]:
    lines = [f"switch HEAD: {repo.ref or f'detached at {repo.head}'} -> {ref} ({target})"]
    if target == repo.head:
        return [*lines, "files that change: none (same commit)"]
    diff = await git(["diff", "--name-status", "--no-renames", "--no-ext-diff",
                      "--no-textconv", "--end-of-options", repo.head or EMPTY_TREE, target,
                      "--"], cwd=repo.cwd, repo=repo)
    changed = diff.stdout.strip().splitlines()
    return [*lines, "files that change:", *(f"  {line}" for line in changed)]


async def _switch(repo: Repo, ctx: ToolContext, ref: str, target: str) -> None:
    if target == repo.head:  # same commit: only HEAD moves, no file is touched
        await git(["symbolic-ref", "-m", "switch (adjutant)", "HEAD", ref], cwd=repo.cwd, repo=repo,
                  writable=repo.writable(ctx.cages))
        return
    await git(["switch", "--no-guess", "--end-of-options", ref.removeprefix("refs/heads/")],
              cwd=repo.cwd, repo=repo, writable=repo.writable(ctx.cages, worktree=True))


class GitBranch(_GitTool):
    declaration = ToolDeclaration(
        name="git.branch", version="0.1.0",
        summary="Create branch {name}[ at {start}]",
        description="Create a new branch at the current commit (or at `start`) and, "
                    "unless `switch` is false, switch to it. Never moves an existing "
                    "branch.",
        args_schema=_schema(
            {"name": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": _ONE_WORD,
                      "description": "The new branch's name (e.g. `feature/login`)."},
             "start": {**_REF, "description": "The commit the branch starts from (default: "
                                              "the current commit)."},
             "switch": {"type": "boolean",
                        "description": "Switch to the new branch (default true)."}},
            ["name"], ["create a feature branch called login", "make a branch fix/typo",
                       "start a new branch from main"]),
        safety=Safety(writes=True, level="write", network=False),
        examples=({"name": "feature/login"}, {"name": "experiment", "switch": False}),
    )

    async def _plan(self, call: ToolCall, ctx: ToolContext) -> tuple[Repo, Any, str]:
        args = _Args(call, {"name", "start", "switch"})
        name, start = args.word("name", required=True) or "", args.word("start")
        switch = args.flag("switch", True)
        repo = await open_repo(ctx.cwd, ctx.cages, _shield(ctx, self.declaration))
        ref = await _check_branch_name(repo, name)
        exists = await git(["rev-parse", "-q", "--verify", "--end-of-options", ref],
                           cwd=repo.cwd, repo=repo, check=False)
        if exists.returncode == 0:
            raise GitRefusal("branch-exists", f"branch {name!r} exists already; use "
                             "git.switch to switch to it")
        if start is not None:
            target = await _commit(repo, start)
        elif repo.head is not None:
            target = repo.head
        else:
            raise GitRefusal("no-commits", "there is no commit to branch from yet")
        lines = [f"create {ref} at {target} (from {start or 'HEAD'})"]
        if switch:
            lines += await _switch_preview(repo, ref, target)
        return repo, (ref, target, switch), "\n".join(lines)

    async def _run(self, repo: Repo, plan: Any, ctx: ToolContext) -> tuple[str, str]:
        ref, target, switch = plan
        await git(["update-ref", "-m", "branch (adjutant)", "--end-of-options", ref, target,
                   ZERO], cwd=repo.cwd, repo=repo, writable=repo.writable(ctx.cages))
        if switch:
            await _switch(repo, ctx, ref, target)
        name = ref.removeprefix("refs/heads/")
        return (f"created branch {name} at {target[:7]}"
                + (f", switched to {name}" if switch else "") + "\n"), ""


class GitSwitch(_GitTool):
    declaration = ToolDeclaration(
        name="git.switch", version="0.1.0",
        summary="Switch to branch {branch}",
        description="Switch the working tree to an existing local branch. Uncommitted "
                    "changes are carried over; git refuses if they would be overwritten.",
        args_schema=_schema(
            {"branch": {"type": "string", "minLength": 1, "maxLength": 256,
                        "pattern": _ONE_WORD,
                        "description": "The existing local branch to switch to."}},
            ["branch"], ["switch to the main branch", "go back to branch develop",
                         "check out feature/login"]),
        safety=Safety(writes=True, level="write", network=False),
        examples=({"branch": "main"}, {"branch": "feature/notes"}),
    )

    async def _plan(self, call: ToolCall, ctx: ToolContext) -> tuple[Repo, Any, str]:
        name = _Args(call, {"branch"}).word("branch", required=True) or ""
        repo = await open_repo(ctx.cwd, ctx.cages, _shield(ctx, self.declaration))
        ref = await _check_branch_name(repo, name)
        if ref == repo.ref:
            raise GitRefusal("already-there", f"already on branch {name!r}")
        found = await git(["rev-parse", "-q", "--verify", "--end-of-options", ref],
                          cwd=repo.cwd, repo=repo, check=False)
        if found.returncode != 0:
            raise GitRefusal("unknown-branch", f"there is no local branch {name!r}; "
                             "git.branch creates one")
        target = found.stdout.strip()
        return repo, (ref, target), "\n".join(await _switch_preview(repo, ref, target))

    async def _run(self, repo: Repo, plan: Any, ctx: ToolContext) -> tuple[str, str]:
        ref, target = plan
        await _switch(repo, ctx, ref, target)
        return f"switched to {ref.removeprefix('refs/heads/')} at {target[:7]}\n", ""


def _shield(ctx: ToolContext, declaration: ToolDeclaration) -> Any:
    """The call's deny rules, for the sandbox git runs in."""
    from adjutant.safety.protection import Shield

    return Shield.for_context(ctx, declaration)


#: Every tool class of the plugin, in registration order.
TOOLS: tuple[type, ...] = (GitStatus, GitDiff, GitLog, GitCommit, GitBranch, GitSwitch)
