"""`adjutant.testing.on_terminal`: a command on a real pseudo-terminal that is safe to
start from a multi-threaded test process (``pexpect.spawn`` once hung a CI run there,
inside CPython's after-fork handlers), and that behaves as a user's terminal."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from adjutant.testing import on_terminal

pexpect = pytest.importorskip("pexpect")


def test_no_python_code_runs_in_the_child_before_it_execs() -> None:
    """An after-fork handler that can never finish (it waits on a lock another thread
    holds, which is how the CI run hung) does not stop the child: it is never run."""
    script = textwrap.dedent("""
        import os, threading
        import pexpect
        from adjutant.testing import on_terminal

        held = threading.Lock()
        held.acquire()
        os.register_at_fork(after_in_child=held.acquire)  # would hang any Python fork
        child = on_terminal("echo", ["started"], timeout=10)
        child.expect("started")
        child.expect(pexpect.EOF)
        print("exit", child.wait())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "exit 0"


def test_the_child_has_the_terminal_as_its_own_of_the_given_size() -> None:
    child = on_terminal("sh", ["-c", "stty size; echo on-tty > /dev/tty; exit 3"],
                        dimensions=(50, 200), timeout=10)
    child.expect(r"50 200")
    child.expect("on-tty")  # /dev/tty opens: the pty is its controlling terminal
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3 and child.signalstatus is None


def test_ctrl_c_and_ctrl_d_reach_the_child_as_the_terminal_sends_them() -> None:
    reader = on_terminal(sys.executable, ["-c", "import sys; print(len(sys.stdin.read()))"],
                         timeout=10)
    reader.sendline("four")
    reader.sendeof()
    reader.expect(r"5\r\n")  # "four\n": what was typed, up to Ctrl-D
    assert reader.wait() == 0

    sleeper = on_terminal("sleep", ["60"], timeout=10)  # back once sleep runs: no race
    sleeper.sendintr()
    assert sleeper.wait(30) is None and sleeper.signalstatus == signal.SIGINT


def test_closing_the_terminal_hangs_up_on_the_child() -> None:
    child = on_terminal("sh", ["-c", "echo ready; sleep 60"], timeout=10)
    child.expect("ready")
    assert child.isalive()
    child.close()
    assert not child.isalive() and child.signalstatus == signal.SIGHUP


def test_ctrl_c_works_though_the_test_run_ignores_it() -> None:
    """A test run started in the background (`cmd &` in a script, as CI may start it)
    has SIGINT ignored, and an exec keeps that: the command on the terminal gets it
    back, as on a user's terminal (this stop's CI runs had failed the Ctrl-C test so)."""
    script = textwrap.dedent("""
        import signal
        from adjutant.testing import on_terminal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `cmd &` leaves it
        child = on_terminal("sleep", ["60"], timeout=10)
        child.sendintr()
        child.wait(30)
        print("signal", child.signalstatus)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=90, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"signal {int(signal.SIGINT)}"
