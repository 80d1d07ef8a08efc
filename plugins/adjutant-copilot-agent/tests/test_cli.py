"""The commands, as a user runs them, in separate processes sharing one data directory:
``record --agent`` in one, ``copilot-agent ...`` in others. The model is a script file
(`adjutant.testing.scriptfile`); speech is espeak-ng's, heard by Whisper."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("adjutant_lmdb")  # the state, the mode and the action log

ADJUTANT = str(Path(sys.executable).with_name("adjutant"))
ESC = "\x1b[2J"
ANSWER = {
    "new_content": "Planning.", "updated_summary": "The team plans the release.",
    "key_points": [], "decisions": [f"We decided to ship on Friday {ESC}"],
    "action_items": ["Write the release notes in notes.txt"], "open_questions": [],
    "suggested_questions": [{"question": "Who reviews?", "reason": "unsaid"},
                            {"question": "When is the launch party?", "reason": "unsaid"}],
    "key_concepts": [{"term": "Release", "context": "Friday"}],
}


def setup(tmp_path: Path, replies: list[str]) -> dict[str, str]:
    dist = tmp_path / "plugins" / "scripted_cli-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: scripted-cli\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(
        "[adjutant]\nscripted = adjutant.testing.scriptfile\n")
    profiles = tmp_path / "home" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "default.json").write_text(json.dumps(
        {"model": {"provider": "script-file", "model": "script"},
         "plugins": {"copilot-agent": {"cycle_interval": 30, "audio_overlap": 5,
                                       "analysis_timeout": 600}}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies))
    subprocess.run(["espeak-ng", "-w", str(tmp_path / "meeting.wav"),
                    "We decided to ship on Friday. Alice writes the release notes."],
                   check=True, timeout=60)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ADJUTANT_")}
    return {**base, "ADJUTANT_HOME": str(tmp_path / "home"),
            "ADJUTANT_LOAD_PLUGINS": "copilot-agent,stt,lmdb,scripted,files",
            "ADJUTANT_SCRIPT": str(script), "PYTHONPATH": str(tmp_path / "plugins"),
            "NO_COLOR": "1"}


def adjutant(env: dict[str, str], *args: str, cwd: Path | None = None,
             stdin: Any = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ADJUTANT, *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False, cwd=cwd, stdin=stdin)


def test_record_with_the_agent_then_state_dismiss_show_export_from_other_processes(
        tmp_path: Path) -> None:
    env = setup(tmp_path, [json.dumps(ANSWER)])
    refused = adjutant(env, "copilot-agent", "start")
    assert refused.returncode == 1 and "no recording in progress" in refused.stderr
    done = adjutant(env, "record", "--from", str(tmp_path / "meeting.wav"), "--speed", "0",
                    "--agent")
    assert done.returncode == 0, done.stderr
    assert "copilot agent: stopped (the recording ended)" in done.stderr
    sessions = adjutant(env, "copilot-agent", "sessions")
    assert " stopped " in sessions.stdout and "cycles 1" in sessions.stdout
    state = adjutant(env, "copilot-agent", "state")
    assert state.returncode == 0, state.stderr
    assert "We decided to ship on Friday \\x1b[2J" in state.stdout and "\x1b" not in state.stdout
    assert "1. Who reviews?" in state.stdout
    # the evidence's words, as Whisper heard them (a loaded machine may hear less)
    heard = [s["text"] for s in json.loads(adjutant(
        env, "copilot-agent", "state", "--json").stdout)["state"]["transcript"]]
    quotes = [line[5:] for line in state.stdout.splitlines() if line.startswith("   > ")]
    assert bool(quotes) == any(h.strip() for h in heard)  # a span always holds words heard
    assert all(q in " ".join(" ".join(h.split()) for h in heard) for q in quotes), quotes
    watched = adjutant(env, "copilot-agent", "state", "--watch")  # ends with the recording
    assert watched.returncode == 0 and watched.stdout.count("# Co-Pilot") == 1
    dismissed = adjutant(env, "copilot-agent", "dismiss", "2")
    assert dismissed.returncode == 0 and "When is the launch party?" in dismissed.stdout
    data = json.loads(adjutant(env, "copilot-agent", "state", "--json").stdout)
    assert [q["dismissed"] for q in data["state"]["suggested_questions"]] == [False, True]
    out = tmp_path / "export.json"
    assert adjutant(env, "copilot-agent", "export", "--format", "json", "-o",
                    str(out)).returncode == 0
    assert json.loads(out.read_text())["state"]["decisions"][0]["text"].endswith(ESC)
    md = adjutant(env, "copilot-agent", "export", "--format", "md")
    assert "## Decisions" in md.stdout and "## Action items" in md.stdout
    bad = adjutant(env, "copilot-agent", "dismiss", "9")
    assert bad.returncode == 1 and "no suggested question 9" in bad.stderr
    logs = list((tmp_path / "home" / "agent_logs").glob("*_copilot.md"))
    assert len(logs) == 1 and "## Summary" in logs[0].read_text()


def test_act_turns_an_action_item_into_a_request_that_waits_for_approval(
        tmp_path: Path) -> None:
    plan = json.dumps({"type": "plan", "steps": [
        {"tool": "fs.write", "args": {"path": "notes.txt", "content": "release notes"}}]})
    env = setup(tmp_path, [json.dumps(ANSWER), plan])
    assert adjutant(env, "record", "--from", str(tmp_path / "meeting.wav"), "--speed", "0",
                    "--agent").returncode == 0
    adjutant(env, "mode", "execute-with-confirmation")
    work = tmp_path / "work"
    work.mkdir()
    acted = adjutant(env, "copilot-agent", "act", "1", "--non-interactive", cwd=work)
    assert "action item 1: Write the release notes in notes.txt" in acted.stdout
    assert not (work / "notes.txt").exists()  # planned, not approved: nothing written
    assert acted.returncode != 0
    log = adjutant(env, "log", "tail", "-n", "50", "--json")
    assert "approval required by: mode" in acted.stderr  # the ordinary pipeline asked
    kinds = [json.loads(line)["body"]["kind"] for line in log.stdout.splitlines()]
    assert kinds.index("copilot_agent_act") < kinds.index("prompt") < kinds.index("approval")


def test_start_is_refused_while_an_agent_runs_and_stop_reaches_it(tmp_path: Path) -> None:
    env = setup(tmp_path, [json.dumps(ANSWER)] * 5)
    subprocess.run(["sox", str(tmp_path / "meeting.wav"), str(tmp_path / "long.wav"),
                    "repeat", "20"], check=True, timeout=60) if _has("sox") else \
        _repeat(tmp_path / "meeting.wav", tmp_path / "long.wav", 20)
    recording = subprocess.Popen([ADJUTANT, "record", "--from", str(tmp_path / "long.wav"),
                                  "--agent"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(300):
            if list((tmp_path / "home").glob("recordings/*/agent.json")):
                break
            time.sleep(0.1)
        second = adjutant(env, "copilot-agent", "start")
        assert second.returncode == 1 and "already runs" in second.stderr
        stopped = adjutant(env, "copilot-agent", "stop")
        assert stopped.returncode == 0, stopped.stderr
        assert "# Co-Pilot" in stopped.stdout
        assert not list((tmp_path / "home").glob("recordings/*/agent.json"))
        assert recording.poll() is None  # the recording goes on without the agent
        assert adjutant(env, "record", "--stop").returncode == 0
        _, err = recording.communicate(timeout=60)
    finally:
        if recording.poll() is None:
            recording.kill()
            recording.communicate()
    assert "copilot agent: stopped" in err and "recorded" in err


def _has(program: str) -> bool:
    import shutil

    return shutil.which(program) is not None


def _repeat(source: Path, target: Path, times: int) -> None:
    import soundfile as sf

    data, rate = sf.read(str(source))
    import numpy as np

    sf.write(str(target), np.concatenate([data] * times), rate)


def test_stop_says_so_when_the_recorder_does_not_answer(tmp_path: Path) -> None:
    # a recorder suspended (SIGSTOP) cannot read the stop request: --stop must not say
    # "stopped"; once it runs again, the request it left is read and it stops
    import signal

    env = setup(tmp_path, [])
    _repeat(tmp_path / "meeting.wav", tmp_path / "long.wav", 20)
    recording = subprocess.Popen([ADJUTANT, "record", "--from", str(tmp_path / "long.wav")],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
    try:
        for _ in range(300):
            if " recording " in adjutant(env, "record", "--list").stdout:
                break
            time.sleep(0.1)
        recording.send_signal(signal.SIGSTOP)
        late = adjutant(env, "record", "--stop", "--wait", "1")
        assert late.returncode == 1
        assert "has not stopped after 1 s" in late.stderr
        assert f"kill {recording.pid}" in late.stderr and "stopped " not in late.stdout
        recording.send_signal(signal.SIGCONT)
        _, err = recording.communicate(timeout=60)
        assert recording.returncode == 0 and "recorded" in err
        assert " stopped " in adjutant(env, "record", "--list").stdout
    finally:
        if recording.poll() is None:
            recording.send_signal(signal.SIGCONT)
            recording.kill()
            recording.communicate()
