"""Running git so that a repository cannot run code and user text is never an option.

Four layers, each enough on its own for the common cases:

- every git runs in the OS sandbox (`adjutant.safety.sandbox`): read-only root, no network,
  only the repository's git directory (and, to switch branches, its worktree)
  writable, and only when the call writes;
- no system or global configuration is read, and every configuration key that names
  a program git could run is either overridden on the command line (``-c`` beats
  every file) or, when it cannot be neutralised (filters), refused with its name;
- user text reaches git only after ``--end-of-options`` or ``--`` and with
  ``--literal-pathspecs``, and refs are resolved to object ids before use;
- writes use plumbing (``commit-tree``, ``update-ref`` with the expected old value),
  so no hook, editor or signing program is ever involved.

And a repository cannot make git read outside the cage: `open_repo` asks git (which
only prints paths) where the work tree, the git directory and the common directory
are, reads ``objects/info/alternates`` itself, lists the configuration files git
reads (``include.path`` can name any file), and refuses the repository when any of
them lies outside ``ToolContext.cages`` (``core.worktree = $HOME`` with an index
naming ``.ssh/id_rsa`` would otherwise put the key in a diff). Every later git runs
with ``--git-dir`` and ``--work-tree`` set to what was checked, so nothing in the
repository can move them again. The checks and the overrides are core's
(`adjutant.safety.protection`: `confined_repository`, `audit_git_config`, `GIT_OVERRIDES`),
shared with the context bulletin's git.
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

#: This plugin's settings after core's `adjutant.safety.protection.GIT_OVERRIDES` (the keys
#: that would run a program): exact previews (no rename detection), quiet switches.
OVERRIDES: tuple[tuple[str, str], ...] = (("advice.detachedHead", "false"),
                                          ("diff.renames", "false"))


class GitRefusal(Exception):
    """The call is refused by ``rule`` (shown to the user with ``detail``)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"refused by rule `{rule}`: {detail}")
        self.rule, self.detail = rule, detail


def argv(args: Sequence[str], repo: Repo | None = None) -> list[str]:
    """The full git command line for ``args``: every override first, then (once the
    repository is checked) its git directory and work tree, explicitly."""
    from adjutant.safety.protection import GIT_OVERRIDES

    line = ["git", "--no-pager", "--literal-pathspecs"]
    for key, value in (*GIT_OVERRIDES, *OVERRIDES):
        line += ["-c", f"{key}={value}"]
    if repo is not None:
        line += repo.location()
    return line + list(args)


async def git(args: Sequence[str], *, cwd: str, writable: Sequence[str] = (),
              env: Mapping[str, str] | None = None, stdin: bytes | None = None,
              timeout: float = 30.0,  # noqa: ASYNC109 - the child's limit, enforced inside
              check: bool = True, max_output: int = 1 << 20, repo: Repo | None = None,
              shield: Any = None) -> Any:
    """Run git in the sandbox; with ``check``, a failure is a `GitRefusal` quoting git.

    With ``repo`` (checked by `open_repo`), git is pinned to its directories and the
    sandbox hides what the call's shield (``repo.shield`` unless given) protects."""
    from adjutant.safety import sandbox
    from adjutant.safety.protection import GIT_ENV

    if (why := sandbox.available()) is not None:
        raise GitRefusal("sandbox-required", f"the OS sandbox is unavailable ({why}); git "
                         "never runs unsandboxed")
    readable = repo.dirs() if repo is not None else sandbox.repository_dirs(cwd)
    result = await sandbox.run(argv(args, repo), cwd=cwd, writable=writable, timeout=timeout,
                               readable=readable,
                               unchecked_env={**GIT_ENV, **(env or {})}, stdin=stdin,
                               max_output=max_output,
                               shield=shield if shield is not None or repo is None else repo.shield)
    if result.timed_out:  # never read as an answer (no HEAD, nothing changed...)
        from adjutant.safety.protection import special_files_below

        found = special_files_below(repo.top) if repo is not None else []
        why = (f"{', '.join(found)} would make git wait forever: remove it, or replace it "
               "with a regular file" if found else "a very large repository, or a named "
               "pipe among the files git opens, makes it wait")
        raise GitRefusal("git-timeout", f"`git {args[0]}` did not finish in {timeout:g} s: "
                         f"{why}")
    judge = shield if shield is not None else repo.shield if repo is not None else None
    if judge is not None and result.stderr:
        result = attrs.evolve(result, stderr=withhold_quotes(result.stderr, cwd, judge))
    if check and result.returncode != 0:
        message = (result.stderr.strip() or result.stdout.strip() or "no output")
        raise GitRefusal("git", f"`git {args[0]}` failed: {message.splitlines()[-1]}")
    return result


#: A git message about a line of a file it read (``"X" is not a valid attribute name:
#: FILE:LINE``, ``[attr]X not allowed: FILE:LINE``): it quotes the line.
_QUOTES_A_LINE = re.compile(r"^(?P<message>.*): (?P<file>[^\n]+?):(?P<line>[0-9]+)$")


def withhold_quotes(stderr: str, cwd: str, shield: Any) -> str:
    """``stderr`` without the messages that quote a line of a protected file: a
    repository's ``core.attributesFile`` (or a ``.gitattributes`` linked to one) can
    name ``.env``, and git's warning about each "attribute" shows its text."""
    out = []
    for line in stderr.splitlines(keepends=True):
        found = _QUOTES_A_LINE.match(line.rstrip("\n"))
        if found is not None:
            path = os.path.normpath(os.path.join(cwd, found["file"]))
            if why := shield.read_refusal(path):
                line = (f"[withheld by Adjutant: a git message quoting line {found['line']} "
                        f"of {found['file']}: {why}]\n")
        out.append(line)
    return "".join(out)


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
    #: The call's deny rules (`adjutant.safety.protection.Shield`): the sandbox hides and
    #: seals what they protect (the call's own home and data home).
    shield: Any = attrs.field(default=None, eq=False, repr=False)

    @property
    def branch(self) -> str:
        return self.ref.removeprefix("refs/heads/") if self.ref else "(detached HEAD)"

    def writable(self, cages: Sequence[str], *, worktree: bool = False) -> list[str]:
        """The directories a write may touch, each inside a cage, else a refusal."""
        from adjutant.safety.protection import inside

        needed = [self.common_dir, self.git_dir] + ([self.top] if worktree else [])
        for path in needed:
            if not inside(path, cages):
                raise GitRefusal("cage", f"{path} is outside the writable directories "
                                 f"({', '.join(cages) or 'none'}); grant it to write")
        return list(dict.fromkeys(needed))

    def location(self) -> list[str]:
        """The global options that pin git to the checked directories."""
        from adjutant.safety.protection import git_location

        return git_location(self.git_dir, self.top)

    def dirs(self) -> list[str]:
        return list(dict.fromkeys((self.top, self.git_dir, self.common_dir)))


async def open_repo(cwd: str, cages: Sequence[str], shield: Any = None) -> Repo:
    """Discover the repository at ``cwd``; refuse one that reaches outside ``cages``
    (work tree, git directory, common directory, alternates, configuration files) or
    whose configuration could run code (`adjutant.safety.protection.confined_repository`,
    `audit_git_config`). The `Repo` pins every later git to it."""
    from adjutant.safety import protection, sandbox

    try:
        protection.refuse_special_files_near(sandbox.repository_dirs(cwd))
    except protection.GitRefusal as refusal:
        raise GitRefusal(refusal.rule, refusal.detail) from None
    found = await git(protection.GIT_WHERE, cwd=cwd, check=False, shield=shield)
    lines = found.stdout.splitlines()
    if found.returncode != 0 or len(lines) < 3:
        raise GitRefusal("not-a-repository", f"{cwd} is not inside a git work tree "
                         f"({found.stderr.strip().splitlines()[-1] if found.stderr else ''})")
    try:
        top, git_dir, common = protection.confined_repository(cwd, lines, cages)
    except protection.GitRefusal as refusal:
        raise GitRefusal(refusal.rule, refusal.detail) from None
    repo = Repo(cwd=cwd, top=top, git_dir=git_dir, common_dir=common, ref=None, head=None,
                shield=shield)
    await audit_config(repo, cages)
    ref = await git(["symbolic-ref", "-q", "HEAD"], cwd=cwd, repo=repo, check=False)
    head = await git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd=cwd, repo=repo,
                     check=False)
    return attrs.evolve(repo, ref=ref.stdout.strip() or None, head=head.stdout.strip() or None)


async def audit_config(repo: Repo, cages: Sequence[str] = ()) -> None:
    """Refuse configuration that names a program we cannot neutralise (e.g. filters),
    or that git reads from a file outside the cages (``include.path``):
    `adjutant.safety.protection.audit_git_config` on git's own listing."""
    from adjutant.safety import protection

    listing = await git(protection.GIT_CONFIG_LISTING, cwd=repo.cwd, repo=repo, check=False)
    if listing.returncode != 0:
        lines = (listing.stderr or "no output").strip().splitlines() or ["no output"]
        raise GitRefusal("repository-config", "git cannot read the repository's "
                         f"configuration ({lines[-1]}); Adjutant does not run git on it")
    try:
        protection.audit_git_config(listing.stdout, repo.cwd, cages)
    except protection.GitRefusal as refusal:
        raise GitRefusal(refusal.rule, refusal.detail) from None


def _user_config() -> str | None:
    path = os.path.join(os.path.expanduser("~"), ".gitconfig")
    return path if os.path.isfile(path) else None


async def identity(repo: Repo) -> dict[str, str]:
    """Author and committer from the repository's config, else the user's own
    ``~/.gitconfig`` (read, never executed); a refusal saying how to set one."""
    values: dict[str, str] = {}
    for key in ("user.name", "user.email"):
        local = await git(["config", "--get", key], cwd=repo.cwd, repo=repo, check=False)
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
