"""Where each ``hearing`` miss of a traced recall run (``bench/copilot_agent.py --trace
DIR``) was lost: the meeting spoken again with espeak-ng, each cycle that held the
item's line heard again from the cycle's own start with Whisper base as the copilot
calls it, its raw segments (times, log-probability, compression ratio, no-speech
probability) shown before adjutant-stt's guards, and whether a word set of the item is
in them (``raw``) and in what the guards keep (``kept``); with the recording's prompt,
without it, without the VAD and with beam 5; then the line heard alone (beam 1 and 5).
Words in no hearing: garbled; in ``raw`` only: the guards; only without the VAD: the
VAD; ``skipped`` or a gap: passed over; the line before the cycle's start: a boundary.

    .venv/bin/python bench/copilot_hearing.py DIR --meetings FILE

The line an item came from is the one sharing most words with its word sets (a guess:
check it in the output).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "plugins" / "adjutant-copilot-agent"
                       / "tests"))
sys.path.insert(0, str(Path(__file__).parent))

RATE = 16_000
MODES = (("b1 prompt", {}), ("b1 none", {"prompt": False}), ("b1 novad", {"vad": False}),
         ("b5 prompt", {"beam": 5}))


def main() -> None:
    import meeting
    import msgspec
    import numpy as np
    import soundfile as sf
    from copilot_replay import replay

    from adjutant_copilot_agent import CopilotState
    from adjutant_copilot_agent._analysis import (
        passed_over,
        quiet_start,
        reread,
        skipped,
        vocabulary,
    )
    from adjutant_copilot_agent._sources import resample
    from adjutant_copilot_agent._state import merge, normalize
    from adjutant_hookspecs import CopilotCycleResult
    from adjutant_stt._model import load_model, model_dir, threads
    from adjutant_stt._transcribe import _guard

    parser = argparse.ArgumentParser()
    parser.add_argument("trace", type=Path)
    parser.add_argument("--meetings", type=Path, required=True)
    parser.add_argument("--audio", type=Path, default=Path("/tmp/copilot-hearing"))
    args = parser.parse_args()
    model = load_model(model_dir(), threads())
    scripts = {m.name: m for m in meeting.load_meetings(args.meetings)}

    def found(text: str, ways: list[set[str]]) -> bool:
        words = set(normalize(text).split())
        return any(way <= words for way in ways)

    def raw(audio: Any, prompt: str, beam: int = 1, vad: bool = True) -> list[Any]:
        pieces, _ = model.transcribe(
            audio, language="en", beam_size=beam, condition_on_previous_text=False,
            initial_prompt=prompt or None, log_prob_threshold=-1.0,
            compression_ratio_threshold=2.4, no_speech_threshold=0.6, temperature=[0.0],
            vad_filter=vad, vad_parameters={"min_silence_duration_ms": 500})
        return list(pieces)

    for path in sorted(args.trace.glob("*.json")):
        data = json.loads(path.read_text())
        script = scripts.get(data["meeting"])
        if script is None:
            continue
        misses = meeting.causes(replay(data["cycles"]), script)["hearing"]
        if not misses:
            continue
        folder = args.audio / path.stem
        folder.mkdir(parents=True, exist_ok=True)
        lines, t = [], 0.0  # as meeting.speak: each line, then 1 s of silence
        for n, (who, text) in enumerate(script.lines):
            wav = folder / f"line{n}.wav"
            if not wav.exists():
                subprocess.run(["espeak-ng", "-v", script.voices[who], "-s", "160", "-w",
                                str(wav), text], check=True, timeout=60)
            d, rate = sf.read(str(wav), dtype="float32")
            lines.append((t, t + len(d) / rate, text,
                          resample(d, rate).astype(np.float32) / 32768.0))
            t += len(d) / rate + 1.0
        whole = np.concatenate([np.concatenate([line[3], np.zeros(RATE, np.float32)])
                                for line in lines])
        lists = {"decisions": script.decisions, "action_items": script.actions,
                 "open_questions": script.questions}
        state, before = CopilotState(), []
        for c in data["cycles"]:
            before.append(state)
            result = reread(msgspec.convert(c["result"], CopilotCycleResult),
                            state.transcript, c["chunk_start_s"], c["chunk_seconds"])
            state = merge(state, result, chunk_start_s=c["chunk_start_s"],
                          chunk_seconds=c["chunk_seconds"], now_iso="2026-01-01T00:00:00Z")
        for miss in misses:
            name, item = miss.split(": ", 1)
            ways = lists[name][item]
            every = set().union(*ways)
            best = max(range(len(lines)),
                       key=lambda i: len(every & set(normalize(lines[i][2]).split())))
            lo, hi, text, alone = lines[best]
            print(f"\n### [{script.name}] {miss}\n  line {best} {lo:.1f}-{hi:.1f} s: {text}")
            kept = " ".join(s.text for s in state.transcript
                            if s.end_s > lo - 1 and s.start_s < hi + 1)
            print(f"  the run's transcript there: {kept}")
            for n, c in enumerate(data["cycles"]):
                start_s, seconds = c["chunk_start_s"], c["chunk_seconds"]
                if not (start_s < hi and lo < start_s + seconds):
                    continue
                segs, prev = c["result"]["transcript"], before[n]
                seen = {(round(s.start_s, 1), s.text) for s in prev.transcript}
                k = 0
                while k < len(segs) and (round(start_s + segs[k]["start_s"], 1),
                                         segs[k]["text"]) in seen:
                    k += 1
                chunk = whole[int(start_s * RATE):int((start_s + seconds) * RATE)]
                prompt = vocabulary(prev.transcript[:-1], [x.term for x in prev.key_concepts])
                skip = (int(segs[k - 1]["end_s"] * RATE) if k
                        else quiet_start(chunk) if prompt else 0)
                at = start_s + skip / RATE
                print(f"  cycle {n}: chunk {start_s:.1f}+{seconds:.1f} s, heard from {at:.1f}"
                      f" s; prompt {prompt[:70]!r}")
                if hi < at + 0.3:
                    print("    the line is before the hearing's start (the cycle before's)")
                    continue
                audio = chunk[skip:]
                for label, how in MODES:
                    said = prompt if how.get("prompt", True) else ""
                    pieces = raw(audio, said, int(how.get("beam", 1)),
                                 bool(how.get("vad", True)))
                    guarded, dropped = _guard(pieces, said or None)
                    near = [p for p in pieces
                            if p.end + at > lo - 0.5 and p.start + at < hi + 0.5]
                    kept_near = " ".join(s.text for s in guarded
                                         if s.end + at > lo - 0.5 and s.start + at < hi + 0.5)
                    gaps = [(round(a / RATE + at, 1), round(b / RATE + at, 1)) for a, b in
                            passed_over(pieces, (audio * 32768).astype(np.int16))]
                    in_raw = found(" ".join(p.text for p in near), ways)
                    print(f"    {label}: raw={'Y' if in_raw else 'n'}"
                          f" kept={'Y' if found(kept_near, ways) else 'n'}"
                          f" skipped={skipped(pieces)} gaps={gaps}")
                    for p in near:
                        print(f"      [{p.start + at:.1f}-{p.end + at:.1f} lp={p.avg_logprob:.2f} "
                              f"cr={p.compression_ratio:.1f} ns={p.no_speech_prob:.2f}] "
                              f"{p.text.strip()[:200]}")
                    if dropped:
                        print(f"      dropped: {[d[:160] for d in dropped]}")
            for beam in (1, 5):
                heard = " ".join(p.text for p in raw(alone, "", beam)).strip()
                print(f"  line alone b{beam}: {'Y' if found(heard, ways) else 'n'} {heard}")


if __name__ == "__main__":
    main()
