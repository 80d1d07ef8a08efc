"""Auto-speech: what the operator finished saying, said aloud.

Follows the bus: a run that ends with an answer (``RUN_FINISHED``, status
``answered``) is spoken when it is short (the profile's ``speech.max_auto_chars``);
a plan that ran is spoken as its summary (the operator's ``summary`` or ``text`` when
it gives one, else the steps that ran, from the run's tool-call events). Nothing is
said when the profile's ``auto_speech`` is off, in ``off`` and ``listen-only`` (a
switch to one of them also stops the speech at once), for proposals, refusals,
failures and runs that were cancelled. Without an audio device auto-speech stays
quiet unless ``ADJUTANT_SPEECH_OUTPUT=file`` asks for files.
"""

from __future__ import annotations

from typing import Any

from ._speaker import SILENT_MODES, Speaker

__all__ = ["follow", "plan_summary", "spoken_text"]

#: Run statuses whose plan ran (a summary is worth saying).
RAN = frozenset({"executed", "paused", "aborted"})


def plan_summary(status: str, tools: list[str]) -> str:
    """"Done: ran proc list." / "Stopped after 2 steps: ran git status and fs read."
    (tool names with their dots read as spaces)."""
    if not tools:
        return ""
    names = [t.replace(".", " ").replace("_", " ") for t in dict.fromkeys(tools)]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    head = "Done" if status == "executed" else f"Stopped after {len(tools)} steps"
    return f"{head}: ran {listed}."


def spoken_text(result: Any, tools: list[str], preset: Any) -> str:
    """What to say for a finished run's ``result`` (None: nothing)."""
    if not isinstance(result, dict):
        return ""
    status, text = result.get("status"), result.get("summary") or result.get("text") or ""
    if status == "answered":
        return text if len(text) <= preset.max_auto_chars else ""
    if status in RAN and preset.plan_summary:
        said = text or plan_summary(str(status), tools)
        return said if len(said) <= preset.max_auto_chars else plan_summary(
            str(status), tools)
    return ""


async def follow(kernel: Any, speaker: Speaker) -> None:
    """Speak finished runs until cancelled."""
    from adjutant import get_logger
    from adjutant_hookspecs import (
        RunFinished,
        StateDelta,
        StateSnapshot,
        ToolCallStart,
    )

    from ._output import no_device_reason

    log = get_logger(plugin="tts")
    tools: dict[str | None, list[str]] = {}
    quiet = no_device_reason(kernel.env) if not kernel.env.get(
        "ADJUTANT_SPEECH_OUTPUT") else None
    if quiet:
        log.info("auto-speech is quiet: nothing to play on", reason=quiet)
    subscription = kernel.bus.subscribe(types=(RunFinished, StateDelta, StateSnapshot,
                                               ToolCallStart))
    async for envelope in subscription:
        event, run = envelope.event, envelope.run_id
        if isinstance(event, StateDelta):
            for op in event.delta:
                if op.path == "/mode" and op.value in SILENT_MODES:
                    speaker.stop("mode")
        elif isinstance(event, StateSnapshot) and isinstance(event.snapshot, dict):
            if event.snapshot.get("mode") in SILENT_MODES:
                speaker.stop("mode")
        elif isinstance(event, ToolCallStart):
            tools.setdefault(run, []).append(event.tool_call_name)
        elif isinstance(event, RunFinished):
            ran = tools.pop(run, [])
            profile = kernel.profile
            if not profile.auto_speech or quiet:
                continue
            text = spoken_text(event.result, ran, profile.speech)
            if text:
                source = "answer" if event.result.get("status") == "answered" else \
                    "plan-summary"
                await speaker.say(text, source=source, run_id=run)
