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

from typing import TYPE_CHECKING

from adjutant_hookspecs import RunFinished, StateDelta, StateSnapshot, ToolCallStart

from ._settings import TtsSettings, speech_settings
from ._speaker import SILENT_MODES, Speaker

if TYPE_CHECKING:
    from adjutant_hookspecs import Envelope, Kernel

__all__ = ["Progress", "follow", "plan_summary", "spoken_text"]

#: The events auto-speech follows.
WATCHED = (RunFinished, StateDelta, StateSnapshot, ToolCallStart)
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


def spoken_text(result: object, tools: list[str], preset: TtsSettings) -> str:
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


class Progress:
    """How far the follower has read the bus (the seq of the last event it handled)."""

    seen = 0


async def follow(kernel: Kernel, speaker: Speaker, progress: Progress | None = None) -> None:
    """Speak finished runs until cancelled. Whether there is a device to play on is
    asked the first time there is something to say: PortAudio's import and probe (50 ms
    or more) are no part of a run that ends with a plan proposed."""
    quiet = _Quiet(kernel)
    tools: dict[str | None, list[str]] = {}
    progress = progress or Progress()
    subscription = kernel.bus.subscribe(types=WATCHED)
    progress.seen = kernel.bus.last_seq  # what came before is not this follower's to say
    async for envelope in subscription:
        await _handle(envelope, kernel, speaker, tools, quiet)
        progress.seen = envelope.seq


class _Quiet:
    """Why auto-speech has nothing to play on (empty: it has), found once, when first
    asked, and logged then."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.reason: str | None = None

    def __call__(self) -> str:
        if self.reason is None:
            from adjutant import get_logger

            from ._output import no_device_reason

            self.reason = "" if self.kernel.env.get("ADJUTANT_SPEECH_OUTPUT") else (
                no_device_reason(self.kernel.env) or "")
            if self.reason:
                get_logger(plugin="tts").info("auto-speech is quiet: nothing to play on",
                                              reason=self.reason)
        return self.reason


async def _handle(envelope: Envelope, kernel: Kernel, speaker: Speaker,
                  tools: dict[str | None, list[str]], quiet: _Quiet) -> None:
    event, run = envelope.event, envelope.run_id
    if isinstance(event, StateDelta):
        if any(op.path == "/mode" and op.value in SILENT_MODES for op in event.delta):
            speaker.stop("mode")
    elif isinstance(event, StateSnapshot) and isinstance(event.snapshot, dict):
        if event.snapshot.get("mode") in SILENT_MODES:
            speaker.stop("mode")
    elif isinstance(event, ToolCallStart):
        tools.setdefault(run, []).append(event.tool_call_name)
    elif isinstance(event, RunFinished):
        ran = tools.pop(run, [])
        settings = speech_settings(kernel)
        if not settings.auto_speech:
            return
        text = spoken_text(event.result, ran, settings)
        if text and not quiet():
            source = "answer" if event.result.get("status") == "answered" else "plan-summary"
            await speaker.say(text, source=source, run_id=run)
