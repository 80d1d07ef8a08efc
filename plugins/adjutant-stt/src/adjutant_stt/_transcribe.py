"""Speech to text on the machine: faster-whisper with guards against Whisper's known
failure modes. Whisper invents text for silence and noise ("Thank you."), loops on a
word or phrase, and carries a bad guess from one window into the next; so:

* the Silero VAD inside faster-whisper cuts silence out first (no speech: `HeardNothing`);
* no conditioning on the previous window's text (loops cannot feed themselves);
* temperature fallback when a window's average log-probability is below -1 or its
  compression ratio (repetition) above 2.4, and the window is dropped if it stays so;
* a window Whisper itself rates as probably not speech is dropped;
* a word repeated four or more times in a row is kept once; the vocabulary hint is
  never returned as a transcript.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._errors import HeardNothing, SttError
from ._model import load_model, model_dir, threads

__all__ = ["SAMPLE_RATE", "Segment", "Transcript", "decode_file", "transcribe"]

SAMPLE_RATE = 16_000
#: Words of the operator's domain, so "Python" is not heard as "iPhone": a hint to the
#: first window only (never conditioning on what was said before).
VOCABULARY = ("A request to a computer assistant about files, folders, processes, Python, "
              "git and the shell.")
LOG_PROB_THRESHOLD = -1.0
COMPRESSION_RATIO_THRESHOLD = 2.4
NO_SPEECH_THRESHOLD = 0.6
_REPEATS = re.compile(r"\b(\w+)(?:[\s,.!?-]+\1\b){3,}", re.IGNORECASE)


@dataclass(frozen=True)
class Segment:
    start: float
    end: float
    text: str
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str
    #: Seconds of audio heard, and of speech in it (after the VAD).
    duration_s: float
    speech_s: float
    #: Seconds spent transcribing.
    elapsed_s: float
    segments: tuple[Segment, ...] = field(default=())
    #: Windows dropped by the guards (what they held, and why).
    dropped: tuple[str, ...] = field(default=())
    #: The recognizer that heard it (``whisper``: on this machine).
    engine: str = "whisper"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def decode_file(path: str | os.PathLike[str]) -> Any:
    """A recording as 16 kHz mono float32 (any format FFmpeg reads)."""
    source = Path(path)
    if not source.exists():
        raise SttError(f"no such file: {source}")
    if not source.is_file():
        raise SttError(f"not a file: {source}")
    if source.stat().st_size == 0:
        raise HeardNothing(f"{source} is empty")
    from faster_whisper import decode_audio

    try:
        return decode_audio(str(source), sampling_rate=SAMPLE_RATE)
    except Exception as exc:  # PyAV raises its own error types for every bad input
        if type(exc).__module__.startswith("av"):
            raise SttError(f"{source} is not audio this can read ({type(exc).__name__}: "
                           f"{exc})", hint="give a WAV, FLAC, MP3 or OGG recording") from exc
        raise


def transcribe(audio: Any, *, language: str | None = "en",
               vocabulary: str | None = VOCABULARY, beam_size: int = 5,
               temperature: Sequence[float] = (0.0, 0.2, 0.4, 0.6)) -> Transcript:
    """``audio``: a file path, or 16 kHz mono float32 samples (a numpy array).
    ``beam_size`` 1 and ``temperature`` ``(0.0,)`` (no fallback) trade a little accuracy
    for speed (the copilot agent's cycles, which must keep up with a recording).

    Raises `HeardNothing` when no speech survives the VAD and the guards, `SttError`
    for a file that is missing or no audio, or a model that does not load."""
    import numpy as np

    samples = decode_file(audio) if isinstance(audio, str | os.PathLike) else audio
    samples = np.asarray(samples, dtype=np.float32).reshape(-1)
    duration = samples.size / SAMPLE_RATE
    if samples.size < SAMPLE_RATE // 10:
        raise HeardNothing("the recording is shorter than 0.1 s")
    if not np.isfinite(samples).all():
        raise SttError("the audio holds samples that are not numbers (NaN or infinite)")
    model = load_model(model_dir(), threads())
    started = time.perf_counter()
    try:
        pieces, info = model.transcribe(
            samples, language=language, beam_size=beam_size,
            condition_on_previous_text=False, initial_prompt=vocabulary,
            log_prob_threshold=LOG_PROB_THRESHOLD,
            compression_ratio_threshold=COMPRESSION_RATIO_THRESHOLD,
            no_speech_threshold=NO_SPEECH_THRESHOLD,
            temperature=list(temperature),
            vad_filter=True, vad_parameters={"min_silence_duration_ms": 500})
        kept, dropped = _guard(list(pieces), vocabulary)
    except (RuntimeError, ValueError) as exc:
        raise SttError(f"transcription failed: {exc}") from exc
    elapsed = time.perf_counter() - started
    text = " ".join(s.text for s in kept).strip()
    if not text:
        why = "only sounds that are not speech" if dropped else "no speech in the audio"
        raise HeardNothing(why if info.duration_after_vad or dropped else
                           f"no speech in {duration:.1f} s of audio")
    return Transcript(text=text, language=info.language, duration_s=round(duration, 3),
                      speech_s=round(info.duration_after_vad, 3),
                      elapsed_s=round(elapsed, 3), segments=tuple(kept),
                      dropped=tuple(dropped))


def _guard(pieces: Sequence[Any], vocabulary: str | None) -> tuple[list[Segment], list[str]]:
    """The windows worth keeping, and why the others went."""
    kept: list[Segment] = []
    dropped: list[str] = []
    hint = _words(vocabulary or "")
    for piece in pieces:
        text = _REPEATS.sub(r"\1", piece.text.strip())
        why = ""
        if piece.avg_logprob < LOG_PROB_THRESHOLD:
            why = f"unsure (average log-probability {piece.avg_logprob:.2f})"
        elif piece.compression_ratio > COMPRESSION_RATIO_THRESHOLD:
            why = f"repetitive (compression ratio {piece.compression_ratio:.1f})"
        elif piece.no_speech_prob > NO_SPEECH_THRESHOLD and piece.avg_logprob < -0.5:
            why = f"probably not speech (p={piece.no_speech_prob:.2f})"
        elif len(_words(text)) >= 4 and f" {' '.join(_words(text))} " in f" {' '.join(hint)} ":
            why = "only the vocabulary hint echoed back"
        elif not _words(text):
            why = "no words"
        if why:
            dropped.append(f"{text!r}: {why}")
            continue
        kept.append(Segment(start=round(piece.start, 2), end=round(piece.end, 2), text=text,
                            avg_logprob=round(piece.avg_logprob, 3),
                            compression_ratio=round(piece.compression_ratio, 2),
                            no_speech_prob=round(piece.no_speech_prob, 3)))
    return kept, dropped


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())
