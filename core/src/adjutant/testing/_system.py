"""`needs_sandbox`: the one way a test says it runs a real sandboxed child; and
`outliving`, the processes a sandbox must not leave behind.

Where bubblewrap or ripgrep is missing, such tests are skipped with one reason, and
the run ends by saying how many were skipped and what to install (see
``pytest_terminal_summary`` in `adjutant.testing`). ``./dev test`` installs both first.
"""

from __future__ import annotations

import shutil

import anyio
import pytest

from adjutant.safety import sandbox

__all__ = ["SKIP_REASON", "missing", "needs_sandbox", "outliving"]

#: The start of every such skip's reason (the end-of-run count looks for it).
SKIP_REASON = "needs the sandbox"


def missing() -> str | None:
    """None when sandboxed children run here, else what is missing and what to run."""
    gone = [program for program in ("bwrap", "rg") if not shutil.which(program)]
    if gone:
        return f"{', '.join(gone)} not installed (apt-get install bubblewrap ripgrep)"
    return sandbox.available()


_why = missing()
needs_sandbox = pytest.mark.skipif(_why is not None, reason=f"{SKIP_REASON}: {_why}")


async def outliving(command: str, seconds: float = 10.0) -> list[str]:
    """The command lines starting with ``command`` still running after waiting up to
    ``seconds`` for them to go (empty once none is left): a sandbox's kill is at once,
    but a loaded machine reaps a few dozen killed processes more slowly than an idle
    one, so a single look a second later was not always enough."""
    left: list[str] = []
    with anyio.move_on_after(seconds):
        while True:
            await anyio.sleep(0.2)
            ps = (await anyio.run_process(["ps", "-eo", "args"])).stdout.decode()
            left = [line for line in ps.splitlines() if line.startswith(command)]
            if not left:
                break
    return left
