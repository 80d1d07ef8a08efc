"""``on_event``: one run's events, in order, to a callback, and nothing of other runs;
a callback that fails is logged and the run goes on."""

from __future__ import annotations

import anyio
import pytest

from adjutant.testing import Harness, fake_tools
from adjutant_hookspecs import Envelope, Response, RunFinished, RunStarted

pytestmark = pytest.mark.anyio


async def test_one_runs_events_in_order_and_no_others() -> None:
    async with Harness(fake_tools()) as h:
        mine: list[Envelope] = []
        others: list[Envelope] = []
        h.provider.queue(Response(text="one"))
        h.provider.queue(Response(text="two"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: h.copilot.handle("a", on_event=mine.append))
            tg.start_soon(lambda: h.copilot.handle("b", thread_id="t", on_event=others.append))
        assert mine and others
        assert isinstance(mine[0].event, RunStarted) and isinstance(mine[-1].event, RunFinished)
        assert {e.run_id for e in mine} == {mine[0].run_id} != {others[0].run_id}
        assert [e.run_seq for e in mine] == sorted(e.run_seq for e in mine)


async def test_a_failing_callback_leaves_the_run_alone() -> None:
    def broken(envelope: Envelope) -> None:
        raise RuntimeError("the app's bug")

    async with Harness(fake_tools()) as h:
        h.provider.queue(Response(text="fine"))
        outcome = await h.copilot.handle("hello", on_event=broken)
        assert (outcome.status, outcome.text) == ("answered", "fine")
