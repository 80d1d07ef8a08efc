"""Hook dispatch overhead and kernel load time, for P plugins (P = 1, 10, 50).

Each plugin is an object with ``@hookimpl`` methods: ``register_tools`` registers
one small valid tool, ``register_commands`` does nothing (so its calls measure
pure dispatch). Per call, in ns:

- direct: ``plugin.register_commands(register=noop)``, the floor;
- kernel, one plugin: ``kernel._call_plugin("register_commands", name, register=noop)``,
  which is how the kernel runs every registration hook while loading a plugin (pluggy's
  ``subset_hook_caller``, through the kernel's per-implementation guard);
- pluggy, all plugins: ``kernel.pm.hook.register_commands(register=noop)``, given per
  implementation called (how the kernel calls ``pre_tool_use`` and
  ``confirmation_details``: every hook goes through pluggy).

Then ``kernel.pre_tool_use(...)`` (run for every tool step) with P plugins loaded
of which 1 or all P implement the hook (abstaining), against pluggy's own call of
the same hook.

The built-in plugin is unregistered from the measured plugin manager so that every
variant calls exactly the P bench implementations. Then: ``Kernel(plugins=...,
load_installed=False).load()`` wall time for P plugins (a fresh kernel each time,
the built-in plugin included), and the marginal cost per plugin above P = 0.

Why: loading must stay cheap (it is on the path of every ``adjutant`` command),
and the cost per plugin should not grow with the number of plugins.

Run: ``.venv/bin/python bench/hooks.py [--quick] [--plugins 1,10,50]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

from adjutant import Kernel
from adjutant_hookspecs import (
    ExecutionResult,
    Tool,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    Verdict,
    hookimpl,
)

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


class BenchTool:
    """The smallest valid tool: a read-only declaration and two async methods."""

    def __init__(self, name: str) -> None:
        self.declaration = ToolDeclaration(name=name, version="1", description="d",
                                           args_schema=SCHEMA)

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return ExecutionResult(tool=call.tool, args=call.args, status="ok")


class BenchPlugin:
    """A plugin object with a distinct name and one distinct tool."""

    def __init__(self, index: int) -> None:
        self.name = f"bench-plugin-{index}"
        self.tool_name = f"bench.t{index}"

    @hookimpl
    def register_tools(self, register: Callable[[Tool], None]) -> None:
        register(BenchTool(self.tool_name))

    @hookimpl
    def register_commands(self, register: Callable[[Any], None]) -> None:
        return None


class BenchPolicyPlugin(BenchPlugin):
    """A bench plugin that also takes part in the per-step safety check (abstains)."""

    @hookimpl
    def pre_tool_use(self, call: ToolCall, declaration: ToolDeclaration,
                     mode: str) -> Verdict | None:
        return None


def noop(obj: object) -> None:
    return None


def ns_per_call(fn: Callable[[], object], number: int, repeat: int) -> float:
    """Best-of-``repeat`` ns per call of ``fn`` (timeit, ``number`` calls a run)."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def build(count: int, policies: int = 0) -> Kernel:
    """A loaded kernel with ``count`` bench plugins, the last ``policies`` of which
    implement ``pre_tool_use``."""
    plugins = [BenchPolicyPlugin(i) if i >= count - policies else BenchPlugin(i)
               for i in range(count)]
    return Kernel(plugins=plugins, load_installed=False, env={}, strict=True).load()


def load_ms(count: int, repeat: int) -> float:
    """Median wall time of building and loading a kernel with ``count`` plugins, ms."""
    samples = []
    for _ in range(repeat):
        plugins = [BenchPlugin(i) for i in range(count)]
        gc.collect()
        start = time.perf_counter()
        kernel = Kernel(plugins=plugins, load_installed=False, env={}, strict=True).load()
        samples.append((time.perf_counter() - start) * 1000)
        if len(kernel.tools) != count:
            raise SystemExit(f"expected {count} tools, the kernel has {len(kernel.tools)}")
    return statistics.median(samples)


def dispatch(count: int, calls: int, repeat: int) -> dict[str, float]:
    """ns per call (or per implementation called) of each dispatch path."""
    kernel = build(count)
    # measure the P bench implementations only
    kernel.pm.unregister(name="adjutant")
    del kernel._objects["adjutant"], kernel._impls["adjutant"]
    name = f"bench-plugin-{count - 1}"
    plugin = kernel._objects[name]
    assert isinstance(plugin, BenchPlugin)
    impls = len(kernel.pm.hook.register_commands.get_hookimpls())
    if impls != count:
        raise SystemExit(f"expected {count} register_commands implementations, got {impls}")
    call_plugin = kernel._call_plugin
    hook = kernel.pm.hook.register_commands
    per_impl_calls = max(calls // count, 100)
    return {
        "direct": ns_per_call(lambda: plugin.register_commands(register=noop), calls, repeat),
        "kernel, one plugin": ns_per_call(
            lambda: call_plugin("register_commands", name, register=noop), calls, repeat),
        "pluggy, all, per impl": ns_per_call(
            lambda: hook(register=noop), per_impl_calls, repeat) / count,
    }


def pre_tool_use(count: int, policies: int, calls: int, repeat: int) -> tuple[float, float]:
    """ns per tool step of ``kernel.pre_tool_use`` and of the plain pluggy hook call."""
    kernel = build(count, policies)
    call = ToolCall(tool="bench.t0")
    declaration = kernel.tools["bench.t0"].declaration
    step = kernel.pre_tool_use
    hook = kernel.pm.hook.pre_tool_use
    return (
        ns_per_call(lambda: step(call, declaration, "execute-auto"), calls, repeat),
        ns_per_call(lambda: hook(call=call, declaration=declaration, mode="execute-auto"),
                    calls, repeat),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few calls (CI smoke test)")
    parser.add_argument("--plugins", default="1,10,50",
                        help="comma-separated plugin counts (default 1,10,50)")
    opts = parser.parse_args()
    counts = [int(p) for p in opts.plugins.split(",")]
    calls, repeat, loads = (2_000, 3, 3) if opts.quick else (50_000, 7, 21)

    dispatch(counts[0], calls, repeat)  # warm-up: imports, caches, the CPU's clock
    print(f"hooks: ns per call, best of {repeat} runs of {calls:,} calls "
          "(calls over all plugins: runs of calls/P)\n")
    names = ["direct", "kernel, one plugin", "pluggy, all, per impl"]
    print(f"{'P':>4}  " + "".join(f"{n:>23}" for n in names) + f"{'one plugin / direct':>21}")
    for count in counts:
        row = dispatch(count, calls, repeat)
        ratio = row["kernel, one plugin"] / row["direct"]
        print(f"{count:>4}  " + "".join(f"{row[n]:>23,.0f}" for n in names) + f"{ratio:>20.1f}x")

    step_calls = max(calls // 10, 200)
    print("\nkernel.pre_tool_use(call, declaration, mode): ns per tool step (every step of "
          "every plan pays it)")
    print(f"{'P':>4} {'implementers':>13} {'kernel ns':>11} {'pluggy hook ns':>15} "
          f"{'kernel / pluggy':>16}")
    for count in counts:
        for policies in sorted({1, count}):
            kernel_ns, pluggy_ns = pre_tool_use(count, policies, step_calls, repeat)
            print(f"{count:>4} {policies:>13} {kernel_ns:>11,.0f} {pluggy_ns:>15,.0f} "
                  f"{kernel_ns / pluggy_ns:>15.1f}x")

    print(f"\nKernel(plugins=[...P], load_installed=False).load(): median of {loads}, "
          "built-in plugin included")
    print(f"{'P':>4} {'load ms':>9} {'ms per plugin above P=0':>24}")
    empty = load_ms(0, loads)
    print(f"{0:>4} {empty:>9.2f} {'-':>24}")
    for count in counts:
        total = load_ms(count, loads)
        print(f"{count:>4} {total:>9.2f} {(total - empty) / count:>24.3f}")


if __name__ == "__main__":
    main()
