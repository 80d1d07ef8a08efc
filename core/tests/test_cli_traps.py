"""Through the real `adjutant` command: errors are their causes, never "unhandled errors
in a TaskGroup"; the doctor says what is missing and what that means; a third-party
policy is shown as what it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ADJUTANT = str(Path(sys.executable).with_name("adjutant"))

RMGUARD = '''
"""rmguard: refuses deletions."""
from adjutant_hookspecs import Verdict, hookimpl


class RmGuard:
    name = "rmguard"
    description = "refuses every destructive step"

    async def evaluate(self, request):
        if request.declaration.safety.level == "destructive":
            return Verdict("deny", "no deleting here")
        return Verdict.abstain()


@hookimpl
def register_policies(register):
    register(RmGuard())
'''


@pytest.fixture
def user(tmp_path: Path) -> dict[str, Any]:
    """Only the plugins named in ``ADJUTANT_LOAD_PLUGINS`` load: the scripted provider
    (a real entry point), and a third-party policy when a test adds it."""
    home, work, site = tmp_path / "home", tmp_path / "work", tmp_path / "site"
    for d in (home / "profiles", work, site):
        d.mkdir(parents=True)
    dist(site, "scripted-cli", "scripted", "adjutant.testing.scriptfile")
    (home / "profiles" / "default.json").write_text(json.dumps(
        {"model": {"provider": "script-file", "model": "script"}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps(['{"type": "response", "text": "hello"}']))
    env = {**os.environ, "ADJUTANT_HOME": str(home), "ADJUTANT_WORKSPACE": str(work),
           "ADJUTANT_SCRIPT": str(script), "PYTHONPATH": str(site), "NO_COLOR": "1",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "ADJUTANT_LOAD_PLUGINS": "scripted"}
    env.pop("ADJUTANT_DISABLE_PLUGINS", None)
    return {"env": env, "work": work, "site": site, "home": home}


def dist(site: Path, name: str, entry: str, module: str, source: str | None = None) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[adjutant]\n{entry} = {module}\n")
    if source is not None:
        (site / f"{module}.py").write_text(textwrap.dedent(source))


def adjutant(user: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ADJUTANT, *args], env=user["env"], cwd=user["work"],
                          capture_output=True, text=True, timeout=120, check=False)




def test_an_error_inside_a_task_group_is_shown_as_its_cause(user: dict[str, Any]) -> None:
    """`adjutant run` with no log store: the cause (install adjutant-lmdb), not the group."""
    done = adjutant(user, "run", "--non-interactive", "say hello")
    assert done.returncode == 1, done.stderr
    assert "no action log store is installed" in done.stderr
    assert "install adjutant-lmdb" in done.stderr
    assert "TaskGroup" not in done.stderr and "sub-exception" not in done.stderr


def test_doctor_says_what_is_missing_and_what_it_means(user: dict[str, Any]) -> None:
    (user["home"] / "profiles" / "default.json").write_text(json.dumps(
        {"model": {"provider": "llama-cpp", "model": "x"}}))
    done = adjutant(user, "doctor", "--json")
    assert done.returncode == 1, done.stdout  # nothing can run: a failure, not "ok"
    checks = {c["check"]: c for c in json.loads(done.stdout)}
    assert checks["log-store"]["status"] == "fail"
    assert "refuse to run any step" in checks["log-store"]["message"]
    assert "adjutant-lmdb" in checks["log-store"]["fix"]
    assert checks["provider"]["status"] == "fail"
    assert "'llama-cpp', which is not installed" in checks["provider"]["message"]
    assert checks["policies"]["status"] == "warn"
    assert "every step asks" in checks["policies"]["message"]
    assert "adjutant-guard" in checks["policies"]["fix"]
    text = adjutant(user, "doctor").stdout
    assert "[FAIL] log-store" in text and "[warn] policies" in text


def test_doctor_lists_a_third_party_policy_by_what_it_enforces(user: dict[str, Any]) -> None:
    dist(user["site"], "rmguard", "rmguard", "rmguard_plugin", RMGUARD)
    user["env"]["ADJUTANT_LOAD_PLUGINS"] = "scripted,rmguard"
    checks = {c["check"]: c for c in json.loads(adjutant(user, "doctor", "--json").stdout)}
    assert checks["policies"]["status"] == "ok"
    assert checks["policies"]["message"] == (
        "rmguard (policy, plugin rmguard): refuses every destructive step")


def test_groups_are_opened_all_the_way_down() -> None:
    from adjutant.kernel._errors import cancelled_by_user, leaves, message

    inner = ExceptionGroup("g", [ValueError("bad value"), ExceptionGroup("h", [OSError("disk")])])
    group = ExceptionGroup("unhandled errors in a TaskGroup", [inner, ValueError("bad value")])
    assert [str(e) for e in leaves(group)] == ["bad value", "disk"]
    assert message(group) == "bad value; disk"
    assert leaves(KeyError("k"))[0].args == ("k",)
    assert cancelled_by_user(BaseExceptionGroup("g", [KeyboardInterrupt()]))
    assert not cancelled_by_user(group)


def test_status_shows_the_policies_loaded_not_names_that_look_safe(
        user: dict[str, Any]) -> None:
    """A third-party `rmguard` alone is shown as what it is; no "no-sudo" label."""
    dist(user["site"], "rmguard", "rmguard", "rmguard_plugin", RMGUARD)
    user["env"]["ADJUTANT_LOAD_PLUGINS"] = "scripted,rmguard"
    done = adjutant(user, "status")
    assert done.returncode == 0, done.stderr
    assert "policy rmguard (policy): refuses every destructive step" in done.stdout
    assert "no-sudo" not in done.stdout
    info = json.loads(adjutant(user, "status", "--json").stdout)
    assert info["policies"] == [{"name": "rmguard", "kind": "policy", "plugin": "rmguard",
                                 "enforces": "refuses every destructive step"}]
    user["env"]["ADJUTANT_LOAD_PLUGINS"] = "scripted"
    assert "policies: none installed: every step asks" in adjutant(user, "status").stdout


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """``adjutant doctor --json | head -c 1`` printed "error: [Errno 32] Broken pipe".
    (``tools``, not ``doctor``, here: doctor's sandbox check reaps other tests' cgroups.)"""
    import subprocess
    import sys

    proc = subprocess.Popen([str(Path(sys.executable).with_name("adjutant")), "tools",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={"ADJUTANT_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, 141) and "Broken pipe" not in err, err
