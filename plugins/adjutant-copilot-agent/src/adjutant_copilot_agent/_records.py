"""adjutant-copilot-agent's action-log records (kinds the kernel's schema does not list:
read back as `adjutant_hookspecs.records.ExtensionRecord`)."""

from __future__ import annotations

from adjutant_hookspecs.records import ActionRecord

__all__ = ["CopilotActRecord"]


class CopilotActRecord(ActionRecord, frozen=True, kw_only=True, tag="copilot_agent_act"):
    """The user turned an action item into a request: which item, of which recording,
    with its evidence span. The request itself follows as an ordinary run."""

    session: str
    index: int
    text: str
    start_s: float
    end_s: float
