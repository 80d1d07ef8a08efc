"""The attacker's bench: a temporary root holding a fake ``HOME`` with real
secrets in it (``~/.ssh/id_rsa``, ``~/.aws/credentials``, each carrying `MARKER`), a
data home and a workspace, and the real ``adjutant`` command driven as its user would
(a subprocess, or a pseudo-terminal where approvals are asked), with a scripted model
whose replies come from a file.

Every test here is a reproduction of a broken guarantee; each must fail if the
guarantee breaks again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import on_terminal

#: The string every planted secret carries: it must never come back from a tool.
MARKER = "SECRET-MARKER-7f3a"
ADJUTANT = str(Path(sys.executable).with_name("adjutant"))
#: The question the terminal approver asks for each step.
PROMPT = "[g] grant, [d] deny, [e] edit arguments: "


class Attack:
    """An isolated Adjutant with a fake home full of secrets.

    ``home`` is ``$HOME``; ``data`` is ``$ADJUTANT_HOME``; ``work`` is
    ``$ADJUTANT_WORKSPACE`` (the cage) unless `use_workspace` moves it.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.data = root / "data"
        self.work = root / "work"
        self.cache = root / "cache"
        self.plugins = root / "plugins"
        self.script_file = root / "script.json"
        for d in (self.home / ".ssh", self.home / ".aws", self.data / "profiles", self.work,
                  self.cache, self.plugins / "scripted_attack-0.dist-info"):
            d.mkdir(parents=True)
        self.id_rsa = self.home / ".ssh" / "id_rsa"
        self.id_rsa.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARKER}\n")
        self.id_rsa.chmod(0o600)
        (self.home / ".aws" / "credentials").write_text(
            f"[default]\naws_secret_access_key = {MARKER}\n")
        (self.home / ".bashrc").write_text("# the user's bashrc\n")
        info = self.plugins / "scripted_attack-0.dist-info"
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scripted-attack\nVersion: 0\n")
        (info / "entry_points.txt").write_text(
            "[adjutant]\nscripted = adjutant.testing.scriptfile\n")
        (self.data / "profiles" / "default.json").write_text(json.dumps(
            {"model": {"provider": "script-file", "model": "script"}}))

    # -- setting up -----------------------------------------------------------------------

    def use_workspace(self, path: Path) -> None:
        """Make ``path`` the workspace (e.g. ``self.home``, as a careless user would)."""
        self.work = path

    def profile(self, **fields: Any) -> None:
        """Merge ``fields`` into the default profile."""
        path = self.data / "profiles" / "default.json"
        profile = json.loads(path.read_text())
        profile.update(fields)
        path.write_text(json.dumps(profile))

    @property
    def env(self) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
        return {**base, "HOME": str(self.home), "ADJUTANT_HOME": str(self.data),
                "ADJUTANT_WORKSPACE": str(self.work), "ADJUTANT_SCRIPT": str(self.script_file),
                "PYTHONPATH": str(self.plugins), "NO_COLOR": "1", "TERM": "dumb",
                "XDG_CACHE_HOME": str(self.cache), "XDG_CONFIG_HOME": str(self.home / ".config"),
                "XDG_DATA_HOME": str(self.home / ".local" / "share")}

    def script(self, *replies: Any) -> None:
        """The model's next replies (strings, or plans made with `plan`)."""
        self.script_file.write_text(json.dumps(list(replies)))
        Path(f"{self.script_file}.pos").unlink(missing_ok=True)

    # -- driving the real command ---------------------------------------------------------

    def cli(self, *args: str, check: bool = False, timeout: float = 120,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        """``adjutant ARGS`` with no terminal (nobody can approve anything)."""
        done = subprocess.run([ADJUTANT, *args], env=self.env, cwd=self.work, input=input,
                              capture_output=True, text=True, timeout=timeout,
                              stdin=None if input is not None else subprocess.DEVNULL,
                              start_new_session=True, check=False)
        if check:
            assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done

    def spawn(self, *args: str, timeout: float = 60) -> Any:
        """``adjutant ARGS`` on a real pseudo-terminal (pexpect), to answer approvals."""
        pytest.importorskip("pexpect")
        return on_terminal(ADJUTANT, list(args), env=self.env, cwd=str(self.work),
                           encoding="utf-8", timeout=timeout, dimensions=(50, 200))

    def mode(self, mode: str) -> None:
        self.cli("mode", mode, check=True)

    def run_granting(self, request: str, *, steps: int = 10, timeout: float = 60) -> str:
        """``adjutant run REQUEST`` answering every question "grant" (step by step at the
        plan question); everything the terminal showed."""
        import pexpect

        child = self.spawn("run", request, timeout=timeout)
        shown: list[str] = []
        try:
            for _ in range(steps * 2 + 2):
                index = child.expect([r"\[x\] execute the plan, \[s\] step by step, \[d\] deny: ",
                                      r"\[g\] grant, \[d\] deny, \[e\] edit arguments: ",
                                      pexpect.EOF])
                shown.append(str(child.before))
                if index == 2:
                    break
                child.sendline("s" if index == 0 else "g")
        finally:
            child.close(force=True)
        return "".join(shown)

    def log(self) -> list[dict[str, Any]]:
        """The action log's record bodies, oldest first."""
        out = self.cli("log", "tail", "-n", "100000", "--json", check=True).stdout
        return [json.loads(line)["body"] for line in out.splitlines() if line.strip()]


def plan(*steps: tuple[str, dict[str, Any]]) -> str:
    """A model reply proposing these steps."""
    return json.dumps({"type": "plan", "steps": [{"tool": t, "args": a} for t, a in steps]})


def have(program: str) -> bool:
    return shutil.which(program) is not None


def refusal(result: Any) -> str:
    """Why ``adjutant mcp serve`` refused a call: the MCP way, a ``tools/call`` result with
    ``isError`` whose text says why (so the calling model reads it), marked as
    Adjutant's refusal in ``_meta`` (a tool that ran and failed is ``isError`` too, never
    marked). Fails if ``result`` is anything else (a protocol error, a tool that ran)."""
    assert getattr(result, "is_error", False) is True, result
    assert (result.meta or {}).get("adjutant/refused") is True, result
    (content,) = result.content
    assert content.type == "text", result
    text: str = content.text
    return text


@contextmanager
def bench_at(prefix: str) -> Iterator[Attack]:
    """An `Attack` in a new directory under /var/tmp (which the sandbox sees), in
    execute-with-confirmation, its workspace holding ``ok.txt``, the one file that may
    be shown; removed afterwards."""
    pytest.importorskip("adjutant_files")
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    try:
        attack = Attack(root)
        (attack.work / "ok.txt").write_text("no SECRET here\n")
        attack.mode("execute-with-confirmation")
        yield attack
    finally:
        shutil.rmtree(root, ignore_errors=True)
