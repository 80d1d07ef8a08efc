"""The attacker's bench (see helpers.py): the `attack` fixture, and `bench`, the same
under ``/var/tmp`` for tests that run git or commands in the sandbox (which mounts a
fresh ``/tmp``)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import Attack


@pytest.fixture
def attack(tmp_path: Path) -> Attack:
    pytest.importorskip("adjutant_files")
    return Attack(tmp_path)


@pytest.fixture
def bench() -> Iterator[Attack]:
    root = Path(tempfile.mkdtemp(prefix="adjutant-attack-", dir="/var/tmp"))
    try:
        yield Attack(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
