"""Working memory: each entry with its source, durable and atomic; adding never
deletes; forgetting is explicit and logged; a malformed model proposal is kept and
reported, never dropped; a damaged file is reported and left as it is."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adjutant.testing import Harness
from adjutant_memory import MemoryPlugin, WorkingMemory
from adjutant_memory._working import MemoryFileError

pytestmark = pytest.mark.anyio

ADJUTANT = str(Path(sys.executable).with_name("adjutant"))


def cli(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    env = {**base, "ADJUTANT_HOME": str(tmp_path / "home"),
           "ADJUTANT_LOAD_PLUGINS": "memory,lmdb", "XDG_CACHE_HOME": str(tmp_path / "cache"),
           **extra}
    return subprocess.run([ADJUTANT, "memory", *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)


def test_an_identical_entry_is_kept_once_and_nothing_is_deleted(tmp_path: Path) -> None:
    memory = WorkingMemory(tmp_path)
    first, added = memory.add("I prefer pytest -q", by="user")
    other, _ = memory.add("The project uses tabs", kind="fact", by="user")
    again, added_again = memory.add("  i prefer   PYTEST -q. ", by="operator", run_id="r1")
    assert (added, added_again) == (True, False)
    assert again == first  # the one there, with its own source
    assert memory.entries() == [first, other]
    assert first.source.by == "user" and first.source.at > 0


def test_writes_are_atomic_and_a_damaged_file_is_left_alone(tmp_path: Path) -> None:
    memory = WorkingMemory(tmp_path)
    memory.add("I prefer pytest -q", by="user")
    assert sorted(p.name for p in memory.folder.iterdir()) == [".working.lock",
                                                               "working.json"]
    memory.path.write_text('{"entries": [{"id": 1}]}')
    with pytest.raises(MemoryFileError, match="left as it is"):
        memory.add("another", by="user")
    assert memory.path.read_text() == '{"entries": [{"id": 1}]}'


def test_bad_entries_are_refused_with_the_reason(tmp_path: Path) -> None:
    memory = WorkingMemory(tmp_path)
    for text, reason in (("   ", "needs some text"), ("x" * 2001, "at most 2000"),
                         ("a\x1b[2Jb", "control characters")):
        with pytest.raises(ValueError, match=reason):
            memory.add(text, by="user")
    assert memory.entries() == []


async def test_forgetting_is_explicit_and_logged() -> None:
    async with Harness(MemoryPlugin) as h:
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, MemoryPlugin)
        service = plugin.require()
        entry, _ = await service.remember("I prefer pytest -q", by="user")
        with pytest.raises(LookupError, match="no entry"):
            await service.forget("zzzz", by="user")
        await service.forget(entry.id[:4], by="user")
        assert service.working.entries() == []
        [record] = await h.records("memory_forgot")
        assert (record["entry_id"], record["text"], record["by"]) == \
            (entry.id, "I prefer pytest -q", "user")


async def test_a_malformed_extraction_is_kept_and_reported_not_dropped() -> None:
    async with Harness(MemoryPlugin) as h:
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, MemoryPlugin)
        service = plugin.require()
        raw = '[{"text": "I prefer pytest -q", "kind": "preference"'  # truncated JSON
        _, error = await service.take_proposals(raw, by="operator", run_id="r9")
        assert error is not None and "not a list of memories" in error
        [kept] = service.working.entries()
        assert (kept.kind, kept.text, kept.pinned) == ("unparsed", raw, False)
        [record] = await h.records("memory_extraction_failed")
        assert record["raw"] == raw and record["entry_id"] == kept.id
        good, error = await service.take_proposals(
            '```json\n[{"text": "The project uses tabs", "kind": "fact"}]\n```', by="operator")
        assert error is None and [e.text for e in good] == ["The project uses tabs"]


def test_cli_show_add_edit_forget(tmp_path: Path) -> None:
    pytest.importorskip("adjutant_lmdb")  # the action log forgetting is written to
    added = cli(tmp_path, "add", "I prefer pytest -q", "--json")
    assert added.returncode == 0, added.stderr
    entry = json.loads(added.stdout)["entry"]
    again = cli(tmp_path, "add", "I prefer pytest -q")
    assert again.returncode == 0 and "already remembered" in again.stdout
    shown = json.loads(cli(tmp_path, "show", "--json").stdout)
    assert [e["text"] for e in shown["entries"]] == ["I prefer pytest -q"]
    assert shown["entries"][0]["source"]["by"] == "user"

    edited = cli(tmp_path, "edit", "--set", f"{entry['id'][:5]}=I prefer pytest -q -x")
    assert edited.returncode == 0 and "1 changed" in edited.stdout
    bad = cli(tmp_path, "edit", "--set", "nope=x")
    assert bad.returncode == 1 and "no entry" in bad.stderr

    # $EDITOR: a script that writes invalid JSON; nothing changes, the edit is kept
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'not json' > \"$1\"\n")
    editor.chmod(0o755)
    refused = cli(tmp_path, "edit", EDITOR=str(editor))
    assert refused.returncode == 1 and "nothing was changed" in refused.stderr
    assert [e["text"] for e in json.loads(cli(tmp_path, "show", "--json").stdout)
            ["entries"]] == ["I prefer pytest -q -x"]

    forgot = cli(tmp_path, "forget", entry["id"], "--json")
    assert forgot.returncode == 0 and json.loads(forgot.stdout)["forgot"]["id"] == entry["id"]
    assert json.loads(cli(tmp_path, "show", "--json").stdout)["entries"] == []
    tail = subprocess.run([ADJUTANT, "log", "tail", "-n", "20", "--json"], capture_output=True,
                          text=True, cwd=tmp_path, check=False, env={
                              **{k: v for k, v in os.environ.items()
                                 if not k.startswith("ADJUTANT_")},
                              "ADJUTANT_HOME": str(tmp_path / "home"),
                              "ADJUTANT_LOAD_PLUGINS": "memory,lmdb"})
    kinds = [json.loads(line)["body"]["kind"] for line in tail.stdout.splitlines() if line.strip()]
    assert kinds == ["memory_remembered", "memory_remembered", "memory_edited",
                     "memory_forgot"]


def test_cli_index_search_status(tmp_path: Path) -> None:
    from memkit import write_project

    write_project(tmp_path / "p")
    (tmp_path / "p" / ".env").write_text("TOKEN=abc\n")
    indexed = cli(tmp_path, "index", "p", "--json")
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    assert report["done"] == 14 and [r["path"] for r in report["refused"]] == [".env"]
    found = json.loads(cli(tmp_path, "search", "where do we parse the config?", "--path",
                           "p", "--json").stdout)
    assert found["hits"][0]["path"] == "larkspur/settings.py"
    nothing = cli(tmp_path, "search", "capital of Mongolia", "--path", "p")
    assert nothing.stdout.strip() == "I don't have that"
    status = json.loads(cli(tmp_path, "status", "--path", "p", "--json").stdout)
    # the real command, nothing set: the default model (its extra is installed here),
    # loaded offline from the installed packages
    assert status["retrieval"] == "hybrid" and status["embedder"]["name"] == "minilm"
    assert status["embedder"]["dimension"] == 384
    assert status["index"]["done"] == 14


def test_cli_edit_in_the_editor_is_applied_and_logged(tmp_path: Path) -> None:
    pytest.importorskip("adjutant_lmdb")
    assert cli(tmp_path, "add", "I prefer pytest -q").returncode == 0
    assert cli(tmp_path, "add", "The project uses tabs", "--kind", "fact").returncode == 0
    editor = tmp_path / "drop-first.py"
    editor.write_text("import json, sys\npath = sys.argv[1]\nentries = json.load(open(path))\n"
                      "json.dump(entries[1:], open(path, 'w'))\n")
    done = cli(tmp_path, "edit", "--json", EDITOR=f"{sys.executable} {editor}")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (len(report["removed"]), report["added"], report["changed"]) == (1, [], [])
    shown = json.loads(cli(tmp_path, "show", "--json").stdout)["entries"]
    assert [e["text"] for e in shown] == ["The project uses tabs"]
