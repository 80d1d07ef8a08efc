"""`needs_sandbox`: the one way a test says it runs a real sandboxed child.

Where bubblewrap or ripgrep is missing, such tests are skipped with one reason, and
the run ends by saying how many were skipped and what to install (see
``pytest_terminal_summary`` in `adjutant.testing`). ``./dev test`` installs both first.
"""

from __future__ import annotations

import shutil

import pytest

from adjutant.safety import sandbox

__all__ = ["SKIP_REASON", "missing", "needs_sandbox"]

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
