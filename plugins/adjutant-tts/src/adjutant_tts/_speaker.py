"""The speech service: one voice for the whole kernel, with a queue, play/pause/stop,
and the speaking events the dock and the terminal show.

`Speaker.serve` runs for as long as the kernel (the plugin starts it); `say` hands it
an utterance. A new utterance interrupts the one being said or waits behind it, as the
profile's ``speech.overlap`` says. Nothing plays in ``off`` or ``listen-only``: the mode
is read from the store right before each utterance, and a switch to one of them stops
what is playing. A stop, a pause or an engine failure never reaches the operator: the
failure is a ``speech.stopped`` event with ``reason="error"`` and a logged warning.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import (
    SpeechEngine,
    SpeechError,
    SpeechProgress,
    SpeechRequest,
    SpeechStarted,
    SpeechStopped,
)

from ._output import DeviceOutput, FileOutput, Output, no_device_reason
from ._settings import speech_settings
from ._streams import closing_stream

if TYPE_CHECKING:
    from adjutant import Copilot
    from adjutant_hookspecs import Kernel, Registered

__all__ = ["SILENT_MODES", "Speaker", "Utterance", "pick_engine"]

#: Modes in which nothing is said.
SILENT_MODES = frozenset({"off", "listen-only"})
#: Engines tried, in order, when the profile says ``auto``.
AUTO_ENGINES = ("hibari", "espeak-ng")
PROGRESS_EVERY = 0.25  # seconds between speech.progress events


class Utterance:
    """One thing to say, and (once done) how it ended."""

    def __init__(self, text: str, request: SpeechRequest, engine: str, source: str,
                 run_id: str | None, path: Path | None) -> None:
        import anyio

        self.id = uuid.uuid4().hex[:12]
        self.text, self.request, self.engine, self.source = text, request, engine, source
        self.run_id, self.path = run_id, path
        self.output: str | None = None
        self.reason: str | None = None
        self.error: str | None = None
        self.played_ms = 0
        self.synthesized_ms = 0
        self.first_audio_s: float | None = None  # seconds from start to the first chunk
        self._done = anyio.Event()
        self._scope: Any = None
        self._stop_reason: str | None = None

    async def wait(self) -> Utterance:
        await self._done.wait()
        return self

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    @property
    def stopping(self) -> bool:
        """Asked to stop (it ends once the engine gives its sentence back)."""
        return self._stop_reason is not None

    def cancel(self, reason: str) -> None:
        self._stop_reason = self._stop_reason or reason
        if self._scope is not None:
            self._scope.cancel()


def pick_engine(engines: Registered[SpeechEngine], name: str) -> SpeechEngine:
    """The engine the profile names; for ``auto`` the embedded voice, else espeak-ng."""
    if name != "auto":
        engine = engines.get(name)
        if engine is None:
            known = ", ".join(sorted(engines)) or "none"
            raise SpeechError(f"no speech engine named {name!r} (installed: {known})")
        return engine
    for candidate in AUTO_ENGINES:
        engine = engines.get(candidate)
        if engine is not None and getattr(engine, "installed", lambda: True)():
            return engine
    raise SpeechError("no speech engine can run here",
                      hint="pip install hibari-tts, or apt-get install espeak-ng")


class Speaker:
    """The kernel's voice. ``output``: ``device``, ``file`` or None (a device when there
    is one, else a file); ``mode``: how to read the operator's mode (default: the store)."""

    def __init__(self, kernel: Kernel, *, output: str | None = None,
                 mode: Callable[[], Awaitable[str]] | None = None,
                 files: Path | None = None) -> None:
        if "speech.started" not in kernel.events:
            raise RuntimeError("the speech events are not declared: load the adjutant-tts "
                               "plugin (adjutant_tts) into this kernel")
        self.kernel = kernel
        self.forced_output = output
        self.files = files or Path(kernel.home) / "speech"
        self._mode = mode or self._stored_mode
        self._queue: deque[Utterance] = deque()
        self._wake: Any = None
        self._idle: Any = None
        self.current: Utterance | None = None
        self.paused = False
        self._copilot: Copilot | None = None
        #: The text of the utterance being said, else of the last one said.
        self.last_text = ""
        self._output: Output | None = None  # the one playing, for pause and resume

    # -- what frontends call ----------------------------------------------------------

    async def say(self, text: str, *, source: str = "user", run_id: str | None = None,
                  path: str | Path | None = None, overlap: str | None = None,
                  engine: str | None = None, voice: str | None = None,
                  speed: float | None = None) -> Utterance | None:
        """Queue ``text``; returns its `Utterance` (await ``wait()`` for the end), or
        None when there is nothing to say or the mode is silent. ``path``: write the
        audio there instead of playing it (a file plays nothing, so any mode may);
        ``engine``, ``voice``, ``speed``: instead of the profile's ``speech`` ones."""
        text = text.strip()
        if not text or (path is None and await self._mode() in SILENT_MODES):
            return None
        preset = speech_settings(self.kernel)
        request = SpeechRequest(text=text, voice=voice or preset.voice, model=preset.model,
                                speed=speed or preset.speed)
        utterance = Utterance(text, request, engine or preset.engine, source, run_id,
                              Path(path) if path is not None else None)
        if (overlap or preset.overlap) == "interrupt":
            self._drop_queue("interrupted")
            if self.current is not None:
                self.current.cancel("interrupted")
        self._queue.append(utterance)
        self._poke()
        return utterance

    async def mode(self) -> str:
        """The operator's mode now (nothing plays in `SILENT_MODES`)."""
        return await self._mode()

    def stop(self, reason: str = "stopped") -> None:
        """Stop what is being said and everything queued; the device is released."""
        self._drop_queue(reason)
        if self.current is not None:
            self.current.cancel(reason)
        self.paused = False

    def pause(self) -> None:
        """Hold the audio now, also while the engine is still making the rest."""
        self.paused = True
        if self._output is not None:
            self._output.pause()

    def resume(self) -> None:
        self.paused = False
        if self._output is not None:
            self._output.resume()

    @property
    def speaking(self) -> bool:
        return self.current is not None or bool(self._queue)

    @property
    def audible(self) -> bool:
        """Speaking, and not already told to stop: what a stop key would act on."""
        return bool(self._queue) or (self.current is not None and not self.current.stopping)

    async def drain(self) -> None:
        """Wait until everything queued has been said."""
        import anyio

        while self.speaking:
            self._idle = anyio.Event()
            await self._idle.wait()

    # -- the worker --------------------------------------------------------------------

    async def serve(self) -> None:
        """Say queued utterances one after another, until cancelled (which stops the
        one being said and frees the device)."""
        import anyio

        try:
            while True:
                if not self._queue:
                    self._wake = anyio.Event()
                    await self._wake.wait()
                    continue
                utterance = self._queue.popleft()
                self.current = utterance
                self.last_text = utterance.text
                try:
                    await self._speak(utterance)
                finally:
                    self.current = None
                    if not self._queue and self._idle is not None:
                        self._idle.set()
        finally:
            self._drop_queue("stopped")

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _drop_queue(self, reason: str) -> None:
        while self._queue:
            dropped = self._queue.popleft()
            dropped.reason = reason
            dropped._done.set()
        if self.current is None and self._idle is not None:
            self._idle.set()

    async def _stored_mode(self) -> str:
        if self._copilot is None:
            from adjutant import Copilot

            self._copilot = Copilot(self.kernel)
        return await self._copilot.mode()

    def _output_for(self, utterance: Utterance) -> tuple[str, Path | None]:
        if utterance.path is not None:
            return "file", utterance.path
        kind = self.forced_output or self.kernel.env.get("ADJUTANT_SPEECH_OUTPUT") or (
            "file" if no_device_reason(self.kernel.env) else "device")
        if kind == "device":
            return "device", None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return "file", self.files / f"{stamp}-{utterance.id}.wav"

    async def _speak(self, u: Utterance) -> None:
        import anyio

        from adjutant import get_logger

        publish = self._publisher(u.run_id)
        output: Output | None = None
        started = time.perf_counter()
        try:
            if self._stopped(u) or (u.path is None and await self._mode() in SILENT_MODES):
                u.reason = u._stop_reason or "mode"
                return
            engine = pick_engine(self.kernel.speech_engines, u.engine)
            u.engine = engine.name
            u.output, u.path = self._output_for(u)
            publish(SpeechStarted(speech_id=u.id, text=u.text, engine=u.engine,
                                  output=u.output, source=u.source, voice=u.request.voice,
                                  path=str(u.path) if u.path else None))
            with anyio.CancelScope() as scope:
                u._scope = scope
                if u._stop_reason:
                    scope.cancel()
                last = 0.0
                async with closing_stream(engine.synthesize(u.request)) as chunks:
                    async for chunk in chunks:
                        if output is None:
                            u.first_audio_s = time.perf_counter() - started
                            output = self._open(u, chunk.sample_rate, chunk.channels)
                            self._output = output
                            (output.pause if self.paused else output.resume)()
                        output.write(chunk.pcm)
                        u.synthesized_ms += round(chunk.seconds * 1000)
                        last = self._progress(u, output, publish, last)
                if output is not None:
                    output.finish()
                    while not output.done():
                        (output.pause if self.paused else output.resume)()
                        last = self._progress(u, output, publish, last)
                        await anyio.sleep(0.02)
            u.reason = u._stop_reason or "finished"
        except SpeechError as exc:
            u.reason, u.error = "error", str(exc)
            get_logger(plugin="tts").warning("speech failed", error=u.error)
        except Exception as exc:  # an engine's bug must not take the operator down
            u.reason, u.error = "error", f"{type(exc).__name__}: {exc}"
            get_logger(plugin="tts").warning("speech failed", error=u.error)
        finally:
            if output is not None:
                self._output = None
                u.played_ms = output.played_ms()
                output.close()  # the device is free before anyone hears "stopped"
            if u.output is not None:
                publish(SpeechStopped(speech_id=u.id, reason=u.reason or "stopped",
                                      played_ms=u.played_ms, error=u.error))
            u._scope = None
            u._done.set()

    def _stopped(self, u: Utterance) -> bool:
        return u._stop_reason is not None

    def _open(self, u: Utterance, rate: int, channels: int) -> Output:
        if u.output == "device":
            try:
                return DeviceOutput(rate, channels)
            except Exception as exc:
                raise SpeechError(f"the audio device could not be opened ({exc})",
                                  hint="adjutant speak -o FILE writes the audio instead"
                                  ) from None
        assert u.path is not None
        return FileOutput(u.path, rate, channels)

    def _progress(self, u: Utterance, output: Output, publish: Callable[[Any], None],
                  last: float) -> float:
        now = time.monotonic()
        if now - last < PROGRESS_EVERY:
            return last
        u.played_ms = output.played_ms()
        publish(SpeechProgress(speech_id=u.id, state="paused" if self.paused else "playing",
                               played_ms=u.played_ms, synthesized_ms=u.synthesized_ms))
        return now

    def _publisher(self, run_id: str | None) -> Callable[[Any], None]:
        def publish(event: Any) -> None:
            self.kernel.bus.publish(event, run_id=run_id)
        return publish
