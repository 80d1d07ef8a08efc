"""What ``adjutant status`` shows, and ``/status`` in ``adjutant chat``: the mode, the
preset, the safety chain as loaded, the workspace pin, the last tasks and the runs a
kill cut short."""

from __future__ import annotations

import resource
import sys
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import MODE_LABELS

from ..safety._cages import describe
from ..safety.terminal import SafeStream, printable
from ._doctor import safety_chain

if TYPE_CHECKING:
    from ..kernel._kernel import Kernel
    from ..operator import Copilot

__all__ = ["print_status", "status_info"]

#: The mode's colour: off grey, propose blue, confirm amber, auto green.
COLOURS = {"off": "90", "listen-only": "90", "propose-only": "34",
           "execute-with-confirmation": "33", "execute-auto": "32"}


def say_mode(mode: str, rest: str = "", stream: Any = None) -> None:
    """The mode's chip, its short name (in its colour on a terminal), then ``rest``, on
    one line."""
    out = SafeStream(stream or sys.stdout)
    short = MODE_LABELS[mode][0] if mode in MODE_LABELS else mode
    out.style(f"[{short}]", COLOURS.get(mode, "0"))
    out.write(f"{rest}\n")
    out.flush()


def one_line(text: Any, limit: int = 0) -> str:
    """``text`` made printable on one line, cut to ``limit`` characters."""
    shown = printable(str(text), multiline=False)
    return shown if not limit or len(shown) <= limit else shown[:limit - 3] + "..."


async def status_info(kernel: Kernel, copilot: Copilot) -> dict[str, Any]:
    """Everything status shows, as ``adjutant status --json`` prints it."""
    await copilot.mode()  # loads what was persisted
    state = copilot.state()
    profile = kernel.profile
    chips = ["project-cage" if "{workspace}" in profile.path_cages else "custom-cages"]
    if state["mode"] in ("off", "listen-only", "propose-only"):
        chips.append("read-only")
    chain = safety_chain(kernel)  # what is loaded, never guessed from names
    return {**state, "provider": profile.model.provider, "model": profile.model.model,
            "chips": chips, "policies": chain, "tools": len(copilot.offered_tools()),
            "workspace": await describe(copilot.key_values(), copilot.cwd),
            "memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "last_tasks": await _last_tasks(copilot) if copilot.log.available else [],
            "interrupted": await _interrupted(copilot),
            "spent": await copilot.routing.report()}


def print_status(info: dict[str, Any]) -> None:
    """``info`` (from `status_info`) as lines on stdout."""
    say_mode(info["mode"], f" preset {info['preset']} ({info['provider']}:{info['model']})")
    print(f"cwd {info['cwd']}; {info['tools']} tools; {', '.join(info['chips'])}; "
          f"memory {info['memory_mb']} MB")
    if info["grants"]:
        print(f"grants: {', '.join(one_line(g, 80) for g in info['grants'])}")
    if not info["policies"]:
        print("policies: none installed: every step asks (install adjutant-guard)")
    for link in info["policies"]:
        print(f"policy {one_line(link['name'])} ({link['kind']}): "
              f"{one_line(link['enforces'], 200)}")
    print(f"workspace {info['workspace']['state']}")
    spent = info.get("spent") or {}
    if spent.get("today"):
        print("spent today: " + "; ".join(
            f"{one_line(name, 40)} {s['tokens']:,} tokens, ${s['cost']:.4f} ({s['calls']} calls)"
            for name, s in spent["today"].items()))
    if held := spent.get("held"):
        print(f"held for {held['calls']} call(s) under way: {held['tokens']:,} tokens, "
              f"${held['cost']:.4f} (counted by the budgets until they are answered)")
    for window, s in (spent.get("windows") or {}).items():
        caps = [f"{s['cap_tokens']:,} tokens" if s["cap_tokens"] is not None else "",
                f"${s['cap_cost_usd']:.2f}" if s["cap_cost_usd"] is not None else ""]
        if any(caps):
            print(f"budget this {window}: {s['tokens']:,} tokens, ${s['cost']:.4f} of "
                  + " and ".join(c for c in caps if c))
    for task in info["last_tasks"]:
        print(f"  {task['outcome']:<10} {task['seconds']:>6.1f} s  "
              f"{one_line(task['request'], 60)}")
    if (cut := info["interrupted"])["runs"]:
        print(f"interrupted runs: {cut['runs']} (killed or crashed mid-run), "
              f"{len(cut['without_result'])} with a tool call without a result (its effect "
              "may have happened unrecorded; `adjutant log verify` lists them)")
        for run in cut["without_result"][-5:]:
            print(f"  run {run['run_id']}: step {run['step']} {one_line(str(run['tool']), 60)}")


async def _interrupted(copilot: Copilot) -> dict[str, Any]:
    """How many runs were cut by a kill (closed as interrupted at a later start), and
    the steps among them that had started executing without a result in the log."""
    if not copilot.log.available:
        return {"runs": 0, "without_result": []}
    runs = await copilot.log.interrupted()
    return {"runs": len(runs), "without_result": [
        {"run_id": r["run_id"], "step": r["tool_call_without_result"].get("step"),
         "tool": r["tool_call_without_result"].get("tool"),
         "record": r["tool_call_without_result"].get("record")}
        for r in runs if r.get("tool_call_without_result")]}


async def _last_tasks(copilot: Copilot, count: int = 5) -> list[dict[str, Any]]:
    """The last requests from the action log: what was asked, how it ended, how long
    it took (first to last record of the run)."""
    runs: dict[str, dict[str, Any]] = {}
    for record in await copilot.log.records():
        run = record.get("run_id")
        if not run:
            continue
        if record["kind"] == "prompt":
            runs[run] = {"run_id": run, "request": record.get("text", ""),
                         "start": record["time"], "end": record["time"], "outcome": "?"}
        elif run in runs:
            runs[run]["end"] = record["time"]
            if record["kind"] == "outcome":  # how the run ended, as the operator said
                runs[run]["outcome"] = record.get("status", "?")
    tasks = list(runs.values())[-count:]
    return [{"run_id": t["run_id"], "request": t["request"], "outcome": t["outcome"],
             "seconds": round(t["end"] - t["start"], 2)} for t in tasks]
