"""``shell-history``: real history files of bash, zsh and fish in a temporary HOME."""

import os
from pathlib import Path

import pytest

from adjutant_context import ShellHistoryProvider
from adjutant_context._common import TAIL_BYTES
from adjutant_context._history import MAX_COMMAND, parse_fish, parse_zsh

pytestmark = pytest.mark.anyio


def _age(path: Path, seconds: float) -> None:
    stamp = path.stat().st_mtime - seconds
    os.utime(path, (stamp, stamp))


async def recent(cwd: Path, limit: int = 10) -> list[str]:
    fields = await ShellHistoryProvider(limit).gather(str(cwd))
    return list(fields.get("recent_shell", []))


async def test_bash_newest_last_deduplicated(tmp_path: Path) -> None:
    (Path.home() / ".bash_history").write_text(
        "#1700000000\ncd src\nls\n#1700000001\nmake\nls\n\n" + "".join(
            f"echo {i}\n" for i in range(3)))
    assert await recent(tmp_path) == ["cd src", "make", "ls", "echo 0", "echo 1", "echo 2"]
    assert await recent(tmp_path, limit=2) == ["echo 1", "echo 2"]


async def test_histfile_wins_and_home_is_read_at_gather_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = ShellHistoryProvider()
    other = tmp_path / "other"
    other.mkdir()
    (other / ".bash_history").write_text("from other home\n")
    monkeypatch.setenv("HOME", str(other))
    assert (await provider.gather(str(tmp_path)))["recent_shell"] == ["from other home"]
    (tmp_path / "hist").write_text("from histfile\n")
    monkeypatch.setenv("HISTFILE", str(tmp_path / "hist"))
    assert (await provider.gather(str(tmp_path)))["recent_shell"] == ["from histfile"]


async def test_zsh_extended_and_multiline(tmp_path: Path) -> None:
    (Path.home() / ".zsh_history").write_text(
        ": 1700000000:0;git status\n: 1700000005:2;for f in *; do\\\necho $f\\\ndone\n"
        "plain command\n")
    assert await recent(tmp_path) == ["git status", "for f in *; do\necho $f\ndone",
                                      "plain command"]


async def test_fish(tmp_path: Path) -> None:
    fish = Path.home() / ".local" / "share" / "fish"
    fish.mkdir(parents=True)
    (fish / "fish_history").write_text(
        "- cmd: cargo build\n  when: 1700000000\n- cmd: echo a\\nb\n  when: 1700000001\n"
        "  paths:\n    - src\n- cmd: cargo build\n  when: 1700000002\n")
    assert await recent(tmp_path) == ["echo a\nb", "cargo build"]


async def test_shells_merged_by_last_use(tmp_path: Path) -> None:
    bash, zsh = Path.home() / ".bash_history", Path.home() / ".zsh_history"
    bash.write_text("bash one\n")
    zsh.write_text(": 1700000000:0;zsh one\n")
    _age(zsh, 100)
    assert await recent(tmp_path) == ["zsh one", "bash one"]
    _age(bash, 1000)
    assert await recent(tmp_path) == ["bash one", "zsh one"]


async def test_long_commands_are_cut_and_secrets_masked(tmp_path: Path) -> None:
    (Path.home() / ".bash_history").write_text(
        "echo " + "x" * 1000 + "\ncurl -H 'Authorization: Bearer abcdef123456' api\n"
        "echo \x1b[31mred\x1b[0m\n")
    found = await recent(tmp_path)
    assert len(found[0]) == MAX_COMMAND
    assert found[1:] == ["curl -H 'Authorization: Bearer [REDACTED]' api", "echo red"]


async def test_only_the_tail_of_a_big_file_is_read(tmp_path: Path) -> None:
    lines = [f"command number {i:07}" for i in range(20_000)]  # ~ 480 KiB
    (Path.home() / ".bash_history").write_text("\n".join(lines) + "\n")
    found = await recent(tmp_path)
    assert found == lines[-10:]
    # a partial first line is dropped, never reported
    provider = ShellHistoryProvider(limit=100_000)
    every = (await provider.gather(str(tmp_path)))["recent_shell"]
    assert len(every) < TAIL_BYTES // 20
    assert set(every) <= set(lines)


async def test_nothing_without_history(tmp_path: Path) -> None:
    assert await ShellHistoryProvider().gather(str(tmp_path)) == {}


def test_parsers_skip_noise() -> None:
    assert parse_zsh("\n: 1:0;\n") == []
    assert parse_fish("- cmd: \n  when: 1\n") == []
