"""The ``register_task_capabilities`` hookspec: capabilities land in
``kernel.task_capabilities``; a malformed one is refused at load, naming what is wrong."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from adjutant.testing import Harness
from adjutant_hookspecs import hookimpl
from adjutant_tasks import TasksPlugin

pytestmark = pytest.mark.anyio


class _Cap:
    def __init__(self, **fields: Any) -> None:
        self.name, self.resource, self.timeout_s, self.retryable = "x.cap", "cpu", 5.0, False
        self.__dict__.update(fields)

    async def run(self, context: Any) -> Mapping[str, Any]:
        return {}


class _Registers:
    def __init__(self, cap: object) -> None:
        self.cap = cap

    @hookimpl
    def register_task_capabilities(self, register: Callable[[Any], None]) -> None:
        register(self.cap)


async def test_capabilities_are_registered_by_name() -> None:
    async with Harness(TasksPlugin(), _Registers(_Cap())) as h:
        assert set(h.kernel.task_capabilities) == {"automation.run", "doc.summarize",
                                                   "tool.call", "x.cap"}
        assert h.kernel.task_capabilities.owner("doc.summarize") == "tasks"


@pytest.mark.parametrize(("fields", "message"), [
    ({"timeout_s": 0}, "timeout_s must be a positive number"),
    ({"timeout_s": True}, "timeout_s must be a positive number"),
    ({"resource": ""}, "resource must be a non-empty string"),
])
async def test_a_malformed_capability_is_refused_at_load(fields: dict[str, Any],
                                                          message: str) -> None:
    from adjutant import PluginLoadError

    with pytest.raises(PluginLoadError, match=message):
        async with Harness(TasksPlugin(), _Registers(_Cap(**fields))):
            pass
