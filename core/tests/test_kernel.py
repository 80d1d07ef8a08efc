"""Kernel loading, registries and lifecycle, with plugins handed over in code."""

from __future__ import annotations

from typing import Any

import pytest

from adjutant import Kernel, PluginLoadError
from adjutant.testing import Harness, ScriptedProvider
from adjutant_hookspecs import (
    CustomEvent,
    ToolCall,
    ToolDeclaration,
    ToolSafety,
    Verdict,
    hookimpl,
)


def decl(name: str, **kw: Any) -> ToolDeclaration:
    kw.setdefault("args_schema", {"type": "object", "properties": {}})
    return ToolDeclaration(name=name, version="1", description="test tool", **kw)


class Tool:
    def __init__(self, declaration: ToolDeclaration) -> None:
        self.declaration = declaration

    async def dry_run(self, call: Any, ctx: Any) -> Any: ...
    async def execute(self, call: Any, ctx: Any) -> Any: ...


class ToolPlugin:
    def __init__(self, name: str, *tools: Any) -> None:
        self.name, self.tools = name, tools

    @hookimpl
    def register_tools(self, register: Any) -> None:
        for tool in self.tools:
            register(tool)


def new_kernel(*plugins: object) -> Kernel:
    return Kernel(plugins=plugins, load_installed=False, env={}).load()


def report(kernel: Kernel, name: str) -> Any:
    return next(p for p in kernel.plugins if p.name == name)


def test_same_tool_name_from_two_plugins_names_both() -> None:
    k = new_kernel(ToolPlugin("first", Tool(decl("x.run"))),
                   ToolPlugin("second", Tool(decl("x.run")), Tool(decl("x.other"))))
    err = report(k, "second").error
    assert report(k, "second").status == "failed"
    assert "'x.run'" in err
    assert "'first'" in err
    assert "'second'" in err
    # loaded whole or not at all: second's other tool is not half-registered
    assert list(k.tools) == ["x.run"]
    assert k.tools.owner("x.run") == "first"


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (object(), "must be a ToolDeclaration"),
        (Tool(decl("Bad Name")), "name must match"),
        (Tool(decl("x.y", args_schema={"type": "string"})), "type 'object'"),
        (Tool(ToolDeclaration(name="x.y", version="1", description="d",
                              args_schema={"type": "object", "required": ["a"]})),
         "required ['a'] not in"),
        (Tool(ToolDeclaration(name="x.y", version=1, description="d",  # type: ignore[arg-type]
                              args_schema={"type": "object"})),
         "Expected `str`, got `int` - at `$.version`"),
        (Tool(decl("x.y", safety=ToolSafety(writes=True, level="write"),
                   supports_dry_run=False)), "must support dry-run"),
    ],
)
def test_malformed_tool_is_refused_precisely(obj: Any, message: str) -> None:
    if not hasattr(obj, "declaration"):
        obj = type("NoDecl", (), {"declaration": obj})()
    k = new_kernel(ToolPlugin("p", obj))
    assert report(k, "p").status == "failed"
    assert message in report(k, "p").error
    assert len(k.tools) == 0


def test_sync_tool_methods_are_refused() -> None:
    class SyncTool(Tool):
        def dry_run(self, call: Any, ctx: Any) -> Any: ...  # type: ignore[override]

    k = new_kernel(ToolPlugin("p", SyncTool(decl("x.y"))))
    assert "dry_run must be async" in report(k, "p").error


def test_registering_twice_and_declaring_an_event_twice() -> None:
    class Thing(CustomEvent, frozen=True, tag="myplugin.thing"):
        n: int

    class Declares:
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl
        def register_events(self, register: Any) -> None:
            register(Thing)

    k = new_kernel(ToolPlugin("twice", Tool(decl("a.b")), Tool(decl("a.b"))),
                   Declares("one"), Declares("two"))
    assert "registered tools 'a.b' twice" in report(k, "twice").error
    assert report(k, "one").status == "loaded"
    assert "'myplugin.thing' is already registered by plugin 'one'" in report(k, "two").error


def test_bad_event_declarations() -> None:
    class NoDot(CustomEvent, frozen=True, tag="nodot"):
        pass

    class Plugin:
        @hookimpl
        def register_events(self, register: Any) -> None:
            register(NoDot)

    k = new_kernel(Plugin())
    assert "dotted lower case" in report(k, "Plugin").error


def test_unknown_hook_and_raising_hook_are_reported() -> None:
    class Typo:
        @hookimpl
        def register_tool(self, register: Any) -> None: ...

    class Raises:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            raise KeyError("missing config")

    k = new_kernel(Typo(), Raises())
    assert "unknown hook" in report(k, "Typo").error
    assert "register_tool" in report(k, "Typo").error
    assert "register_tools raised KeyError: 'missing config'" in report(k, "Raises").error


def test_strict_kernel_raises() -> None:
    with pytest.raises(PluginLoadError, match=r"'p'.*name must match"):
        Kernel(plugins=[ToolPlugin("p", Tool(decl("BAD")))], load_installed=False,
               strict=True, env={}).load()


def test_two_kernels_share_nothing() -> None:
    a, b = new_kernel(ToolPlugin("p", Tool(decl("a.x")))), new_kernel()
    assert "a.x" in a.tools
    assert "a.x" not in b.tools
    assert a.pm is not b.pm
    assert a.bus is not b.bus
    assert a.events["RUN_STARTED"] is b.events["RUN_STARTED"]  # same class, own registry


@pytest.mark.anyio
async def test_lifecycle_order_awaitables_and_aclose() -> None:
    seen: list[str] = []

    class Life:
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl
        def startup(self, kernel: Any) -> Any:
            seen.append(f"start {self.name}")
            if self.name == "b":
                async def later() -> None:
                    seen.append("b awaited")
                return later()
            return None

        @hookimpl
        def shutdown(self, kernel: Any) -> None:
            seen.append(f"stop {self.name}")
            if self.name == "b":
                raise RuntimeError("shutdown errors are logged, others still run")

    provider = ScriptedProvider()
    async with Harness(Life("a"), Life("b"), provider=provider):
        assert seen == ["start a", "start b", "b awaited"]
    assert seen[3:] == ["stop b", "stop a"]
    assert provider.closed


@pytest.mark.anyio
async def test_startup_failure_names_plugin_and_stops_started_ones() -> None:
    stopped: list[str] = []

    class Ok:
        @hookimpl
        def shutdown(self, kernel: Any) -> None:
            stopped.append("ok")

    class Fails:
        @hookimpl
        def startup(self, kernel: Any) -> None:
            raise OSError("port in use")

    with pytest.raises(RuntimeError, match="plugin 'Fails' failed to start: OSError"):
        async with Harness(Ok(), Fails()):
            pass
    assert stopped == ["ok"]


def test_pre_tool_use_fails_closed() -> None:
    class Asks:
        @hookimpl
        def pre_tool_use(self, call: Any, declaration: Any, mode: str) -> Verdict:
            return Verdict(decision="ask", reason=f"{call.tool} writes")

    class Abstains:
        @hookimpl
        def pre_tool_use(self, call: Any) -> None:
            return None

    class Crashes:
        @hookimpl
        def pre_tool_use(self, call: Any) -> None:
            raise ValueError("bug")

    class Garbage:
        @hookimpl
        def pre_tool_use(self, call: Any) -> str:
            return "allow"

    k = new_kernel(Asks(), Abstains(), Crashes(), Garbage())
    verdicts = k.pre_tool_use(ToolCall(tool="x.y"), decl("x.y"), "execute-auto")
    # pluggy's order: the plugin loaded last is called first
    assert [(v.decision, v.policy) for v in verdicts] == [
        ("deny", "Garbage"), ("deny", "Crashes"), ("ask", "Asks")]
    assert "ValueError: bug" in verdicts[1].reason
    assert verdicts[0].reason == "pre_tool_use returned str"
    assert max(v.rank for v in verdicts) == 2


@pytest.mark.anyio
async def test_hook_recorder_attributes_calls() -> None:
    async with Harness(ToolPlugin("tools", Tool(decl("t.x")))) as h:
        assert h.hooks.plugins("register_tools") == ["tools"]
        assert h.kernel.tools.owner("t.x") == "tools"
        assert "adjutant" in h.hooks.plugins("register_events")


def test_tools_mounted_at_run_time_replace_their_prefix_and_are_validated() -> None:
    owner, other = ToolPlugin("remote"), ToolPlugin("other", Tool(decl("other.x")))
    kernel = new_kernel(owner, other)
    refused = kernel.mount_tools("remote", "remote.a.", [
        Tool(decl("remote.a.one")), Tool(decl("remote.a.two")),
        Tool(decl("elsewhere.three")), Tool(decl("remote.a.Bad"))])
    assert sorted(n for n in kernel.tools if n.startswith("remote.")) == ["remote.a.one",
                                                                         "remote.a.two"]
    assert kernel.tools.owner("remote.a.one") == "remote"
    assert refused["elsewhere.three"] == "not under remote.a."
    assert "must match" in refused["remote.a.Bad"]
    # a second mount replaces the first, under that prefix only
    kernel.mount_tools("remote", "remote.a.", [Tool(decl("remote.a.three"))])
    assert [n for n in kernel.tools if n.startswith("remote.")] == ["remote.a.three"]
    assert "other.x" in kernel.tools
    with pytest.raises(ValueError, match="belongs to plugin 'other'"):
        kernel.mount_tools("remote", "other.", [])
    with pytest.raises(ValueError, match="no loaded plugin"):
        kernel.mount_tools("ghost", "ghost.", [])
    assert kernel.plugin_name(owner) == "remote"
