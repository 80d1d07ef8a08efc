"""Past plans: the protocol of a plan recaller (a request to this user's earlier
successful plans for requests like it).

The planner asks every registered recaller before it chooses a request's first step:
what this user's own earlier requests like this one became, when they ran and
succeeded, weighs beside the bundled bank of worked examples. ``adjutant-memory``
recalls them from the action log.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["PlanRecaller"]


@runtime_checkable
class PlanRecaller(Protocol):
    """Recalls past successful plans for requests like a new one.

    ``similar_plans(request, k)`` returns at most ``k`` pairs, best first: ``(the
    earlier request, its plan as JSON)``, the JSON being ``{"steps": [{"tool": ...,
    "args": {...}}, ...]}``. Synchronous and fast (it runs before every plan): search
    what is already read, never a model. Never return a plan that touched a path the
    deny rules protect; redact the requests. The values in a returned plan are the
    earlier request's: the planner uses its tools, never copies its values.
    """

    name: str

    def similar_plans(self, request: str, k: int) -> list[tuple[str, str]]:
        ...
