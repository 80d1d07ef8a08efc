"""Hooks dispatch the way pluggy documents: call order, ``tryfirst``/``trylast``,
new-style and old-style wrappers, hook-call monitoring (``ADJUTANT_TRACE_HOOKS``),
with the kernel's fail-closed coercion and per-plugin error isolation kept."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pluggy
import pytest

from adjutant import Kernel, PluginLoadError
from adjutant.testing import Harness, ScriptedApprover
from adjutant_hookspecs import (
    ExecutionResult,
    Plan,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    Verdict,
    hookimpl,
)

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
READ = ToolDeclaration(name="t.read", version="1", description="Read.", args_schema=SCHEMA)


def new_kernel(*plugins: object, env: dict[str, str] | None = None) -> Kernel:
    return Kernel(plugins=plugins, load_installed=False, env=env or {}).load()


def report(kernel: Kernel, name: str) -> Any:
    return next(p for p in kernel.plugins if p.name == name)


def verdicts(kernel: Kernel) -> list[tuple[str, str]]:
    return [(v.decision, v.policy) for v in
            kernel.pre_tool_use(ToolCall(tool="t.read"), READ, "execute-auto")]


class Says:
    """Plain ``pre_tool_use`` and ``confirmation_details`` implementations, with
    pluggy's ordering options."""

    def __init__(self, name: str, decision: str = "allow", *, tryfirst: bool = False,
                 trylast: bool = False) -> None:
        self.name = name
        self.decision = decision

        def pre_tool_use(call: ToolCall, declaration: Any, mode: str) -> Verdict:
            return Verdict(decision=self.decision, reason=f"{self.name} says so")  # type: ignore[arg-type]

        def confirmation_details(call: ToolCall) -> dict[str, Any]:
            return {"who": self.name, self.name: True}

        self.pre_tool_use = hookimpl(tryfirst=tryfirst, trylast=trylast)(pre_tool_use)
        self.confirmation_details = hookimpl(tryfirst=tryfirst, trylast=trylast)(
            confirmation_details)


# -- order ----------------------------------------------------------------------------------

def test_default_order_is_pluggys_last_loaded_first() -> None:
    k = new_kernel(Says("a"), Says("b"), Says("c"))
    assert verdicts(k) == [("allow", "c"), ("allow", "b"), ("allow", "a")]


def test_tryfirst_and_trylast_move_an_implementation() -> None:
    k = new_kernel(Says("first", tryfirst=True), Says("a"), Says("last", trylast=True),
                   Says("b"))
    assert verdicts(k) == [("allow", "first"), ("allow", "b"), ("allow", "a"),
                           ("allow", "last")]
    # the order is also the one the hook recorder sees and the one that wins a key
    details = k.confirmation_details(ToolCall(tool="t.read"), READ, None, "/")
    assert details["who"] == "first"
    assert {"first", "a", "b", "last"} <= set(details)


@pytest.mark.anyio
async def test_the_first_of_equal_verdicts_is_the_one_shown_so_tryfirst_decides_it() -> None:
    async with Harness(Says("loud", "deny"), Says("quiet", "deny", tryfirst=True)) as h:
        shown = h.kernel.pre_tool_use(ToolCall(tool="t.read"), READ, "execute-auto")
        assert shown[0].policy == "quiet"
        assert h.hooks.plugins("pre_tool_use") == ["quiet", "loud"]


@pytest.mark.anyio
async def test_startup_runs_in_load_order_with_tryfirst_and_trylast_applied() -> None:
    seen: list[str] = []

    class Life:
        def __init__(self, name: str, *, tryfirst: bool = False,
                     trylast: bool = False) -> None:
            self.name = name

            def startup(kernel: Any) -> None:
                seen.append(f"start {name}")

            def shutdown(kernel: Any) -> None:
                seen.append(f"stop {name}")

            self.startup = hookimpl(tryfirst=tryfirst, trylast=trylast)(startup)
            self.shutdown = hookimpl(tryfirst=tryfirst, trylast=trylast)(shutdown)

    async with Harness(Life("a"), Life("late", trylast=True), Life("b"),
                       Life("early", tryfirst=True)):
        assert seen == ["start early", "start a", "start b", "start late"]
    # shutdown: reverse of start-up, and again tryfirst first, trylast last
    assert seen[4:] == ["stop early", "stop b", "stop a", "stop late"]


# -- wrappers around pre_tool_use -------------------------------------------------------------

class Veto:
    """A new-style wrapper: it sees every verdict and turns any allow into a deny."""

    name = "veto"

    def __init__(self) -> None:
        self.seen: list[list[tuple[str, str]]] = []

    @hookimpl(wrapper=True)
    def pre_tool_use(self, call: ToolCall) -> Generator[None, list[Verdict], list[Verdict]]:
        inner = yield
        self.seen.append([(v.decision, v.policy) for v in inner])
        return [Verdict("deny", "no allows today") if v.decision == "allow" else v
                for v in inner]


def test_a_new_style_wrapper_sees_and_changes_the_outcome() -> None:
    veto = Veto()
    k = new_kernel(veto, Says("a"), Says("b", "ask"))
    assert verdicts(k) == [("ask", "b"), ("deny", "veto")]
    assert veto.seen == [[("ask", "b"), ("allow", "a")]]


def test_a_wrapper_sees_a_crashing_or_garbage_implementation_as_a_deny_naming_it() -> None:
    class Crashes:
        @hookimpl
        def pre_tool_use(self) -> None:
            raise ValueError("bug")

    class Garbage:
        @hookimpl
        def pre_tool_use(self) -> str:
            return "allow"

    veto = Veto()
    k = new_kernel(veto, Says("a", "ask"), Crashes(), Garbage())
    assert verdicts(k) == [("deny", "Garbage"), ("deny", "Crashes"), ("ask", "a")]
    assert veto.seen == [[("deny", "Garbage"), ("deny", "Crashes"), ("ask", "a")]]


def test_an_old_style_hookwrapper_can_force_the_result() -> None:
    class Old:
        name = "old"

        @hookimpl(hookwrapper=True)
        def pre_tool_use(self, mode: str) -> Generator[None, Any, None]:
            outcome = yield
            if mode == "execute-auto":
                outcome.force_result([*outcome.get_result(),
                                      Verdict("ask", "auto mode: ask anyway")])

    k = new_kernel(Old(), Says("a"))
    assert verdicts(k) == [("allow", "a"), ("ask", "old")]


def test_a_failing_wrapper_is_a_deny_naming_it() -> None:
    class Raises:
        name = "raises"

        @hookimpl(wrapper=True)
        def pre_tool_use(self) -> Generator[None, Any, Any]:
            yield
            raise RuntimeError("wrapper bug")

    class Returns:
        name = "returns"

        @hookimpl(wrapper=True)
        def pre_tool_use(self) -> Generator[None, Any, Any]:
            yield
            return "allow"

    class ReturnsStrings:
        name = "strings"

        @hookimpl(wrapper=True)
        def pre_tool_use(self) -> Generator[None, Any, Any]:
            yield
            return ["allow", Verdict("allow", "unsigned")]

    raised = new_kernel(Says("a"), Raises()).pre_tool_use(ToolCall(tool="t.read"), READ,
                                                          "execute-auto")
    assert [(v.decision, v.policy) for v in raised] == [("deny", "raises")]
    assert "RuntimeError: wrapper bug" in raised[0].reason
    returned = new_kernel(Says("a"), Returns()).pre_tool_use(ToolCall(tool="t.read"), READ,
                                                             "execute-auto")
    assert [(v.decision, v.policy) for v in returned] == [("deny", "returns")]
    assert returned[0].reason == "pre_tool_use wrapper returned str, not a list"
    assert verdicts(new_kernel(Says("a"), ReturnsStrings())) == [("deny", "strings"),
                                                                 ("allow", "strings")]


def test_a_wrapper_that_never_yields_is_a_deny_naming_it() -> None:
    class NoYield:
        name = "noyield"

        @hookimpl(wrapper=True)
        def pre_tool_use(self) -> Generator[None, Any, Any]:
            yield from ()
            return []

    denied = new_kernel(Says("a"), NoYield()).pre_tool_use(ToolCall(tool="t.read"), READ,
                                                           "execute-auto")
    assert [(v.decision, v.policy) for v in denied] == [("deny", "noyield")]
    assert "did not yield" in denied[0].reason


class Read:
    declaration = READ

    def __init__(self) -> None:
        self.ran = 0

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        self.ran += 1
        return ExecutionResult(tool=call.tool, args=call.args, status="ok", stdout="text")


class Tools:
    name = "tools"

    def __init__(self) -> None:
        self.read = Read()

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(self.read)


@pytest.mark.anyio
async def test_a_wrapper_decides_a_real_step_and_the_log_says_so() -> None:
    tools = Tools()
    read = Plan(steps=(ToolCall(tool="t.read"),))
    async with Harness(tools, Says("reads-ok"), Veto(), mode="execute-with-confirmation",
                       approver=ScriptedApprover()) as h:
        outcome = await h.run("read it", reply=read)
        assert outcome.status == "denied"
        assert tools.read.ran == 0
        assert "veto: no allows today" in outcome.results[0].stderr
        decisions = outcome.logged("decision")
        assert decisions and decisions[-1]["policy"] == "veto"
    # without the wrapper the same step runs
    tools = Tools()
    async with Harness(tools, Says("reads-ok"), mode="execute-with-confirmation",
                       approver=ScriptedApprover()) as h:
        assert (await h.run("read it", reply=read)).status == "executed"
        assert tools.read.ran == 1


def test_a_wrapper_around_confirmation_details_adds_to_the_packet() -> None:
    class Stamp:
        name = "stamp"

        @hookimpl(wrapper=True)
        def confirmation_details(self) -> Generator[None, Any, Any]:
            inner = yield
            return [*inner, {"risk": "checked by stamp"}]

    class Crashes:
        @hookimpl
        def confirmation_details(self) -> None:
            raise OSError("no disk")

    k = new_kernel(Stamp(), Says("a"), Crashes())
    details = k.confirmation_details(ToolCall(tool="t.read"), READ, None, "/")
    assert details["who"] == "a" and details["risk"] == "checked by stamp"
    assert len(details["errors"]) == 1 and details["errors"][0].startswith("Crashes: OSError")


# -- wrappers where there is nothing to wrap are refused at load --------------------------------

@pytest.mark.parametrize("option", ["wrapper", "hookwrapper"])
@pytest.mark.parametrize("hook", ["register_tools", "startup"])
def test_a_wrapper_on_a_registration_or_lifecycle_hook_is_refused_naming_plugin_and_hook(
    option: str, hook: str,
) -> None:
    class Wraps:
        name = "wraps"

    def impl() -> Generator[None, Any, Any]:
        return (yield)

    setattr(Wraps, hook, staticmethod(hookimpl(wrapper=option == "wrapper",
                                                    hookwrapper=option == "hookwrapper")(impl)))
    k = new_kernel(Wraps(), Says("ok"))
    info = report(k, "wraps")
    assert info.status == "failed"
    assert f"{hook} cannot be a wrapper (@hookimpl({option}=True))" in info.error
    assert "wraps" not in [p.name for p in k.plugins if p.status == "loaded"]
    assert k.pm.get_plugin("wraps") is None
    assert report(k, "ok").status == "loaded"
    with pytest.raises(PluginLoadError, match=rf"plugin 'wraps': {hook} cannot be a wrapper"):
        Kernel(plugins=[Wraps()], load_installed=False, env={}, strict=True).load()


# -- tracing --------------------------------------------------------------------------------

def test_adjutant_trace_hooks_writes_every_hook_call_with_its_implementations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    k = new_kernel(Veto(), Says("a"), Says("first", tryfirst=True),
                   env={"ADJUTANT_TRACE_HOOKS": "1"})
    k.pre_tool_use(ToolCall(tool="t.read"), READ, "execute-auto")
    err = capsys.readouterr().err
    assert "hook register_events(register=" in err  # registration, per plugin, as it loads
    assert "hook pre_tool_use(call=ToolCall(" in err
    assert "-> veto [wrapper], first, a\n" in err
    assert "hook pre_tool_use returned [Verdict(" in err
    assert " ms)\n" in err


def test_no_tracing_without_the_variable(capsys: pytest.CaptureFixture[str]) -> None:
    k = new_kernel(Says("a"))
    k.pre_tool_use(ToolCall(tool="t.read"), READ, "execute-auto")
    assert "hook" not in capsys.readouterr().err


def test_tracing_shows_a_raising_hook() -> None:
    lines: list[str] = []

    class Raises:
        @hookimpl
        def register_tools(self) -> None:
            raise KeyError("missing")

    k = Kernel(load_installed=False, env={})
    from adjutant.kernel._hooks import trace_hooks

    trace_hooks(k.pm, lines.append)
    k.add_plugin(Raises())
    assert any(line.startswith("hook register_tools raised KeyError") for line in lines), lines
    assert report(k, "Raises").status == "failed"


def test_hooks_go_through_pluggys_hook_call_monitoring() -> None:
    calls: list[str] = []
    k = new_kernel(Says("a"))

    def before(hook: str, impls: Any, kwargs: Any) -> None:
        calls.append(hook)

    def after(outcome: pluggy.Result[Any], hook: str, impls: Any, kwargs: Any) -> None:
        pass

    undo = k.pm.add_hookcall_monitoring(before, after)
    k.pre_tool_use(ToolCall(tool="t.read"), READ, "execute-auto")
    k.confirmation_details(ToolCall(tool="t.read"), READ, None, "/")
    k.add_plugin(Tools())
    undo()
    assert calls[:2] == ["pre_tool_use", "confirmation_details"]
    assert "register_tools" in calls[2:]


def test_speech_recognizers_are_registered_like_any_kind_and_observed() -> None:
    """Recognizers go through the kernel's registration (validated, owned, observed),
    so no plugin ever calls another's implementation by hand."""
    from adjutant_hookspecs import hookimpl

    class Ear:
        name, remote, destination = "ear", False, "this machine"

        async def recognize(self, request: Any) -> str:
            return ""

    class Registers:
        @hookimpl
        def register_speech_recognizers(self, register: Any) -> None:
            register(Ear())

    class Broken:
        @hookimpl
        def register_speech_recognizers(self, register: Any) -> None:
            register("a recognizer")

    kernel = Kernel(load_installed=False, env={})
    seen: list[Any] = []
    kernel.observe_hooks(seen.append)
    kernel.add_plugin(Registers(), name="registers")
    assert kernel.speech_recognizers.owner("ear") == "registers"
    assert [c.plugin for c in seen if c.hook == "register_speech_recognizers"] == ["registers"]
    info = kernel.add_plugin(Broken(), name="broken")
    assert info.status == "failed" and "register_speech_recognizers" in (info.error or "")
