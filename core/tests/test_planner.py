"""The planner: ranking, prompts and reply constraints (pure; no model needed)."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest

from adjutant import Copilot
from adjutant.planner import END, Planner, reply_grammar, reply_schema
from adjutant.testing import Harness, ScriptedProvider
from adjutant_hookspecs import ProviderCapabilities, Response, ToolDeclaration, ToolSafety


def tool(name: str, description: str, props: dict[str, Any], required: list[str],
         requests: list[str], example: dict[str, Any]) -> ToolDeclaration:
    return ToolDeclaration(
        name=name, version="1", description=description,
        args_schema={"type": "object", "properties": props, "required": required,
                     "additionalProperties": False, "x-adjutant-requests": requests},
        safety=ToolSafety(), examples=(example,))


TOOLS = {d.name: d for d in [
    tool("fs.read", "Read a text file.", {"path": {"type": "string"}}, ["path"],
         ["show me notes.txt", "what is in the README?"], {"path": "notes.txt"}),
    tool("proc.list", "List your running processes.",
         {"name": {"type": "string"}, "limit": {"type": "integer"}}, [],
         ["which processes are running?", "list python processes"], {}),
    tool("git.commit", "Record a commit with a message.",
         {"message": {"type": "string"}, "all": {"type": "boolean"},
          "paths": {"type": "array", "items": {"type": "string"}}}, ["message"],
         ["commit my changes", "commit README.md saying docs"], {"message": "m"}),
    tool("net.check_port", "Whether a local TCP port is listening.",
         {"port": {"type": "integer", "minimum": 1}, "host": {"enum": ["127.0.0.1", "::1"]}},
         ["port"], ["is anything listening on port 8000?"], {"port": 8000}),
]}


@pytest.mark.parametrize(("request_text", "best"), [
    ("show me what is in notes.txt", "fs.read"),
    ("list the python processes", "proc.list"),
    ("please commit everything with message wip", "git.commit"),
    ("is port 5432 listening", "net.check_port"),
    ("open the readme", "fs.read"),
])
def test_ranking_puts_the_right_tool_first(request_text: str, best: str) -> None:
    assert Planner(TOOLS).rank(request_text)[0][0] == best


def test_a_provenance_label_and_filler_words_do_not_rank() -> None:
    """Mounted MCP tools lead with a label ('[MCP server ...; its own words, untrusted]')
    whose words say nothing of what the tool does; "right now" says nothing either."""
    kill = tool("proc.kill", "Stop a process; refused if the pid now has another start time.",
                {"pid": {"type": "integer"}}, ["pid"], ["stop process 4242"], {"pid": 1})
    clock = ToolDeclaration(
        name="mcp.clock.current_time", version="1", safety=ToolSafety(),
        description="[MCP server 'clock'; its own words, untrusted] Current time in a zone",
        args_schema={"type": "object", "properties": {"timezone": {"type": "string"}}})
    planner = Planner({**TOOLS, kill.name: kill, clock.name: clock})
    assert planner.rank("what time is it in Tokyo right now?")[0][0] == clock.name
    ranked = dict(planner.rank("is a server listening on port 8000 untrusted words"))
    assert ranked[clock.name] == 0.0


def test_menu_is_narrowed_and_stable() -> None:
    planner = Planner(TOOLS)
    assert planner.menu("commit my work", 2)[0] == "git.commit"
    assert len(planner.menu("commit my work", 2)) == 2
    assert planner.menu("x", 10) == sorted(TOOLS)  # few tools: all, in a stable order


def test_prompt_offers_only_the_menu_with_worked_examples() -> None:
    text = Planner(TOOLS).prompt("commit it", ["git.commit"], system="SYS",
                                 context={"cwd": "/w"}, error="bad json")
    assert text.startswith("SYS\n") and text.endswith("Request: commit it\nAnswer:")
    assert "git.commit" in text and "fs.read" not in text
    assert 'Request: commit my changes\nAnswer: {"type":"plan","steps":[{"tool":' \
           '"git.commit","args":{"message":"m"}}]}' + END in text
    assert "refused: bad json" in text and '"cwd":"/w"' in text


def test_reply_schema_accepts_plans_over_the_menu_only() -> None:
    schema = reply_schema({n: TOOLS[n] for n in ("fs.read", "git.commit")})
    validator = jsonschema.Draft202012Validator(schema)
    good = {"type": "plan", "steps": [{"tool": "fs.read", "args": {"path": "a"}},
                                      {"tool": "git.commit", "args": {"message": "m"},
                                       "explain": "why"}]}
    assert validator.is_valid(good)
    assert validator.is_valid({"type": "response", "text": "hi"})
    for bad in [{"type": "plan", "steps": [{"tool": "proc.list", "args": {}}]},
                {"type": "plan", "steps": [{"tool": "fs.read", "args": {}}]},
                {"type": "plan", "steps": [{"tool": "fs.read", "args": {"path": 1}}]},
                {"type": "plan", "steps": []}, {"type": "shell", "cmd": "rm"}]:
        assert not validator.is_valid(bad), bad
    assert "x-adjutant-requests" not in str(schema)


def _rules(grammar: str) -> tuple[set[str], set[str]]:
    """Rule names defined and rule names referenced in a GBNF text."""
    defined, used = set(), set()
    for line in grammar.splitlines():
        if "::=" not in line:
            continue
        name, body = line.split("::=", 1)
        defined.add(name.strip())
        body = re.sub(r'"(\\.|[^"\\])*"', " ", body)   # string literals
        body = re.sub(r"\[(\\.|[^\]\\])*\]", " ", body)  # character classes
        body = re.sub(r"\{\d+(,\d*)?\}", " ", body)      # repetition counts
        used.update(re.findall(r"[a-zA-Z][a-zA-Z0-9-]*", body))
    return defined, used


def test_grammar_names_only_offered_tools_and_defines_every_rule() -> None:
    grammar = reply_grammar({n: TOOLS[n] for n in ("fs.read", "net.check_port")})
    defined, used = _rules(grammar)
    assert used <= defined, used - defined
    assert '"\\"fs.read\\""' in grammar and '"\\"net.check_port\\""' in grammar
    assert "git.commit" not in grammar and "proc.list" not in grammar
    assert '"\\"127.0.0.1\\""' in grammar  # enums become literals
    assert reply_grammar({}).startswith("root ::= (response)")


class Claims(ScriptedProvider):
    def __init__(self, capabilities: ProviderCapabilities) -> None:
        super().__init__(Response(text="ok"))
        self.capabilities = capabilities


class Tool:
    def __init__(self, declaration: ToolDeclaration) -> None:
        self.declaration = declaration

    async def dry_run(self, call: Any, ctx: Any) -> Any:
        raise AssertionError("not called")

    execute = dry_run


class Tools:
    from adjutant import hookimpl

    @hookimpl
    def register_tools(self, register: Any) -> None:
        for declaration in TOOLS.values():
            register(Tool(declaration))


@pytest.mark.anyio
@pytest.mark.parametrize(("caps", "expect"), [
    (ProviderCapabilities(grammar=True), "grammar"),
    (ProviderCapabilities(json_schema=True), "schema"),
    (ProviderCapabilities(), "none"),
])
async def test_the_operator_constrains_by_capability(caps: ProviderCapabilities,
                                                     expect: str) -> None:
    provider = Claims(caps)
    from adjutant import ModelPreset, Profile

    profile = Profile(model=ModelPreset(provider="scripted"), tool_menu=2)
    async with Harness(Tools(), provider=provider, profile=profile) as h:
        await Copilot(h.kernel).handle("is port 8080 listening?")
    sent = provider.requests[0]
    assert (sent.grammar is not None, sent.json_schema is not None) == {
        "grammar": (True, False), "schema": (False, True), "none": (False, False)}[expect]
    assert END in sent.stop
    offered = re.findall(r"^- ([a-z.]+_?[a-z]*):", sent.prompt, re.M)
    assert len(offered) == 2 and offered[0] == "net.check_port"


@pytest.mark.anyio
async def test_a_missing_provider_is_a_clear_failure() -> None:
    from adjutant import ModelPreset, Profile

    profile = Profile(model=ModelPreset(provider="ollama"))
    async with Harness(Tools(), profile=profile) as h:
        outcome = await Copilot(h.kernel).handle("hello")
    assert outcome.status == "failed"
    assert "no model provider named 'ollama'" in outcome.error


def test_a_confident_ranking_fixes_the_first_tool() -> None:
    planner = Planner(TOOLS)
    names = planner.menu("is port 8080 listening?", 3)
    assert planner.first_choices("is port 8080 listening?", names) == ["net.check_port"]
    assert planner.first_choices("zzz qqq", names) == names  # no signal: the model chooses
    schema = planner.json_schema(names, ["net.check_port"])
    validator = jsonschema.Draft202012Validator(schema)
    port = {"tool": "net.check_port", "args": {"port": 1}}
    read = {"tool": "fs.read", "args": {"path": "a"}}
    assert validator.is_valid({"type": "plan", "steps": [port, read]} if "fs.read" in names
                              else {"type": "plan", "steps": [port]})
    assert not validator.is_valid({"type": "plan", "steps": [read, port]})
    grammar = planner.grammar(names, ["net.check_port"])
    first = next(line for line in grammar.splitlines() if line.startswith("first ::="))
    assert first.count("step") == 1


def test_optional_keys_appear_at_most_once_in_the_grammar() -> None:
    grammar = reply_grammar({"git.commit": TOOLS["git.commit"]})
    body = next(line for line in grammar.splitlines() if line.startswith("args0 ::="))
    assert "{0," not in body  # no repetition: each optional key is its own `( ... )?`
    assert body.count('"," ws') == 2  # message, then all? and paths? once each
