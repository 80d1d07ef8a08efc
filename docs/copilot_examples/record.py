"""Record the golden flows with the embedded model (Gemma 3 270M, temperature 0).

Each flow runs in a throwaway workspace with the real tool packs and safety stack,
in execute-with-confirmation mode with every step granted (the workspace is caged and
every command sandboxed). Whatever the small model did is written down as it
happened: prompt, context, the model's raw output, the plan, each step's result.

Run: ``.venv/bin/python docs/copilot_examples/record.py`` (writes ``<flow>.md`` here).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
APP = ("import sys\n\n\ndef ratio(done, total):\n    return done / total\n\n\n"
       'if __name__ == "__main__":\n    print("progress", ratio(3, 0))\n')


def setup_fix(work: Path) -> None:
    (work / "app.py").write_text(APP)
    crashed = subprocess.run([sys.executable, "app.py"], cwd=work, capture_output=True,
                             text=True, check=False)
    (work / "app.log").write_text(crashed.stderr)


def setup_git(work: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "GIT_CONFIG_NOSYSTEM": "1"}
    (work / "README.md").write_text("# demo\n")
    for argv in (["init", "-q", "-b", "main"], ["config", "user.name", "Demo"],
                 ["config", "user.email", "demo@example.com"], ["add", "."],
                 ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *argv], cwd=work, env=env, check=True)
    (work / "NOTES.md").write_text("notes\n")


def setup_data(work: Path) -> None:
    (work / "data.csv").write_text("a,b\n1,2\n3,4\n")


FLOWS: list[tuple[str, str, Any, list[str]]] = [
    ("fix-error", "Fix this error", setup_fix,
     ["The app crashed, the traceback is in app.log. Read it and find the bug.",
      "Fix the division by zero in app.py and rerun it."]),
    ("feature-branch-commit", "Create a feature branch and commit changes", setup_git,
     ["Create a branch called feature/notes", "Commit NOTES.md with message 'Add notes'"]),
    ("run-and-explain", "Run a command and explain its output", setup_data,
     ["Count the lines of data.csv with wc", "Explain that output"]),
    ("list-python-processes", "List Python processes", lambda work: None,
     ["List the python processes that are running"]),
]


async def record(slug: str, title: str, setup: Any, requests: list[str]) -> str:
    import adjutant_files
    import adjutant_git
    import adjutant_guard
    import adjutant_lmdb
    import adjutant_system
    import adjutant_write_gate
    from adjutant import Copilot, ModelPreset, Profile
    from adjutant.testing import Harness, ScriptedApprover
    from adjutant_hookspecs import ActivitySnapshot, TextMessageContent, to_builtins
    from adjutant_llamacpp import LlamaCpp

    provider = LlamaCpp()
    profile = Profile(model=ModelPreset(provider="llama-cpp", temperature=0.0, max_tokens=200))
    lines = [f"# {title}", "", "Recorded with the embedded model (Gemma 3 270M Q4_K_M, "
             "temperature 0) by `docs/copilot_examples/record.py`; mode "
             "execute-with-confirmation, every step granted, in a throwaway workspace.", ""]
    async with Harness(adjutant_files, adjutant_system, adjutant_git, adjutant_guard,
                       adjutant_write_gate, adjutant_lmdb, provider=provider,  # type: ignore[arg-type]
                       profile=profile) as h:
        setup(h.workspace)
        copilot = Copilot(h.kernel, approver=ScriptedApprover(plan="execute", default="grant"))
        await copilot.set_mode("execute-with-confirmation", channel="user")
        for request in requests:
            h.events.clear()
            outcome = await copilot.handle(request)
            events = h.events.events
            output = "".join(e.delta for e in events if isinstance(e, TextMessageContent))
            context = next((e.content for e in events if isinstance(e, ActivitySnapshot)
                            and e.activity_type == "context"), {})
            lines += [f"## Prompt: {request}", "", "Context bulletin:", "", "```json",
                      json.dumps(context, indent=2), "```", "", "Model output (raw, all "
                      "attempts):", "", "```", output.strip() or "(none)", "```", "",
                      f"Outcome: **{outcome.status}**" + (f" ({outcome.error})"
                                                          if outcome.error else ""), ""]
            if outcome.plan is not None:
                lines += ["Plan:", "", "```json",
                          json.dumps(to_builtins(outcome.plan)["steps"], indent=2), "```", ""]
            if outcome.text:
                lines += ["Answer:", "", f"> {outcome.text}", ""]
            for result in outcome.results:
                lines += [f"Result of `{result.tool}`: {result.status}", "", "```",
                          (result.stdout or result.stderr or "").strip()[:1500] or "(empty)",
                          "```", ""]
    await provider.aclose()
    return "\n".join(lines)


async def main() -> None:
    for slug, title, setup, requests in FLOWS:
        text = await record(slug, title, setup, requests)
        (HERE / f"{slug}.md").write_text(text)
        print(f"wrote {slug}.md")


if __name__ == "__main__":
    anyio.run(main)
