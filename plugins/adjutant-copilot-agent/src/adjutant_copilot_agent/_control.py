"""What every frontend does with a session's agent, one way for all of them (the CLI's
``copilot-agent state|dismiss|act`` and the dock's Co-Pilot panel): find the session,
read its state, dismiss a suggested question, take an action item for a request.

Everything here reads and writes the data directory and the key-value store, so it
works from any process, beside an agent running in another one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._records import CopilotActRecord
from ._sessions import active_agent, list_sessions
from ._state import CopilotState, Item, SuggestedQuestion, dismiss
from ._store import StateStore

if TYPE_CHECKING:
    from adjutant_hookspecs import Kernel

    from ._sessions import Session

__all__ = ["act_record", "action_item", "agent_running", "dismiss_question", "find_session",
           "load_state"]


def find_session(kernel: Kernel, wanted: str | None = None) -> Session:
    """The session ``wanted`` (by id), else the recording in progress, else the latest
    one; `LookupError` saying what to do when there is none."""
    sessions = list_sessions(kernel.home)
    if wanted:
        for s in sessions:
            if s.id == wanted:
                return s
        raise LookupError(f"no recording {wanted!r} (see: adjutant copilot-agent sessions)")
    live = [s for s in sessions if s.status == "recording"]
    if live:
        return live[-1]
    if sessions:
        return sessions[-1]
    raise LookupError("no recordings yet: start one with `adjutant record`")


def agent_running(kernel: Kernel, session_id: str) -> bool:
    """Whether an agent runs on ``session_id`` now (in any process)."""
    return active_agent(kernel.home, session_id) is not None


async def load_state(kernel: Kernel, session_id: str) -> CopilotState:
    """The state the agent last saved for ``session_id`` (empty before its first). A
    cycle an agent was processing when it died is processing no more."""
    import msgspec

    state = await StateStore(kernel).load(session_id) or CopilotState()
    if state.cycle_metadata.processing and not agent_running(kernel, session_id):
        state = msgspec.structs.replace(state, cycle_metadata=msgspec.structs.replace(
            state.cycle_metadata, processing=False))
    return state


async def dismiss_question(kernel: Kernel, session_id: str, index: int) -> SuggestedQuestion:
    """Dismiss suggested question ``index`` (0-based) of ``session_id``: the running
    agent does it (a request it reads within 0.2 s, wherever it runs), or, with none
    running, the saved state is changed. `IndexError` naming the count when there is no
    such question. Returns the question dismissed."""
    from ._agent import request

    state = await load_state(kernel, session_id)
    if not 0 <= index < len(state.suggested_questions):
        raise IndexError(f"no suggested question {index + 1} (there are "
                         f"{len(state.suggested_questions)})")
    if agent_running(kernel, session_id):
        request(kernel.home, session_id, {"dismiss": index})
    else:
        await StateStore(kernel).save(session_id, dismiss(state, index))
    return state.suggested_questions[index]


async def action_item(kernel: Kernel, session_id: str, index: int) -> Item:
    """Action item ``index`` (0-based) of ``session_id``; `IndexError` naming the count."""
    state = await load_state(kernel, session_id)
    if not 0 <= index < len(state.action_items):
        raise IndexError(f"no action item {index + 1} (there are {len(state.action_items)})")
    return state.action_items[index]


def act_record(session_id: str, index: int, item: Item) -> CopilotActRecord:
    """The action-log record of the user turning action item ``index`` (0-based) into a
    request: written before the request, which follows as an ordinary run. Its
    ``text`` is the request: the item on one line."""
    return CopilotActRecord(session=session_id, index=index + 1, text=" ".join(item.text.split()),
                            start_s=item.evidence.start_s, end_s=item.evidence.end_s)
