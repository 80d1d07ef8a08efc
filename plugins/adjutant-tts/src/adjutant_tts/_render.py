"""Text to a WAV file with no kernel: for scripts, tests and the speech-in round trip
(text -> the default voice -> a file that speech-to-text reads back)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adjutant_hookspecs import SpeechEngine, SpeechError, SpeechRequest

from ._streams import closing_stream
from ._wav import write_wav

__all__ = ["render_wav", "synthesize_to_wav"]


async def synthesize_to_wav(engine: SpeechEngine, text: str, path: str | Path, *,
                            voice: str | None = None, speed: float = 1.0,
                            model: str | None = None) -> Path:
    """Say ``text`` with ``engine`` into a 16-bit WAV at ``path``; returns the path."""
    pcm, rate, channels = bytearray(), 0, 1
    request = SpeechRequest(text=text, voice=voice, model=model, speed=speed)
    async with closing_stream(engine.synthesize(request)) as chunks:
        async for chunk in chunks:
            if rate and (chunk.sample_rate, chunk.channels) != (rate, channels):
                raise SpeechError(f"{engine.name} changed its audio format mid-utterance")
            rate, channels = chunk.sample_rate, chunk.channels
            pcm += chunk.pcm
    if not pcm:
        raise SpeechError(f"{engine.name} produced no audio for {text[:40]!r}")
    return write_wav(path, bytes(pcm), rate, channels)


def render_wav(text: str, path: str | Path, *, engine: str = "hibari",
               voice: str | None = None, speed: float = 1.0) -> Path:
    """Synchronous: ``text`` in the default voice (``engine="hibari"``, 24 kHz mono) or
    with ``espeak-ng`` (22.05 kHz), written to ``path``. Offline; returns the path.

    Example (the speech-in round trip)::

        from adjutant_tts import render_wav
        wav = render_wav("list python processes", tmp_path / "request.wav")
    """
    import anyio

    from ._espeak import EspeakEngine
    from ._hibari import HibariEngine

    engines: dict[str, Any] = {"hibari": HibariEngine, "espeak-ng": EspeakEngine}
    if engine not in engines:
        raise ValueError(f"engine must be one of {', '.join(engines)}, not {engine!r}")
    instance = engines[engine]()

    async def run() -> Path:
        try:
            return await synthesize_to_wav(instance, text, path, voice=voice, speed=speed)
        finally:
            await instance.aclose()

    return anyio.run(run)
