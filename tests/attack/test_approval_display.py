"""Issue 13, section 3: what the approval prompt shows must be what runs.

Through the public interfaces: ``adjutant mcp serve`` over stdio, driven by the MCP
Python SDK client, asking its approvals on a real pseudo-terminal (the server's
controlling terminal, as when a user starts it from a shell), and ``adjutant run``
with the file-scripted model on a pseudo-terminal. Everything the terminal received
is recorded and searched for the raw control characters.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from .helpers import ADJUTANT, PROMPT, Attack, refusal

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The server under test is another process: the client's event loop is not."""
    return "asyncio"

#: What a terminal acts on: escape (CSI, OSC 52 clipboard), BEL, the one-byte CSI, a
#: bare carriage return, bidi overrides and isolates.
ESCAPES = ("\x1b[1A\x1b[2K", "\x1b]52;c;SGFja2VkIQ==\x07", "\x9b2J", "\u202e", "\u2066",
           "\rFAKE")
HOSTILE = "".join(ESCAPES)
RAW = ("\x1b", "\x07", "\x9b", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066",
       "\u2067", "\u2068", "\u2069")

#: Longer than any call here takes when the guarantees hold (questions are answered).
CALL_TIMEOUT_S = 30
#: Makes the pseudo-terminal's slave side the controlling terminal of the server the SDK
#: starts (in a session of its own), then becomes ``adjutant mcp serve``: its
#: approvals are asked on ``/dev/tty`` while stdio carries the protocol.
SHIM = ("import fcntl, os, sys, termios\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "fcntl.ioctl(fd, termios.TIOCSCTTY, 0)\n"
        "os.execv(sys.argv[2], sys.argv[2:])\n")


def assert_no_raw_controls(shown: str) -> None:
    """Nothing the terminal would act on reached it (a CR only as part of CR LF, which
    the terminal driver makes of every newline)."""
    for char in RAW:
        assert char not in shown, (char, shown[max(0, shown.find(char) - 200):][:400])
    assert not re.search(r"\r(?!\n)", shown), shown


class Terminal:
    """The server's terminal: what it showed, and the user's answers."""

    def __init__(self, master: int) -> None:
        import pexpect.fdpexpect

        self.master = master
        self.seen = io.StringIO()
        self.child = pexpect.fdpexpect.fdspawn(master, encoding="utf-8", timeout=60,
                                               codec_errors="replace")
        self.child.logfile_read = self.seen

    def question(self, timeout: float = 60) -> str:
        """Wait for the next step question; what was shown since the last one,
        with the question line."""
        self.child.expect_exact(PROMPT, timeout=timeout)
        return str(self.child.before) + PROMPT

    async def ask(self, wait_s: float = 60) -> str:
        return await anyio.to_thread.run_sync(self.question, wait_s)

    def answer(self, reply: str) -> None:
        os.write(self.master, reply.encode() + b"\n")

    def quiet(self, seconds: float) -> str:
        """What the terminal shows over ``seconds`` (no question is expected)."""
        import pexpect

        try:
            self.child.expect_exact(PROMPT, timeout=seconds)
        except pexpect.TIMEOUT:
            return str(self.child.before)
        raise AssertionError(f"an unexpected question: {self.child.before}{PROMPT}")


@asynccontextmanager
async def served(attack: Attack, client_name: str = "a client",
                 extra: tuple[str, ...] = ()) -> AsyncIterator[tuple[Any, Terminal]]:
    """``adjutant mcp serve`` over stdio with the SDK client, approvals on a pty."""
    from mcp import Client, StdioServerParameters
    from mcp.types import Implementation

    master, slave = os.openpty()
    terminal = Terminal(master)
    params = StdioServerParameters(
        command=sys.executable, args=["-c", SHIM, os.ttyname(slave), ADJUTANT, "mcp",
                                      "serve", *extra],
        env=attack.env, cwd=str(attack.work))
    try:
        async with Client(params, client_info=Implementation(name=client_name,
                                                             version="1.0")) as client:
            yield client, terminal
    finally:
        os.close(slave)
        os.close(master)


async def call(client: Any, tool: str, args: dict[str, Any]) -> Any:
    """The call's result (a refusal too: `refusal` reads it), or the `MCPError` of a
    protocol error."""
    from mcp import MCPError

    try:
        with anyio.fail_after(CALL_TIMEOUT_S):  # a call left waiting fails the test
            return await client.call_tool(tool, args)
    except MCPError as exc:
        return exc


def packets_in(shown: str) -> list[str]:
    """The ``args:`` lines of the packets shown."""
    return re.findall(r"^ *args: (.*?)\r?$", shown, flags=re.M)


def question_line(shown: str) -> str:
    return shown.splitlines()[-1]


# -- escapes ------------------------------------------------------------------------------

async def test_a_clients_name_a_file_name_and_content_cannot_drive_the_approval_terminal(
        attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    name = f"notes{ESCAPES[0]}{ESCAPES[2]}.txt"  # a legal file name
    content = f"line one\n{HOSTILE}\nline three\n"
    async with served(attack, client_name=f"helper{HOSTILE}") as (client, terminal):
        async with anyio.create_task_group() as tg:
            results: dict[str, Any] = {}

            async def write() -> None:
                results["w"] = await call(client, "fs.write", {"path": name,
                                                               "content": content})
            tg.start_soon(write)
            shown = await terminal.ask()
            terminal.answer("g")
        assert not getattr(results["w"], "is_error", True), results["w"]
        (attack.work / "peek.txt").write_text(f"peek {HOSTILE}\n")
        read = await call(client, "fs.read", {"path": "peek.txt"})
        assert HOSTILE in read.content[0].text  # the client gets the bytes as they are
        shown += terminal.quiet(1.0)
    # the file is what the packet showed, escapes and all; the terminal never got them raw
    assert (attack.work / name).read_bytes().decode() == content
    everything = terminal.seen.getvalue()
    assert_no_raw_controls(everything)
    # ... but the user sees them, made visible: in the client's name, the file's name
    # (the packet and the question) and the preview of its content
    assert "helper\\x1b[1A\\x1b[2K\\x1b]52;c;SGFja2VkIQ==\\x07\\x9b2J\\u202e\\u2066\\rFAKE" \
        in shown
    assert "notes\\x1b[1A\\x1b[2K\\x9b2J.txt" in question_line(shown)
    assert "+\\x1b[1A\\x1b[2K\\x1b]52;c;SGFja2VkIQ==\\x07" in shown
    assert len(packets_in(shown)) == 1


async def test_adjutant_run_shows_the_reply_the_explain_the_preview_and_the_read_printable(
        attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    (attack.work / "notes.txt").write_text(f"top\n{HOSTILE}\nbottom\n")
    steps = {"type": "plan", "steps": [
        {"tool": "fs.read", "args": {"path": "notes.txt"}},
        {"tool": "fs.write", "args": {"path": f"out{ESCAPES[0]}.txt",
                                      "content": f"new {HOSTILE}\n"},
         "explain": f"tidy up{ESCAPES[0]}{ESCAPES[1]}\u202e"}]}
    # a reply that is not JSON, full of escapes, streamed word by word (sequences arrive
    # split) and shown live before it is refused; the retry's answer carries them too
    # (decoded from JSON: the text printed as the answer); then a plan
    attack.script(f"Here you go {HOSTILE} done {ESCAPES[0]}x",
                  json.dumps({"type": "response", "text": f"Answer: {HOSTILE} end"}),
                  json.dumps(steps))

    def run(request: str) -> str:
        child = attack.spawn("run", request)
        seen = io.StringIO()
        child.logfile_read = seen
        import pexpect

        try:
            while True:
                index = child.expect([r"\[x\] execute the plan, \[s\] step by step, "
                                      r"\[d\] deny: ", re.escape(PROMPT), pexpect.EOF])
                if index == 2:
                    break
                child.sendline("s" if index == 0 else "g")
        finally:
            child.close(force=True)
        return seen.getvalue()

    reply = run("say something")
    assert_no_raw_controls(reply)
    assert "Here you go" in reply and "\\x1b]52;c;SGFja2VkIQ==\\x07" in reply
    assert "Answer: \\x1b[1A\\x1b[2K\\x1b]52;c;SGFja2VkIQ==\\x07\\x9b2J" in reply

    shown = run("tidy my notes")
    assert_no_raw_controls(shown)
    assert "why: tidy up\\x1b[1A\\x1b[2K\\x1b]52;c;SGFja2VkIQ==\\x07\\u202e" in shown
    assert "top" in shown and "\\x9b2J\\u202e\\u2066\\rFAKE" in shown  # fs.read's output
    assert "+new \\x1b[1A" in shown  # the write's preview
    assert (attack.work / f"out{ESCAPES[0]}.txt").read_bytes().decode() == f"new {HOSTILE}\n"


def test_printable_shows_every_control_and_keeps_content_lines() -> None:
    from adjutant.safety.terminal import SafeStream, printable

    assert printable("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert printable("a\tb\nc", multiline=False) == "a\\tb\\nc"
    for char in [*(chr(c) for c in range(0x20) if c not in (9, 10)), "\x7f",
                 *(chr(c) for c in range(0x80, 0xA0)), "\u061c", "\u200e", "\u200f",
                 *(chr(c) for c in range(0x202A, 0x202F)),
                 *(chr(c) for c in range(0x2066, 0x206A)), "\u2028", "\u2029"]:
        shown = printable(f"x{char}y")
        assert char not in shown and shown.startswith("x\\") and shown.endswith("y")
    assert printable("ünïcödé ✓ 漢字") == "ünïcödé ✓ 漢字"
    raw = io.StringIO()
    stream = SafeStream(raw)
    for chunk in ("\x1b", "[2K", "\x9b", "1A"):  # a sequence split across writes
        stream.write(chunk)
    assert raw.getvalue() == "\\x1b[2K\\x9b1A"


# -- concurrent questions -----------------------------------------------------------------

async def test_concurrent_writes_are_asked_one_at_a_time_and_each_answer_binds_its_packet(
        attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    rounds = 6
    granted: list[str] = []
    async with served(attack, extra=("--questions-per-minute", str(2 * rounds))) as (
            client, terminal):
        for n in range(rounds):
            results: dict[str, Any] = {}

            async def write(path: str, n: int = n, results: dict[str, Any] = results
                            ) -> None:
                results[path] = await call(client, "fs.write", {
                    "path": path, "content": f"round {n} {path}\n"})
            async with anyio.create_task_group() as tg:
                tg.start_soon(write, "a.txt")
                tg.start_soon(write, "b.txt")
                answers = ["g", "d"] if n % 2 == 0 else ["d", "g"]
                for reply in answers:
                    shown = await terminal.ask()
                    # a human takes a moment: nothing else is shown while a question is open
                    shown += await anyio.to_thread.run_sync(terminal.quiet, 0.3)
                    (packet,) = packets_in(shown)  # one packet per question, no other
                    path = json.loads(packet)["path"]
                    ident = re.search(r"packet #([0-9a-f]{8})", shown)
                    assert ident, shown
                    # the question names the packet shown with it
                    assert question_line(shown).startswith(
                        f"fs.write {path} #{ident.group(1)}: "), question_line(shown)
                    if reply == "g":
                        granted.append(path)
                    terminal.answer(reply)
            path = granted[-1]
            other = "b.txt" if path == "a.txt" else "a.txt"
            assert not getattr(results[path], "is_error", True), results[path]
            assert "fs.write was not run" in refusal(results[other])
            assert (attack.work / path).read_text() == f"round {n} {path}\n"
            assert f"round {n} " not in ((attack.work / other).read_text()
                                         if (attack.work / other).exists() else "")
    assert_no_raw_controls(terminal.seen.getvalue())
    approvals = [r for r in attack.log() if r["kind"] == "approval"]
    assert [r["action"] for r in approvals].count("grant") == rounds


# -- floods -------------------------------------------------------------------------------

async def test_an_approval_flood_is_cut_off_not_queued(attack: Attack) -> None:
    import pexpect

    attack.mode("execute-with-confirmation")
    calls, budget = 40, 4
    async with served(attack, extra=("--questions-per-minute", str(budget))) as (
            client, terminal):
        results: list[Any] = []

        async def write(n: int) -> None:
            results.append(await call(client, "fs.write", {"path": f"f{n}.txt",
                                                           "content": "x\n"}))
        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            for n in range(calls):
                tg.start_soon(write, n)
            asked = 0
            while len(results) < calls:
                try:
                    await terminal.ask(wait_s=10)
                except pexpect.TIMEOUT:
                    break
                asked += 1
                terminal.answer("d")
        elapsed = time.monotonic() - started
        assert len(results) == calls, "calls were left waiting"
        terminal.quiet(0.5)  # and no question comes later
    assert asked == budget
    reasons = [refusal(r) for r in results]  # every one refused: asked and denied, or not
    refused = [r for r in reasons if "questions in 60 s" in r]
    assert len(refused) == calls - budget, reasons
    assert "refused without asking" in refused[0]
    assert elapsed < 30
    assert "refusing questions from the MCP client" in terminal.seen.getvalue()
    assert not list(attack.work.glob("f*.txt"))


async def test_deny_all_refuses_everything_from_that_client_and_is_logged(
        attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    (attack.work / "a.txt").write_text("hello\n")
    async with served(attack, client_name="noisy") as (client, terminal):
        results: dict[str, Any] = {}

        async def write(n: int) -> None:
            results[f"w{n}"] = await call(client, "fs.write", {"path": f"f{n}.txt",
                                                               "content": "x\n"})
        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(write, n)
            shown = await terminal.ask()
            assert "[D] deny everything from this client" in question_line(shown)
            assert 'asked by: the MCP client "noisy 1.0"' in shown
            terminal.answer("D")
        # the other two were never asked: denied with the rest
        after = terminal.quiet(1.0)
        read = await call(client, "fs.read", {"path": "a.txt"})
        later = await call(client, "fs.write", {"path": "g.txt", "content": "x\n"})
    assert "everything from the MCP client \"noisy 1.0\" is denied" in after
    for result in [*results.values(), later]:
        assert "fs.write was not run" in refusal(result)
    assert "denied everything from the MCP client \"noisy 1.0\"" in refusal(read)
    assert "denied everything" in refusal(later)
    assert not list(attack.work.glob("f*.txt")) and not (attack.work / "g.txt").exists()
    log = attack.log()
    (deny_all,) = [r for r in log if r["kind"] == "deny_all"]
    assert deny_all["caller"] == "mcp:noisy 1.0"
    refused = [r for r in log if r["kind"] == "refused_call"]
    assert [r["tool"] for r in refused] == ["fs.read", "fs.write"]
    assert len([r for r in log if r["kind"] == "approval"]) == 3


async def test_deny_all_lasts_for_that_session_only(attack: Attack) -> None:
    attack.mode("execute-with-confirmation")
    async with served(attack, client_name="first") as (client, terminal), \
            anyio.create_task_group() as tg:
        tg.start_soon(call, client, "fs.write", {"path": "x.txt", "content": "1\n"})
        await terminal.ask()
        terminal.answer("D")
    async with served(attack, client_name="first") as (client, terminal):
        results: dict[str, Any] = {}

        async def write() -> None:
            results["w"] = await call(client, "fs.write", {"path": "x.txt", "content": "2\n"})
        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            await terminal.ask()  # a new session is asked again
            terminal.answer("g")
    assert (attack.work / "x.txt").read_text() == "2\n"
