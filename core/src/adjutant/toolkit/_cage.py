"""The cage, enforced in-process: every path is resolved relative to a directory file
descriptor of the cage root, one component at a time, never following a symlink.

- A path is split into components (``..`` refused) and matched against the cages
  component by component, so ``/w/proj`` never admits ``/w/proj-evil``.
- Each parent directory is opened with ``O_DIRECTORY|O_NOFOLLOW`` relative to the one
  before; the final file with ``O_NOFOLLOW``; what was opened is re-checked with
  ``fstat`` (regular file, same device as the cage, a single link for writes).
- Writes go to a temporary file in the same directory, then ``os.replace`` with
  directory fds: atomic, nothing partial left behind, and a symlink swapped in at the
  target name is replaced as an entry, never followed.
- Protected names are refused inside the cage too, whether they exist or not: the
  rules are core's (`adjutant.safety.protection.CAGE_RULES`, through `cage_refusal`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from adjutant.safety.protection import CAGE_RULES, cage_refusal
from adjutant.safety.regular import file_kind

from ._refused import MAX_PATH_CHARS, Refused

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
#: The names protected below a cage in every mode (``.bashrc``, ``.mcp.json``...), for
#: code that lists them: a view of `adjutant.safety.protection.CAGE_RULES`, the one list.
PROTECTED_NAMES = frozenset(
    name for spec in CAGE_RULES for pattern in spec.patterns
    if "/" not in (name := pattern.removeprefix("**/")) and "*" not in name)


def protected_reason(parts: Sequence[str]) -> str | None:
    """Why the path ``parts`` (below a cage root) is protected, for reads and writes,
    or None: `adjutant.safety.protection.cage_refusal`."""
    return cage_refusal(parts)


def _components(path: str) -> list[str]:
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused("traversal", f"{path!r}: `..` is not allowed in a path")
    return parts


@dataclass(frozen=True)
class Located:
    """A path inside a cage: the cage root and the components below it."""

    root: str
    parts: tuple[str, ...]

    @property
    def shown(self) -> str:
        return "/".join(self.parts) or "."


def locate(cwd: str, cages: Sequence[str], raw: str, *, check_protected: bool = True) -> Located:
    """Where ``raw`` (relative to ``cwd``, or absolute) lies: inside which cage, and
    which components below it. Purely lexical; the walk does the rest."""
    if not raw or len(raw) > MAX_PATH_CHARS or "\x00" in raw:
        raise Refused("path", "a path must be 1 to 4096 characters without NUL")
    if not cages:
        raise Refused("cage", "no cage is set for this run: nothing can be touched")
    base = [] if raw.startswith("/") else _components(os.path.abspath(cwd))
    parts = base + _components(raw)
    for cage in cages:
        for spelling in dict.fromkeys((os.path.abspath(cage), os.path.realpath(cage))):
            cage_parts = _components(spelling)
            if parts[:len(cage_parts)] == cage_parts:  # whole components: no prefix confusion
                rel = tuple(parts[len(cage_parts):])
                if check_protected and (reason := protected_reason(rel)):
                    raise Refused("protected", f"{raw!r}: {reason}, even inside the cage")
                return Located(spelling, rel)
    raise Refused("cage", f"{raw!r} is outside the cage ({', '.join(cages)})")


def _symlink_or(fd: int, name: str, exc: OSError, shown: str) -> Refused:
    with contextlib.suppress(OSError):
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            return Refused("symlink", f"{shown}: {name!r} is a symbolic link; links are never "
                           "followed")
        if exc.errno == errno.ENXIO:  # a socket cannot be opened at all
            return Refused("not-a-file", f"{shown} is {file_kind(mode)}, not a regular file")
    if exc.errno == errno.ENOENT:
        return Refused("missing", f"{shown}: {name!r} does not exist")
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        return Refused("not-a-directory", f"{shown}: {name!r} is not a directory")
    return Refused("os-error", f"{shown}: {exc.strerror}")


@dataclass
class Opened:
    """An open parent directory (and the file in it, when it exists)."""

    located: Located
    root_dev: int
    dir_fd: int
    name: str
    file_fd: int | None = None
    st: os.stat_result | None = None
    _fds: list[int] = field(default_factory=list)

    def read(self, limit: int) -> bytes:
        """The whole file, refused if larger than ``limit`` bytes."""
        assert self.file_fd is not None and self.st is not None
        if self.st.st_size > limit:
            raise Refused("too-large", f"{self.located.shown} is {self.st.st_size} bytes, over "
                          f"the {limit}-byte limit")
        chunks, total = [], 0
        while chunk := os.read(self.file_fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise Refused("too-large", f"{self.located.shown} grew over {limit} bytes")
        return b"".join(chunks)

    def read_prefix(self, limit: int) -> bytes:
        """At most ``limit`` bytes from the start of the file."""
        assert self.file_fd is not None
        chunks, total = [], 0
        while total < limit and (chunk := os.read(self.file_fd, min(1 << 20, limit - total))):
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)


@contextlib.contextmanager
def walk(located: Located, *, want: str = "file", write: bool = False) -> Iterator[Opened]:
    """Open ``located``'s parent directories without following links, then the file
    (``want="file"``; may not exist yet), the directory (``want="dir"``), or an
    existing file or directory (``want="any"``)."""
    fds: list[int] = []
    try:
        fd = os.open(located.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fds.append(fd)
        root_dev = os.fstat(fd).st_dev
        parts = located.parts
        if want == "file" and not parts:
            raise Refused("not-a-file", f"{located.root} is the cage directory, not a file")
        dirs = parts if want == "dir" else parts[:-1]
        for name in dirs:
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _symlink_or(fd, name, exc, located.shown) from None
            fds.append(fd)
            if os.fstat(fd).st_dev != root_dev:
                raise Refused("device", f"{located.shown}: {name!r} is on another file system")
        if want == "dir":
            yield Opened(located, root_dev, fd, ".", _fds=fds)
            return
        opened = Opened(located, root_dev, fd, parts[-1], _fds=fds)
        try:
            file_fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise _symlink_or(fd, parts[-1], exc, located.shown) from None
        else:
            fds.append(file_fd)
            opened.file_fd, opened.st = file_fd, os.fstat(file_fd)
            if want == "any" and stat.S_ISDIR(opened.st.st_mode):
                if opened.st.st_dev != root_dev:
                    raise Refused("device", f"{located.shown} is on another file system")
            else:
                check_file(opened.st, root_dev, located.shown, write=write)
        if want == "any" and opened.st is None:
            raise Refused("missing", f"{located.shown} does not exist")
        yield opened
    finally:
        for fd in reversed(fds):
            os.close(fd)


def check_file(st: os.stat_result, root_dev: int, shown: str, *, write: bool) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise Refused("not-a-file", f"{shown} is {file_kind(st.st_mode)}, not a regular file")
    if st.st_dev != root_dev:
        raise Refused("device", f"{shown} is on another file system than the cage")
    if write and st.st_nlink != 1:
        raise Refused("hardlink", f"{shown} has {st.st_nlink} hard links; a file linked "
                      "elsewhere is never written")


def same_file(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns) == (
        b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns)


def current(opened: Opened) -> os.stat_result | None:
    """What the name is now (not following a link), or None if it does not exist."""
    try:
        st = os.stat(opened.name, dir_fd=opened.dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise Refused("symlink", f"{opened.located.shown} became a symbolic link")
    return st


def stage(opened: Opened, data: bytes) -> str:
    """Write ``data`` to a new temporary file beside the target; return its name."""
    mode = stat.S_IMODE(opened.st.st_mode) if opened.st is not None else 0o644
    for _ in range(10):
        tmp = f".adjutant-{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         mode, dir_fd=opened.dir_fd)
        except FileExistsError:
            continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            discard(opened.dir_fd, tmp)
            raise
        os.close(fd)
        return tmp
    raise Refused("os-error", "could not create a temporary file")


def discard(dir_fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def replace(opened: Opened, data: bytes) -> None:
    """Atomically give the target ``data``, if it is still what was checked."""
    tmp = stage(opened, data)
    try:
        if not same_file(current(opened), opened.st):
            raise Refused("changed", f"{opened.located.shown} changed while it was being "
                          "written; nothing was written")
        os.replace(tmp, opened.name, src_dir_fd=opened.dir_fd, dst_dir_fd=opened.dir_fd)
    except BaseException:
        discard(opened.dir_fd, tmp)
        raise
