"""Reading a file someone named without ever blocking on it.

A path in a plan, a packet or a context may name a named pipe, a socket or a device:
a blocking ``open`` of a FIFO waits until a writer appears (forever, and on the event
loop of the dock or the MCP server, for everyone), and ``/dev/zero`` never ends. Every
preview, approval packet and context reads through `open_regular`: opened without
blocking (a FIFO opens at once, a socket fails), judged by ``fstat`` on the descriptor
that will be read (no swap between check and read), refused unless a regular file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

__all__ = ["NotRegularFile", "create_new", "file_kind", "open_regular", "read_regular"]

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"))


class NotRegularFile(OSError):
    """The path is not a regular file (a FIFO, socket, device or directory): it is never
    opened for reading or writing. An `OSError`, so callers that already tell the user
    a file is unreadable say why."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file: never read or written "
                         "(it could block or never end)", os.fspath(path))
        self.kind = kind


def file_kind(mode: int) -> str:
    """What ``mode`` (an ``st_mode``) is, in words: "a regular file", "a named pipe
    (FIFO)", "a socket", ..."""
    return next((kind for test, kind in _KINDS if test(mode)),
                "a regular file" if stat.S_ISREG(mode) else "a special file")


@contextlib.contextmanager
def open_regular(path: str | os.PathLike[str], *,
                 follow_links: bool = True) -> Iterator[BinaryIO]:
    """``path`` opened for reading, only if it is a regular file; never blocks.

    :param follow_links: False refuses a symbolic link as the last component.
    :raises NotRegularFile: a FIFO, socket, device or directory (by name or by link).
    :raises OSError: missing, unreadable, or a link where ``follow_links`` is False.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow_links:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: a socket, or a device with nothing behind
            raise
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise exc from None
        raise NotRegularFile(path, file_kind(mode)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, file_kind(st.st_mode))
        os.set_blocking(fd, True)  # a regular file: reads never wait on anyone
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        yield handle


def read_regular(path: str | os.PathLike[str], limit: int, *,
                 follow_links: bool = True) -> bytes:
    """At most ``limit`` bytes from the start of the regular file ``path`` (see
    `open_regular`)."""
    with open_regular(path, follow_links=follow_links) as handle:
        return handle.read(limit)


@contextlib.contextmanager
def create_new(path: str | os.PathLike[str], *, mode: int = 0o600) -> Iterator[BinaryIO]:
    """``path`` made new for writing: never over an existing file, never through a link
    or into a named pipe (``O_CREAT | O_EXCL``: whatever is already there, even a
    dangling link, is refused), owner-only by default. If the body fails, the partial
    file is removed, so nothing half-written is left to share.

    :raises FileExistsError: something is already at ``path``; its message says so.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, mode)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "already exists; never written over (nor "
                              "through a link or into a pipe): move it away or choose "
                              "another name", os.fspath(path)) from None
    handle = os.fdopen(fd, "wb")
    try:
        with handle:
            yield handle
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
