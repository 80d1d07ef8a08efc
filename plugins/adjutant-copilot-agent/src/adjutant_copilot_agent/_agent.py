"""The agent: one per recording in progress, its cycle loop on the caller's anyio tasks.

Each cycle takes the last ``cycle_interval + audio_overlap`` seconds of the recording
(further back when the previous cycle ran long, so no words fall between two cycles;
all of it when shorter), analyses it with the running summary as context, merges the
result, saves the state, publishes it and logs the cycle, then sleeps
``cycle_interval`` from the cycle's end. An agent further behind than two intervals (a
slow or busy machine, a slow first cycle) takes the oldest audio it has not analysed,
two intervals of it, and runs the next cycle at once: it lags, and skips nothing. An
analysis past its timeout skips the cycle (its audio is not tried again); a failed
cycle counts in ``failed_cycles`` and keeps the context; three failures in a row pause
the agent (``copilot_agent.status`` ``paused``) until the user starts it again. The
recording stopping stops the agent, after one last cycle over what it has not yet
analysed (several, when it is that far behind).

Other processes reach a running agent through its session's folder: ``agent.json``
names its process (``start`` refuses while that process lives) and ``requests/`` holds
what they ask of it (``stop``, ``dismiss``), read every tick.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from adjutant_hookspecs import CopilotRequest, CopilotUnsupported, TranscriptSegment

from ._analysis import CONTEXT_SEGMENTS, vocabulary
from ._clock import Clock
from ._events import CopilotError, CopilotStatus, CopilotUpdated
from ._log import AgentLog
from ._sessions import (
    AgentInfo,
    Session,
    active_agent,
    active_recording,
    agent_file,
    list_sessions,
    now_iso,
    session_dir,
)
from ._settings import CopilotAgentSettings, agent_settings
from ._state import CopilotState, dismiss, failed, merge, to_builtins
from ._store import StateStore
from ._wav import BYTES_PER_SECOND, Chunk, data_bytes, extract_chunk, extract_range

if TYPE_CHECKING:
    from adjutant_hookspecs import CopilotAnalyzer, Kernel, Provider

__all__ = ["MAX_FAILURES", "AgentError", "CopilotAgent", "choose_analyzer", "heard",
           "request"]

#: Failed cycles in a row that pause the agent.
MAX_FAILURES = 3
#: Real seconds between looks at the requests and the recording.
TICK_S = 0.2


class AgentError(Exception):
    """The agent cannot do what was asked, told the way a user can act on it."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(f"{message}; {hint}" if hint else message)
        self.message, self.hint = message, hint


def choose_analyzer(kernel: Kernel) -> tuple[CopilotAnalyzer, Provider]:
    """The analyzer for the active provider (native ones first), or `CopilotUnsupported`."""
    name = kernel.profile.model.provider
    provider = kernel.providers.get(name)
    if provider is None:
        raise AgentError(f"no model provider named {name!r} is installed",
                         hint="install its plugin (the embedded one is adjutant-llamacpp)")
    fitting = [a for a in kernel.copilot_analyzers.values() if a.supports(provider)]
    if not fitting:
        raise CopilotUnsupported(name)
    return sorted(fitting, key=lambda a: not a.native)[0], provider


def request(home: Path, session_id: str, what: dict[str, Any]) -> None:
    """Leave a request (``{"stop": true}``, ``{"dismiss": 0}``) for the agent running on
    ``session_id`` in another process."""
    folder = session_dir(home, session_id) / "requests"
    folder.mkdir(exist_ok=True)
    tmp = folder / f".{uuid.uuid4().hex}.tmp"
    tmp.write_text(json.dumps(what))
    os.replace(tmp, folder / f"{time.time_ns()}-{uuid.uuid4().hex[:6]}.json")


def heard(transcript: tuple[TranscriptSegment, ...],
          start_s: float) -> tuple[TranscriptSegment, ...]:
    """The segments of ``transcript`` (recording time) that lie inside a chunk beginning
    at ``start_s``, in the chunk's time: what its analyzer need not hear again; before
    them the last ``CONTEXT_SEGMENTS`` that began before the chunk (negative start
    times: never heard again, only read as context: "Then let's record her remotely."
    before the chunk, "Yeah, remote is fine." in it). The transcript's last segment is
    left out of the chunk's: it ended where the last chunk did, perhaps in the middle of
    a word, and is heard again whole; begun before the chunk, it is context (hearing
    starts in a pause after the chunk's start, so its first words are heard only
    there)."""
    done = transcript[:-1]
    earlier = [s for s in transcript if s.start_s < start_s][-CONTEXT_SEGMENTS:]
    return tuple(TranscriptSegment(start_s=s.start_s - start_s, end_s=s.end_s - start_s,
                                   text=s.text)
                 for s in (*earlier, *(s for s in done if s.start_s >= start_s)))


class CopilotAgent:
    """One recording's agent. Start it with `CopilotAgent.running` (refused without a
    recording in progress, or when an agent already runs on it)."""

    def __init__(self, kernel: Kernel, session: Session, *, settings: CopilotAgentSettings,
                 analyzer: CopilotAnalyzer, provider: Provider, store: StateStore,
                 clock: Clock, state: CopilotState | None = None) -> None:
        self.kernel, self.session, self.settings = kernel, session, settings
        self.analyzer, self.provider, self.store, self.clock = analyzer, provider, store, clock
        self.state = state or CopilotState()
        self.status = "starting"
        self.log = AgentLog(None)
        self.audio = session.audio(kernel.home)
        self.attempts = self.successes = self.failures_in_a_row = self.skipped = 0
        self.inference_times: list[float] = []
        self._analysed_to = 0.0  # seconds of the recording the last cycle reached
        self._published: dict[str, Any] | None = None
        self._stop = anyio.Event()
        self._lock = anyio.Lock()
        self.finished = anyio.Event()

    # -- starting ------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def running(cls, kernel: Kernel, *, session_id: str | None = None,
                      clock: Clock | None = None,
                      settings: CopilotAgentSettings | None = None
                      ) -> AsyncIterator[CopilotAgent]:
        """Start the agent on the recording in progress (``session_id``: that one) and
        run its loop in a task of the caller's; leaving stops it (`stop`)."""
        agent = await cls.prepare(kernel, session_id=session_id, clock=clock,
                                  settings=settings)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(agent.run)
                try:
                    yield agent
                finally:
                    agent.request_stop()
        finally:
            agent._release()

    @classmethod
    async def prepare(cls, kernel: Kernel, *, session_id: str | None = None,
                      clock: Clock | None = None,
                      settings: CopilotAgentSettings | None = None) -> CopilotAgent:
        """Check what starting needs and claim the recording (``agent.json``); `run`
        then runs the loop."""
        home = kernel.home
        if session_id is None:
            session = active_recording(home)
        else:
            session = next((s for s in list_sessions(home) if s.id == session_id), None)
            if session is not None and session.status != "recording":
                session = None
        if session is None:
            raise AgentError("no recording in progress" + (f" with id {session_id!r}"
                                                           if session_id else ""),
                             hint="start one with `adjutant record` (or record with "
                                  "--agent)")
        settings = settings or agent_settings(kernel)
        analyzer, provider = choose_analyzer(kernel)
        store = StateStore(kernel)
        state = await store.load(session.id)
        agent = cls(kernel, session, settings=settings, analyzer=analyzer, provider=provider,
                    store=store, clock=clock or Clock(), state=state)
        agent._claim()
        return agent

    def _claim(self) -> None:
        path = agent_file(self.kernel.home, self.session.id)
        info = msgspec.json.encode(AgentInfo(pid=os.getpid(), started_at=now_iso()))
        for _ in range(2):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                running = active_agent(self.kernel.home, self.session.id)
                if running is not None:
                    raise AgentError(f"a copilot agent already runs on recording "
                                     f"{self.session.id} (process {running.pid})",
                                     hint="stop it first: adjutant copilot-agent stop") \
                        from None
                with suppress(FileNotFoundError):
                    path.unlink()  # its process died: the claim is stale
                continue
            with os.fdopen(fd, "wb") as f:
                f.write(info)
            return
        raise AgentError("could not claim the recording for the agent (another start "
                         "raced this one)")

    def _release(self) -> None:
        with suppress(FileNotFoundError):
            agent_file(self.kernel.home, self.session.id).unlink()

    # -- the kernel API ------------------------------------------------------------------

    def request_stop(self) -> None:
        self._stop.set()

    async def stop(self) -> CopilotState:
        """Stop: an analysis in flight may finish (up to its timeout); the final
        summary goes to the log; returns the final state."""
        self.request_stop()
        await self.finished.wait()
        return self.state

    async def dismiss(self, index: int) -> CopilotState:
        """Dismiss suggested question ``index`` (0-based); raises ``IndexError``."""
        async with self._lock:
            await self._set(dismiss(self.state, index))
        return self.state

    # -- the loop ------------------------------------------------------------------------

    def _publish_status(self, status: str, message: str = "") -> None:
        self.status = status
        self.kernel.bus.publish(CopilotStatus(session=self.session.id, status=status,
                                              message=message))

    async def _set(self, state: CopilotState) -> None:
        """Make ``state`` current: saved, then published (a snapshot first, then JSON
        Patch deltas)."""
        import jsonpatch

        self.state = state
        await self.store.save(self.session.id, state)
        now = to_builtins(state)
        cycle = state.cycle_metadata.cycle_number
        if self._published is None:
            event = CopilotUpdated(session=self.session.id, cycle=cycle, snapshot=now)
        else:
            ops = jsonpatch.make_patch(self._published, now).patch
            if not ops:
                return
            event = CopilotUpdated(session=self.session.id, cycle=cycle, delta=ops)
        self._published = now
        self.kernel.bus.publish(event)

    async def run(self) -> None:
        """The cycle loop, until stopped, the recording stops or three failures in a row."""
        try:
            self._publish_status("starting")
            self.log = AgentLog.open(self.kernel.home, self.audio.name, self.settings,
                                     self._model_name())
            if self.log.warning:
                self._publish_status("starting", self.log.warning)
            self._analysed_to = 0.0
            try:
                async with self._lock:
                    self._published = None
                    await self._set(self.state)
                self._publish_status("active")
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._serve_requests)
                    reason = await self._loop()
                    tg.cancel_scope.cancel()
            except Exception as exc:  # the state store failed (a full disk): say so, end
                reason = "error"
                message = str(exc.exceptions[0]) if isinstance(exc, BaseExceptionGroup) \
                    and len(exc.exceptions) == 1 else str(exc)
                self._publish_status("error", f"the agent stopped: {message}")
            self._finish(reason)
        finally:
            self._release()
            self.finished.set()

    def _model_name(self) -> str:
        preset = self.kernel.profile.model
        return f"{preset.model or 'default'} ({preset.provider}), via {self.analyzer.name}"

    async def _loop(self) -> str:
        settings = self.settings
        while True:
            behind = self._recorded_s() - self._analysed_to > settings.cycle_interval \
                and self._analysed_to > 0
            ended = await self._wait(0 if behind else settings.cycle_interval)
            if ended == "stopped":
                return "stopped"
            if ended == "recording-ended":
                while self._recorded_s() - self._analysed_to >= 1.0 and not self._stop.is_set():
                    reached = self._analysed_to
                    await self._cycle()
                    if self._analysed_to <= reached or self.failures_in_a_row >= MAX_FAILURES:
                        break  # a failed cycle: what is left stays in the recording
                return "recording-ended"
            await self._cycle()
            if self.failures_in_a_row >= MAX_FAILURES:
                return "paused"

    def _recorded_s(self) -> float:
        try:
            return data_bytes(self.audio) / BYTES_PER_SECOND
        except OSError:
            return 0.0

    def _recording_ended(self) -> bool:
        for s in list_sessions(self.kernel.home):
            if s.id == self.session.id:
                return s.status != "recording"
        return True

    async def _wait(self, seconds: float) -> str:
        """Sleep ``seconds`` of the clock's time; wake early when asked to stop or when
        the recording ends."""
        until = self.clock.now() + seconds
        while True:
            if self._stop.is_set():
                return "stopped"
            if self._recording_ended():
                return "recording-ended"
            left = until - self.clock.now()
            if left <= 0:
                return "elapsed"
            await self.clock.sleep(min(left, TICK_S * self.clock.factor))

    async def _serve_requests(self) -> None:
        folder = session_dir(self.kernel.home, self.session.id) / "requests"
        while True:
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                try:
                    asked = json.loads(path.read_text())
                except (OSError, ValueError):
                    asked = {}
                with suppress(FileNotFoundError):
                    path.unlink()
                if not isinstance(asked, dict):
                    continue
                if asked.get("stop"):
                    self.request_stop()
                index = asked.get("dismiss")
                if isinstance(index, int) and not isinstance(index, bool):
                    with suppress(IndexError):
                        await self.dismiss(index)
            await anyio.sleep(TICK_S)

    def _chunk(self) -> Chunk:
        s = self.settings
        behind = self._recorded_s() - self._analysed_to
        if behind <= 2 * s.cycle_interval or self._analysed_to <= 0:
            seconds = max(s.cycle_interval, round(behind + 0.5))
            return extract_chunk(self.audio, min(seconds, 2 * s.cycle_interval), s.audio_overlap)
        # too far behind for one chunk: the oldest audio not analysed yet, so that no
        # words are skipped (the loop runs the next cycle at once)
        return extract_range(self.audio, self._analysed_to - s.audio_overlap,
                             2 * s.cycle_interval + s.audio_overlap)

    async def _cycle(self) -> None:
        self.attempts += 1
        number = self.attempts
        async with self._lock:
            self.state = msgspec.structs.replace(self.state, cycle_metadata=msgspec.structs
                                                 .replace(self.state.cycle_metadata,
                                                          processing=True))
            # saved too, so a reader in another process (the dock's panel) sees it
            await self.store.save(self.session.id, self.state)
        self._publish_status("processing")
        started = time.perf_counter()
        chunk: Chunk | None = None
        try:
            chunk = self._chunk()
            context = self.state.running_summary
            with anyio.fail_after(self.settings.analysis_timeout):
                result = await self.analyzer.copilot_analyze(
                    self.kernel, self.provider, CopilotRequest(
                        audio=chunk.wav, context=context,
                        heard=heard(self.state.transcript, chunk.start_s),
                        vocabulary=vocabulary(self.state.transcript[:-1], [
                            c.term for c in self.state.key_concepts])))
        except TimeoutError:
            self.skipped += 1
            await self._failed(number, f"Inference timeout ({self.settings.analysis_timeout:g}s)",
                               chunk, time.perf_counter() - started, "skipped (timeout)")
            return
        except Exception as exc:  # any analyzer failure skips the cycle, never the agent
            await self._failed(number, f"{type(exc).__name__}: {exc}", chunk,
                               time.perf_counter() - started, "error")
            return
        elapsed = time.perf_counter() - started
        self.inference_times.append(elapsed)
        async with self._lock:
            await self._set(merge(self.state, result, chunk_start_s=chunk.start_s,
                                  chunk_seconds=chunk.seconds, now_iso=_now()))
        self._analysed_to = chunk.start_s + chunk.seconds
        self.successes += 1
        self.failures_in_a_row = 0
        self.log.cycle(number, chunk.start_s, chunk.seconds, self.settings.audio_overlap,
                       elapsed, "success", result.prompt or "(no speech heard: no prompt)",
                       result.response or "{}")
        self._publish_status("active")

    async def _failed(self, number: int, message: str, chunk: Chunk | None, elapsed: float,
                      status: str) -> None:
        self.failures_in_a_row += 1
        if chunk is not None:  # the cycle is skipped: its audio is not tried again
            self._analysed_to = max(self._analysed_to, chunk.start_s + chunk.seconds)
        async with self._lock:
            await self._set(failed(self.state, _now()))
        self.kernel.bus.publish(CopilotError(session=self.session.id, cycle=number,
                                             error=message))
        start, seconds = (chunk.start_s, chunk.seconds) if chunk else (self._analysed_to, 0.0)
        self.log.cycle(number, start, seconds, self.settings.audio_overlap, elapsed,
                       f"{status}: {message}", "(see the cycle's error)", "{}")
        if self.failures_in_a_row >= MAX_FAILURES:
            self._publish_status("paused", f"{MAX_FAILURES} consecutive failures: start the "
                                           "agent again")
        else:
            self._publish_status("active")

    def _finish(self, reason: str) -> None:
        errors = self.attempts - self.successes - self.skipped
        avg = sum(self.inference_times) / len(self.inference_times) \
            if self.inference_times else 0.0
        self.log.summary(self.attempts, self.successes, self.skipped, errors, avg,
                         self._recorded_s())
        if reason not in ("paused", "error"):
            self._publish_status("stopped", "the recording ended" if reason ==
                                 "recording-ended" else "stopped")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
