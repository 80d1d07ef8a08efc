"""The design's 23 correctness properties, as hypothesis property tests (at least 100
examples each), named after them. Where a property speaks of the design's desktop app
(temporary WAV files, gems, the MLX sidecar's mutex), the test states what it means
here, in the docstring."""

from __future__ import annotations

import itertools
import json
import string
import tempfile
from pathlib import Path
from typing import Any

import anyio
import copilotkit as kit
import jsonpatch
import msgspec
import pytest
from agentrun import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adjutant import ModelPreset, Profile
from adjutant.testing import Harness
from adjutant_copilot_agent import (
    AgentError,
    CopilotAgent,
    CopilotAgentPlugin,
    CopilotAgentSettings,
    CopilotState,
    agent_settings,
    merge,
    parse_cycle_result,
)
from adjutant_copilot_agent._events import CopilotError, CopilotStatus, CopilotUpdated
from adjutant_copilot_agent._state import (
    CycleMetadata,
    Evidence,
    Item,
    KeyConcept,
    SuggestedQuestion,
    decode_state,
    encode_state,
    normalize,
)
from adjutant_copilot_agent._wav import HEADER, chunk_bytes, extract_chunk, header
from adjutant_hookspecs import (
    CopilotConcept,
    CopilotCycleResult,
    CopilotQuestion,
    TranscriptSegment,
)

EXAMPLES = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

words = st.text(alphabet=string.ascii_letters + " ,.!?'-", min_size=1, max_size=40)
clean = words.map(str.strip).filter(lambda t: bool(normalize(t)))
texts = st.lists(clean, max_size=6)
questions = st.lists(st.builds(CopilotQuestion, question=clean, reason=clean), max_size=7)
concepts = st.lists(st.builds(CopilotConcept, term=clean, context=clean), max_size=5)
results = st.builds(CopilotCycleResult, new_content=clean, updated_summary=clean,
                    key_points=texts.map(tuple), decisions=texts.map(tuple),
                    action_items=texts.map(tuple), open_questions=texts.map(tuple),
                    suggested_questions=questions.map(tuple), key_concepts=concepts.map(tuple))


def _merge(state: CopilotState, result: CopilotCycleResult) -> CopilotState:
    return merge(state, result, chunk_start_s=0.0, chunk_seconds=35.0,
                 now_iso="2026-01-01T00:00:00+00:00")


# -- 1-3: the audio chunk -------------------------------------------------------------------


@EXAMPLES
@given(interval=st.integers(30, 120), overlap=st.integers(0, 15),
       recorded=st.integers(0, 140 * 32_000))
def test_property_01_audio_chunk_byte_calculation(interval: int, overlap: int,
                                                  recorded: int) -> None:
    """A chunk is ``(cycle_interval + audio_overlap) * 16000 * 2`` bytes, or the whole
    recording when it is shorter, taken from its end."""
    assert chunk_bytes(interval, overlap) == (interval + overlap) * 16000 * 2
    recorded -= recorded % 2
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "a.wav"
        with path.open("wb") as f:
            f.write(header(recorded))
            f.truncate(HEADER + recorded)
        chunk = extract_chunk(path, interval, overlap)
        size = min(chunk_bytes(interval, overlap), recorded)
        assert len(chunk.wav) == HEADER + size
        assert chunk.start_s == (recorded - size) / 32_000
        assert chunk.seconds == size / 32_000


@EXAMPLES
@given(count=st.integers(2, 20))
def test_property_02_unique_temporary_file_names(count: int) -> None:
    """Every extraction has its own identity (a UUID4), so no two cycles' audio can be
    confused; the audio itself never goes to a temporary file (property 3)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "a.wav"
        path.write_bytes(header(64_000) + bytes(64_000))
        ids = [extract_chunk(path, 30, 5).id for _ in range(count)]
    assert len(set(ids)) == count


@EXAMPLES
@given(steps=st.lists(st.sampled_from(["ok", "fail"]), min_size=1, max_size=4))
def test_property_03_temporary_file_cleanup(steps: list[str], tmp_path_factory: Any) -> None:
    """Whatever the cycles do (succeed or fail), nothing is left in the temporary
    directory: the chunk is held in memory, never written there."""
    tmp = tmp_path_factory.mktemp("tmp")
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp)
    try:
        script = [CopilotCycleResult(updated_summary="s") if s == "ok" else RuntimeError("x")
                  for s in steps]
        outcome = run(script)
    finally:
        tempfile.tempdir = saved
    assert outcome.analyzer.requests
    leftovers = [p for p in tmp.iterdir() if not p.name.startswith("adjutant-harness-")]
    assert leftovers == []


# -- 4-5: the provider's answer ---------------------------------------------------------------


@EXAMPLES
@given(result=results)
def test_property_04_ndjson_protocol_round_trip(result: CopilotCycleResult) -> None:
    """Any answer the model gives in the contract's shape parses back to every field."""
    answer = msgspec.json.encode(msgspec.structs.replace(result)).decode()
    parsed = parse_cycle_result(answer)
    for name in ("new_content", "updated_summary", "key_points", "decisions",
                 "action_items", "open_questions", "suggested_questions", "key_concepts"):
        assert getattr(parsed, name) == getattr(result, name), name


@EXAMPLES
@given(result=results, cut=st.floats(0, 1), noise=st.text(max_size=30),
       junk=st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1"))))
def test_property_05_graceful_json_parsing(result: CopilotCycleResult, cut: float,
                                           noise: str, junk: str) -> None:
    """Partial or malformed answers never raise; the fields complete before a cut are
    kept, wrong types are dropped, defaults fill the rest."""
    answer = json.dumps({"new_content": result.new_content,
                         "updated_summary": result.updated_summary,
                         "key_points": list(result.key_points),
                         "decisions": 42, "action_items": [1, None, *result.action_items]})
    at = int(len(answer) * cut)
    parsed = parse_cycle_result("```json\n" + answer[:at] + noise)
    assert isinstance(parsed, CopilotCycleResult)
    head = answer[:at]
    if f'"updated_summary": {json.dumps(result.updated_summary)},' in head:
        assert parsed.new_content == result.new_content
        assert parsed.updated_summary == result.updated_summary
    whole = parse_cycle_result(answer + noise)
    assert whole.decisions == () and whole.action_items == result.action_items
    assert isinstance(parse_cycle_result(junk), CopilotCycleResult)


# -- 6-8: the lifecycle -----------------------------------------------------------------------


@EXAMPLES
@given(before=st.lists(st.sampled_from(["none", "stopped", "killed"]), max_size=3))
def test_property_06_start_requires_active_recording(before: list[str]) -> None:
    """With no recording in progress (none, stopped ones, ones whose recorder died),
    start is refused and no agent claims anything."""

    async def body() -> None:
        analyzer = kit.ScriptAnalyzer([])
        async with Harness(*kit.plugins(analyzer)) as h:
            home = h.kernel.home
            for kind in before:
                if kind == "none":
                    continue
                recorder = kit.start_recording(home, 1.0)
                kit.close(recorder)
                if kind == "stopped":
                    kit.end_recording(recorder)
                else:  # its process is gone: a pid no process has
                    assert recorder.session is not None
                    recorder.session.pid = 2**22 + 1
                    from adjutant_copilot_agent._sessions import save_session
                    save_session(home, recorder.session)
            with pytest.raises(AgentError, match="no recording in progress"):
                async with CopilotAgent.running(h.kernel, clock=kit.fast(),
                                                settings=kit.SETTINGS):
                    pass
            assert not list(home.glob("recordings/*/agent.json"))
            assert analyzer.requests == []

    anyio.run(body)


@EXAMPLES
@given(tries=st.integers(1, 4))
def test_property_07_concurrent_instance_prevention(tries: int) -> None:
    """While an agent runs on the recording, every other start is refused; one agent."""

    async def body() -> None:
        analyzer = kit.ScriptAnalyzer([])
        async with Harness(*kit.plugins(analyzer)) as h:
            kit.close(kit.start_recording(h.kernel.home, 1.0))
            async with CopilotAgent.running(h.kernel, clock=kit.fast(),
                                            settings=kit.SETTINGS) as first:
                for _ in range(tries):
                    with pytest.raises(AgentError, match="already runs"):
                        await CopilotAgent.prepare(h.kernel, settings=kit.SETTINGS)
                assert len(list(h.kernel.home.glob("recordings/*/agent.json"))) == 1
                await first.stop()

    anyio.run(body)


@EXAMPLES
@given(cycles=st.integers(1, 4))
def test_property_08_recording_stop_triggers_agent_stop(cycles: int) -> None:
    """When the recording stops, the agent's loop ends by itself: status ``stopped``,
    its claim on the recording released."""
    script = [CopilotCycleResult(updated_summary=f"s{i}") for i in range(cycles)]
    outcome = run(script, end_recording_after=cycles)
    statuses = [e.status for e in outcome.events if isinstance(e, CopilotStatus)]
    assert statuses[-1] == "stopped"
    assert not outcome.extra["agent_file"]
    assert len(outcome.analyzer.requests) == cycles


# -- 9-10: cycles --------------------------------------------------------------------------


@EXAMPLES
@given(summaries=st.lists(clean, min_size=2, max_size=5))
def test_property_09_context_propagation_between_cycles(summaries: list[str]) -> None:
    """Cycle N's context is the ``updated_summary`` cycle N-1 returned."""
    outcome = run([CopilotCycleResult(updated_summary=s) for s in summaries])
    contexts = [r.context for r in outcome.analyzer.requests]
    assert contexts == ["", *summaries[:-1]]


@EXAMPLES
@given(steps=st.lists(st.sampled_from(["ok", "error", "timeout"]), min_size=1, max_size=6)
       .filter(lambda s: all("ok" in s[i:i + 3] for i in range(max(0, len(s) - 2)))))
def test_property_10_failure_skips_cycle(steps: list[str]) -> None:
    """A failed or timed-out cycle counts in ``failed_cycles``, keeps the running
    context, and the agent goes on to the next cycle."""
    fast = CopilotAgentSettings(cycle_interval=30, audio_overlap=5, analysis_timeout=0.2)
    script: list[Any] = []
    for i, s in enumerate(steps):
        script.append(CopilotCycleResult(updated_summary=f"summary {i}") if s == "ok" else
                      RuntimeError(f"boom {i}") if s == "error" else kit.HANG)
    outcome = run(script, settings=fast)
    assert len(outcome.analyzer.requests) == len(steps)
    assert outcome.state.cycle_metadata.failed_cycles == len(steps) - steps.count("ok")
    last = ""
    for i, (s, request) in enumerate(zip(steps, outcome.analyzer.requests, strict=True)):
        assert request.context == last
        if s == "ok":
            last = f"summary {i}"
    assert outcome.state.running_summary == last


# -- 11-13: the state ----------------------------------------------------------------------


@EXAMPLES
@given(first=results, second=results, variants=st.lists(st.sampled_from(
    [str.upper, str.lower, lambda t: t + ".", lambda t: "  " + t + "!"]), max_size=3))
def test_property_11_state_update_deduplication(first: CopilotCycleResult,
                                                second: CopilotCycleResult,
                                                variants: list[Any]) -> None:
    """Merging never adds an item already there, nor one differing only in case or
    punctuation; every new item is added once, in order."""
    again = msgspec.structs.replace(second, key_points=second.key_points + tuple(
        v(t) for v in variants for t in first.key_points))
    state = _merge(_merge(CopilotState(), first), again)
    for name in ("key_points", "decisions", "action_items", "open_questions"):
        items: tuple[Item, ...] = getattr(state, name)
        keys = [normalize(i.text) for i in items]
        assert len(keys) == len(set(keys))
        wanted = list(dict.fromkeys(normalize(t) for t in (*getattr(first, name),
                                                            *getattr(again, name))))
        assert keys == wanted


evidence = st.builds(Evidence, start_s=st.floats(0, 1e4), end_s=st.floats(0, 1e4))
items = st.lists(st.builds(Item, text=clean, evidence=evidence,
                           cycle_added=st.integers(0, 1000)), max_size=4).map(tuple)
states = st.builds(
    CopilotState, running_summary=st.text(), key_points=items, decisions=items,
    action_items=items, open_questions=items,
    suggested_questions=st.lists(st.builds(SuggestedQuestion, question=st.text(),
                                           reason=st.text(), cycle_added=st.integers(0, 99),
                                           dismissed=st.booleans()), max_size=5).map(tuple),
    key_concepts=st.lists(st.builds(KeyConcept, term=st.text(), context=st.text(),
                                    cycle_added=st.integers(0, 99),
                                    mention_count=st.integers(1, 99)), max_size=4).map(tuple),
    cycle_metadata=st.builds(CycleMetadata, cycle_number=st.integers(0, 10**6),
                             last_updated_at=st.text(max_size=30), processing=st.booleans(),
                             failed_cycles=st.integers(0, 99),
                             total_audio_seconds=st.floats(0, 1e7)),
    transcript=st.lists(st.builds(TranscriptSegment, start_s=st.floats(0, 1e4),
                                  end_s=st.floats(0, 1e4), text=st.text()),
                        max_size=4).map(tuple))


@EXAMPLES
@given(state=states)
def test_property_12_state_json_serialization_round_trip(state: CopilotState) -> None:
    assert decode_state(encode_state(state)) == state


@EXAMPLES
@given(summary=clean)
def test_property_13_state_reset_on_new_recording(summary: str) -> None:
    """A new recording's agent starts from the empty state, whatever the last one had."""

    async def body() -> None:
        analyzer = kit.ScriptAnalyzer([CopilotCycleResult(updated_summary=summary,
                                                          decisions=(summary,))])
        async with Harness(*kit.plugins(analyzer)) as h:
            first = kit.start_recording(h.kernel.home, 2.0)
            async with CopilotAgent.running(h.kernel, clock=kit.fast(),
                                            settings=kit.SETTINGS) as agent:
                analyzer.on_done = agent.request_stop
                await agent.finished.wait()
            assert agent.state.running_summary == summary
            kit.end_recording(first)
            kit.close(kit.start_recording(h.kernel.home, 2.0))
            analyzer.on_done = None
            new = await CopilotAgent.prepare(h.kernel, settings=kit.SETTINGS)
            assert new.state == CopilotState()
            new._release()

    anyio.run(body)


# -- 14-16: events -------------------------------------------------------------------------


@EXAMPLES
@given(script=st.lists(results, min_size=1, max_size=4))
def test_property_14_event_emission_on_state_change(script: list[CopilotCycleResult]) -> None:
    """Each cycle that changes the state publishes ``copilot_agent.updated``: a snapshot
    first, then JSON Patch deltas that rebuild exactly the agent's state."""
    outcome = run(script)
    updates = [e for e in outcome.events if isinstance(e, CopilotUpdated)]
    assert updates[0].snapshot is not None and updates[0].delta is None
    rebuilt = updates[0].snapshot
    for e in updates[1:]:
        assert e.delta is not None and e.snapshot is None
        rebuilt = jsonpatch.apply_patch(rebuilt, e.delta)
    assert rebuilt == msgspec.to_builtins(outcome.state)
    assert {e.cycle for e in updates[1:]} >= set(range(1, len(script) + 1))


@EXAMPLES
@given(steps=st.lists(st.sampled_from(["ok", "error"]), min_size=1, max_size=5))
def test_property_15_status_event_on_state_transition(steps: list[str]) -> None:
    """Every change of status is published: starting, active, processing for each
    cycle, then stopped (or paused after three failures in a row)."""
    script = [CopilotCycleResult(updated_summary="s") if s == "ok" else RuntimeError("x")
              for s in steps]
    outcome = run(script)
    statuses = [e.status for e in outcome.events if isinstance(e, CopilotStatus)]
    assert statuses[:2] == ["starting", "active"]
    assert statuses.count("processing") == len(outcome.analyzer.requests)
    paused = "error,error,error" in ",".join(steps)
    assert statuses[-1] == ("paused" if paused else "stopped")
    assert all(s in ("starting", "active", "processing", "paused", "stopped", "error")
               for s in statuses)


@EXAMPLES
@given(steps=st.lists(st.sampled_from(["ok", "error"]), min_size=1, max_size=5),
       message=clean)
def test_property_16_error_event_on_cycle_failure(steps: list[str], message: str) -> None:
    """Each failed cycle publishes ``copilot_agent.error`` with its number and message."""
    script = [CopilotCycleResult(updated_summary="s") if s == "ok" else RuntimeError(message)
              for s in steps]
    outcome = run(script)
    errors = [e for e in outcome.events if isinstance(e, CopilotError)]
    ran = steps[:len(outcome.analyzer.requests)]
    assert [e.cycle for e in errors] == [i + 1 for i, s in enumerate(ran) if s == "error"]
    assert all(message in e.error for e in errors)


# -- 17-19: persistence, sharing, settings ---------------------------------------------------


@EXAMPLES
@given(script=st.lists(results, min_size=1, max_size=3))
def test_property_17_gem_copilot_data_persistence(script: list[CopilotCycleResult]) -> None:
    """The final state is saved with the recording's session (here: the profile's
    key-value store, after every cycle), with every field."""
    outcome = run(script)
    assert outcome.stored == outcome.state
    assert outcome.stored is not None
    assert outcome.stored.cycle_metadata.cycle_number == len(script)
    assert outcome.stored.cycle_metadata.total_audio_seconds > 0


@EXAMPLES
@given(count=st.integers(1, 5))
def test_property_18_provider_concurrency_serialization(count: int) -> None:
    """The agent never runs two analyses at once, whatever else is asked of it
    meanwhile (dismissals, state reads). The provider's own lock serializes the agent
    with the operator (the embedded llama.cpp's: see test_pipeline)."""
    script: list[Any] = [CopilotCycleResult(updated_summary=f"s{i}", suggested_questions=tuple(
        CopilotQuestion(question=f"q{j}") for j in range(5))) for i in range(count)]
    outcome = run(script)
    assert outcome.analyzer.most_active == 1
    assert len(outcome.analyzer.requests) == count


@EXAMPLES
@given(other=st.dictionaries(st.sampled_from(["tts", "stt", "x"]), st.just({}), max_size=2),
       interval=st.integers(30, 120), overlap=st.integers(0, 15))
def test_property_19_settings_backward_compatibility(other: dict[str, Any], interval: int,
                                                     overlap: int) -> None:
    """A profile without the section loads with the defaults; a valid one is read."""

    async def body() -> None:
        async with Harness(CopilotAgentPlugin, strict=False, profile=Profile(
                model=ModelPreset(provider="scripted"), plugins=dict(other))) as h:
            assert agent_settings(h.kernel) == CopilotAgentSettings()
        section = {"cycle_interval": interval, "audio_overlap": overlap}
        if overlap < interval:
            async with Harness(CopilotAgentPlugin, profile=Profile(
                    model=ModelPreset(provider="scripted"),
                    plugins={"copilot-agent": section})) as h:
                got = agent_settings(h.kernel)
                assert (got.cycle_interval, got.audio_overlap) == (interval, overlap)

    anyio.run(body)


# -- 20-23: the agent log --------------------------------------------------------------------


@EXAMPLES
@given(logging=st.booleans(), cycles=st.integers(1, 3))
def test_property_20_agent_logging_conditional_creation(logging: bool, cycles: int) -> None:
    settings_ = CopilotAgentSettings(cycle_interval=30, audio_overlap=5, agent_logging=logging)
    outcome = run([CopilotCycleResult(updated_summary="s")] * cycles, settings=settings_)
    if logging:
        assert len(outcome.extra["logs"]) == 1
        assert outcome.extra["logs"][0].endswith("_copilot.md")
    else:
        assert outcome.extra["logs"] == []


@EXAMPLES
@given(script=st.lists(results, min_size=2, max_size=4))
def test_property_21_log_file_append_only(script: list[CopilotCycleResult]) -> None:
    """Each cycle's entry is appended; what the log held before stays as it was."""
    outcome = run(script)
    seen = [*outcome.analyzer.logs, outcome.log_text]
    for before, after in itertools.pairwise(seen):
        assert after.startswith(before)
    assert outcome.log_text.count("\n## Cycle ") == len(script)


@EXAMPLES
@given(response=st.text(), seconds=st.floats(1.0, 5.0))
def test_property_22_log_excludes_binary_data(response: str, seconds: float) -> None:
    """The log holds text only: no audio bytes, no control characters, whatever the
    model answered."""
    outcome = run([CopilotCycleResult(updated_summary="s", response=response,
                                      prompt=response)], seconds=seconds)
    text = outcome.log_text
    assert text
    assert all(c in "\n\t" or ord(c) >= 32 for c in text)
    audio = outcome.analyzer.requests[0].audio[44:44 + 64]
    assert audio.decode("latin-1") not in text


@EXAMPLES
@given(depth=st.integers(0, 1))
def test_property_23_log_directory_auto_creation(depth: int) -> None:
    """The first log creates ``agent_logs/`` in the data directory."""
    outcome = run([CopilotCycleResult(updated_summary="s")])
    assert outcome.log is not None and outcome.log.parent.name == "agent_logs"
    assert len(outcome.extra["logs"]) == 1
    del depth
