"""`owner_only_secret`: the one helper behind every local server's token (the dock's,
``adjutant mcp serve --http``'s)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adjutant import owner_only_secret


def test_made_owner_only_once_and_kept(tmp_path: Path) -> None:
    path = owner_only_secret(tmp_path / "srv" / "token")
    token = path.read_text()
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert len(token.strip()) >= 40
    assert owner_only_secret(path).read_text() == token  # kept: clients hold it


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660, 0o606])
def test_a_file_others_can_read_or_write_is_refused(tmp_path: Path, mode: int) -> None:
    path = owner_only_secret(tmp_path / "token")
    path.chmod(mode)
    with pytest.raises(PermissionError, match=r"can be read by others.*a new one is made"):
        owner_only_secret(path)


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_file_another_user_owns_is_refused(tmp_path: Path) -> None:
    path = owner_only_secret(tmp_path / "token")
    os.chown(path, 65534, 65534)  # still 0600: only its owner, someone else, reads it
    with pytest.raises(PermissionError, match="belongs to another user"):
        owner_only_secret(path)


def test_a_symlinked_token_file_is_not_made_through_the_link(tmp_path: Path) -> None:
    """A dangling link planted where the token goes is not followed to make a file."""
    (tmp_path / "token").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FileExistsError):
        owner_only_secret(tmp_path / "token")
    assert not (tmp_path / "elsewhere").exists()
