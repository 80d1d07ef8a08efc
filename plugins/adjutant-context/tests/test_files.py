"""``selected-files`` and ``service-logs``: real files under a temporary ADJUTANT_HOME."""

import json
import os
from pathlib import Path

import pytest

from adjutant_context import SelectedFilesProvider, ServiceLogsProvider, clear, select, selected
from adjutant_context._files import MAX_LOG_FILES, MAX_SELECTED, SELECTED_FILE

pytestmark = pytest.mark.anyio


@pytest.fixture
def home() -> Path:
    """The ADJUTANT_HOME the autouse fixture set."""
    return Path(os.environ["ADJUTANT_HOME"])


async def test_selection_round_trip(tmp_path: Path, home: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    stored = select(home, ["a.py", tmp_path / "b.py", "a.py", "gone.py"])
    assert stored == [str(tmp_path / "a.py"), str(tmp_path / "b.py"), str(tmp_path / "gone.py")]
    assert json.loads((home / SELECTED_FILE).read_text()) == stored
    assert [p.name for p in home.iterdir()] == [SELECTED_FILE]  # no temporary file left
    fields = await SelectedFilesProvider().gather(str(tmp_path))
    assert fields == {"selected_files": [str(tmp_path / "a.py"), str(tmp_path / "b.py")]}
    clear(home)
    clear(home)  # clearing twice is fine
    assert await SelectedFilesProvider().gather(str(tmp_path)) == {}


async def test_selection_is_capped_and_relative_entries_follow_the_cwd(
        tmp_path: Path, home: Path) -> None:
    files = []
    for i in range(MAX_SELECTED + 5):
        (tmp_path / f"f{i}").write_text("")
        files.append(f"f{i}")
    home.mkdir()
    (home / SELECTED_FILE).write_text(json.dumps([*files, 3, None, "", "\x00"]))
    found = selected(home, str(tmp_path))
    assert found == [str(tmp_path / f) for f in files[:MAX_SELECTED]]
    assert await SelectedFilesProvider(home=home).gather(str(tmp_path)) == {
        "selected_files": found}


@pytest.mark.parametrize("content", ["not json", '{"a": 1}', '"x"', ""])
async def test_a_broken_selection_file_is_ignored(tmp_path: Path, home: Path,
                                                  content: str) -> None:
    home.mkdir()
    (home / SELECTED_FILE).write_text(content)
    assert await SelectedFilesProvider().gather(str(tmp_path)) == {}


def _config(home: Path, logs: object) -> None:
    home.mkdir(exist_ok=True)
    (home / "context.json").write_text(json.dumps({"logs": logs}))


async def test_log_tails_prefixed_with_the_file_name(tmp_path: Path, home: Path) -> None:
    (tmp_path / "app.log").write_text("".join(f"line {i}\n" for i in range(30)))
    logs = tmp_path / "var"
    logs.mkdir()
    (logs / "db.log").write_text("ready\nconnect user=bob password=hunter2\n")
    _config(home, ["app.log", str(logs / "db.log")])
    fields = await ServiceLogsProvider().gather(str(tmp_path))
    assert fields["logs"] == [f"app.log: line {i}" for i in range(10, 30)] + [
        "db.log: ready", "db.log: connect user=bob password=[REDACTED]"]
    few = await ServiceLogsProvider(lines=2).gather(str(tmp_path))
    assert few["logs"][:2] == ["app.log: line 28", "app.log: line 29"]


async def test_unreadable_logs_are_one_line_each(tmp_path: Path, home: Path) -> None:
    (tmp_path / "dir.log").mkdir()
    _config(home, ["missing.log", "dir.log"])
    fields = await ServiceLogsProvider().gather(str(tmp_path))
    assert fields["logs"] == ["(missing.log: unreadable: No such file or directory)",
                              "(dir.log: unreadable: Is a directory)"]


async def test_at_most_five_log_files(tmp_path: Path, home: Path) -> None:
    names = [f"s{i}.log" for i in range(MAX_LOG_FILES + 3)]
    for name in names:
        (tmp_path / name).write_text("x\n")
    _config(home, names)
    fields = await ServiceLogsProvider().gather(str(tmp_path))
    assert fields["logs"] == [f"{n}: x" for n in names[:MAX_LOG_FILES]]


async def test_a_key_block_across_log_lines_is_masked(tmp_path: Path, home: Path) -> None:
    (tmp_path / "k.log").write_text("before\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n"
                                    "-----END PRIVATE KEY-----\nafter\n")
    _config(home, ["k.log"])
    fields = await ServiceLogsProvider().gather(str(tmp_path))
    assert fields["logs"] == ["k.log: before", "k.log: [REDACTED PRIVATE KEY]", "k.log: after"]


@pytest.mark.parametrize("logs", [None, "app.log", [1, None]])
async def test_no_or_bad_configuration_means_nothing(tmp_path: Path, home: Path,
                                                     logs: object) -> None:
    assert await ServiceLogsProvider().gather(str(tmp_path)) == {}
    _config(home, logs)
    assert await ServiceLogsProvider().gather(str(tmp_path)) == {}
