"""The agent's guarantees beyond the design's properties: a kill mid-recording and
mid-cycle loses only the cycle in flight; three failures in a row pause it; the log
that cannot be written turns itself off and the agent goes on; analysis the provider
cannot do is refused before anything starts."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from itertools import pairwise
from pathlib import Path

import anyio
import copilotkit as kit
import pytest
import soundfile as sf
from agentrun import run
from test_cli import ADJUTANT, ANSWER, adjutant, setup

from adjutant import RegistrationError, hookimpl
from adjutant.testing import Harness
from adjutant_copilot_agent import CopilotAgent, CopilotAgentPlugin, choose_analyzer
from adjutant_copilot_agent._events import CopilotStatus
from adjutant_hookspecs import CopilotCycleResult, CopilotUnsupported


def test_a_kill_mid_recording_and_mid_cycle_keeps_every_completed_cycle(
        tmp_path: Path) -> None:
    slow = {"text": json.dumps(ANSWER), "delay": 0.2}  # about 8 s of generation
    env = setup(tmp_path, [json.dumps(ANSWER), slow, slow])
    import meeting
    import numpy as np

    data, rate = sf.read(str(meeting.speak(tmp_path)))
    sf.write(str(tmp_path / "long.wav"), np.concatenate([data] * 4), rate)
    script_pos = Path(env["ADJUTANT_SCRIPT"] + ".pos")
    process = subprocess.Popen([ADJUTANT, "record", "--from", str(tmp_path / "long.wav"),
                                "--agent", "--time-factor", "3"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # the second cycle's analysis has begun
            if script_pos.exists() and script_pos.read_text().strip() == "2":
                break
            assert process.poll() is None, process.stderr.read()  # type: ignore[union-attr]
            time.sleep(0.1)
        else:
            pytest.fail("the second cycle never started")
        time.sleep(1.5)  # mid-generation
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()  # type: ignore[union-attr]
    [audio] = (tmp_path / "home").glob("recordings/*/audio.wav")
    on_disk = (audio.stat().st_size - 44) // 2
    listed = adjutant(env, "record", "--list")
    assert " interrupted " in listed.stdout  # repaired on this first look
    played, rate = sf.read(str(audio), dtype="int16")
    assert rate == 16_000 and len(played) == on_disk > 16_000 * 30
    state = json.loads(adjutant(env, "copilot-agent", "state", "--json").stdout)["state"]
    assert state["cycle_metadata"]["cycle_number"] == 1  # the one completed, not the one cut
    assert state["cycle_metadata"]["processing"] is False  # the cut cycle died with its agent
    shown = adjutant(env, "copilot-agent", "state").stdout
    assert "Cycles: 1" in shown and "(processing)" not in shown, shown
    assert state["decisions"][0]["text"].startswith("We decided to ship on Friday")
    sessions = adjutant(env, "copilot-agent", "sessions")
    assert "agent running" not in sessions.stdout  # the dead agent's claim is not honoured


def test_three_failures_in_a_row_pause_the_agent() -> None:
    outcome = run([CopilotCycleResult(updated_summary="kept"), RuntimeError("a"),
                   RuntimeError("b"), RuntimeError("c"), CopilotCycleResult()])
    statuses = [e for e in outcome.events if isinstance(e, CopilotStatus)]
    assert statuses[-1].status == "paused" and "3 consecutive failures" in statuses[-1].message
    assert len(outcome.analyzer.requests) == 4  # it stopped there: the user restarts it
    assert outcome.state.cycle_metadata.failed_cycles == 3
    assert outcome.state.running_summary == "kept"
    assert not outcome.extra["agent_file"]


@pytest.mark.anyio
async def test_a_log_that_cannot_be_written_turns_off_and_the_agent_goes_on() -> None:
    analyzer = kit.ScriptAnalyzer([CopilotCycleResult(updated_summary="one"),
                                   CopilotCycleResult(updated_summary="two")])
    async with Harness(*kit.plugins(analyzer)) as h:
        (h.kernel.home / "agent_logs").mkdir(parents=True)
        recorder = kit.close(kit.start_recording(h.kernel.home, 5.0))
        async with CopilotAgent.running(h.kernel, clock=kit.fast(),
                                        settings=kit.SETTINGS) as agent:
            for _ in range(1000):
                if agent.log.path is not None:
                    break
                await anyio.sleep(0.001)
            path = agent.log.path
            assert path is not None
            path.unlink()
            path.mkdir()  # the log's path is now a folder: every write fails
            analyzer.on_done = agent.request_stop
            await agent.finished.wait()
        assert agent.log.path is None and "agent logging is off" in agent.log.warning
        assert agent.state.running_summary == "two"
        assert agent.state.cycle_metadata.cycle_number == 2
        del recorder
    analyzer = kit.ScriptAnalyzer([CopilotCycleResult(updated_summary="one")])
    async with Harness(*kit.plugins(analyzer)) as h:
        h.kernel.home.mkdir(parents=True, exist_ok=True)
        (h.kernel.home / "agent_logs").write_text("a file where the folder goes")
        kit.close(kit.start_recording(h.kernel.home, 5.0))
        async with CopilotAgent.running(h.kernel, clock=kit.fast(),
                                        settings=kit.SETTINGS) as agent:
            analyzer.on_done = agent.request_stop
            await agent.finished.wait()
        assert agent.log.path is None and agent.state.running_summary == "one"
        messages = [e.event.message for e in h.events.envelopes
                    if isinstance(e.event, CopilotStatus)]
        assert any("agent logging is off" in m for m in messages)


class _NoAnalyzer:
    name = "fussy"
    native = True

    def supports(self, provider: object) -> bool:
        return False

    async def copilot_analyze(self, kernel: object, provider: object,
                              request: object) -> CopilotCycleResult:
        raise AssertionError("never called")


@pytest.mark.anyio
async def test_analysis_is_not_supported_without_an_analyzer_for_the_provider() -> None:
    async with Harness(kit.analyzer_plugin(_NoAnalyzer())) as h:
        with pytest.raises(CopilotUnsupported, match="not supported by the provider "
                                                     "'scripted'"):
            choose_analyzer(h.kernel)
    async with Harness(CopilotAgentPlugin, kit.analyzer_plugin(_NoAnalyzer())) as h:
        analyzer, _ = choose_analyzer(h.kernel)
        assert analyzer.name == "transcribe-then-text"  # the built-in pipeline


@pytest.mark.anyio
async def test_the_embedded_llama_cpp_hears_no_audio_itself() -> None:
    """No audio model runs on llama.cpp here (adjutant-llamacpp's README says what was
    checked): the embedded provider has no native analyzer, so alone it is "not
    supported", and the built-in pipeline (Whisper, then the text model) reads for it."""
    import adjutant_llamacpp
    from adjutant_llamacpp import LlamaCpp

    assert not hasattr(adjutant_llamacpp, "register_copilot_analyzers")
    async with Harness(provider=LlamaCpp()) as h:  # type: ignore[arg-type]
        assert list(h.kernel.copilot_analyzers.values()) == []
        with pytest.raises(CopilotUnsupported, match="not supported by the provider "
                                                     "'llama-cpp'"):
            choose_analyzer(h.kernel)
    async with Harness(CopilotAgentPlugin, provider=LlamaCpp()) as h:  # type: ignore[arg-type]
        analyzer, provider = choose_analyzer(h.kernel)
        assert (analyzer.name, analyzer.native, provider.name) == (
            "transcribe-then-text", False, "llama-cpp")


@pytest.mark.anyio
async def test_an_analyzer_missing_its_contract_is_refused_naming_it() -> None:
    class Half:
        name = "half"

        async def copilot_analyze(self) -> None: ...

    class Plugin:
        @staticmethod
        @hookimpl
        def register_copilot_analyzers(register: object) -> None:
            register(Half())  # type: ignore[operator]

    with pytest.raises(Exception, match="copilot analyzer 'half' lacks") as caught:
        async with Harness(Plugin()):
            pass
    assert isinstance(caught.value, RegistrationError) or "half" in str(caught.value)


@pytest.mark.anyio
async def test_a_state_that_cannot_be_saved_ends_the_agent_with_an_error_status() -> None:
    analyzer = kit.ScriptAnalyzer([CopilotCycleResult(updated_summary="one")] * 3)
    async with Harness(*kit.plugins(analyzer)) as h:
        kit.close(kit.start_recording(h.kernel.home, 5.0))
        async with CopilotAgent.running(h.kernel, clock=kit.fast(),
                                        settings=kit.SETTINGS) as agent:
            async def full(session_id: str, state: object) -> None:
                raise OSError(28, "No space left on device")

            agent.store.save = full  # type: ignore[method-assign]
            with anyio.fail_after(30):
                await agent.finished.wait()
        last = [e.event for e in h.events.envelopes if isinstance(e.event, CopilotStatus)][-1]
        assert last.status == "error" and "No space left on device" in last.message
        assert agent.log.path is not None and "## Summary" in agent.log.path.read_text()
        assert not list(h.kernel.home.glob("recordings/*/agent.json"))


class _SlowFirstCycle:
    """An analyzer whose first cycle is slow: the recording grows by ``grows_s`` while
    it runs. Each answer is one transcript segment over the whole chunk it was given,
    so the state's transcript shows what audio the cycles covered."""

    name = "slow-first"
    native = True

    def __init__(self, recorder: object, grows_s: float, end_after: int) -> None:
        self.recorder, self.grows_s, self.end_after = recorder, grows_s, end_after
        self.seconds: list[float] = []

    def supports(self, provider: object) -> bool:
        return True

    async def copilot_analyze(self, kernel: object, provider: object,
                              request: object) -> CopilotCycleResult:
        import numpy as np

        from adjutant_hookspecs import TranscriptSegment

        seconds = (len(request.audio) - 44) / 32_000  # type: ignore[attr-defined]
        self.seconds.append(seconds)
        if len(self.seconds) == 1:
            writer = self.recorder.writer  # type: ignore[attr-defined]
            writer.write(np.zeros(int(self.grows_s * 16_000), dtype="<i2").tobytes())
            writer.flush()
        if len(self.seconds) == self.end_after:
            kit.end_recording(self.recorder)  # type: ignore[arg-type]
        await anyio.lowlevel.checkpoint()
        return CopilotCycleResult(transcript=(TranscriptSegment(
            start_s=0.0, end_s=seconds, text=f"cycle {len(self.seconds)}"),))


@pytest.mark.anyio
async def test_an_agent_far_behind_catches_up_and_skips_no_audio() -> None:
    # the first cycle ran so long that 200 s more were recorded: the agent takes the
    # oldest audio it has not analysed, two intervals at a time, at once, while the
    # recording goes on and after it ends, until all of it is analysed
    analyzer = _SlowFirstCycle(None, 200.0, end_after=3)
    async with Harness(*kit.plugins(analyzer)) as h:
        analyzer.recorder = kit.start_recording(h.kernel.home, 40.0)
        async with CopilotAgent.running(h.kernel, clock=kit.fast(),
                                        settings=kit.SETTINGS) as agent:
            with anyio.fail_after(60):
                await agent.finished.wait()
    spans = [(s.start_s, s.end_s) for s in agent.state.transcript]
    assert spans[0] == (0.0, 40.0)  # the first cycle: all there was
    assert spans[-1][1] == pytest.approx(240.0)
    for (_, end), (start, _) in pairwise(spans):
        assert start <= end, f"audio from {end} s to {start} s was never analysed"
    assert max(analyzer.seconds) <= 2 * 30 + 5  # each chunk bounded: memory stays flat
    assert len(spans) >= 5
