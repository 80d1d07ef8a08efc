"""Text-to-speech: time to first audio and real-time factor of the speech engines.

For the embedded voice (hibari) and espeak-ng, on this machine's cores:

- load: the first synthesis in a fresh process (model, lexicon, tagger loaded);
- time to first audio (TTFA): from asking for a sentence to holding its first audio
  chunk, the model already loaded (goal: at most 300 ms for a sentence);
- real-time factor (RTF): synthesis time over the duration of the audio made, for a
  paragraph (below 1 is faster than speaking it; lower is better);
- through the speech service: TTFA of `Speaker.say` in a kernel (queue, mode check,
  events, file output included).

Run: ``.venv/bin/python bench/tts.py [--quick]``. Figures, never a pass/fail.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from contextlib import aclosing
from typing import Any

import anyio

SENTENCE = "The build finished and all two hundred tests passed."
PARAGRAPH = (
    "I listed the Python processes on this machine. There are four of them: the "
    "language server, two test workers and a notebook kernel. The test workers have "
    "been running for twelve minutes and use most of the memory. Nothing looks stuck, "
    "but the notebook kernel has been idle since this morning."
)
GOAL_TTFA_MS = 300


async def first_audio(engine: Any, text: str) -> tuple[float, float, float]:
    """(seconds to the first chunk, seconds to the last, seconds of audio made)."""
    from adjutant_hookspecs import SpeechRequest

    start = time.perf_counter()
    first, audio = None, 0.0
    async with aclosing(engine.synthesize(SpeechRequest(text=text))) as chunks:
        async for chunk in chunks:
            first = first if first is not None else time.perf_counter() - start
            audio += chunk.seconds
    return first or 0.0, time.perf_counter() - start, audio


async def engine_figures(name: str, engine: Any, repeats: int) -> None:
    _, load_total, _ = await first_audio(engine, "Warm up.")
    ttfa = [(await first_audio(engine, SENTENCE))[0] for _ in range(repeats)]
    runs = [await first_audio(engine, PARAGRAPH) for _ in range(max(1, repeats // 2))]
    rtf = [total / audio for _, total, audio in runs if audio]
    median_ms = statistics.median(ttfa) * 1000
    verdict = "meets" if median_ms <= GOAL_TTFA_MS else "misses"
    print(f"{name:10}  first synthesis (load) {load_total * 1000:7.0f} ms   "
          f"TTFA sentence median {median_ms:6.0f} ms (min {min(ttfa) * 1000:.0f}, "
          f"{verdict} the {GOAL_TTFA_MS} ms goal)   RTF paragraph "
          f"{statistics.median(rtf):.3f} ({runs[0][2]:.1f} s of audio)")


async def service_figures(repeats: int) -> None:
    import adjutant_tts
    from adjutant.testing import Harness

    async with Harness(adjutant_tts.TtsPlugin, env={"ADJUTANT_SPEECH_OUTPUT": "file"}) as h:
        speaker = adjutant_tts.speaker_for(h.kernel)
        warm = await speaker.say("Warm up.")
        assert warm is not None
        await warm.wait()
        times = []
        for _ in range(repeats):
            u = await speaker.say(SENTENCE)
            assert u is not None
            await u.wait()
            times.append((u.first_audio_s or 0.0) * 1000)
    print(f"{'service':10}  TTFA through Speaker.say (hibari, file output) median "
          f"{statistics.median(times):.0f} ms over {repeats}")


async def main(quick: bool) -> None:
    from adjutant_tts import EspeakEngine, HibariEngine

    repeats = 3 if quick else 10
    with tempfile.TemporaryDirectory():
        await engine_figures("hibari", HibariEngine(), repeats)
        if shutil.which("espeak-ng"):
            await engine_figures("espeak-ng", EspeakEngine(), repeats)
        else:
            print("espeak-ng   not installed: skipped")
        await service_figures(repeats)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    anyio.run(main, parser.parse_args().quick)
