"""A named pipe, a socket or a device in the workspace never freezes Adjutant.

Reproduced from outside: ``mkfifo pipe`` in the workspace, then a plan writing to it
hung ``adjutant run`` forever (propose-only too), every request of the dock, and the
next call of ``mcp serve``: the write-gate opened each path argument with a blocking
``open`` to build the approval packet. Everything that builds a preview, a packet or a
context now reads through `adjutant.safety.regular`, which never blocks and refuses
what is not a regular file. Each case below runs the real ``adjutant`` command with a
timeout: a regression fails, it does not hang the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .helpers import ADJUTANT, Attack, plan

#: What each special file is, made in the workspace by name and reached through a link.
KINDS = ("fifo", "socket", "device")
#: Every file tool that takes a path, with arguments naming ``{p}``.
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("fs.write", {"path": "{p}", "content": "x\n"}),
    ("fs.append", {"path": "{p}", "content": "x\n"}),
    ("fs.read", {"path": "{p}"}),
    ("compress.zip", {"paths": ["{p}"], "output": "out.zip"}),
    ("fs.diff", {"a": "{p}", "b": "ok.txt"}),
)
#: Long enough for a slow CI machine, short next to "forever".
LIMIT = 60


def make(kind: str, where: Path, keep: list[socket.socket]) -> None:
    if kind == "fifo":
        os.mkfifo(where)
    elif kind == "socket":  # a listening socket: open() fails on it, a connect would not
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(where))
        sock.listen()
        keep.append(sock)
    else:
        os.symlink("/dev/zero", where)  # a device reached by a link in the workspace


@pytest.fixture
def bench() -> Iterator[tuple[Attack, list[socket.socket]]]:
    pytest.importorskip("adjutant_files")
    root = Path(tempfile.mkdtemp(prefix="adjutant-special-", dir="/var/tmp"))
    keep: list[socket.socket] = []
    try:
        attack = Attack(root)
        (attack.work / "ok.txt").write_text("fine\n")
        for kind in KINDS:
            make(kind, attack.work / kind, keep)
        os.symlink("fifo", attack.work / "fifo-link")
        yield attack, keep
    finally:
        for sock in keep:
            sock.close()
        shutil.rmtree(root, ignore_errors=True)


def args_for(template: dict[str, Any], name: str) -> dict[str, Any]:
    return json.loads(json.dumps(template).replace("{p}", name))


@pytest.mark.parametrize("mode", ["propose-only", "execute-with-confirmation"])
def test_every_file_tool_on_every_special_file_answers_at_once(
        bench: tuple[Attack, list[socket.socket]], mode: str) -> None:
    attack, _ = bench
    if mode != "propose-only":
        attack.mode(mode)
    steps = [(tool, args_for(args, name)) for name in (*KINDS, "fifo-link")
             for tool, args in CALLS]
    for tool, args in steps:  # one run per step: a hang names its step
        attack.script(plan((tool, args)))
        try:
            done = attack.cli("run", "do it", "--json", timeout=LIMIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"adjutant run hung on {tool} {args} in {mode}")
        assert done.returncode in (0, 1, 3, 4), (tool, args, done.stderr)
        outcome = json.loads(done.stdout)
        assert outcome.get("status") != "executed" or tool == "fs.read", (tool, outcome)
    # nothing was written through a special file, and the log holds every run
    assert not (attack.work / "out.zip").exists()
    assert len(attack.log()) >= len(steps)  # each run logged, the log still readable


def test_the_user_is_told_what_the_special_file_is(
        bench: tuple[Attack, list[socket.socket]]) -> None:
    """A write to a FIFO, a socket or a device is refused before any question, saying
    why (the guard refuses the device by where its link resolves, /dev)."""
    attack, _ = bench
    attack.mode("execute-with-confirmation")
    for name in ("fifo", "socket", "device", "fifo-link"):
        attack.script(plan(("fs.write", {"path": name, "content": "x\n"})))
        done = attack.cli("run", "write it", timeout=LIMIT)
        said = done.stdout + done.stderr
        assert "refused" in said and "grant" not in said, (name, said)
        reason = {"fifo": "a named pipe (FIFO), not a regular file",
                  "socket": "a socket, not a regular file", "device": "/dev/zero",
                  "fifo-link": "symbolic link"}[name]
        assert reason in said, (name, said)


def test_the_context_never_waits_on_a_special_file(
        bench: tuple[Attack, list[socket.socket]]) -> None:
    """Project files the context reads by name (``pyproject.toml``, ``.git``, a log)
    made FIFOs: ``adjutant context`` answers at once."""
    attack, keep = bench
    for name in ("pyproject.toml", "package.json", ".git", "app.log"):
        make("fifo", attack.work / name, keep)
    try:
        done = attack.cli("context", "--json", timeout=LIMIT)
    except subprocess.TimeoutExpired:
        pytest.fail("adjutant context hung on a FIFO in the workspace")
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)


def test_mcp_serve_answers_the_next_call_after_a_special_file(
        bench: tuple[Attack, list[socket.socket]]) -> None:
    """Under ``mcp serve``, a write to a FIFO used to block the server, and the next
    ``fs.read`` got no answer."""
    pytest.importorskip("mcp")
    import anyio

    attack, _ = bench
    attack.mode("execute-with-confirmation")  # reads run without a question

    async def calls() -> list[Any]:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=ADJUTANT, args=["mcp", "serve"],
                                       env=attack.env, cwd=str(attack.work))
        async with Client(params) as client:
            with anyio.fail_after(LIMIT):
                first = await client.call_tool("fs.write", {"path": "fifo", "content": "x"})
                second = await client.call_tool("fs.read", {"path": "ok.txt"})
        return [first, second]

    first, second = anyio.run(calls)
    assert first.is_error  # refused: nobody can approve a write here, and it is a FIFO
    assert not second.is_error and "fine" in second.model_dump_json(), second


def test_a_huge_sparse_file_is_refused_in_the_dry_run(
        bench: tuple[Attack, list[socket.socket]]) -> None:
    """``compress.zip`` naming a 10 GB sparse file was refused only after Grant: the
    size check is in the dry-run now, so the plan says it will be refused."""
    attack, _ = bench
    with open(attack.work / "huge.img", "wb") as handle:
        handle.truncate(10 << 30)  # 10 GB, no block written
    for paths in (["huge.img"], ["."]):
        attack.script(plan(("compress.zip", {"paths": paths, "output": "huge.zip"})))
        done = attack.cli("run", "zip it", "--json", timeout=LIMIT)
        said = done.stdout + done.stderr
        assert "huge.img is over" in said, (paths, said)
        assert "Grant" not in said and not (attack.work / "huge.zip").exists()
