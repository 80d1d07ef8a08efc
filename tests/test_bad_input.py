"""Bad input through `adjutant run --json`: an empty request, a 100 kB one,
one in another language, a path outside the cage, a task no tool can do. Each gets a
clear response or a clear refusal: never a traceback, never a made-up tool. The model
is scripted (a file of replies, `adjutant.testing.scriptfile`): what is tested is what
Adjutant does around it; `bench/planning.py` measures what the embedded model answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("adjutant_files")
ADJUTANT = str(Path(sys.executable).with_name("adjutant"))


@pytest.fixture
def user(tmp_path: Path) -> dict[str, Any]:
    home, work, plugins = tmp_path / "home", tmp_path / "work", tmp_path / "plugins"
    for d in (home / "profiles", work, plugins / "scripted_cli-0.dist-info"):
        d.mkdir(parents=True)
    (work / "notes.txt").write_text("buy milk\n")
    (plugins / "scripted_cli-0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: scripted-cli\nVersion: 0\n")
    (plugins / "scripted_cli-0.dist-info" / "entry_points.txt").write_text(
        "[adjutant]\nscripted = adjutant.testing.scriptfile\n")
    (home / "profiles" / "default.json").write_text(json.dumps(
        {"model": {"provider": "script-file", "model": "script"}}))
    script = tmp_path / "script.json"
    script.write_text("[]")
    env = {**os.environ, "ADJUTANT_HOME": str(home), "ADJUTANT_WORKSPACE": str(work),
           "ADJUTANT_SCRIPT": str(script), "PYTHONPATH": str(plugins), "NO_COLOR": "1",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "TERM": "dumb"}
    return {"env": env, "work": work, "script": script}


def run(user: dict[str, Any], request: str, *replies: Any) -> tuple[int, dict[str, Any], str]:
    user["script"].write_text(json.dumps(list(replies)))
    Path(f"{user['script']}.pos").unlink(missing_ok=True)
    done = subprocess.run([ADJUTANT, "run", "--json", "--non-interactive", request],
                          env=user["env"], cwd=user["work"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.mark.parametrize(("request_text", "says"), [
    ("", "The request is empty"),
    ("x" * 100_000, "The request is 100,000 characters long"),
])
def test_an_empty_or_huge_request_is_answered_before_any_model(
        user: dict[str, Any], request_text: str, says: str) -> None:
    code, out, _ = run(user, request_text)  # no reply scripted: the model is never asked
    assert code == 0 and says in json.dumps(out)


def test_another_language_and_an_impossible_task_get_a_response(user: dict[str, Any]) -> None:
    for request_text in ("¿qué archivos hay en esta carpeta?", "book me a flight to Oslo"):
        answer = json.dumps({"type": "response", "text": "I cannot do that here."})
        code, out, _ = run(user, request_text, answer)
        assert code == 0 and "I cannot do that here." in json.dumps(out)


def test_a_made_up_tool_is_refused_plainly(user: dict[str, Any]) -> None:
    """The embedded model cannot write one (its grammar names only real tools); a
    backend that does gets the step refused, with the reason. (Propose-only shows the
    plan; its verdicts per step are tests/test_proposals.py's.)"""
    subprocess.run([ADJUTANT, "mode", "execute-with-confirmation"], env=user["env"],
                   cwd=user["work"], capture_output=True, check=True, timeout=60)
    made_up = json.dumps({"type": "plan", "steps": [{"tool": "flights.book", "args": {}}]})
    code, out, err = run(user, "book me a flight", made_up)
    assert code != 0 and "unknown tool 'flights.book'" in json.dumps(out) + err


def test_a_path_outside_the_cage_is_refused_with_its_reason(user: dict[str, Any]) -> None:
    outside = json.dumps({"type": "plan", "steps": [
        {"tool": "fs.read", "args": {"path": "/etc/passwd"}}]})
    _, out, err = run(user, "show me /etc/passwd", outside)
    text = json.dumps(out) + err
    assert "/etc/passwd" in text and ("cage" in text or "outside" in text), text
    assert "root:" not in text  # nothing was read
