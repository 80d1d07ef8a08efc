"""What the copilot agent's tests share: an analyzer plugin that answers from a script
(a third party's ``register_copilot_analyzers``, the hook's own contract), recordings
made with the real recorder, and a fast clock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from adjutant import hookimpl
from adjutant_copilot_agent import CopilotAgentPlugin, CopilotAgentSettings, FastClock, Recorder
from adjutant_hookspecs import CopilotCycleResult, CopilotRequest

HANG = "hang"
SETTINGS = CopilotAgentSettings(cycle_interval=30, audio_overlap=5, analysis_timeout=5.0)


class ScriptAnalyzer:
    """Answers each cycle with the next scripted step: a result, an exception (raised)
    or `HANG` (never answers: the timeout must end it). After the last step it calls
    ``on_done`` (tests stop the agent there, so the cycle count is exact)."""

    name = "script"
    native = True

    def __init__(self, steps: list[Any], on_done: Callable[[], None] | None = None) -> None:
        self.steps, self.on_done = list(steps), on_done
        self.requests: list[CopilotRequest] = []
        self.active = self.most_active = 0
        self.logs: list[str] = []
        self.log_path: Path | None = None

    def supports(self, provider: Any) -> bool:
        return True

    async def copilot_analyze(self, kernel: Any, provider: Any,
                              request: CopilotRequest) -> CopilotCycleResult:
        self.requests.append(request)
        if self.log_path is not None and self.log_path.exists():
            self.logs.append(self.log_path.read_text())
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            step = self.steps.pop(0) if self.steps else CopilotCycleResult()
            if not self.steps and self.on_done is not None:
                self.on_done()
            await anyio.lowlevel.checkpoint()
            if isinstance(step, BaseException):
                raise step
            if step == HANG:
                await anyio.sleep_forever()
            assert isinstance(step, CopilotCycleResult)
            return step
        finally:
            self.active -= 1


def analyzer_plugin(analyzer: Any) -> Any:
    class Plugin:
        @staticmethod
        @hookimpl
        def register_copilot_analyzers(register: Any) -> None:
            register(analyzer)
    return Plugin()


def plugins(analyzer: Any) -> tuple[Any, ...]:
    return (CopilotAgentPlugin, analyzer_plugin(analyzer))


def start_recording(home: Path, seconds: float = 40.0) -> Recorder:
    """A recording in progress (this process records it) holding ``seconds`` of a tone."""
    import numpy as np

    recorder = Recorder(home, "test")
    recorder.open()
    t = np.arange(int(seconds * 16_000)) / 16_000
    pcm = (np.sin(2 * np.pi * 220 * t) * 8000).astype("<i2").tobytes()
    assert recorder.writer is not None
    recorder.writer.write(pcm)
    recorder.writer.flush()
    return recorder


def end_recording(recorder: Recorder) -> None:
    from adjutant_copilot_agent._sessions import now_iso, save_session

    assert recorder.writer is not None and recorder.session is not None
    recorder.writer.close()
    recorder.session.status, recorder.session.stopped_at = "stopped", now_iso()
    save_session(recorder.home, recorder.session)


def close(recorder: Recorder) -> Recorder:
    """Close the file, the session still in progress (as while its recorder runs)."""
    assert recorder.writer is not None
    recorder.writer.close()
    return recorder


def fast() -> FastClock:
    return FastClock(20_000)
