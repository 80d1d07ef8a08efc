"""What `adjutant --help` and `adjutant mode` import: the modules, not the time (the
time is `bench/startup.py`'s). A subcommand's module is imported when it runs, never to
list it; the operator's heavy dependencies load only where a command needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Runs the CLI in a fresh interpreter, then prints every module it imported.
SCRIPT = """
import json, sys
from adjutant.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

#: Never needed to list the commands or to show the mode.
HEAVY = ("httpx", "numpy", "llama_cpp", "starlette", "sse_starlette", "uvicorn", "fastapi",
         "mcp", "faster_whisper", "ctranslate2", "sounddevice", "onnxruntime", "hibari",
         "structlog", "bm25s", "Stemmer", "scipy", "model2vec",
         # adjutant-tasks' Celery hand-off: only `tasks worker` and a publish import them
         "celery", "kombu", "billiard", "redis")
#: The terminal approver, the voice frontends, and the commands that plan and run steps.
RUNNING = ("adjutant.cli._approver", "adjutant.cli._voice", "adjutant.cli._operate",
           "adjutant.cli._context_offer", "adjutant.cli._step_view")
#: Tool and context implementations, recognizers and voices: registered only for the
#: commands that use them.
TOOLS = ("adjutant_files._fs", "adjutant_files._grep", "adjutant_files._zip",
         "adjutant_git._tools", "adjutant_system._shell", "adjutant_system._proc",
         "adjutant_context._git", "adjutant_stt._engines", "adjutant_stt._listen",
         "adjutant_tts._hibari", "adjutant_tts._speaker", "adjutant_memory._tool",
         "adjutant_memory._index", "adjutant_memory._service")
#: Plugins' command modules (imported when their subcommand runs).
PLUGIN_COMMANDS = ("adjutant_mcp._cli", "adjutant_stt._cli", "adjutant_lmdb._cli",
                   "adjutant_tts._cli", "adjutant_memory._cli")


def imported(tmp_path: Path, *argv: str) -> tuple[set[str], str]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={"ADJUTANT_HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                               # the shipped plugins only: the example and the template
                               # (installed for the test run) declare tools at import
                               "ADJUTANT_DISABLE_PLUGINS": "wordcount,template"})
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] in (0, None), proc.stderr
    return set(report["modules"]), proc.stdout


def roots(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if m in names or m.split(".")[0] in names)


def test_help_lists_every_command_and_imports_none_of_them(tmp_path: Path) -> None:
    modules, shown = imported(tmp_path, "--help")
    for command in ("run", "chat", "mode", "grant", "status", "tools", "doctor"):
        assert f"\n    {command} " in shown, shown
    assert roots(modules, HEAVY) == []
    assert [m for m in RUNNING + PLUGIN_COMMANDS + TOOLS if m in modules] == []
    assert [m for m in modules if m.startswith(("adjutant.operator", "adjutant.cli._"))] == []
    assert "anyio" not in modules  # no event loop to list commands
    # nor the contracts' structs: listing commands needs dataclasses only
    assert roots(modules, ("msgspec", "typing_extensions")) == []
    assert sorted(m for m in modules if m.startswith("adjutant_hookspecs._")) == [
        "adjutant_hookspecs._commands", "adjutant_hookspecs._lazy",
        "adjutant_hookspecs._markers", "adjutant_hookspecs._specs"]


def test_mode_imports_the_operator_but_not_the_approver_or_the_voice(tmp_path: Path) -> None:
    modules, shown = imported(tmp_path, "mode", "--json")
    assert json.loads(shown) == {"mode": "propose-only"}
    assert "adjutant.operator" in modules  # the test would be empty without it
    assert roots(modules, HEAVY) == []
    assert [m for m in RUNNING + PLUGIN_COMMANDS if m in modules] == []
    assert [m for m in TOOLS if m.startswith(("adjutant_files", "adjutant_git",
                                              "adjutant_system", "adjutant_context",
                                              "adjutant_stt")) and m in modules] == []


@pytest.mark.parametrize(("argv", "says"), [
    (("mode", "--help"), "confirm (execute-with-"),
    (("run", "--help"), "--non-interactive"),
])
def test_the_chosen_subcommand_is_configured(tmp_path: Path, argv: tuple[str, ...],
                                             says: str) -> None:
    """Only the subcommand being run gets its arguments: they are all there for it."""
    modules, shown = imported(tmp_path, *argv)
    assert says in shown
    assert ("adjutant.cli._operate" in modules) == (argv[0] == "run")
