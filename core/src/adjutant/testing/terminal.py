"""A command on a real pseudo-terminal, for tests that answer its questions.

``pexpect.spawn`` forks the test process itself (``pty.fork``): the child runs
CPython's after-fork handlers before it execs, and in a multi-threaded process (an
xdist worker, anyio's thread pool) those can deadlock on a lock another thread
held at the fork. Seen once in CI, a test hung until killed. Here ``subprocess``
starts the child (fork and exec with no Python code between them) through
``env --default-signal=INT,QUIT`` (a test run in the background inherits Ctrl-C
ignored) and util-linux ``setsid --ctty``: a session of its own, the pty's slave side
as its controlling terminal (so ``/dev/tty`` and Ctrl-C work as for a user), and pexpect's
``fdspawn`` reads and writes the master side. The object answers the part of
``pexpect.spawn`` that tests use: expect, send, sendline, sendcontrol, sendintr,
sendeof, isalive, wait, kill, terminate, close, pid, exitstatus and signalstatus.

Import this module only where pexpect is installed (a test dependency).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pexpect.fdpexpect

__all__ = ["TerminalChild", "spawn"]

if TYPE_CHECKING:
    _Master = pexpect.fdpexpect.fdspawn[str]
else:
    _Master = pexpect.fdpexpect.fdspawn


class TerminalChild(_Master):
    """The master side of the child's terminal, and the child process itself."""

    def __init__(self, process: subprocess.Popen[bytes], master: int, **options: object
                 ) -> None:
        super().__init__(master, **options)  # type: ignore[arg-type]
        self.process = process
        self.pid = process.pid
        self.env: Mapping[str, str] | None = None  # as pexpect.spawn: what it was given
        self.cwd: str | os.PathLike[str] | None = None

    # -- input, as a user types it --------------------------------------------------------

    def send(self, s: str | bytes) -> int:
        if self.delaybeforesend:  # as pexpect.spawn: the child may still be setting up
            time.sleep(self.delaybeforesend)
        return super().send(s)

    def sendcontrol(self, char: str) -> int:
        return self.send(chr(ord(char.lower()) & 0x1F))

    def sendintr(self) -> int:
        return self.send(chr(termios.tcgetattr(self.child_fd)[6][termios.VINTR][0]))

    def sendeof(self) -> int:
        return self.send(chr(termios.tcgetattr(self.child_fd)[6][termios.VEOF][0]))

    # -- the process ----------------------------------------------------------------------

    def _settle(self, code: int | None) -> None:
        if code is None:
            return
        self.exitstatus = code if code >= 0 else None
        self.signalstatus = -code if code < 0 else None
        self.status = (code << 8) if code >= 0 else -code  # as os.waitpid reports it
        self.terminated = True

    def isalive(self) -> bool:
        code = self.process.poll()
        self._settle(code)
        return code is None

    def wait(self, timeout: float | None = None) -> int | None:
        self._settle(self.process.wait(timeout))
        return self.exitstatus

    def kill(self, sig: int) -> None:
        if self.isalive():
            os.kill(self.process.pid, sig)

    def terminate(self, force: bool = False) -> None:
        """As pexpect: SIGHUP, SIGCONT, SIGINT, then SIGKILL when ``force``."""
        for sig in (signal.SIGHUP, signal.SIGCONT, signal.SIGINT):
            self.kill(sig)
            if self._gone(0.1):
                return
        if force:
            self.kill(signal.SIGKILL)
            self._gone(5)

    def _gone(self, seconds: float) -> bool:
        try:
            self.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self, force: bool = True) -> None:
        """Close the terminal (the child gets SIGHUP, as when a window closes) and
        reap the child, killing it when ``force`` and it outlives that."""
        if not self.closed:
            super().close()
        if not self._gone(1):
            self.terminate(force)

    def __del__(self) -> None:
        """As pexpect: a child forgotten by its test is closed, forcibly."""
        with contextlib.suppress(Exception):
            self.close(force=True)


def spawn(command: str, args: Sequence[str] = (), *, env: Mapping[str, str] | None = None,
          cwd: str | os.PathLike[str] | None = None, timeout: float | None = 30,
          encoding: str | None = "utf-8", codec_errors: str = "strict",
          dimensions: tuple[int, int] = (24, 80)) -> TerminalChild:
    """``command ARGS`` on a new pseudo-terminal of ``dimensions`` (rows, columns)."""
    setsid, env_program = shutil.which("setsid"), shutil.which("env")
    if setsid is None or env_program is None:
        raise RuntimeError("`setsid` (util-linux) and `env` (coreutils) are needed to give "
                           "the child a terminal: apt-get install util-linux coreutils")
    master, slave = os.openpty()
    rows, cols = dimensions
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    try:
        # Ctrl-C and Ctrl-Backslash act as on a user's terminal, though a test run started in
        # the background (`cmd &` in a script) inherits them ignored
        process = subprocess.Popen([env_program, "--default-signal=INT,QUIT", setsid, "--ctty",
                                    command, *args], stdin=slave,
                                   stdout=slave, stderr=slave, env=env, cwd=cwd,
                                   close_fds=True)
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)  # the child's copies are the only ones: its exit is our EOF
    _started(process, (env_program, setsid))
    child = TerminalChild(process, master, timeout=timeout, encoding=encoding,
                          codec_errors=codec_errors)
    child.env, child.cwd = env, cwd
    return child


def _started(process: subprocess.Popen[bytes], wrappers: tuple[str, ...],
             seconds: float = 30) -> None:
    """Return once the ``wrappers`` (env, setsid) have made the terminal the child's and
    become the command (its executable is none of theirs), as ``pexpect.spawn`` returns
    after the exec: a Ctrl-C sent before would reach no process."""
    before = {os.path.realpath(w) for w in wrappers}
    deadline = time.monotonic() + seconds
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if os.readlink(f"/proc/{process.pid}/exe") not in before:
                return
        except OSError:
            return  # gone already, or not Linux: nothing to wait for
        time.sleep(0.001)
