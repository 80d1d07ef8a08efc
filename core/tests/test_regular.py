"""`adjutant.safety.regular`: what a preview, packet or context reads by name never
blocks, and is refused, saying what it is, unless a regular file."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from adjutant.safety.regular import NotRegularFile, file_kind, open_regular, read_regular


def test_special_files_are_refused_by_name_and_by_link_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    os.symlink("/dev/zero", tmp_path / "zero")
    os.symlink("fifo", tmp_path / "fifo-link")
    try:
        for name, kind in (("fifo", "a named pipe (FIFO)"), ("sock", "a socket"),
                           ("zero", "a character device"), ("fifo-link", "a named pipe (FIFO)"),
                           (".", "a directory")):
            with pytest.raises(NotRegularFile) as caught:
                read_regular(tmp_path / name, 10)  # a blocking open of the FIFO would hang
            assert caught.value.kind == kind and "not a regular file" in str(caught.value)
    finally:
        sock.close()


def test_a_regular_file_is_read_up_to_the_limit_and_links_can_be_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"0123456789")
    os.symlink("a.txt", tmp_path / "link")
    assert read_regular(tmp_path / "a.txt", 4) == b"0123"
    assert read_regular(tmp_path / "link", 100) == b"0123456789"
    with pytest.raises(OSError, match="symbolic links"):  # ELOOP: O_NOFOLLOW
        read_regular(tmp_path / "link", 100, follow_links=False)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 1)
    with open_regular(tmp_path / "a.txt") as handle:
        assert handle.read() == b"0123456789"  # blocking reads again: a whole file
    assert file_kind(os.stat(tmp_path / "a.txt").st_mode) == "a regular file"
