"""The live-recording copilot: one cycle for 65 s of audio on this machine, split into
speech-to-text and analysis (goal: under 20 s in all, so a 30 s cycle keeps up); the
recall of a scripted meeting's items on the embedded models; and the memory of a
simulated long recording (goal: flat, not growing with its length).

    nice -n 10 .venv/bin/python bench/copilot_agent.py [--quick] [--only memory|cycle|recall]
        [--meeting NAME[,NAME...]] [--meetings FILE] [--model PRESET] [--beam N]
        [--voice espeak-ng|hibari]

``--meeting`` picks the scripted meetings of ``tests/meeting.py`` (all of them by
default); ``--meetings FILE`` runs the meetings of a JSON file instead (a list of
objects, or ``{"meetings": [...]}``, with the fields of ``Meeting``: ``title`` (or
``name``), ``voices`` (speaker to espeak-ng voice), ``lines`` ([speaker, text] pairs),
``decisions``, ``actions`` and ``questions`` (item to a list of word lists)). Recall is
printed per meeting and in all, strict (in its own list) and anywhere, with where each
miss was lost (``meeting.causes``). ``--model`` names the llama.cpp preset of the cycle and
the recall (default: the embedded ``qwen2.5-coder-0.5b``; ``qwen2.5-coder-1.5b`` is the
larger one); ``--beam`` Whisper's beam in each cycle (the setting ``stt_beam_size``: 1 by
default, 5 the careful hearing); ``--voice`` who speaks the meetings: espeak-ng's
formant voices (the default, as in the end-to-end test), or ``hibari``, adjutant-tts's
embedded neural voice (one voice, each speaker at a pitch of their own), closer to the
people a recording hears.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parents[1] / "plugins" / "adjutant-copilot-agent"
                       / "tests"))


#: The llama.cpp preset the cycle and the recall run on (``--model``).
MODEL = "qwen2.5-coder-0.5b"
#: Whisper's beam in each cycle (``--beam``: the setting ``stt_beam_size``).
BEAM = 1
#: Who speaks the scripted meetings (``--voice``): espeak-ng, or the embedded hibari.
VOICE = "espeak-ng"


def _profile() -> Any:
    from adjutant import ModelPreset, Profile

    return Profile(model=ModelPreset(provider="llama-cpp", model=MODEL),
                   plugins={"copilot-agent": {"stt_beam_size": BEAM}})


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def one_cycle(folder: Path, seconds: float) -> None:
    import meeting
    import numpy as np
    import soundfile as sf

    from adjutant.testing import Harness
    from adjutant_copilot_agent import CopilotAgentPlugin, TranscribeThenAnalyze
    from adjutant_copilot_agent._sources import resample
    from adjutant_copilot_agent._wav import wav_bytes
    from adjutant_hookspecs import CopilotRequest
    from adjutant_llamacpp import LlamaCpp

    spoken = meeting.speak(folder)
    data, rate = sf.read(str(spoken), dtype="float32")
    pcm = resample(data, rate)
    reps = int(np.ceil(seconds * 16_000 / len(pcm)))
    audio = wav_bytes(np.tile(pcm, reps)[: int(seconds * 16_000)].tobytes())
    provider = LlamaCpp()
    async with Harness(CopilotAgentPlugin, provider=provider, profile=_profile()) as h:  # type: ignore[arg-type]
        analyzer = TranscribeThenAnalyze()
        await analyzer.copilot_analyze(h.kernel, provider, CopilotRequest(audio=wav_bytes(
            pcm[:16_000].tobytes())))  # warm: models loaded once, as in a running agent
        started, cpu = time.perf_counter(), _cpu_s()
        result = await analyzer.copilot_analyze(h.kernel, provider,
                                                CopilotRequest(audio=audio))
        total, cpu = time.perf_counter() - started, _cpu_s() - cpu
        t = dict(provider.timings)
    print(f"one cycle ({MODEL}, Whisper beam {BEAM}), {seconds:.0f} s of audio: "
          f"speech-to-text {result.stt_s:.1f} s, "
          f"analysis {result.analysis_s:.1f} s, total {total:.1f} s (goal < 20 s); "
          f"user+system CPU {cpu:.1f} s")
    print(f"  analysis: {t.get('prompt_tokens', 0)} prompt tokens evaluated (the cached "
          f"system prefix aside), first token after {t.get('first_token_s', 0):.1f} s, "
          f"{t.get('generated_tokens', 0)} generated at {t.get('per_token_s', 0):.3f} s each "
          f"(+{t.get('forced_tokens', 0)} forced by the grammar)")
    print(f"  model answer: {len(result.response)} chars; items: "
          f"{len(result.decisions)} decisions, {len(result.action_items)} action items; "
          f"transcript: {len(result.transcript)} segments")
    print(f"  answer: {result.response}")


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def recall_run(folder: Path, factor: float, script: Any,
                     totals: list[tuple[str, dict[str, Any]]], trace: Path | None = None) -> None:
    import meeting

    from adjutant.testing import Harness
    from adjutant_copilot_agent import (
        CopilotAgent,
        CopilotAgentPlugin,
        CopilotAgentSettings,
        FastClock,
        Recorder,
    )
    from adjutant_copilot_agent._sources import from_file
    from adjutant_llamacpp import LlamaCpp

    spoken = meeting.speak(folder, meeting=script, engine=VOICE)
    cycles: list[dict[str, Any]] = []
    if trace is not None:  # each cycle's result as merged, for copilot_replay.py
        import msgspec

        from adjutant_copilot_agent import _agent

        real_merge = _agent.merge

        def merge(state: Any, result: Any, **kw: Any) -> Any:
            cycles.append({"result": msgspec.to_builtins(result), **kw})
            return real_merge(state, result, **kw)

        _agent.merge = merge  # type: ignore[assignment]
    clock = FastClock(factor)
    # the figure is the recall: a busy machine must not turn it into timeouts
    settings = CopilotAgentSettings(cycle_interval=30, audio_overlap=5, analysis_timeout=900)
    async with Harness(CopilotAgentPlugin, provider=LlamaCpp(),
                       profile=_profile()) as h:  # type: ignore[arg-type]
        recorder = Recorder(h.kernel.home, "bench")
        recorder.open()
        started = time.perf_counter()
        async with CopilotAgent.running(h.kernel, clock=clock, settings=settings) as agent:
            await recorder.record(from_file(spoken, speed=1.0, sleep=clock.sleep))
            await agent.finished.wait()
        took = time.perf_counter() - started
        from adjutant_copilot_agent._events import CopilotError

        for envelope in h.events.envelopes:
            if isinstance(envelope.event, CopilotError):
                print(f"  cycle {envelope.event.cycle} failed: {envelope.event.error}")
        got = meeting.recall(agent.state, script)
        got["causes"] = meeting.causes(agent.state, script)
        meta = agent.state.cycle_metadata
    if trace is not None:
        import json

        _agent.merge = real_merge  # type: ignore[assignment]
        path = trace / f"{script.name.split(' (')[0].replace(' ', '-')}.json"

        def write() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"meeting": script.name, "cycles": cycles}))

        await anyio.to_thread.run_sync(write)
    seconds = recorder.session.seconds if recorder.session else 0
    print(f"scripted meeting, {script.name} ({seconds:.0f} s, "
          f"clock x{factor:g}): {meta.cycle_number} cycles ({meta.failed_cycles} failed) "
          f"in {took:.0f} s")
    print(f"  recall ({MODEL}, Whisper beam {BEAM}, voice {VOICE}): strict {got['strict']:.0%}, "
          f"anywhere {got['anywhere']:.0%} of {got['total']} items (goal 80%); "
          f"{got['listed']} items listed, {got['extra']} naming no scripted one")
    for name in ("decisions", "action_items", "open_questions"):
        print(f"    {name}: " + ", ".join(f"{k}: {'yes' if v else 'no'}"
                                          for k, v in got[name].items()))
    state = agent.state
    for name in ("decisions", "action_items", "open_questions"):
        print(f"    found {name}: " + " | ".join(i.text for i in getattr(state, name)))
    for cause, items in got["causes"].items():
        for item in items:
            print(f"    miss ({cause}) {item}")
    totals.append((script.name, got))


def print_totals(totals: list[tuple[str, dict[str, Any]]]) -> None:
    """Recall per meeting and over all their items (strict: in the item's own list)."""
    if not totals:
        return
    items = sum(got["total"] for _, got in totals)
    strict = sum(round(got["strict"] * got["total"]) for _, got in totals)
    anywhere = sum(round(got["anywhere"] * got["total"]) for _, got in totals)
    print("recall per meeting (strict / anywhere):")
    for name, got in totals:
        print(f"  {name}: {got['strict']:.0%} / {got['anywhere']:.0%} of {got['total']}; "
              f"{got['listed']} listed, {got['extra']} extra")
    print(f"  all {len(totals)} meetings: strict {strict / items:.0%} ({strict} of {items}), "
          f"anywhere {anywhere / items:.0%} ({anywhere} of {items}) (goal 80%); "
          f"{sum(g['listed'] for _, g in totals)} items listed, "
          f"{sum(g['extra'] for _, g in totals)} naming no scripted one")
    if all("causes" in got for _, got in totals):
        print_causes(totals)


def print_causes(totals: list[tuple[str, dict[str, Any]]]) -> None:
    """Where each item missed in its own list was lost (``meeting.causes``): a column
    per cause, a row per meeting."""
    import meeting

    width = max(len(name) for name, _ in totals)
    print("misses by cause (hearing: not in the transcript; cues-none: heard, flagged by "
          "nothing; cues-wrong: the cues flag it in another list; filing: the model's item "
          "in another list; merging: the cues over the whole transcript file it, the "
          "cycles lost it):")
    print(f"  {'meeting':<{width}}  " + "  ".join(f"{c:>10}" for c in meeting.CAUSES))
    sums = dict.fromkeys(meeting.CAUSES, 0)
    for name, got in totals:
        row = {c: len(got["causes"][c]) for c in meeting.CAUSES}
        for c in row:
            sums[c] += row[c]
        print(f"  {name:<{width}}  " + "  ".join(f"{row[c]:>10}" for c in meeting.CAUSES))
    print(f"  {'all':<{width}}  " + "  ".join(f"{sums[c]:>10}" for c in meeting.CAUSES))


async def long_recording(folder: Path, minutes: float) -> None:
    """The recorder writing ``minutes`` of audio, and every simulated 30 s a cycle: its
    chunk extracted from the file, a result (about 80 words heard, two items) merged
    into the state and the state encoded as the store saves it. The process's RSS every
    10 simulated minutes (goal: flat), and the saved state's size (the transcript is
    kept, so it grows: about 1 KB a cycle)."""
    import numpy as np

    from adjutant_copilot_agent import CopilotState, Recorder
    from adjutant_copilot_agent._state import encode_state, merge
    from adjutant_copilot_agent._wav import extract_chunk
    from adjutant_hookspecs import CopilotCycleResult, CopilotQuestion, TranscriptSegment

    recorder = Recorder(folder / "home", "bench")
    recorder.open()
    block = (np.sin(np.arange(8000) / 5) * 3000).astype("<i2").tobytes()  # 0.5 s
    state = CopilotState()
    saved = 0
    rows: list[tuple[float, float, int]] = []

    async def blocks():  # type: ignore[no-untyped-def]
        nonlocal state, saved
        for n in range(int(minutes * 120)):
            yield block
            if n % 60 == 59:  # every 30 s of audio, a cycle
                chunk = extract_chunk(recorder.audio, 30, 5)
                cycle = n // 60
                words = " ".join(f"word{cycle}x{i}" for i in range(80))
                result = CopilotCycleResult(
                    updated_summary=f"Summary after cycle {cycle}. " * 8,
                    decisions=(f"decision {cycle}",), action_items=(f"task {cycle}",),
                    suggested_questions=(CopilotQuestion(question=f"q {cycle}?"),),
                    transcript=(TranscriptSegment(start_s=0, end_s=30, text=words),))
                state = merge(state, result, chunk_start_s=chunk.start_s,
                              chunk_seconds=chunk.seconds, now_iso="2026-01-01T00:00:00Z")
                saved = len(encode_state(state))
                del chunk
            if n % (120 * 10) == 0:
                rows.append((n / 120, _rss_mb(), saved))

    started = time.perf_counter()
    await recorder.record(blocks())
    rows.append((minutes, _rss_mb(), saved))
    print(f"simulated recording of {minutes:.0f} min ({minutes * 60 * 32_000 / 1e6:.0f} MB "
          f"of PCM, {int(minutes * 2)} cycles) in {time.perf_counter() - started:.1f} s")
    for at, rss, size in rows:
        print(f"  {at:5.0f} min: RSS {rss:6.1f} MB, saved state {size / 1024:6.1f} KB")
    growth = rows[-1][1] - rows[1][1] if len(rows) > 2 else 0.0
    print(f"  RSS from minute 10 to the end: {growth:+.1f} MB (goal: flat)")


def main() -> None:
    global MODEL, BEAM, VOICE
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=("memory", "cycle", "recall"))
    parser.add_argument("--meeting", help="names from tests/meeting.py, comma-separated")
    parser.add_argument("--meetings", type=Path, help="a JSON file of meetings")
    parser.add_argument("--model", default=MODEL, help="the llama.cpp preset (default: "
                        "%(default)s)")
    parser.add_argument("--trace", type=Path, help="a folder: each meeting's cycles as "
                        "merged (for bench/copilot_replay.py)")
    parser.add_argument("--beam", type=int, default=BEAM, help="Whisper's beam in each "
                        "cycle, 1 to 5 (the setting stt_beam_size; default: %(default)s)")
    parser.add_argument("--voice", choices=("espeak-ng", "hibari"), default=VOICE,
                        help="who speaks the meetings: espeak-ng's formant voices, or "
                             "adjutant-tts's embedded neural voice (default: %(default)s)")
    args = parser.parse_args()
    MODEL, BEAM, VOICE = args.model, args.beam, args.voice
    import meeting

    if args.meetings:
        scripts = meeting.load_meetings(args.meetings)
    else:
        names = args.meeting.split(",") if args.meeting else list(meeting.MEETINGS)
        unknown = [n for n in names if n not in meeting.MEETINGS]
        if unknown:
            parser.error(f"no meeting {unknown[0]!r}; there are {', '.join(meeting.MEETINGS)}")
        scripts = [meeting.MEETINGS[n] for n in names]
    totals: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.only in (None, "memory"):
            anyio.run(long_recording, folder, 10 if args.quick else 120)
        if args.only in (None, "cycle"):
            anyio.run(one_cycle, folder, 20 if args.quick else 65)
        if args.meeting or args.meetings or (not args.quick and args.only in (None, "recall")):
            for script in scripts:
                anyio.run(recall_run, folder, 4.0, script, totals, args.trace)
            print_totals(totals)


if __name__ == "__main__":
    main()
