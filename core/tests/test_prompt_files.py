"""`adjutant.safety.protection.PromptFiles`: may this file join a prompt? Judged on
its resolved path, with the deny rules, the cage rules and one hard link only."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from adjutant.safety.protection import PromptFileRefused, PromptFiles


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path, PromptFiles]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    (home / "Documents").mkdir()
    (home / "Documents" / "passwords.md").write_text("hunter2\n")
    work = tmp_path / "work"
    (work / ".adjutant" / "skills").mkdir(parents=True)
    return home, work, PromptFiles([str(work)], home=str(home),
                                   data_home=str(tmp_path / "data"))


def refusal(files: PromptFiles, path: Path) -> str:
    reason = files.refusal(path)
    assert reason is not None, path
    with pytest.raises(PromptFileRefused) as caught:
        files.read(path)
    assert caught.value.reason == reason
    return reason


def test_a_file_inside_is_read_and_shown_where_it_really_is(place: tuple[Path, Path, PromptFiles]
                                                           ) -> None:
    _, work, files = place
    (work / "docs").mkdir()
    (work / "docs" / "review.md").write_text("review\n")
    (work / ".adjutant" / "skills" / "reviewer.md").symlink_to("../../docs/review.md")
    (work / ".adjutant" / "skills" / "plain.md").write_text("plain\n")
    got = files.read(work / ".adjutant" / "skills" / "reviewer.md")
    assert got.data == b"review\n" and got.shown == "docs/review.md"
    assert got.named == str(work / ".adjutant" / "skills" / "reviewer.md")
    assert files.refusal(work / ".adjutant" / "skills" / "plain.md") is None
    assert files.shown(work / ".adjutant" / "skills" / "reviewer.md") == "docs/review.md"


def test_links_out_of_the_cage_are_refused_in_any_position(
        place: tuple[Path, Path, PromptFiles]) -> None:
    home, work, files = place
    (work / "notes.md").symlink_to(home / "Documents" / "passwords.md")
    (work / "papers").symlink_to(home / "Documents")
    (work / "sub").mkdir()
    (work / "sub" / "up.md").symlink_to("../../home/Documents/passwords.md")
    for path in (work / "notes.md", work / "papers" / "passwords.md", work / "sub" / "up.md"):
        reason = refusal(files, path)
        assert "outside the workspace" in reason and "passwords.md" in reason
    assert "outside the workspace" in refusal(PromptFiles([]), work / ".adjutant")


def test_hard_links_are_refused(place: tuple[Path, Path, PromptFiles]) -> None:
    home, work, files = place
    try:
        os.link(home / ".ssh" / "id_rsa", work / "key.md")
        os.link(home / "Documents" / "passwords.md", work / "copy.md")
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        pytest.skip("another file system")
    assert "protected as SSH keys" in refusal(files, work / "key.md")
    assert "has 2 hard links" in refusal(files, work / "copy.md")
    (work / "twin.md").write_text("x")
    os.link(work / "twin.md", work / "twin2.md")  # both names inside: still two names
    assert "has 2 hard links" in refusal(files, work / "twin.md")


def test_the_deny_and_cage_rules_hold_inside_the_workspace(
        place: tuple[Path, Path, PromptFiles]) -> None:
    _, work, files = place
    (work / ".env").write_text("API_KEY=x\n")
    (work / "backup" / ".aws").mkdir(parents=True)
    (work / "backup" / ".aws" / "credentials").write_text("x\n")
    (work / ".adjutant-1.tmp").write_text("x\n")
    (work / ".adjutant" / "skills" / "env.md").symlink_to("../../.env")
    assert "environment file" in refusal(files, work / ".env")
    assert "environment file" in refusal(files, work / ".adjutant" / "skills" / "env.md")
    assert "credentials" in refusal(files, work / "backup" / ".aws" / "credentials")
    assert "Adjutant's own files" in refusal(files, work / ".adjutant-1.tmp")


def test_what_is_not_a_small_regular_file_is_refused_without_blocking(
        place: tuple[Path, Path, PromptFiles]) -> None:
    _, work, files = place
    os.mkfifo(work / "pipe.md")
    assert "not a regular file" in refusal(files, work / "pipe.md")
    assert "not a regular file" in refusal(files, work / ".adjutant")
    assert "cannot be read" in (files.refusal(work / "gone.md") or "")
    with pytest.raises(FileNotFoundError):
        files.read(work / "gone.md")
    (work / "big.md").write_bytes(b"x" * 101)
    with pytest.raises(PromptFileRefused, match="larger than 100 bytes"):
        files.read(work / "big.md", limit=100)
    assert files.read(work / "big.md", limit=101).data == b"x" * 101
