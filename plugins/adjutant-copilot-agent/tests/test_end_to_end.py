"""End to end on the embedded models: espeak-ng speaks a scripted meeting (two voices,
names, two decisions, three action items, a question); it is fed to the recorder in
real time on a clock four times faster; the agent runs its cycles with Whisper and the
embedded llama.cpp model. Asserted is only what must hold on any machine (the words
heard, every item's evidence inside the recording, the log's shape, the state saved);
the recall of the scripted items is printed (its figure is bench/copilot_agent.py's)."""

from __future__ import annotations

from pathlib import Path

import anyio
import meeting
import pytest

from adjutant.testing import Harness
from adjutant_copilot_agent import (
    CopilotAgent,
    CopilotAgentPlugin,
    CopilotAgentSettings,
    FastClock,
    Recorder,
)
from adjutant_copilot_agent._sources import from_file
from adjutant_copilot_agent._store import StateStore

llamacpp = pytest.importorskip("adjutant_llamacpp")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # one real-model run is enough
@pytest.mark.anyio
async def test_a_spoken_meeting_on_the_embedded_models(tmp_path: Path) -> None:
    spoken = meeting.speak(tmp_path)
    clock = FastClock(4.0)
    settings = CopilotAgentSettings(cycle_interval=30, audio_overlap=5, analysis_timeout=300)
    async with Harness(CopilotAgentPlugin, provider=llamacpp.LlamaCpp()) as h:  # type: ignore[arg-type]
        recorder = Recorder(h.kernel.home, "meeting")
        recorder.open()
        async with CopilotAgent.running(h.kernel, clock=clock, settings=settings) as agent:
            done = await recorder.record(from_file(spoken, speed=1.0, sleep=clock.sleep))
            with anyio.fail_after(900):
                await agent.finished.wait()
        state = agent.state
        got = meeting.recall(state)
        print(f"\nrecall: strict {got['strict']:.0%}, anywhere {got['anywhere']:.0%}; "
              f"{state.cycle_metadata.cycle_number} cycles, "
              f"{state.cycle_metadata.failed_cycles} failed")
        for name in ("decisions", "action_items", "open_questions"):
            print(f"  {name}: {[i.text for i in getattr(state, name)]}")
        assert state.cycle_metadata.cycle_number >= 1
        heard = " ".join(s.text for s in state.transcript).lower()
        said = ("pricing", "press", "login", "marketing", "monday", "friday", "servers")
        assert sum(word in heard for word in said) >= 4  # Whisper hears espeak-ng well
        for item in (*state.decisions, *state.action_items, *state.key_points,
                     *state.open_questions):
            assert 0 <= item.evidence.start_s < item.evidence.end_s <= done.seconds + 0.5
            assert state.words(item.evidence)  # a span that holds words
        assert await StateStore(h.kernel).load(done.id) == state
        assert agent.log.path is not None
        log = agent.log.path.read_text()
        assert log.startswith("# Co-Pilot Agent Log — ")
        assert "**Settings:** cycle_interval=30s, audio_overlap=5s" in log
        assert log.count("\n## Cycle ") == agent.attempts
        assert "### Prompt\nThis is the start of a conversation." in log
        assert log.rstrip().endswith("|") and "| Total cycles |" in log
