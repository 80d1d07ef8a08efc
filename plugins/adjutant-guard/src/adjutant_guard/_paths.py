"""What a path argument really names: resolution without trusting the string.

`resolve` walks the path one component at a time with ``lstat``/``readlink`` (a
syscall or two per component, no subprocess, nothing modified): relative paths
start at the request's working directory, every symbolic link on the way is
followed (including in parent directories and in link targets), ``..`` applies to
the directory actually reached, and the part that does not exist yet is appended
as written, so a path still to be created resolves through its existing parents.

``os.path.realpath`` is not used because it hides exactly what a policy must see:
it returns a link loop unresolved and treats a permission error as "does not
exist" instead of raising.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from adjutant.safety.protection import Glob

__all__ = ["PathProblem", "ResolvedPath", "lexical", "magic_link", "resolve", "within"]

#: Longest path accepted (Linux PATH_MAX); longer ones are refused, not truncated.
MAX_PATH = 4096
#: Symbolic links followed before giving up, as the kernel does (ELOOP).
MAX_LINKS = 40

# Kernel "magic links": each names another process's root, working directory or
# open files, so whatever follows escapes every check made on the string.
_MAGIC = tuple(
    Glob(p)
    for p in (
        "/proc/self/**",
        "/proc/thread-self/**",
        "/proc/[0-9]*/**",
        "/dev/fd/**",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
    )
)


class PathProblem(ValueError):
    """The argument cannot be resolved to one path; the message says why."""


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    """A path argument, as written and as the kernel would see it."""

    #: The argument as written.
    given: str
    #: Absolute, with ``.``, ``..`` and duplicate slashes removed lexically.
    lexical: str
    #: Every symbolic link followed, ``..`` applied to real directories.
    resolved: str
    #: Every name the path passed through (lexical, each link hop, resolved), in
    #: order and without repeats: deny patterns are matched against all of them.
    names: tuple[str, ...]
    #: ``lstat`` of ``resolved``, or None where it does not exist (yet).
    stat: os.stat_result | None

    def describe(self) -> str:
        """The path for a reason shown to the user: as written, then where it leads."""
        if self.resolved in (self.given, self.lexical):
            return self.resolved
        return f"{self.given} (resolves to {self.resolved})"


def lexical(value: str, cwd: str) -> str:
    """``value`` made absolute against ``cwd`` and normalised, without touching disk."""
    path = os.path.normpath(value if value.startswith("/") else f"{cwd}/{value}")
    # POSIX keeps a leading "//" as implementation-defined; Linux treats it as "/".
    return "/" + path.lstrip("/")


def magic_link(path: str) -> str | None:
    """The pattern of a kernel magic link that ``path`` goes through, if any."""
    if path.startswith(("/proc/", "/dev/")):
        for glob in _MAGIC:
            if glob.match(path):
                return glob.pattern
    return None


def within(path: str, cage: str) -> bool:
    """Whether normalised ``path`` is ``cage`` or inside it (``/w/p`` is not in ``/w/pr``)."""
    return cage == "/" or path == cage or path.startswith(cage + "/")


def resolve(value: object, cwd: str) -> ResolvedPath:
    """Resolve a path argument; raise `PathProblem` when it cannot be judged."""
    if not isinstance(value, str):
        raise PathProblem(f"expected a path string, got {type(value).__name__}")
    if not value:
        raise PathProblem("the path is empty")
    if "\x00" in value:
        raise PathProblem("the path contains a NUL byte")
    try:
        size = len(os.fsencode(value))
    except UnicodeEncodeError:
        raise PathProblem("the path cannot be encoded as a file name") from None
    if size > MAX_PATH:
        raise PathProblem(f"the path is longer than {MAX_PATH} bytes")
    if not value.startswith("/") and not (isinstance(cwd, str) and cwd.startswith("/")):
        raise PathProblem(f"the path is relative and the working directory {cwd!r} is not absolute")

    start = lexical(value, cwd)
    names = [start]
    if pattern := magic_link(start):
        raise PathProblem(f"it goes through the kernel magic link {pattern}")

    # A stack of the components still to walk, the next one last.
    pending = (value if value.startswith("/") else f"{cwd}/{value}").split("/")
    pending.reverse()
    resolved = "/"
    hops = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = f"{resolved.rstrip('/')}/{name}"
        if pattern := magic_link(candidate):
            raise PathProblem(f"it goes through the kernel magic link {pattern}")
        st = _lstat(candidate)
        if st is None or not stat.S_ISLNK(st.st_mode):
            resolved = candidate  # a real directory or file, or not there (yet)
            continue
        hops += 1
        if hops > MAX_LINKS:
            raise PathProblem("too many levels of symbolic links (a link loop?)")
        try:
            target = os.readlink(candidate)
        except OSError as exc:
            raise PathProblem(f"cannot read the link {candidate}: {exc.strerror}") from None
        if target.startswith("/"):
            resolved = "/"
        pending.extend(reversed(target.split("/")))
        # What the link chain stands for at this point, for the deny patterns.
        names.append(lexical("/".join(reversed(pending)), resolved))

    final = _lstat(resolved)
    names.append(resolved)
    return ResolvedPath(
        given=value,
        lexical=start,
        resolved=resolved,
        names=tuple(dict.fromkeys(names)),
        stat=final,
    )


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None  # not there yet: the rest of the path is taken as written
    except OSError as exc:  # EACCES, ENAMETOOLONG, EIO...: cannot tell where it leads
        raise PathProblem(f"cannot look at {path}: {exc.strerror}") from None
    except ValueError as exc:  # an unencodable name the checks above missed
        raise PathProblem(f"cannot look at {path!r}: {exc}") from None
