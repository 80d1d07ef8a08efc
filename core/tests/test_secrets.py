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
    with pytest.raises(PermissionError, match="belongs to another user") as caught:
        owner_only_secret(path)
    assert "can be read by others" not in str(caught.value)  # it was misreported so


def test_a_symlinked_token_file_is_not_made_through_the_link(tmp_path: Path) -> None:
    """A dangling link planted where the token goes is not followed to make a file."""
    (tmp_path / "token").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PermissionError, match="a link is never followed"):
        owner_only_secret(tmp_path / "token")
    assert not (tmp_path / "elsewhere").exists()


# -- the folders on the way: a mode on the file proves nothing in a swappable folder --


def test_a_linked_secret_folder_is_refused_and_never_chmod_through(tmp_path: Path) -> None:
    """``$ADJUTANT_HOME/mcp/oauth`` made a link to a 0755 folder holding a 0600 token:
    the token was read and sent."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)
    (home / "mcp").mkdir(parents=True)
    (home / "mcp" / "oauth").symlink_to(elsewhere)
    with pytest.raises(PermissionError, match="symbolic link"):
        owner_only_secret(home / "mcp" / "oauth" / "token", root=home)
    assert os.stat(elsewhere).st_mode & 0o777 == 0o755  # not chmod'ed through the link
    assert list(elsewhere.iterdir()) == []


def test_a_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "dock").mkdir(parents=True)
    os.chmod(home / "dock", 0o777)
    with pytest.raises(PermissionError, match="written by others") as caught:
        owner_only_secret(home / "dock" / "token", root=home)
    assert "chmod" in str(caught.value)  # what to run


def test_an_own_folder_others_can_enter_is_closed_not_refused(tmp_path: Path) -> None:
    """``mkdir -p`` made ``mcp/`` 0755 on installs before the folder checks: the user's
    own real folder is tightened to 0700, so ``mcp serve --http`` still starts."""
    home = tmp_path / "home"
    (home / "mcp").mkdir(parents=True)
    os.chmod(home / "mcp", 0o755)
    owner_only_secret(home / "mcp" / "serve-token", root=home)
    assert os.stat(home / "mcp").st_mode & 0o777 == 0o700


def test_a_folder_on_the_way_others_can_write_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "mcp" / "oauth").mkdir(parents=True, mode=0o700)
    os.chmod(home / "mcp", 0o777)  # anyone could rename oauth/ and put their own there
    with pytest.raises(PermissionError, match=r"mcp can be written by others"):
        owner_only_secret(home / "mcp" / "oauth" / "token", root=home)
