"""Issue 13, section 1: secrets left through read tools, with no question asked.

``search.grep`` judged only the paths it was given, not the files ripgrep found (a
hard link to ``~/.ssh/id_rsa``, a copied key, ``.env``, brought back by a glob or a
``.ignore`` re-include, or the whole home as the workspace); ``compress.zip`` archived
the hard-linked key; ``git.diff`` followed a repository's ``core.worktree = $HOME`` and
printed the key. Each test drives the real ``adjutant`` command: ``adjutant run`` with
the scripted model in execute-with-confirmation (reads run without a question; a
write is granted on a pseudo-terminal), or ``adjutant mcp serve`` with the MCP Python
SDK, and looks for `MARKER` in everything that left: the terminal, the JSON outcome,
the MCP result, the action log, the archive.

The bench lives under ``/var/tmp``, not ``/tmp``: the sandbox mounts a fresh ``/tmp``,
and a home it cannot see would make the git attack prove nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adjutant.testing import needs_sandbox

from .helpers import ADJUTANT, MARKER, Attack, bench_at, have, plan, refusal

needs_rg = needs_sandbox
needs_git = pytest.mark.skipif(not (have("git") and have("bwrap")),
                               reason="the git tools need git and bubblewrap")


@pytest.fixture
def bench() -> Iterator[Attack]:
    """The attacker's bench (`Attack`) in a directory the sandbox sees, with the
    workspace holding every indirect route to a secret: a hard link ``h`` to
    ``~/.ssh/id_rsa``, a copy under ``keys/id_rsa``, ``.env`` and ``.env.local``, and a
    ``.ignore`` re-including them; ``ok.txt`` is the one file that may be shown."""
    with bench_at("adjutant-attack-") as attack:
        work = attack.work
        os.link(attack.id_rsa, work / "h")
        (work / "keys").mkdir()
        (work / "keys" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARKER}\n")
        (work / ".env").write_text(f"API_TOKEN=SECRET {MARKER}\n")
        (work / ".env.local").write_text(f"API_TOKEN=SECRET {MARKER}\n")
        (work / ".ignore").write_text("!.env\n!.env.local\n")
        yield attack


def run_read(attack: Attack, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """``adjutant run --json`` of a one-step plan (a read: no question is asked); the
    outcome, after checking MARKER is nowhere in the output or the action log."""
    attack.script(plan((tool, args)))
    done = attack.cli("run", f"use {tool}", "--json")
    assert MARKER not in done.stdout and MARKER not in done.stderr, (args, done.stdout)
    assert MARKER not in json.dumps(attack.log()), args
    outcome: dict[str, Any] = json.loads(done.stdout)
    return outcome


def stdout_of(outcome: dict[str, Any]) -> str:
    return "".join(r.get("stdout") or "" for r in outcome.get("results") or [])


# -- search.grep ----------------------------------------------------------------------------

@needs_rg
@pytest.mark.parametrize("args", [
    {"pattern": "SECRET"}, {"pattern": "SECRET", "glob": ".env"},
    {"pattern": "SECRET", "glob": ".env.*"}, {"pattern": "SECRET", "glob": "*"},
    {"pattern": "SECRET", "glob": "h"}, {"pattern": "SECRET", "paths": ["h"]},
    {"pattern": "SECRET", "paths": ["keys"], "glob": "*"},
    {"pattern": "MARKER", "ignore_case": True, "glob": "*"},
])
def test_grep_returns_no_secret_from_the_workspace(bench: Attack, args: dict[str, Any]) -> None:
    outcome = run_read(bench, "search.grep", args)
    assert outcome["status"] in ("executed", "denied"), outcome
    if outcome["status"] == "executed" and "paths" not in args and args.get("glob") in ("*",
                                                                                     "h"):
        shown = stdout_of(outcome)
        # the hard link has no protected name: only its inode gives it away
        assert "h is a hard link to" in shown and "withheld" in shown, shown
        if args == {"pattern": "SECRET", "glob": "*"}:
            assert "./ok.txt:1:no SECRET here" in shown  # the rest is still found


@needs_rg
def test_grep_shows_nothing_on_the_terminal_either(bench: Attack) -> None:
    bench.script(plan(("search.grep", {"pattern": "SECRET", "glob": "*"})))
    shown = bench.run_granting("find SECRET everywhere")
    assert MARKER not in shown
    assert "withheld" in shown and "ok.txt" in shown, shown


@needs_rg
def test_grep_with_the_home_as_workspace(bench: Attack) -> None:
    bench.use_workspace(bench.home)
    found = ""
    for args in ({"pattern": "SECRET", "glob": "*"}, {"pattern": "aws_secret", "glob": "*"},
                 {"pattern": "PRIVATE KEY", "glob": ".ssh/*"}, {"pattern": "SECRET",
                                                                "glob": ".*"}):
        found += stdout_of(run_read(bench, "search.grep", args))
    # Two layers hold here: the sandbox hides ~/.ssh and ~/.aws from rg (section 2),
    # and the filter would withhold them; the workspace's own routes (the hard link,
    # the copy, .env) are the filter's alone, and the tests above prove it.
    assert "SECRET" not in found.replace("no SECRET here", ""), found


@needs_rg
def test_grep_over_mcp_returns_no_secret(bench: Attack) -> None:
    import anyio

    async def calls() -> list[str]:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=ADJUTANT, args=["mcp", "serve"],
                                       env=bench.env, cwd=str(bench.work))
        out = []
        async with Client(params) as client:
            for args in ({"pattern": "SECRET"}, {"pattern": "SECRET", "glob": "*"},
                         {"pattern": "SECRET", "glob": ".env"}):
                result = await client.call_tool("search.grep", args)
                out.append(result.model_dump_json())
        return out

    results = anyio.run(calls)
    assert all(MARKER not in r for r in results), results
    assert "withheld" in results[1] and "ok.txt" in results[1], results[1]
    assert MARKER not in json.dumps(bench.log())


# -- compress.zip ---------------------------------------------------------------------------

def test_zip_of_the_workspace_leaves_every_secret_out(bench: Attack) -> None:
    bench.script(plan(("compress.zip", {"paths": ["."], "output": "all.zip"})))
    shown = bench.run_granting("zip the whole workspace")
    # the approval showed what the archive would lack
    for name in ("h", "keys/id_rsa", ".env", ".env.local"):
        assert f"withheld (protected): {name}: " in shown, shown
    archive = bench.work / "all.zip"
    assert archive.exists(), shown
    with zipfile.ZipFile(archive) as opened:
        assert sorted(opened.namelist()) == [".ignore", "ok.txt"]
        assert all(MARKER.encode() not in opened.read(n) for n in opened.namelist())
    assert MARKER not in shown and MARKER not in json.dumps(bench.log())


def test_zip_of_a_hard_link_by_name_is_refused(bench: Attack) -> None:
    bench.script(plan(("compress.zip", {"paths": ["ok.txt", "h"], "output": "h.zip"})))
    shown = bench.run_granting("zip the key")
    assert not (bench.work / "h.zip").exists()
    assert MARKER not in shown and MARKER not in json.dumps(bench.log())


# -- git ------------------------------------------------------------------------------------

def git(cwd: Path, *argv: str) -> str:
    """Real git for the set-up (outside any sandbox, as the attacker would)."""
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd),
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@x"}
    return subprocess.run(["git", *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True).stdout


@needs_git
def test_git_does_not_follow_a_work_tree_to_the_home(bench: Attack) -> None:
    """A repository the user cloned or unpacked: `core.worktree = $HOME`, its index
    naming `.ssh/id_rsa` with an empty blob, so a diff would print the key."""
    repo = bench.work
    git(repo, "init", "-q", "-b", "main")
    empty = git(repo, "hash-object", "-w", "--stdin").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{empty},.ssh/id_rsa")
    git(repo, "config", "core.worktree", str(bench.home))
    for tool, args in (("git.diff", {}), ("git.status", {}), ("git.diff", {"staged": True})):
        outcome = run_read(bench, tool, args)
        errors = " ".join(r.get("stderr") or "" for r in outcome.get("results") or [])
        assert "`cage`" in errors and "work tree" in errors, outcome


@needs_git
def test_git_diff_over_mcp_withholds_protected_files(bench: Attack) -> None:
    """In a repository inside the cage, the hard link, the copied key and the
    environment files are tracked and changed: their hunks never leave."""
    import anyio

    repo = bench.work
    git(repo, "init", "-q", "-b", "main")
    for name in ("keys/id_rsa", ".env", ".env.local", "ok.txt"):
        (repo / name).write_text("old\n")
    git(repo, "add", "keys/id_rsa", ".env", ".env.local", "ok.txt")
    git(repo, "commit", "-q", "-m", "files")
    for name in ("keys/id_rsa", ".env", ".env.local"):
        (repo / name).write_text(f"{MARKER}\n")
    (repo / "ok.txt").write_text("new\n")
    empty = git(repo, "hash-object", "-w", "--stdin").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{empty},h")

    async def calls() -> list[str]:
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=ADJUTANT, args=["mcp", "serve"],
                                       env=bench.env, cwd=str(repo))
        out = []
        async with Client(params) as client:
            for args in ({}, {"ref": "HEAD"}, {"paths": ["keys"]}, {"paths": ["h", "keys"]}):
                result = await client.call_tool("git.diff", args)
                if result.is_error and (result.meta or {}).get("adjutant/refused"):
                    # the guard refuses a path naming the hard link
                    out.append(f"refused: {refusal(result)}")
                else:
                    out.append(result.model_dump_json())
        return out

    results = anyio.run(calls)
    assert all(MARKER not in r for r in results), results
    assert "+new" in results[0] and results[0].count("[withheld by Adjutant:") == 4
    assert "keys/id_rsa matches **/id_rsa" in results[2]
    assert results[3].startswith("refused: ") and "hard link" in results[3]
    assert MARKER not in json.dumps(bench.log())
