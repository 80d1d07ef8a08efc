"""The embedded default voice: hibari-tts, an 8 MB ONNX voice inside its wheel.

Nothing is downloaded, ever: hibari fetches its other voices from a hub on first use,
so this engine offers only the voice in the package (``heart``) and voices already in
hibari's cache, and refuses any other with the path to copy it to by hand.
Synthesis runs a sentence at a time in a worker thread; each sentence is a chunk, so
the first audio is out after the first sentence and a stop waits at most for the
sentence being computed (tens of milliseconds) before the engine is free.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

from adjutant_hookspecs import AudioChunk, SpeechError, SpeechRequest, VoiceInfo

__all__ = ["HibariEngine"]

DEFAULT_VOICE = "heart"


class HibariEngine:
    """The ``hibari`` speech engine (American and British English, 24 kHz)."""

    name = "hibari"
    description = "embedded voice (hibari-tts, Apache-2.0, in its wheel; offline)"
    streams = True

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()

    @staticmethod
    def installed() -> bool:
        import importlib.util

        return importlib.util.find_spec("hibari") is not None

    async def _model(self, voice: str) -> Any:
        import anyio

        return await anyio.to_thread.run_sync(self._get, voice)

    def _get(self, voice: str) -> Any:
        with self._lock:  # a thread lock: one engine may serve asyncio and trio kernels
            if voice not in self._models:
                self._models[voice] = self._load(voice)
            return self._models[voice]

    def _load(self, voice: str) -> Any:
        try:
            from hibari import Hibari
            from hibari.voices import VOICES, voice_path
        except ImportError as exc:
            raise SpeechError("the embedded voice is not installed (hibari-tts)",
                              hint="pip install hibari-tts, or use speech.engine "
                                   "espeak-ng") from exc
        if voice not in VOICES:
            raise SpeechError(f"hibari has no voice {voice!r}",
                              hint=f"one of: {', '.join(VOICES)}")
        try:
            path = voice_path(voice, download_missing=False)
        except FileNotFoundError as exc:
            raise SpeechError(
                f"hibari voice {voice!r} is not on this machine and Adjutant never "
                "downloads voices", hint=f"copy {VOICES[voice]['file']} to {exc.args[0]}, "
                f"or use the voice in the package, {DEFAULT_VOICE!r}") from None
        tts = Hibari(voice=voice, model=path, threads=self.threads)
        tts.phonemize("Ready.")  # loads the lexicon, tagger and OOV net now, not mid-answer
        return tts

    async def synthesize(self, request: SpeechRequest) -> AsyncIterator[AudioChunk]:
        import anyio

        if not 0.5 <= request.speed <= 2.0:
            raise SpeechError(f"hibari speaks at 0.5..2.0 times its pace, not {request.speed}")
        tts = await self._model(request.voice or DEFAULT_VOICE)
        sentences = await anyio.to_thread.run_sync(tts.phonemize, request.text)
        import numpy as np

        rng = np.random.default_rng()
        for phonemes in sentences:
            audio = await anyio.to_thread.run_sync(
                tts.from_ids, tts.ids(phonemes), request.speed, rng)
            pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
            if pcm:
                yield AudioChunk(pcm=pcm, sample_rate=int(tts.sample_rate))

    async def voices(self) -> list[VoiceInfo]:
        return _local_voices() if self.installed() else []

    async def aclose(self) -> None:
        self._models.clear()


def _local_voices() -> list[VoiceInfo]:
    """The voice in the package and those already in hibari's cache."""
    import os

    from hibari.voices import VOICES, cache_dir

    return [VoiceInfo(id=name, name=f"{v['language']} {v['gender']} ({v['accent']})",
                      language=v["language"])
            for name, v in VOICES.items()
            if v.get("bundled") or os.path.exists(os.path.join(cache_dir(), v["file"]))]
