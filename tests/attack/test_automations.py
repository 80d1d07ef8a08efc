"""Automations attacked from outside, through ``adjutant automations add|run``: a flow's
variable is data, so a path it carries still meets the deny rules and the cage (an
indirect read of a key by its name, by a hard link, by a link out), and nothing it
reads of a secret reaches the run's output; a variable shaped like a shell command
stays a literal string."""

from __future__ import annotations

import json
import os

import pytest

from .helpers import MARKER, Attack


def _flow(attack: Attack, steps: list[dict[str, object]]) -> None:
    flow = attack.root / "flow.json"
    flow.write_text(json.dumps({"name": "probe", "steps": steps}))
    attack.cli("automations", "add", str(flow), check=True)


@pytest.mark.parametrize("path", ["{home}/.ssh/id_rsa", "hard", "out/id_rsa",
                                  "../home/.aws/credentials"])
def test_a_variable_naming_a_secret_reads_nothing(attack: Attack, path: str) -> None:
    pytest.importorskip("adjutant_tasks")
    os.link(attack.id_rsa, attack.work / "hard")
    (attack.work / "out").symlink_to(attack.home / ".ssh")
    attack.mode("execute-auto")  # reads and writes run unasked where rules allow
    _flow(attack, [{"id": "s1", "tool": "fs.read", "args": {"path": "${input.p}"}},
                   {"id": "w", "tool": "fs.write",
                    "args": {"path": "copy.txt", "content": "${s1.data}"}}])
    given = path.format(home=attack.home)
    done = attack.cli("automations", "run", "probe", "--input", json.dumps({"p": given}),
                      "--json", timeout=120)
    task = json.loads(done.stdout)
    assert task["status"] == "failed" and "s1 (fs.read)" in task["error"], task
    assert MARKER not in done.stdout + done.stderr
    assert not (attack.work / "copy.txt").exists()
    # the same flow on an ordinary file reads it, and waits for a yes before writing
    (attack.work / "ok.txt").write_text("fine\n")
    fine = json.loads(attack.cli("automations", "run", "probe", "--input",
                                 json.dumps({"p": "ok.txt"}), "--json", timeout=120).stdout)
    assert fine["status"] == "waiting_for_human" and "copy.txt" in fine["message"], fine
    for name, _, files in os.walk(attack.data):
        for file in files:
            assert MARKER.encode() not in (attack.root / name / file).read_bytes(), file


def test_a_variable_shaped_like_a_command_stays_a_string(attack: Attack) -> None:
    pytest.importorskip("adjutant_tasks")
    attack.mode("execute-auto")
    _flow(attack, [{"id": "w", "tool": "fs.write",
                    "args": {"path": "note.txt", "content": "${input.text}"}}])
    hostile = "$(touch pwned); `touch pwned2`; rm -rf ~ \x1b[2J"
    done = attack.cli("automations", "run", "probe", "--input",
                      json.dumps({"text": hostile}), "--json", timeout=120)
    assert not (attack.work / "pwned").exists() and not (attack.work / "pwned2").exists()
    assert (attack.home / ".bashrc").exists()
    if (attack.work / "note.txt").exists():  # written only with a grant: as a literal
        assert (attack.work / "note.txt").read_text() == hostile
    assert "\x1b" not in done.stdout + done.stderr  # shown escaped, never obeyed
