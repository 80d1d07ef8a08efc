"""Who asks, how often, and which packet an answer is for (`adjutant.operator._consent`)."""

from __future__ import annotations

import pytest

from adjutant import Requester, StepPacket
from adjutant.operator._consent import packet_id

pytestmark = pytest.mark.anyio


def packet(**changes: object) -> StepPacket:
    fields: dict[str, object] = {"run_id": "r", "index": 0, "tool": "fs.write",
                                 "args": {"path": "a.txt"}, "intent": "", "preview": "+a",
                                 "level": "write", "reasons": ()}
    fields.update(changes)
    return StepPacket(**fields)  # type: ignore[arg-type]


def test_a_packet_is_named_by_what_it_shows() -> None:
    assert packet_id(packet()) == packet_id(packet(intent="other words", run_id="s"))
    assert packet_id(packet()) != packet_id(packet(preview="+b"))
    assert packet_id(packet()) != packet_id(packet(args={"path": "b.txt"}))
    assert len(packet_id(packet())) == 8


def test_questions_are_a_token_bucket(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr("adjutant.operator._consent.time.monotonic", lambda: now[0])
    who = Requester("a client", questions=3, window_s=60)
    assert [who.take_question() for _ in range(4)] == [True, True, True, False]
    now[0] += 19.0  # 0.95 of a question back
    assert not who.take_question()
    now[0] += 2.0
    assert who.take_question() and not who.take_question()
    now[0] += 3600
    assert [who.take_question() for _ in range(4)] == [True, True, True, False]


async def test_deny_all_is_recorded_once_and_the_requester_is_current_inside() -> None:
    recorded: list[str] = []

    async def record(run_id: str) -> None:
        recorded.append(run_id)

    who = Requester("a client", on_deny_all=record)
    assert Requester.current() is None
    with who.asking():
        assert Requester.current() is who
    assert Requester.current() is None
    await who.deny_all("run-1")
    await who.deny_all("run-2")
    assert who.denied and recorded == ["run-1"]
