"""The operator: from a request (or a direct tool call) to its effects, through the
safety pipeline, with consent and a durable action log.

- `Copilot` (``_copilot``): the long-lived operator of one kernel; each request is a
  `Run` (``_run``) that owns its ids, thread, mode, context, grants, approval tokens
  and cancel scope. Its parts: `OperatorState` (``_state``: mode, grants, preset),
  `Workspace` (``_context``: cwd, cages, bulletin), `Prompting` (``_prompting``:
  the model), `Execution` (``_execution``: consent and steps).
- `Pipeline` (``_pipeline``): the seven steps of every tool call.
- ``planner``: prompts, menus and reply grammars for small local models (public
  as `adjutant.operator.planner` too).
- Consent (``_consent``, ``_approval_events``), replies (``_replies``), artifacts and
  bundles (``_artifacts``), sessions (``_sessions``) and the action log (``_actionlog``).
"""

from __future__ import annotations

from ._actionlog import ActionLog, ActionLogError, NoActionLogError
from ._consent import (
    Approver,
    Escalation,
    PlanDecision,
    PlanPacket,
    Requester,
    StepDecision,
    StepPacket,
)
from ._copilot import Copilot
from ._pipeline import Pipeline
from ._replies import parse_reply
from ._run import Run, RunOutcome
from ._state import Channel, OperatorState, key_value_store

__all__ = [
           "ActionLog",
           "ActionLogError",
           "Approver",
           "Channel",
           "Copilot",
           "Escalation",
           "NoActionLogError",
           "OperatorState",
           "Pipeline",
           "PlanDecision",
           "PlanPacket",
           "Requester",
           "Run",
           "RunOutcome",
           "StepDecision",
           "StepPacket",
           "key_value_store",
           "parse_reply",
]
