"""Speech to text on this machine (adjutant-stt): Whisper base, int8, on 2 CPU threads.

Measures, on espeak-ng speech (deterministic, robotic):

* real-time factor: seconds spent transcribing per second of audio, for a ~25 s
  passage (several requests with pauses), median of N runs. Goal: <= 0.15.
* end of speech to transcript, for a ~5 s utterance fed at speaking pace in place of
  the microphone: from the last spoken sample to the text, with the recording ended
  by the pause (VAD, 0.8 s of silence) and by the user (Enter at the end of speech:
  transcription only). Goal: <= 1.5 s.
* model load time (once per process) and the word error rate of both inputs.

Run: ``.venv/bin/python bench/stt.py [--quick] [--runs N]`` (needs espeak-ng).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RTF_GOAL = 0.15
LATENCY_GOAL_S = 1.5
UTTERANCE = ("Please list the Python processes that use the most memory, "
             "then show me the last error in the build log.")
PASSAGE = ["show me what's in notes.txt", "search for warehouse in the config folder",
           "is anything listening on port eight thousand", "switch to the main branch",
           "run the tests with pytest and tell me which ones fail",
           "create a feature branch called voice input and commit my changes",
           "how much disk space is left on this machine"]


def espeak(text: str, path: Path) -> Path:
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(path), text], check=True)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one run each (CI)")
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    runs = 1 if opts.quick else opts.runs
    os.environ.setdefault("ADJUTANT_STT_THREADS", "2")
    if shutil.which("espeak-ng") is None:
        print("skipped: espeak-ng is not installed (./dev installs it)")
        return 0
    try:
        import numpy as np

        from adjutant_stt._model import load_model, model_dir, threads
        from adjutant_stt._record import file_chunks, record_utterance
        from adjutant_stt._transcribe import decode_file, transcribe
        from adjutant_stt.wer import word_errors
    except ImportError:
        print("skipped: adjutant-stt is not installed")
        return 0

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        load_model(model_dir(), threads())
        print(f"model: Whisper base int8, {threads()} threads, loaded in "
              f"{time.perf_counter() - started:.2f} s")

        pause = np.zeros(8000, dtype=np.float32)  # 0.5 s between requests
        passage = np.concatenate([part for text in PASSAGE for part in (
            decode_file(espeak(text, folder / "p.wav")), pause)])
        seconds = passage.size / 16_000
        transcribe(passage[:16_000 * 3])  # warm-up
        rtfs, text = [], ""
        for _ in range(runs):
            started = time.perf_counter()
            text = transcribe(passage).text
            rtfs.append((time.perf_counter() - started) / seconds)
        wrong, total = word_errors(" ".join(PASSAGE), text)
        rtf = statistics.median(rtfs)
        print(f"real-time factor: {rtf:.3f} for {seconds:.1f} s of speech (median of "
              f"{runs}; goal <= {RTF_GOAL}) {'OK' if rtf <= RTF_GOAL else 'ABOVE GOAL'}; "
              f"word error rate {wrong / total:.1%}")

        utterance = espeak(UTTERANCE, folder / "u.wav")
        length = decode_file(utterance).size / 16_000
        by_pause, by_user = [], []
        for _ in range(runs):
            recording = record_utterance(file_chunks(str(utterance), realtime=True))
            heard = transcribe(recording.samples)
            by_pause.append(time.perf_counter() - recording.speech_ended_at)
            started = time.perf_counter()
            heard = transcribe(decode_file(utterance))
            by_user.append(time.perf_counter() - started)
        wrong, total = word_errors(UTTERANCE, heard.text)
        pause_s, user_s = statistics.median(by_pause), statistics.median(by_user)
        print(f"end of speech to transcript, {length:.1f} s utterance (median of {runs}; "
              f"goal <= {LATENCY_GOAL_S} s): ended by the pause {pause_s:.2f} s "
              f"({'OK' if pause_s <= LATENCY_GOAL_S else 'ABOVE GOAL'}; includes the "
              f"0.8 s of silence that ends it), ended by the user {user_s:.2f} s "
              f"({'OK' if user_s <= LATENCY_GOAL_S else 'ABOVE GOAL'}); word error "
              f"rate {wrong / total:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
