"""The data home holds the unredacted action log and run artifacts: a kernel makes it
private (0700), and `adjutant doctor` warns when an existing one is open to others."""

from __future__ import annotations

from pathlib import Path

import anyio

from adjutant import Kernel
from adjutant._checks import check_data_home


def _start(home: Path) -> Kernel:
    async def main() -> Kernel:
        async with Kernel(home=home, load_installed=False) as kernel:
            return kernel
    return anyio.run(main)


def test_a_new_data_home_is_made_private(tmp_path: Path) -> None:
    kernel = _start(tmp_path / "a" / "home")
    assert kernel.home.stat().st_mode & 0o777 == 0o700
    result = check_data_home(kernel)
    assert result.status == "ok" and "mode 700" in result.message


def test_an_open_data_home_is_kept_and_doctor_says_how_to_close_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)  # a folder the user chose may serve more than Adjutant: not changed
    kernel = _start(home)
    assert home.stat().st_mode & 0o777 == 0o755
    result = check_data_home(kernel)
    assert result.status == "warn" and "read by other users" in result.message
    assert result.fix == f"chmod 700 {home}"
