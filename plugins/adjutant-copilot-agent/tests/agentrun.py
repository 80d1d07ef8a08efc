"""Run one agent on a recording in a fresh kernel, with scripted analysis, and keep all
there is to look at afterwards."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import copilotkit as kit

from adjutant.testing import Harness
from adjutant_copilot_agent import CopilotAgent, CopilotAgentSettings, CopilotState
from adjutant_copilot_agent._store import StateStore


@dataclass
class Outcome:
    state: CopilotState
    stored: CopilotState | None
    events: list[Any]
    analyzer: kit.ScriptAnalyzer
    home: Path
    log: Path | None
    log_text: str
    agent: CopilotAgent
    extra: dict[str, Any] = field(default_factory=dict)


async def run_agent(steps: list[Any], *, settings: CopilotAgentSettings = kit.SETTINGS,
                    seconds: float = 40.0, end_recording_after: int | None = None) -> Outcome:
    analyzer = kit.ScriptAnalyzer(steps)
    async with Harness(*kit.plugins(analyzer)) as h:
        recorder = kit.start_recording(h.kernel.home, seconds)
        async with CopilotAgent.running(h.kernel, clock=kit.fast(), settings=settings) as agent:
            if end_recording_after is not None:
                analyzer.on_done = lambda: kit.end_recording(recorder)
            else:
                analyzer.on_done = agent.request_stop
            if not steps:
                agent.request_stop()
            with anyio.fail_after(60):
                for _ in range(10_000):
                    if agent.log.path is not None or agent.status != "starting" \
                            or not settings.agent_logging:
                        break
                    await anyio.sleep(0.001)
                analyzer.log_path = agent.log.path
                await agent.finished.wait()
        assert recorder.writer is not None
        recorder.writer.close()
        stored = await StateStore(h.kernel).load(agent.session.id)
        events = [e.event for e in h.events.envelopes]
        log = agent.log.path or next(iter(sorted((h.kernel.home / "agent_logs").glob("*.md"))),
                                     None) if (h.kernel.home / "agent_logs").exists() else None
        logs = sorted(p.name for p in (h.kernel.home / "agent_logs").glob("*")) \
            if (h.kernel.home / "agent_logs").exists() else []
        return Outcome(state=agent.state, stored=stored, events=events, analyzer=analyzer,
                       home=h.kernel.home, log=log,
                       log_text=log.read_text() if log is not None else "", agent=agent,
                       extra={"logs": logs,
                              "agent_file": (h.kernel.home / "recordings" / agent.session.id
                                             / "agent.json").exists()})


def run(steps: list[Any], **options: Any) -> Outcome:
    async def body() -> Outcome:
        return await run_agent(steps, **options)
    return anyio.run(body)
