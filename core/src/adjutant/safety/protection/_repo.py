"""Where a git repository may make git read: the checks every git run of Adjutant
applies before it trusts a repository (the git tools, the context bulletin).

A repository can send git anywhere: ``core.worktree = $HOME`` (with an index naming
``.ssh/id_rsa``, a diff prints the key), a ``.git`` file or ``commondir`` naming
another git directory, ``objects/info/alternates``, an ``include.path`` to any file.
So a caller runs git (in the OS sandbox, with `GIT_OVERRIDES` and `GIT_ENV`) only to
*print* where the repository is (`GIT_WHERE`) and which configuration it reads
(`GIT_CONFIG_LISTING`), and hands the answers to `confined_repository` and
`audit_git_config`: a directory or file outside the cages, or a key that makes git
run a program we cannot neutralise, raises `GitRefusal`. Every later git run is then
pinned to what was checked (`git_location`: ``--git-dir`` and ``--work-tree``), so
nothing in the repository can move it again.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections.abc import Iterator, Sequence

__all__ = ["GIT_CONFIG_LISTING", "GIT_ENV", "GIT_OVERRIDES", "GIT_WHERE", "GitRefusal",
           "alternates", "audit_git_config", "confine", "confined_repository",
           "git_location", "inside", "refuse_special_files",
           "refuse_special_files_near", "special_files_below"]

#: Keys whose programs git could run, overridden on every command line (``-c`` beats
#: every configuration file), and output settings every parser here relies on.
GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("core.pager", "cat"),
    ("core.editor", "false"), ("sequence.editor", "false"), ("core.askPass", ""),
    ("core.sshCommand", "false"), ("credential.helper", ""), ("gpg.program", "false"),
    ("commit.gpgSign", "false"), ("tag.gpgSign", "false"), ("protocol.allow", "never"),
    ("core.untrackedCache", "false"), ("color.ui", "false"), ("core.quotePath", "false"),
)
#: Only our own settings: no system config, no user config, no prompts, no locks on
#: reads, no replacement objects (which could make a preview lie about content).
GIT_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PROTOCOL_FROM_USER": "0"}
#: The git arguments that print the work tree, git directory and common directory (one
#: a line) for `confined_repository`.
GIT_WHERE = ("rev-parse", "--path-format=absolute", "--show-toplevel", "--absolute-git-dir",
             "--git-common-dir")
#: The git arguments that list the configuration with its files, for `audit_git_config`.
GIT_CONFIG_LISTING = ("config", "--list", "--show-scope", "--show-origin")
#: How deep alternates may chain (git's own limit).
MAX_ALTERNATE_DEPTH = 5

_OVERRIDDEN = {key.lower() for key, _ in GIT_OVERRIDES}
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


class GitRefusal(Exception):
    """Git is not run: refused by ``rule`` (shown to the user with ``detail``)."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"refused by rule `{rule}`: {detail}")
        self.rule, self.detail = rule, detail


def git_location(git_dir: str, work_tree: str) -> list[str]:
    """The global options that pin git to checked directories."""
    return [f"--git-dir={git_dir}", f"--work-tree={work_tree}"]


def inside(path: str, cages: Sequence[str]) -> bool:
    """``path`` (resolved) is a cage or below one (each cage resolved too)."""
    real = os.path.realpath(path)
    for cage in cages:
        root = os.path.realpath(cage)
        if real == root or real.startswith(root.rstrip("/") + "/"):
            return True
    return False


def confine(what: str, path: str, cages: Sequence[str]) -> None:
    """Refuse a repository whose ``what`` lies outside the cages."""
    if not inside(path, cages):
        raise GitRefusal("cage", f"the repository's {what} is {path}, outside the cage "
                         f"({', '.join(cages) or 'none is set'}); git would read files there "
                         "(`core.worktree`, a `.git` file, `commondir`, alternates or an "
                         "included config can point anywhere), so Adjutant does not run it")


def confined_repository(cwd: str, where: Sequence[str], cages: Sequence[str]
                        ) -> tuple[str, str, str]:
    """The work tree, git directory and common directory git printed for `GIT_WHERE`
    (run in ``cwd``), resolved, each (and every alternate) inside the cages."""
    if len(where) < 3:
        raise GitRefusal("not-a-repository", f"{cwd} is not inside a git work tree")
    top, git_dir, common = (os.path.realpath(os.path.join(cwd, path)) for path in where[:3])
    for what, path in (("work tree", top), ("git directory", git_dir),
                       ("common directory", common)):
        confine(what, path, cages)
    for path in alternates(os.path.join(common, "objects"), cages):
        confine("alternate object directory", path, cages)
    refuse_special_files(top, git_dir, common)
    return top, git_dir, common


#: Files git opens at a work tree's top (ignores, attributes, submodules, mailmap).
_TOP_FILES = (".gitignore", ".gitattributes", ".gitmodules", ".mailmap")
#: How many entries of a git directory are looked at; past it, git's own timeout is
#: the backstop (a git directory holds hundreds, loose objects aside).
_SCAN_LIMIT = 20_000


def refuse_special_files_near(found: Sequence[str]) -> None:
    """`refuse_special_files` before git first runs (even `GIT_WHERE` reads ``HEAD`` and
    the configuration), on what `adjutant.safety.sandbox.repository_dirs` found: the work
    tree, then a linked worktree's git and common directories."""
    if found:
        dot = os.path.join(found[0], ".git")
        refuse_special_files(found[0], *([dot] if os.path.isdir(dot) else found[1:]))


def refuse_special_files(top: str, *git_dirs: str) -> None:
    """Refuse a repository where git would open a named pipe, socket or device: git
    opens its files blocking, so a FIFO at ``.git/packed-refs``, ``info/exclude``, a
    loose object or ``.gitattributes`` stalls every git until its timeout, which then
    looks like an empty or broken repository. Looked at (the directory entry's type,
    ``stat`` for a link or a special file, never opened): each git directory, the work
    tree's top files, and the files its configuration names (``include.path``,
    ``core.excludesFile``, ``core.attributesFile``, ``mailmap.file``). Deeper
    ``.gitignore`` files are left to git's timeout, which `special_files_below` then
    names."""
    seen = 0
    for name in _TOP_FILES:
        _judge(os.path.join(top, name), top)
    for root in dict.fromkeys(git_dirs):
        for path in _walk(root):
            seen += 1
            if seen > _SCAN_LIMIT:
                break
            _judge(path, top)
        for named in _config_files(os.path.join(root, "config"), top):
            _judge(named, top)


def special_files_below(top: str, *, limit: int = 50_000) -> list[str]:
    """What in the work tree below ``top`` git could wait on: ``.gitignore`` and
    ``.gitattributes`` files (at any depth) that are not regular files, as the user
    sees them (relative paths, what they are). Bounded by ``limit`` entries; the
    ``.git`` directory is not walked."""
    from adjutant.safety.regular import file_kind

    found, seen = [], 0
    for path in _walk(top, skip=(".git",)):
        seen += 1
        if seen > limit:
            break
        if os.path.basename(path) in (".gitignore", ".gitattributes"):
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue
            if not stat.S_ISREG(mode):
                found.append(f"{os.path.relpath(path, top)} ({file_kind(mode)})")
    return found


def _walk(root: str, skip: tuple[str, ...] = ()) -> Iterator[str]:
    """Every entry below ``root`` that is not a directory: regular files by their
    directory entry (no ``stat``), links and special files too; links not followed."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in skip:
                    yield from _walk(entry.path, skip)
                continue
            if entry.is_file(follow_symlinks=False):
                continue  # regular: nothing to wait on
        except OSError:
            pass
        yield entry.path


def _judge(path: str, top: str) -> None:
    from adjutant.safety.regular import file_kind

    try:
        mode = os.stat(path).st_mode  # follows a link: git would
    except OSError:
        return  # missing, or a dangling link: git copes
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        shown = os.path.relpath(path, top) if inside(path, [top]) else path
        raise GitRefusal("special-file", f"{shown} is {file_kind(mode)}, not a file: git "
                         "would wait on it forever, so Adjutant does not run git on this "
                         "repository (remove it, or replace it with a regular file)")


#: Configuration keys naming a file git opens (section, key), lower case.
_FILE_KEYS = {("include", "path"), ("includeif", "path"), ("core", "excludesfile"),
              ("core", "attributesfile"), ("mailmap", "file")}
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]')
_ENTRY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")


def _config_files(config: str, top: str) -> list[str]:
    """The files a git configuration file names for git to open, resolved as git
    would (``~``, relative to the configuration's folder for includes, to the work
    tree otherwise). Read without blocking; a file that is not regular is `_judge`'s."""
    from adjutant.safety.regular import NotRegularFile, read_regular

    try:
        raw = read_regular(config, 1 << 20).decode("utf-8", "replace")
    except NotRegularFile:
        _judge(config, top)
        return []
    except OSError:
        return []
    section, found = "", []
    for line in raw.splitlines():
        if (header := _SECTION.match(line)) is not None:
            section = header.group(1).lower().split(".")[0]
            line = line[header.end():]
        entry = _ENTRY.match(line)
        if entry is None or (section, entry.group(1).lower()) not in _FILE_KEYS:
            continue
        value = entry.group(2).strip('"')
        if not value:
            continue
        value = os.path.expanduser(value)
        base = os.path.dirname(config) if section.startswith("include") else top
        found.append(os.path.normpath(os.path.join(base, value)))
    return found


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


def audit_git_config(listing: str, cwd: str, cages: Sequence[str]) -> None:
    """Refuse configuration (the output of `GIT_CONFIG_LISTING`, run pinned in ``cwd``)
    that git reads from a file outside the cages (``include.path``), or that names a
    program we cannot neutralise (filters, say)."""
    for origin in _origins(listing):
        confine("configuration file", os.path.join(cwd, origin), cages)
    for scope, _, key in _fields(listing):
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
