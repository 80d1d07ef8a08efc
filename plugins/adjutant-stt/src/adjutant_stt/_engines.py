"""Speech recognizers, chosen by name: the embedded Whisper (``whisper``, on this
machine, the default) and any a plugin registers through ``register_speech_recognizers``
(adjutant-openrouter's ``openrouter`` sends the recording to a hosted model).

A remote recognizer is never chosen implicitly: only the profile's ``plugins.stt.engine``
or ``--engine`` names one, there is no fallback to it, and `consent` must say yes
before it gets any audio (`remote_transcript`)."""

from __future__ import annotations

import io
import time
from typing import TYPE_CHECKING, Any

from adjutant_hookspecs import RecognitionRequest, SpeechError, SpeechRecognizer

from ._errors import HeardNothing, SttError
from ._records import SpeechSentRecord
from ._settings import listen_settings
from ._transcribe import SAMPLE_RATE, Transcript

if TYPE_CHECKING:
    from adjutant import Copilot
    from adjutant_hookspecs import Kernel

__all__ = ["HOOK", "WHISPER", "Whisper", "has_speech", "pick", "remote_transcript",
           "wav_bytes"]

HOOK = "register_speech_recognizers"
WHISPER = "whisper"


class Whisper:
    """The embedded faster-whisper (Whisper base, int8, CPU) as a `SpeechRecognizer`,
    for other plugins; adjutant-stt itself calls `transcribe` for the full `Transcript`."""

    name = WHISPER
    remote = False
    destination = "this machine"
    model = "whisper-base"
    description = "faster-whisper, Whisper base int8 on the CPU (ships with adjutant-stt)"

    async def recognize(self, request: RecognitionRequest) -> str:
        import anyio

        from ._transcribe import transcribe

        def run() -> str:
            from faster_whisper import decode_audio

            try:
                samples = decode_audio(io.BytesIO(request.audio), sampling_rate=SAMPLE_RATE)
            except Exception as exc:  # PyAV's own error types
                raise SpeechError(f"the audio is not a recording this can read ({exc})") \
                    from exc
            try:
                return transcribe(samples, language=request.language).text
            except HeardNothing:
                return ""
            except SttError as exc:
                raise SpeechError(str(exc), hint=exc.hint) from exc

        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)


def pick(kernel: Kernel, name: str | None = None) -> SpeechRecognizer:
    """The recognizer named ``name`` (None: the profile's ``plugins.stt.engine``), from
    ``kernel.speech_recognizers``. An unknown name is an error naming the registered
    ones (and the plugins that failed to register theirs); nothing is chosen in its
    place."""
    if name is None:
        name = listen_settings(kernel).engine
    found = kernel.speech_recognizers.get(name)
    if found is not None:
        return found
    if name == WHISPER and WHISPER not in kernel.speech_recognizers:
        return Whisper()  # a host that calls these functions without loading the plugin
    broken = "; ".join(f"{p.name}: {p.error}" for p in kernel.plugins
                       if p.status == "failed" and HOOK in (p.error or ""))
    raise SttError(f"no speech recognizer named {name!r} (installed: "
                   f"{', '.join(sorted(kernel.speech_recognizers))})"
                   + (f"; not loaded: {broken}" if broken else ""),
                   hint="choose one of those with --engine or the profile's "
                        "plugins.stt.engine (`whisper` transcribes on this machine); remote "
                        "engines come with their plugins, e.g. pip install adjutant-openrouter")


def wav_bytes(samples: Any) -> bytes:
    """16 kHz mono float32 samples as a WAV file (16-bit PCM): what a remote engine is
    sent (decoded and re-encoded here, so no tag or metadata of the file goes along)."""
    import wave

    import numpy as np

    pcm = (np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0) * 32767).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(pcm.tobytes())
    return out.getvalue()


def has_speech(samples: Any) -> float:
    """Seconds of speech in ``samples``, by the Silero VAD on this machine (a recording
    with none is never sent anywhere)."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    spans = get_speech_timestamps(samples, VadOptions(min_speech_duration_ms=200))
    return float(sum(s["end"] - s["start"] for s in spans)) / SAMPLE_RATE


async def remote_transcript(copilot: Copilot, recognizer: SpeechRecognizer, samples: Any, *,
                            language: str | None, model: str | None) -> Transcript:
    """``samples`` transcribed by a recognizer the user consented to (`consent`): the
    recording as WAV, the words back. What was sent (engine, host, model, seconds,
    bytes; never the audio) and how it went is in the action log."""
    import anyio

    audio = await anyio.to_thread.run_sync(wav_bytes, samples)
    speech = await anyio.to_thread.run_sync(has_speech, samples)
    duration = len(samples) / SAMPLE_RATE
    request = RecognitionRequest(audio=audio, language=language, model=model)
    started = time.perf_counter()
    outcome = "interrupted"
    try:
        text = (await recognizer.recognize(request)).strip()
        outcome = "ok" if text else "no words"
        if not text:
            raise HeardNothing(f"{recognizer.name} returned no words for {duration:.1f} s "
                               "of audio")
    except SpeechError as exc:
        outcome = f"failed: {exc.message}"
        raise SttError(f"{recognizer.name}: {exc.message}", hint=exc.hint) from exc
    except SttError:
        raise
    except Exception as exc:  # a recognizer that broke its contract: still one line
        outcome = f"failed: {type(exc).__name__}: {exc}"
        raise SttError(f"{recognizer.name} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        with anyio.CancelScope(shield=True):
            await copilot.log.record(SpeechSentRecord(
                engine=recognizer.name, host=recognizer.destination,
                model=model or getattr(recognizer, "model", None),
                seconds=round(duration, 3), bytes=len(audio), outcome=outcome[:300]))
    return Transcript(text=text, language=language or "", duration_s=round(duration, 3),
                      speech_s=round(speech, 3),
                      elapsed_s=round(time.perf_counter() - started, 3),
                      engine=recognizer.name)
