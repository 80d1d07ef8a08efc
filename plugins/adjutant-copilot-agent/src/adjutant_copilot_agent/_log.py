"""The agent log: ``<home>/agent_logs/YYYYMMDD_HHMMSS_copilot.md``, one per session, in
the design's format (a header with the recording, the settings and the model; per
cycle the audio span, inference time, status, prompt and response; a summary table at
the end). Only ever appended to; it holds text, never audio. A write that fails turns
logging off for the session with a warning; the agent goes on."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from ._settings import CopilotAgentSettings

__all__ = ["AgentLog", "mmss"]

_log = logging.getLogger("adjutant.copilot_agent")


def mmss(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60:02d}:{s % 60:02d}"


def _short(seconds: float) -> str:
    """``0:00``, ``1:05``: the design's audio chunk span."""
    s = int(seconds)
    return f"{s // 60}:{s % 60:02d}"


def _clean(text: str) -> str:
    """Text for the log: no NUL or other control bytes (the log is text, never audio);
    a fence inside cannot close the log's own."""
    kept = "".join(c for c in text if c in "\n\t" or (ord(c) >= 32 and ord(c) != 127))
    return kept.replace("```", "` ``")


class AgentLog:
    """One session's log (``path`` None when logging is off or was turned off)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.warning = ""

    @classmethod
    def open(cls, home: Path, recording: str, settings: CopilotAgentSettings, model: str,
             now: dt.datetime | None = None) -> AgentLog:
        if not settings.agent_logging:
            return cls(None)
        now = now or dt.datetime.now()
        folder = home / "agent_logs"
        log = cls(None)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{now:%Y%m%d_%H%M%S}_copilot.md"
            n = 1
            while path.exists():  # two sessions in one second: never overwrite
                n += 1
                path = folder / f"{now:%Y%m%d_%H%M%S}_{n}_copilot.md"
            log.path = path
            log._append(
                f"# Co-Pilot Agent Log — {now:%Y-%m-%d %H:%M:%S}\n\n"
                f"**Recording:** {_clean(recording)}\n"
                f"**Settings:** cycle_interval={settings.cycle_interval}s, "
                f"audio_overlap={settings.audio_overlap}s\n"
                f"**Model:** {_clean(model)}\n\n", create=True)
        except OSError as exc:
            log._disable(exc)
        return log

    def _disable(self, exc: OSError) -> None:
        self.warning = f"agent logging is off for this session: {exc}"
        _log.warning("%s", self.warning)
        self.path = None

    def _append(self, text: str, *, create: bool = False) -> None:
        assert self.path is not None
        with self.path.open("x" if create else "a", encoding="utf-8") as f:
            f.write(text)

    def write(self, text: str) -> None:
        if self.path is None:
            return
        try:
            self._append(text)
        except OSError as exc:
            self._disable(exc)

    def cycle(self, number: int, start_s: float, seconds: float, overlap: int,
              inference_s: float, status: str, prompt: str, response: str) -> None:
        end = mmss(start_s + seconds)
        self.write(
            f"---\n\n## Cycle {number} — {mmss(start_s)} → {end}\n\n"
            f"**Audio chunk:** {_short(start_s)}–{_short(start_s + seconds)} "  # noqa: RUF001
            f"({round(seconds)}s, includes {overlap}s overlap)\n"
            f"**Inference time:** {inference_s:.1f}s\n**Status:** {_clean(status)}\n\n"
            f"### Prompt\n{_clean(prompt)}\n\n### Response\n```json\n{_clean(response)}\n```\n\n")

    def summary(self, total: int, successful: int, skipped: int, errors: int,
                avg_inference_s: float, duration_s: float) -> None:
        secs = int(duration_s)
        self.write(
            "---\n\n## Summary\n\n| Metric | Value |\n|---|---|\n"
            f"| Total cycles | {total} |\n| Successful | {successful} |\n"
            f"| Skipped | {skipped} |\n| Errors | {errors} |\n"
            f"| Avg inference time | {avg_inference_s:.1f}s |\n"
            f"| Total recording duration | {secs // 60}m {secs % 60}s |\n")
