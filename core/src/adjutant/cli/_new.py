"""``adjutant new plugin NAME [--kind tool|policy|provider|context]``: a plugin package
whose tests pass at once.

The package is complete (pyproject with its entry point, README, ``src/``, ``tests/``
with the conformance suite of its kind, the entry-point and cheap-import checks), and
small enough to read in a minute. Placeholders in the templates: ``__NAME__`` (the
plugin's name, ``my_plugin``), ``__MODULE__`` (``adjutant_my_plugin``), ``__DIST__``
(``adjutant-my-plugin``) and ``__SOURCES__`` (uv sources pointing at this checkout).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["KINDS", "configure", "generate", "new"]

NAME = re.compile(r"^[a-z][a-z0-9_]{0,30}$")
KINDS = ("tool", "policy", "provider", "context")

_PYPROJECT = '''[project]
name = "__DIST__"
version = "0.1.0"
description = "__SUMMARY__"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["adjutant-hookspecs>=0.1"]

[project.optional-dependencies]
test = ["adjutant-core[testing]>=0.1", "pytest>=8.3", "trio>=0.27"]

# How the kernel finds the plugin: `<name> = "<import name>"` in the `adjutant` group.
[project.entry-points.adjutant]
__NAME__ = "__MODULE__"

[build-system]
requires = ["hatchling>=1.26"]
build-backend = "hatchling.build"

[tool.hatch.build.targets.wheel]
packages = ["src/__MODULE__"]

[tool.pytest.ini_options]
addopts = ["--strict-markers", "--import-mode=importlib"]
filterwarnings = ["error"]
__SOURCES__'''

_README = '''# __DIST__

__SUMMARY__ An [Adjutant](https://example.invalid/adjutant) plugin, made by
`adjutant new plugin __NAME__ --kind __KIND__`.

```sh
uv pip install -e '.[test]'     # or: pip install -e '.[test]'
pytest                           # the conformance suite of its kind, on asyncio and trio
adjutant plugins                 # __NAME__  loaded  0.1.0  entry-point  ...
```

`src/__MODULE__/__init__.py` is the plugin; `tests/` proves it keeps the contract
(`adjutant.testing.conformance`), registers what it says, is found by its entry point
and stays cheap to import. See the Adjutant guide `docs/guides/writing-a-plugin.md`.
'''

_CONFTEST = '''"""Opt in to the Adjutant test harness (`adjutant.testing`: asyncio and trio)."""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Rather than `pytest_plugins = ["adjutant.testing"]`, which pytest rejects in a
    # conftest that is not top-level (as when the repository's root runs every plugin's
    # tests at once). A no-op when `-p adjutant.testing` (the root config) loaded it.
    config.pluginmanager.import_plugin("adjutant.testing")
'''

_COMMON_TESTS = '''"""The plugin registers what it says, by itself and through its entry point, and
importing it stays cheap (the kernel imports every installed plugin at start-up)."""

from pathlib import Path

import pytest

import __MODULE__
from adjutant.testing.plugin_checks import (
    assert_cheap_import,
    assert_entry_point,
    assert_registers,
)

#: What this plugin registers, by kind; update it along with the plugin.
REGISTERS = __REGISTERS__
PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


@pytest.mark.anyio
async def test_registers_what_it_says() -> None:
    await assert_registers(__MODULE__, REGISTERS)


def test_entry_point_is_found_and_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert_entry_point(PYPROJECT, __MODULE__, REGISTERS, tmp_path, monkeypatch)


def test_import_does_not_load_heavy_modules() -> None:
    assert_cheap_import(__MODULE__, {"anyio", "httpx", "numpy", "trio"})
'''

_TOOL = '''"""``__NAME__.echo``: a read-only tool. Replace it with yours.

Keep this module cheap to import (heavy libraries inside the methods that use them).
"""

from __future__ import annotations

from collections.abc import Callable

from adjutant_hookspecs import (
    ExecutionResult,
    Tool,
    ToolCall,
    ToolContext,
    ToolDeclaration,
    ToolSafety,
    hookimpl,
)

__all__ = ["Echo", "register_tools"]


class Echo:
    """Return the ``text`` argument."""

    # What the operator plans with and the safety pipeline checks: a strict schema,
    # an honest safety level, examples that fit the schema (checked at registration).
    # Mark paths with "x-adjutant-role": "path" so policies can judge them.
    declaration = ToolDeclaration(
        name="__NAME__.echo",
        version="0.1.0",
        description="Echo the given text back.",
        args_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to echo."}},
            "required": ["text"],
            "additionalProperties": False,
        },
        safety=ToolSafety(level="read"),
        examples=({"text": "hello"},),
    )

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        """The exact effect, doing nothing: approvals are bound to this preview."""
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="dry_run",
                               dry_run_diff=f"echo {call.args.get('text')!r}")

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        text = call.args.get("text")
        if not isinstance(text, str):  # a failure is a result, never a raise
            return ExecutionResult(tool=call.tool, args=dict(call.args), status="error",
                                   stderr="__NAME__.echo: `text` must be a string")
        return ExecutionResult(tool=call.tool, args=dict(call.args), status="ok",
                               stdout=f"{text}\\n")


@hookimpl
def register_tools(register: Callable[[Tool], None]) -> None:
    register(Echo())
'''

_TOOL_TESTS = '''"""The standard tool checks, the tool's own behaviour, and the tool as a user meets
it: planned by a model, previewed and run by the operator."""

import pytest

import __MODULE__
from adjutant.testing import Harness, ScriptedApprover, plan
from adjutant.testing.conformance import ToolConformance


class TestEcho(ToolConformance):
    # Fixtures are overridden on the class: `tool` (required), and optionally `ctx`
    # (where the example calls run) and `calls` (default: the declared examples).
    @pytest.fixture
    def tool(self) -> __MODULE__.Echo:
        return __MODULE__.Echo()


@pytest.mark.anyio
async def test_previews_then_echoes() -> None:
    async with Harness(__MODULE__) as h:  # a kernel with only this plugin
        preview = await h.dry_run("__NAME__.echo", text="hi")
        result = await h.execute("__NAME__.echo", text="hi")
    assert (preview.status, preview.dry_run_diff) == ("dry_run", "echo 'hi'")
    assert (result.status, result.stdout) == ("ok", "hi\\n")


@pytest.mark.anyio
async def test_the_operator_previews_asks_and_runs_it() -> None:
    # The scripted model replies with a plan; with no safety policy installed every
    # step asks (add adjutant_guard and adjutant_write_gate to the Harness to see what
    # a user's installation decides), and the approver grants.
    async with Harness(__MODULE__, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        run = await h.run("say hi", reply=plan(("__NAME__.echo", {"text": "hi"})))
    assert run.status == "executed" and run.tools == ["__NAME__.echo"]
    assert [p.preview for p in run.asked] == ["echo 'hi'"]  # the user saw the exact effect
    assert run.results[0].stdout == "hi\\n"
    assert run.logged("approval")[0]["action"] == "grant"  # the log has the answer
'''

_POLICY = '''"""``__NAME__``: a safety policy. It refuses paths under the directories it protects
and has no opinion on anything else. Replace the rule with yours.

A Policy answers every step: ``deny``, ``ask``, ``allow`` or ``Verdict.abstain()`` for
"not my business" (never ``allow`` for that: an ``allow`` is an opinion, and when
no policy has one the step asks). For a quick synchronous veto from the call alone, a
``pre_tool_use`` hook is enough.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from adjutant_hookspecs import Policy, PolicyRequest, RoleProblem, Verdict, hookimpl, role_values

__all__ = ["Protect", "register_policies"]


class Protect:
    """Refuses paths under the protected directories (resolved against the cwd)."""

    name = "__NAME__"
    description = "refuses paths under the directories it protects"

    def __init__(self, protected: Sequence[str] = ("/etc",)) -> None:
        self.protected = tuple(os.path.realpath(p) for p in protected)

    async def evaluate(self, request: PolicyRequest) -> Verdict:
        return self.judge(request)

    def judge(self, request: PolicyRequest) -> Verdict:
        """The verdict; quick checks with a few syscalls need no thread."""
        try:  # the arguments the tool marks as paths, at any depth
            values = role_values(request.declaration.args_schema, request.call.args)
        except RoleProblem as exc:
            return Verdict("deny", f"cannot tell which arguments are paths: {exc}")
        for value in values:
            if value.role != "path" or not isinstance(value.value, str):
                continue
            path = os.path.realpath(os.path.join(request.cwd, value.value))
            for root in self.protected:
                if path == root or path.startswith(root + os.sep):
                    return Verdict("deny", f"{value.where} is under {root}, which is protected")
        return Verdict.abstain()


@hookimpl
def register_policies(register: Callable[[Policy], None]) -> None:
    register(Protect())
'''

_POLICY_TESTS = '''"""The standard policy checks and the policy's own rule."""

import pytest

import __MODULE__
from adjutant.testing.conformance import PolicyConformance
from adjutant_hookspecs import PolicyRequest, ToolCall, ToolDeclaration

READ = ToolDeclaration(
    name="files.read", version="1", description="Read a file.",
    args_schema={"type": "object", "required": ["path"],
                 "properties": {"path": {"type": "string", "x-adjutant-role": "path"}}})


def request(path: str) -> PolicyRequest:
    return PolicyRequest(call=ToolCall(tool="files.read", args={"path": path}),
                         declaration=READ, mode="execute-with-confirmation", cwd="/tmp")


class TestProtect(PolicyConformance):
    @pytest.fixture
    def policy(self) -> __MODULE__.Protect:
        return __MODULE__.Protect()

    @pytest.fixture
    def requests(self) -> list[PolicyRequest]:
        return [request("/etc/passwd"), request("notes.txt")]


@pytest.mark.anyio
async def test_denies_protected_paths_and_abstains_on_the_rest() -> None:
    policy = __MODULE__.Protect()
    denied = await policy.evaluate(request("../etc/shadow"))
    assert denied.decision == "deny" and "protected" in denied.reason
    assert (await policy.evaluate(request("notes.txt"))).decision == "abstain"
'''

_PROVIDER = '''"""``__NAME__``: a model provider. This one streams the prompt back word by word;
replace ``complete`` with calls to your backend (import its client inside the method).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    Provider,
    ProviderCapabilities,
    hookimpl,
)

__all__ = ["EchoProvider", "register_providers"]


class EchoProvider:
    """Streams the prompt back, then a final chunk with ``finish_reason``."""

    name = "__NAME__"
    capabilities = ProviderCapabilities(streaming=True)

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        words = request.prompt.split()[: request.max_tokens]
        for index, word in enumerate(words):
            yield CompletionChunk(text=word if index == 0 else f" {word}")
        yield CompletionChunk(finish_reason="stop")

    async def aclose(self) -> None:
        """Free the backend (close connections); a later request opens them again."""


@hookimpl
def register_providers(register: Callable[[Provider], None]) -> None:
    register(EchoProvider())
'''

_PROVIDER_TESTS = '''"""The standard provider checks and the provider's own output."""

import pytest

import __MODULE__
from adjutant.testing.conformance import ProviderConformance
from adjutant_hookspecs import CompletionRequest


class TestEchoProvider(ProviderConformance):
    @pytest.fixture
    def provider(self) -> __MODULE__.EchoProvider:
        return __MODULE__.EchoProvider()


@pytest.mark.anyio
async def test_streams_the_prompt_back() -> None:
    provider = __MODULE__.EchoProvider()
    chunks = [c async for c in provider.complete(CompletionRequest(prompt="say hello"))]
    assert "".join(c.text for c in chunks) == "say hello"
    assert chunks[-1].finish_reason == "stop"
'''

_CONTEXT = '''"""``__NAME__``: a context provider. It names the most recently changed file of the
working directory as the user's ``focus``; replace ``gather`` with your source.

Context is shown to the user before it is used: contribute facts, never instructions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from adjutant_hookspecs import ContextProvider, hookimpl

__all__ = ["RecentFile", "register_context_providers"]


class RecentFile:
    """The newest regular file directly in the cwd, as ``focus``."""

    name = "__NAME__"

    async def gather(self, cwd: str) -> Mapping[str, Any]:
        newest: tuple[float, str] | None = None
        try:
            with os.scandir(cwd) as entries:
                for entry in entries:
                    if entry.is_file(follow_symlinks=False) and not entry.name.startswith("."):
                        mtime = entry.stat(follow_symlinks=False).st_mtime
                        if newest is None or mtime > newest[0]:
                            newest = (mtime, entry.name)
        except OSError:
            return {}  # an unreadable directory costs this field, not the request
        return {"focus": newest[1]} if newest else {}


@hookimpl
def register_context_providers(register: Callable[[ContextProvider], None]) -> None:
    register(RecentFile())
'''

_CONTEXT_TESTS = '''"""The standard context provider checks and the provider's own answer."""

import os
from pathlib import Path

import pytest

import __MODULE__
from adjutant.testing.conformance import ContextProviderConformance


class TestRecentFile(ContextProviderConformance):
    @pytest.fixture
    def context_provider(self) -> __MODULE__.RecentFile:
        return __MODULE__.RecentFile()


@pytest.mark.anyio
async def test_names_the_newest_file(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("a")
    (tmp_path / "new.txt").write_text("b")
    os.utime(tmp_path / "old.txt", (1, 1))
    assert await __MODULE__.RecentFile().gather(str(tmp_path)) == {"focus": "new.txt"}
'''

#: kind -> (module source, kind tests, REGISTERS literal, one-line summary)
_KINDS: dict[str, tuple[str, str, str, str]] = {
    "tool": (_TOOL, _TOOL_TESTS, '{"tools": ["__NAME__.echo"]}', "A tool for Adjutant."),
    "policy": (_POLICY, _POLICY_TESTS, '{"policies": ["__NAME__"]}',
               "A safety policy for Adjutant."),
    "provider": (_PROVIDER, _PROVIDER_TESTS, '{"providers": ["__NAME__"]}',
                 "A model provider for Adjutant."),
    "context": (_CONTEXT, _CONTEXT_TESTS, '{"context_providers": ["__NAME__"]}',
                "A context source for Adjutant."),
}


def _sources() -> str:
    """uv sources for the Adjutant packages when they come from a checkout (so an install
    never resolves them from the public index, where ``adjutant`` is someone else's)."""
    core = Path(__file__).resolve().parents[3]  # core/src/adjutant/cli -> core
    root = core.parent
    hookspecs = root / "hookspecs"
    if not ((core / "pyproject.toml").is_file() and (hookspecs / "pyproject.toml").is_file()):
        return ""
    return (f"\n[tool.uv.sources]\nadjutant-hookspecs = {{ path = \"{hookspecs}\", "
            f"editable = true }}\nadjutant-core = {{ path = \"{core}\", editable = true }}\n")


def generate(name: str, kind: str, dest: Path) -> Path:
    """Write the package for plugin ``name`` under ``dest``; return its directory.
    Raises `ValueError` for a bad name or kind, `FileExistsError` if it exists."""
    if not NAME.match(name):
        raise ValueError(f"plugin name {name!r} must be lower case letters, digits and _, "
                         "starting with a letter (it becomes adjutant_<name> and the prefix "
                         "of tool names)")
    if kind not in _KINDS:
        raise ValueError(f"unknown kind {kind!r}; one of: {', '.join(KINDS)}")
    dist = f"adjutant-{name.replace('_', '-')}"
    module = f"adjutant_{name}"
    root = dest / dist
    if root.exists():
        raise FileExistsError(f"{root} already exists; choose another name or --dest")
    source, tests, registers, summary = _KINDS[kind]
    files = {
        "pyproject.toml": _PYPROJECT.replace("__SOURCES__", _sources()),
        "README.md": _README.replace("__KIND__", kind),
        f"src/{module}/__init__.py": source,
        f"src/{module}/py.typed": "",
        "tests/conftest.py": _CONFTEST,
        "tests/test_plugin.py": _COMMON_TESTS.replace("__REGISTERS__", registers),
        f"tests/test_{kind}.py": tests,
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        for key, value in (("__SUMMARY__", summary), ("__MODULE__", module),
                           ("__DIST__", dist), ("__NAME__", name)):
            text = text.replace(key, value)
        path.write_text(text)
    return root


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=["plugin"], help="what to create")
    parser.add_argument("name", help="the plugin's name: lower case, digits and _ "
                        "(package adjutant-<name>, module adjutant_<name>)")
    parser.add_argument("--kind", choices=KINDS, default="tool",
                        help="what the plugin registers (default: tool)")
    parser.add_argument("--dest", type=Path, default=Path("."),
                        help="where to create the package directory (default: here)")


def new(kernel: Any, args: argparse.Namespace) -> int:
    try:
        root = generate(args.name, args.kind, args.dest)
    except (ValueError, FileExistsError) as exc:
        print(f"adjutant new: {exc}", file=sys.stderr)
        return 2
    print(f"created {root} ({args.kind} plugin {args.name!r}). Next:\n"
          f"  cd {root}\n  uv pip install -e '.[test]'    # or pip install -e '.[test]'\n"
          f"  pytest\n  adjutant plugins")
    return 0
