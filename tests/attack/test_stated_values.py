"""Stop 35's new step, attacked from outside: the values a request states are put
into the plan's unset arguments after the model's reply (`adjutant.operator._stated`).
A request can now add a path, a flag or a branch name the model did not write, so each
route is tried with the real ``adjutant`` command and a scripted model:

- an indirect read: the request names the hard link to ``~/.ssh/id_rsa``, ``.env`` or
  a path outside the workspace, and the step puts it into ``search.grep``'s ``paths``:
  the pipeline must still refuse or withhold it, and the secret never comes back;
- a write whose scope the step widens (``git.commit``'s ``all``): the question shows
  the widened call, and a "no" runs nothing;
- escapes in what the user is shown: a branch whose name carries terminal escapes
  is never put into a call, and nothing raw reaches the terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from adjutant.testing import needs_sandbox

from .helpers import MARKER, Attack, bench_at, have, plan

needs_git = pytest.mark.skipif(not (have("git") and have("bwrap")),
                               reason="the git tools need git and bubblewrap")


@pytest.fixture
def bench() -> Iterator[Attack]:
    with bench_at("adjutant-attack-") as attack:
        os.link(attack.id_rsa, attack.work / "h")
        (attack.work / ".env").write_text(f"API_TOKEN=SECRET {MARKER}\n")
        yield attack


def _git(work: Path, *argv: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
           "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
    subprocess.run(["git", *argv], cwd=work, env=env, check=True, capture_output=True)


@needs_sandbox
@pytest.mark.parametrize("asked", ["grep SECRET in h", "grep SECRET in .env",
                                   "grep SECRET in ~/.ssh/id_rsa",
                                   "grep SECRET in ../home/.ssh"])
def test_a_stated_secret_path_put_into_a_read_is_still_refused(bench: Attack,
                                                               asked: str) -> None:
    bench.script(plan(("search.grep", {"pattern": "SECRET"})))
    done = bench.cli("run", asked, "--json")
    assert MARKER not in done.stdout and MARKER not in done.stderr, done.stdout
    assert MARKER not in json.dumps(bench.log())
    outcome = json.loads(done.stdout)
    steps = (outcome.get("plan") or {}).get("steps") or []
    assert steps and steps[0]["tool"] == "search.grep"
    if asked.endswith(" h"):  # a file here: the step did put it in (a dotfile never is)
        assert steps[0]["args"].get("paths") == [asked.rsplit(" ", 1)[1]], steps
    assert outcome["status"] in ("executed", "denied", "failed"), outcome
    if outcome["status"] == "executed":  # a hard link is withheld, never read
        shown = "".join(r.get("stdout") or "" for r in outcome.get("results") or [])
        assert "SECRET" not in shown or "withheld" in shown, shown


@needs_git
def test_a_write_the_step_widens_is_asked_about_as_widened_and_no_runs_nothing(
        bench: Attack) -> None:
    work = bench.work
    (work / ".env").unlink()
    os.unlink(work / "h")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "config", "user.name", "a")
    _git(work, "config", "user.email", "a@b")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "first")
    (work / "ok.txt").write_text("changed\n")
    bench.script(plan(("git.commit", {"message": "wip"})))
    child = bench.spawn("run", "commit all my changes as wip")
    try:
        child.expect(r"\[g\] grant, \[d\] deny, \[e\] edit arguments: |\[x\] execute")
        shown = str(child.before)
        child.sendline("d")
        child.expect(["denied", "deny", r"\$ ", "\\Z"], timeout=30)
    finally:
        child.close(force=True)
    assert '"all": true' in shown, shown  # the question shows the widened call
    head = subprocess.run(["git", "log", "--oneline"], cwd=work, capture_output=True,
                          text=True, check=True).stdout
    assert head.count("\n") == 1 and "wip" not in head  # nothing was committed


@needs_git
def test_a_branch_named_with_escapes_is_never_put_into_a_call(bench: Attack) -> None:
    work = bench.work
    (work / ".env").unlink()
    os.unlink(work / "h")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "first")
    sha = (work / ".git" / "refs" / "heads" / "main").read_text()
    hostile = "x\x1b[2J\x1b]0;owned\x07"
    (work / ".git" / "refs" / "heads" / hostile).write_text(sha)  # git itself forbids it
    bench.script(plan(("git.log", {})))
    done = bench.cli("run", f"show the log of {hostile}")
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout, repr(done.stdout)
    bench.script(plan(("git.log", {})))
    outcome = json.loads(bench.cli("run", f"show the log of {hostile}", "--json").stdout)
    for step in (outcome.get("plan") or {}).get("steps") or []:
        assert "ref" not in step["args"], step  # a name with escapes is no stated branch
