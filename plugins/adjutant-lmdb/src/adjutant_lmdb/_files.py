"""Append-only line files: the checkpoint file and the JSONL exports.

Each line is written with one ``write`` on an ``O_APPEND`` descriptor and then
fsync'd (a checkpoint line may be fsync'd later: see `LmdbLogStore`), under an
exclusive ``flock`` (so two processes never interleave, and a reader that takes
the lock never sees a line being written). A crash can still
leave a torn last line (a power cut mid-write, or zeros where the data never
reached the disk): `cut_torn_tail` removes whatever follows the last newline.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ._chain import Checkpoint, Problem

__all__ = [
    "AppendFile",
    "checkpoint_line",
    "cut_torn_tail",
    "fsync_dir",
    "last_line",
    "locked",
    "parse_checkpoint",
    "read_checkpoints",
    "sync",
]

_CHUNK = 64 * 1024


def sync(fd: int) -> None:
    """Flush to the disk itself: on macOS fsync stops at the drive's cache."""
    if sys.platform == "darwin":
        fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
    else:
        os.fsync(fd)


def fsync_dir(path: Path) -> None:
    """Make a directory entry (a file just created) survive a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def locked(fd: int) -> Iterator[None]:
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class AppendFile:
    """An append-only, line-oriented, fsync'd file (created on open)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.created = not path.exists()
        self.fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if self.created:
            fsync_dir(path.parent)

    def append(self, data: bytes, *, durable: bool = True) -> None:
        """Write whole lines and fsync them (``durable=False``: leave that to a later
        append or `sync`; call under `locked`). A write that fails part-way (a full
        disk) is cut back, so no torn line is left for the next one to follow."""
        size = os.lseek(self.fd, 0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
            if durable:
                sync(self.fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, size)
            raise

    def sync(self) -> None:
        """Make every line written so far durable."""
        sync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def cut_torn_tail(fd: int) -> bytes:
    """Truncate the file to its last complete line; returns what was cut (b"" if
    nothing was torn). Call under `locked`."""
    size = os.lseek(fd, 0, os.SEEK_END)
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            end = start + newline + 1
            break
        end = start
    if end == size:
        return b""
    torn = os.pread(fd, size - end, end)
    os.ftruncate(fd, end)
    sync(fd)
    return torn


def last_line(fd: int) -> bytes | None:
    """The last complete line (without its newline), or None for an empty file."""
    size = os.lseek(fd, 0, os.SEEK_END)
    if size == 0:
        return None
    end, buf = size, b""
    while end > 0:
        start = max(0, end - _CHUNK)
        buf = os.pread(fd, end - start, start) + buf
        end = start
        body = buf[:-1] if buf.endswith(b"\n") else buf
        cut = body.rfind(b"\n")
        if cut >= 0:
            return body[cut + 1:]
    return buf[:-1] if buf.endswith(b"\n") else buf


def checkpoint_line(index: int, digest: bytes) -> bytes:
    return b'{"index":%d,"hash":"%s"}\n' % (index, digest.hex().encode())


def parse_checkpoint(line: bytes) -> tuple[int, bytes]:
    """``(index, hash)``; `ValueError` naming what is wrong."""
    obj = json.loads(line)
    if not isinstance(obj, dict) or set(obj) != {"index", "hash"}:
        raise ValueError("expected exactly the keys index and hash")
    index, digest = obj["index"], obj["hash"]
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ValueError(f"bad index {index!r}")
    if not isinstance(digest, str) or len(digest) != 64:
        raise ValueError("hash must be 64 hex digits")
    return index, bytes.fromhex(digest)


def read_checkpoints(path: Path, limit: int) -> Iterator[Checkpoint | Problem]:
    """Stream the checkpoints in the first ``limit`` bytes of a file, with a `Problem`
    for each bad line and for any that does not move forward (they are written in
    strictly ascending order)."""
    name = path.name
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        last = -1
        for number, line in enumerate(_bounded(handle, limit), 1):
            if not line.endswith(b"\n"):
                yield Problem(None, f"{name} line {number}: incomplete (torn) line")
                continue
            try:
                index, digest = parse_checkpoint(line)
            except ValueError as exc:
                yield Problem(None, f"{name} line {number}: malformed checkpoint ({exc})")
                continue
            if index <= last:
                yield Problem(index, f"{name} line {number}: checkpoint for record {index} "
                              f"after one for record {last} (checkpoints were reordered)")
                continue
            last = index
            yield Checkpoint(number, index, digest)


def _bounded(handle: BinaryIO, limit: int) -> Iterator[bytes]:
    """The lines of the first ``limit`` bytes, streamed."""
    for line in handle:
        if limit <= 0:
            return
        if len(line) >= limit:
            yield line[:limit]
            return
        limit -= len(line)
        yield line
