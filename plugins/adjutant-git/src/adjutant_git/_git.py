"""Running git so that a repository cannot run code and user text is never an option.

Four layers, each enough on its own for the common cases:

- every git runs in the OS sandbox (`adjutant.sandbox`): read-only root, no network,
  only the repository's git directory (and, to switch branches, its worktree)
  writable, and only when the call writes;
- no system or global configuration is read, and every configuration key that names
  a program git could run is either overridden on the command line (``-c`` beats
  every file) or, when it cannot be neutralised (filters), refused with its name;
- user text reaches git only after ``--end-of-options`` or ``--`` and with
  ``--literal-pathspecs``, and refs are resolved to object ids before use;
- writes use plumbing (``commit-tree``, ``update-ref`` with the expected old value),
  so no hook, editor or signing program is ever involved.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = ["EMPTY_TREE", "ZERO", "GitRefusal", "Repo", "git", "identity", "open_repo"]

ZERO = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

#: Keys whose programs git could run, overridden on every command line.
OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("core.pager", "cat"),
    ("core.editor", "false"), ("sequence.editor", "false"), ("core.askPass", ""),
    ("core.sshCommand", "false"), ("credential.helper", ""), ("gpg.program", "false"),
    ("commit.gpgSign", "false"), ("tag.gpgSign", "false"), ("protocol.allow", "never"),
    ("core.untrackedCache", "false"), ("color.ui", "false"), ("core.quotePath", "false"),
    ("advice.detachedHead", "false"), ("diff.renames", "false"),
)
_OVERRIDDEN = {key.lower() for key, _ in OVERRIDES}
#: The last part of a configuration key that names a program to run.
_RUNS = re.compile(r"(^|\.)(fsmonitor|hookspath|pager|editor|external|textconv|command|cmd|"
                   r"program|helper|driver|clean|smudge|process|sshcommand|askpass|gitproxy|"
                   r"proxy|packobjectshook|alternaterefscommand|uploadpack|receivepack|vcs|"
                   r"browser)$")
#: Run-a-program keys made harmless another way: the diff commands pass
#: ``--no-ext-diff --no-textconv``; ``pager.<cmd>`` is moot under ``--no-pager``.
_MOOT = re.compile(r"^(diff\.external|diff\..+\.(textconv|command)|pager\..+|gpg\..+\.program|"
                   r"credential\..+\.helper|remote\..+\.(uploadpack|receivepack|vcs|proxy)|"
                   r"http\.(.+\.)?proxy)$")
#: Only our own settings: no system config, no user config, no prompts, no locks on
#: reads, no replacement objects (which could make a preview lie about content).
BASE_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_ATTR_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0",
            "GIT_NO_REPLACE_OBJECTS": "1", "GIT_PROTOCOL_FROM_USER": "0"}


class GitRefusal(Exception):
    """The call is refused by ``rule`` (shown to the user with ``detail``)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"refused by rule `{rule}`: {detail}")
        self.rule, self.detail = rule, detail


def argv(args: Sequence[str]) -> list[str]:
    """The full git command line for ``args``: every override first."""
    line = ["git", "--no-pager", "--literal-pathspecs"]
    for key, value in OVERRIDES:
        line += ["-c", f"{key}={value}"]
    return line + list(args)


async def git(args: Sequence[str], *, cwd: str, writable: Sequence[str] = (),
              env: Mapping[str, str] | None = None, stdin: bytes | None = None,
              timeout: float = 30.0,  # noqa: ASYNC109 - the child's limit, enforced inside
              check: bool = True, max_output: int = 1 << 20) -> Any:
    """Run git in the sandbox; with ``check``, a failure is a `GitRefusal` quoting git."""
    from adjutant import sandbox

    if (why := sandbox.available()) is not None:
        raise GitRefusal("sandbox-required", f"the OS sandbox is unavailable ({why}); git "
                         "never runs unsandboxed")
    result = await sandbox.run(argv(args), cwd=cwd, writable=writable, timeout=timeout,
                               readable=sandbox.repository_dirs(cwd),
                               unchecked_env={**BASE_ENV, **(env or {})}, stdin=stdin,
                               max_output=max_output)
    if check and result.returncode != 0:
        message = (result.stderr.strip() or result.stdout.strip() or "no output")
        raise GitRefusal("git", f"`git {args[0]}` failed: {message.splitlines()[-1]}")
    return result


@attrs.frozen
class Repo:
    """A repository as seen from ``cwd``: resolved directories and where HEAD points."""

    cwd: str
    top: str
    git_dir: str
    common_dir: str
    #: ``refs/heads/<name>``, or None when HEAD is detached.
    ref: str | None
    #: The commit HEAD names, or None before the first commit.
    head: str | None

    @property
    def branch(self) -> str:
        return self.ref.removeprefix("refs/heads/") if self.ref else "(detached HEAD)"

    def writable(self, cages: Sequence[str], *, worktree: bool = False) -> list[str]:
        """The directories a write may touch, each inside a cage, else a refusal."""
        needed = [self.common_dir, self.git_dir] + ([self.top] if worktree else [])
        resolved = [os.path.realpath(c) for c in cages]
        for path in needed:
            if not any(path == c or path.startswith(c.rstrip("/") + "/") for c in resolved):
                raise GitRefusal("cage", f"{path} is outside the writable directories "
                                 f"({', '.join(cages) or 'none'}); grant it to write")
        return list(dict.fromkeys(needed))


async def open_repo(cwd: str) -> Repo:
    """Discover the repository at ``cwd`` and refuse one whose config could run code."""
    found = await git(["rev-parse", "--show-toplevel", "--absolute-git-dir",
                       "--git-common-dir"], cwd=cwd, check=False)
    if found.returncode != 0:
        raise GitRefusal("not-a-repository", f"{cwd} is not inside a git work tree "
                         f"({found.stderr.strip().splitlines()[-1] if found.stderr else ''})")
    top, git_dir, common = _resolved(cwd, *found.stdout.splitlines()[:3])
    await audit_config(cwd)
    ref = await git(["symbolic-ref", "-q", "HEAD"], cwd=cwd, check=False)
    head = await git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd=cwd, check=False)
    return Repo(cwd=cwd, top=top, git_dir=git_dir, common_dir=common,
                ref=ref.stdout.strip() or None, head=head.stdout.strip() or None)


def _resolved(cwd: str, *paths: str) -> list[str]:
    return [os.path.realpath(os.path.join(cwd, path)) for path in paths]


async def audit_config(cwd: str) -> None:
    """Refuse configuration that names a program we cannot neutralise (e.g. filters)."""
    listing = await git(["config", "--list", "--show-scope"], cwd=cwd, check=False)
    for scope, key in _entries(listing.stdout):
        key = key.strip().lower()
        if scope == "command" or key in _OVERRIDDEN or _MOOT.match(key) \
                or not _RUNS.search(key):
            continue
        raise GitRefusal("repository-config-runs-code", f"the repository's configuration "
                         f"sets `{key}`, which makes git run a program; Adjutant does not "
                         "run git on it (remove the key to use the git tools here)")


def _entries(raw: str) -> list[tuple[str, str]]:
    """``git config --list --show-scope`` output as (scope, key) pairs. A value spanning
    lines can only add pairs (checked too), never hide a real entry's line."""
    pairs = []
    for line in raw.splitlines():
        scope, tab, rest = line.partition("\t")
        if tab:
            pairs.append((scope, rest.split("=", 1)[0]))
    return pairs


def _user_config() -> str | None:
    path = os.path.join(os.path.expanduser("~"), ".gitconfig")
    return path if os.path.isfile(path) else None


async def identity(repo: Repo) -> dict[str, str]:
    """Author and committer from the repository's config, else the user's own
    ``~/.gitconfig`` (read, never executed); a refusal saying how to set one."""
    values: dict[str, str] = {}
    for key in ("user.name", "user.email"):
        local = await git(["config", "--get", key], cwd=repo.cwd, check=False)
        value = local.stdout.strip()
        if not value and (user := _user_config()) is not None:
            found = await git(["config", "--file", user, "--get", key], cwd=repo.cwd,
                              check=False)
            value = found.stdout.strip()
        if not value:
            raise GitRefusal("identity", f"git has no {key}: set it with "
                             f"`git config --global {key} ...`")
        values[key] = value
    name, email = values["user.name"], values["user.email"]
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
