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

And a repository cannot make git read outside the cage: `open_repo` asks git (which
only prints paths) where the work tree, the git directory and the common directory
are, reads ``objects/info/alternates`` itself, lists the configuration files git
reads (``include.path`` can name any file), and refuses the repository when any of
them lies outside ``ToolContext.cages`` (``core.worktree = $HOME`` with an index
naming ``.ssh/id_rsa`` would otherwise put the key in a diff). Every later git runs
with ``--git-dir`` and ``--work-tree`` set to what was checked, so nothing in the
repository can move them again.
"""

from __future__ import annotations

import codecs
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


def argv(args: Sequence[str], repo: Repo | None = None) -> list[str]:
    """The full git command line for ``args``: every override first, then (once the
    repository is checked) its git directory and work tree, explicitly."""
    line = ["git", "--no-pager", "--literal-pathspecs"]
    for key, value in OVERRIDES:
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
    from adjutant import sandbox

    if (why := sandbox.available()) is not None:
        raise GitRefusal("sandbox-required", f"the OS sandbox is unavailable ({why}); git "
                         "never runs unsandboxed")
    readable = repo.dirs() if repo is not None else sandbox.repository_dirs(cwd)
    result = await sandbox.run(argv(args, repo), cwd=cwd, writable=writable, timeout=timeout,
                               readable=readable,
                               unchecked_env={**BASE_ENV, **(env or {})}, stdin=stdin,
                               max_output=max_output,
                               shield=shield if shield is not None or repo is None else repo.shield)
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
    #: The call's deny rules (`adjutant.protection.Shield`): the sandbox hides and
    #: seals what they protect (the call's own home and data home).
    shield: Any = attrs.field(default=None, eq=False, repr=False)

    @property
    def branch(self) -> str:
        return self.ref.removeprefix("refs/heads/") if self.ref else "(detached HEAD)"

    def writable(self, cages: Sequence[str], *, worktree: bool = False) -> list[str]:
        """The directories a write may touch, each inside a cage, else a refusal."""
        needed = [self.common_dir, self.git_dir] + ([self.top] if worktree else [])
        for path in needed:
            if not inside(path, cages):
                raise GitRefusal("cage", f"{path} is outside the writable directories "
                                 f"({', '.join(cages) or 'none'}); grant it to write")
        return list(dict.fromkeys(needed))

    def location(self) -> list[str]:
        """The global options that pin git to the checked directories."""
        return [f"--git-dir={self.git_dir}", f"--work-tree={self.top}"]

    def dirs(self) -> list[str]:
        return list(dict.fromkeys((self.top, self.git_dir, self.common_dir)))


def inside(path: str, cages: Sequence[str]) -> bool:
    """``path`` (resolved) is a cage or below one (each cage resolved too)."""
    real = os.path.realpath(path)
    for cage in cages:
        root = os.path.realpath(cage)
        if real == root or real.startswith(root.rstrip("/") + "/"):
            return True
    return False


#: How deep alternates may chain (git's own limit).
MAX_ALTERNATE_DEPTH = 5


async def open_repo(cwd: str, cages: Sequence[str], shield: Any = None) -> Repo:
    """Discover the repository at ``cwd``; refuse one that reaches outside ``cages``
    (work tree, git directory, common directory, alternates, configuration files) or
    whose configuration could run code. The `Repo` pins every later git to it."""
    found = await git(["rev-parse", "--path-format=absolute", "--show-toplevel",
                       "--absolute-git-dir", "--git-common-dir"], cwd=cwd, check=False,
                      shield=shield)
    lines = found.stdout.splitlines()
    if found.returncode != 0 or len(lines) < 3:
        raise GitRefusal("not-a-repository", f"{cwd} is not inside a git work tree "
                         f"({found.stderr.strip().splitlines()[-1] if found.stderr else ''})")
    top, git_dir, common = _checked(cwd, lines[:3], cages)
    repo = Repo(cwd=cwd, top=top, git_dir=git_dir, common_dir=common, ref=None, head=None,
                shield=shield)
    await audit_config(repo, cages)
    ref = await git(["symbolic-ref", "-q", "HEAD"], cwd=cwd, repo=repo, check=False)
    head = await git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], cwd=cwd, repo=repo,
                     check=False)
    return attrs.evolve(repo, ref=ref.stdout.strip() or None, head=head.stdout.strip() or None)


def _checked(cwd: str, found: Sequence[str], cages: Sequence[str]) -> list[str]:
    """git's answer resolved, each directory (and every alternate) inside the cages."""
    dirs = [os.path.realpath(os.path.join(cwd, path)) for path in found]
    for what, path in zip(("work tree", "git directory", "common directory"), dirs,
                          strict=True):
        confine(what, path, cages)
    for path in alternates(os.path.join(dirs[2], "objects"), cages):
        confine("alternate object directory", path, cages)
    return dirs


def confine(what: str, path: str, cages: Sequence[str]) -> None:
    """Refuse a repository whose ``what`` lies outside the cages."""
    if not inside(path, cages):
        raise GitRefusal("cage", f"the repository's {what} is {path}, outside the cage "
                         f"({', '.join(cages) or 'none is set'}); git would read files there "
                         "(`core.worktree`, a `.git` file, `commondir`, alternates or an "
                         "included config can point anywhere), so Adjutant does not run it")


def alternates(objects: str, cages: Sequence[str], depth: int = 0) -> list[str]:
    """The object directories ``objects/info/alternates`` adds, recursively, resolved.

    Read here, never by running git; the file's own text is never quoted (it could be
    a hard link to anything), only the directories it resolves to."""
    path = os.path.join(objects, "info", "alternates")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise GitRefusal("cage", f"{path} cannot be checked ({exc.strerror}); Adjutant "
                         "does not run git on this repository") from None
    with os.fdopen(fd, "rb") as handle:
        raw = handle.read(1 << 20)
    if depth >= MAX_ALTERNATE_DEPTH:
        raise GitRefusal("cage", f"{path}: alternates chain deeper than "
                         f"{MAX_ALTERNATE_DEPTH}")
    found: list[str] = []
    for line in raw.splitlines():
        line = line.strip()
        if not line or line.startswith(b"#"):
            continue
        if line.startswith(b'"'):
            try:
                line = bytes(codecs.escape_decode(line[1:-1])[0]) if line.endswith(b'"') \
                    else b""
            except ValueError:
                line = b""
            if not line:
                raise GitRefusal("cage", f"{path} holds a line git would read that Adjutant "
                                 "cannot; it does not run git on this repository")
        target = os.path.realpath(os.path.join(objects, os.fsdecode(line)))
        found.append(target)
        if inside(target, cages):
            found += alternates(target, cages, depth + 1)
    return found


async def audit_config(repo: Repo, cages: Sequence[str] = ()) -> None:
    """Refuse configuration that names a program we cannot neutralise (e.g. filters),
    or that git reads from a file outside the cages (``include.path``)."""
    listing = await git(["config", "--list", "--show-scope", "--show-origin"],
                        cwd=repo.cwd, repo=repo, check=False)
    if listing.returncode != 0:
        lines = (listing.stderr or "no output").strip().splitlines() or ["no output"]
        raise GitRefusal("repository-config", "git cannot read the repository's "
                         f"configuration ({lines[-1]}); Adjutant does not run git on it")
    for origin in _origins(listing.stdout):
        confine("configuration file", os.path.join(repo.cwd, origin), cages)
    for scope, key in _entries(listing.stdout):
        key = key.strip().lower()
        if scope == "command" or key in _OVERRIDDEN or _MOOT.match(key) \
                or not _RUNS.search(key):
            continue
        raise GitRefusal("repository-config-runs-code", f"the repository's configuration "
                         f"sets `{key}`, which makes git run a program; Adjutant does not "
                         "run git on it (remove the key to use the git tools here)")


def _fields(raw: str) -> list[tuple[str, str, str]]:
    """``git config --list --show-scope --show-origin`` as (scope, origin, key). A value
    spanning lines can only add entries (checked too), never hide a real entry's line.
    (``-z`` would be exact, but the sandbox reads output holding NUL as binary.)"""
    entries = []
    for line in raw.splitlines():
        fields = line.split("\t", 2)
        if len(fields) == 3:
            scope, origin, rest = fields
            entries.append((scope, origin, rest.split("=", 1)[0]))
    return entries


def _entries(raw: str) -> list[tuple[str, str]]:
    """(scope, key) pairs of ``git config --list --show-scope --show-origin``."""
    return [(scope, key) for scope, _, key in _fields(raw)]


def _origins(raw: str) -> list[str]:
    """The configuration files the listing came from (the command line is ours)."""
    found = []
    for _, origin, _ in _fields(raw):
        if origin.startswith("file:"):
            path = origin.removeprefix("file:")
            if path.startswith('"') and path.endswith('"') and len(path) > 1:
                path = os.fsdecode(bytes(codecs.escape_decode(
                    path[1:-1].encode("utf-8", "surrogateescape"))[0]))
            found.append(path)
        elif origin not in ("command line:", ""):
            found.append(origin)  # an origin we do not know: judged as a path, refused
    return list(dict.fromkeys(found))


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
