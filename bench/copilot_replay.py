"""Replays the cycles a recall run recorded (``bench/copilot_agent.py --trace DIR``)
through the plugin's current reading of them (the answer parsed, the cues, the merge),
offline and in a second: the model's answers and Whisper's words stay those of the run,
so a change to the cues or the merge is measured alone. For each scripted item missed,
where it was lost:

``hearing``, ``cues-none``, ``cues-wrong``, ``filing`` or ``merging`` (see
``meeting.causes``), with a table of them per meeting.

    .venv/bin/python bench/copilot_replay.py DIR [--meetings FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "plugins" / "adjutant-copilot-agent"
                       / "tests"))


def replay(cycles: list[dict[str, Any]]) -> Any:
    import msgspec

    from adjutant_copilot_agent import CopilotState
    from adjutant_copilot_agent._analysis import reread
    from adjutant_copilot_agent._state import merge
    from adjutant_hookspecs import CopilotCycleResult

    state = CopilotState()
    for c in cycles:
        result = msgspec.convert(c["result"], CopilotCycleResult)
        result = reread(result, state.transcript, c["chunk_start_s"], c["chunk_seconds"])
        state = merge(state, result, chunk_start_s=c["chunk_start_s"],
                      chunk_seconds=c["chunk_seconds"], now_iso="2026-01-01T00:00:00Z")
    return state


def main() -> None:
    import meeting

    parser = argparse.ArgumentParser()
    parser.add_argument("trace", type=Path)
    parser.add_argument("--meetings", type=Path, action="append", default=[])
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    scripts = {m.name: m for m in meeting.MEETINGS.values()}
    for f in args.meetings:
        scripts.update({m.name: m for m in meeting.load_meetings(f)})
    totals = []
    for path in sorted(args.trace.glob("*.json")):
        data = json.loads(path.read_text())
        script = scripts.get(data["meeting"])
        if script is None:
            print(f"{path.name}: no meeting {data['meeting']!r}", file=sys.stderr)
            continue
        state = replay(data["cycles"])
        got = meeting.recall(state, script)
        totals.append((script.name, got))
        got["causes"] = meeting.causes(state, script)
        if not args.quiet:
            for cause, items in got["causes"].items():
                for item in items:
                    print(f"  miss [{script.name}] ({cause}) {item}")
        lists = ("decisions", "action_items", "open_questions")
        if not args.quiet:
            for name in lists:
                print(f"    {script.name} {name}: "
                      + " | ".join(i.text for i in getattr(state, name)))
    _print_totals(totals)


def _print_totals(totals: list[tuple[str, dict[str, Any]]]) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from copilot_agent import print_totals

    print_totals(totals)


if __name__ == "__main__":
    main()
