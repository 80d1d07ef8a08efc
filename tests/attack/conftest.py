"""The attacker's bench (see helpers.py): the `attack` fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import Attack


@pytest.fixture
def attack(tmp_path: Path) -> Attack:
    pytest.importorskip("adjutant_files")
    return Attack(tmp_path)
