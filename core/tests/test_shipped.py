"""`adjutant.shipped`: a file assembled from package parts is used only when its
SHA-256 is the pinned one; a corrupt part leaves nothing behind."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from adjutant.shipped import AssemblyError, assembled, concatenate


def parts(tmp_path: Path, *chunks: bytes) -> list[Path]:
    paths = []
    for index, chunk in enumerate(chunks):
        paths.append(tmp_path / f"part{index}")
        paths[-1].write_bytes(chunk)
    return paths


def test_parts_are_concatenated_checked_and_stamped(tmp_path: Path) -> None:
    pieces = parts(tmp_path, b"abc" * 1000, b"def")
    digest = hashlib.sha256(b"abc" * 1000 + b"def").hexdigest()
    target = tmp_path / "cache" / "model.bin"
    assert assembled(target, digest, concatenate(lambda: pieces)) == target
    assert target.read_bytes() == b"abc" * 1000 + b"def"
    assert (tmp_path / "cache" / "model.bin.sha256").read_text().split() == [digest, "3003"]

    def never(path: Path) -> None:
        raise AssertionError("a stamped file is not assembled again")
    assert assembled(target, digest, never) == target


def test_a_corrupt_part_leaves_nothing(tmp_path: Path) -> None:
    pieces = parts(tmp_path, b"abc", b"dXf")
    digest = hashlib.sha256(b"abcdef").hexdigest()
    target = tmp_path / "cache" / "model.bin"
    with pytest.raises(AssemblyError, match="SHA-256"):
        assembled(target, digest, concatenate(lambda: pieces))
    assert list(target.parent.iterdir()) == []


def test_a_file_changed_after_stamping_is_assembled_again(tmp_path: Path) -> None:
    pieces = parts(tmp_path, b"abcdef")
    digest = hashlib.sha256(b"abcdef").hexdigest()
    target = tmp_path / "model.bin"
    assembled(target, digest, concatenate(lambda: pieces))
    target.write_bytes(b"abcdefg")  # the size no longer matches the stamp
    assert assembled(target, digest, concatenate(lambda: pieces)).read_bytes() == b"abcdef"


def test_a_missing_package_propagates(tmp_path: Path) -> None:
    def assemble(path: Path) -> None:
        import not_a_real_model_package  # type: ignore[import-not-found]  # noqa: F401
    with pytest.raises(ImportError):
        assembled(tmp_path / "m.bin", "0" * 64, assemble)
    assert list(tmp_path.iterdir()) == []
