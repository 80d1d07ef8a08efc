"""The shape of a reply, from the offered tools: a JSON schema (`reply_schema`) for
backends that take one, a GBNF grammar (`reply_grammar`, llama.cpp's dialect) for those
that take that. Tool names are exactly the offered ones and arguments follow each
tool's schema."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from adjutant_hookspecs import ToolDeclaration

__all__ = ["END", "MAX_STRING", "grounded", "reply_grammar", "reply_schema"]

#: The sentinel a reply ends with (and the stop sequence sent with it) where nothing else
#: ends it: a reply under a grammar ends where the grammar does (the model's end of text,
#: one decode, where ``<END>`` took two or three), and ``<END>`` written inside one of
#: its strings is the user's text, not a stop that would leave the reply cut.
END = "<END>"
#: The longest string the reply grammar lets a model write (unless a schema says less).
MAX_STRING = 400
#: The most steps a plan may have.
MAX_STEPS = 8
#: A string schema's ``pattern`` for one word (a branch name): its grammar has no space.
ONE_WORD = r"^\S+$"
_WORD_CHAR = r'[^"\\\x7F\x00-\x20] | "\\" (["\\/])'


# -- JSON schema of a reply ----------------------------------------------------------------


def grounded(declaration: ToolDeclaration, paths: Sequence[str] | None,
             pasted: str = "") -> ToolDeclaration:
    """``declaration`` with what a reply may say narrowed to what is here: with
    ``paths``, the path arguments of a tool that only reads name only those; with
    ``pasted``, a ``patch`` argument is only that mention of the diff the request
    carries (put in as pasted after the reply: `_stated.settled_values`)."""
    schema = dict(declaration.args_schema)
    props = dict(schema.get("properties", {}))
    patch = props.get("patch")
    if pasted and isinstance(patch, Mapping) and patch.get("type") == "string":
        props["patch"] = {**patch, "enum": [pasted]}
        schema["properties"] = props
        declaration = msgspec.structs.replace(declaration, args_schema=schema)
    if not paths or getattr(declaration.safety, "writes", True):
        return declaration
    changed = False
    for key, spec in props.items():
        role = spec.get("x-adjutant-role") if isinstance(spec, Mapping) else None
        if role == "path" and spec.get("type") == "string":
            props[key] = {**spec, "enum": list(paths)}
            changed = True
        elif role == "paths" and spec.get("type") == "array":
            props[key] = {**spec, "items": {**spec.get("items", {}), "enum": list(paths)}}
            changed = True
    if not changed:
        return declaration
    schema["properties"] = props
    return msgspec.structs.replace(declaration, args_schema=schema)


def reply_schema(tools: Mapping[str, ToolDeclaration],
                 first: Iterable[str] | None = None, *, most: int = MAX_STEPS,
                 ) -> dict[str, Any]:
    """A JSON schema accepting exactly a response or a plan over ``tools`` (whose first
    step uses one of ``first``, when given) of at most ``most`` steps."""
    steps = {name: {"type": "object", "additionalProperties": False,
                    "required": ["tool", "args"],
                    "properties": {"tool": {"const": name}, "args": _plain(d.args_schema),
                                   "explain": {"type": "string"}}}
             for name, d in tools.items()}
    array: dict[str, Any] = {"type": "array", "minItems": 1, "maxItems": most,
                             "items": {"anyOf": list(steps.values())} if steps else {}}
    if first is not None and steps:
        array["prefixItems"] = [{"anyOf": [steps[n] for n in first if n in steps]}]
    plan = {"type": "object", "additionalProperties": False, "required": ["type", "steps"],
            "properties": {"type": {"const": "plan"}, "steps": array}}
    response = {"type": "object", "additionalProperties": False, "required": ["type", "text"],
                "properties": {"type": {"const": "response"}, "text": {"type": "string"}}}
    return {"anyOf": [plan, response] if steps else [response]}


def _plain(schema: Any) -> Any:
    """The schema without Adjutant's ``x-`` annotations (strict backends refuse them)."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if not k.startswith("x-")}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema


# -- GBNF ----------------------------------------------------------------------------------

_BASE_RULES = r"""ws ::= [ \t\n]?
string ::= "\"" char* "\""
answer ::= "\"" ([^"\\\x7F\x00-\x20{}[\]] | "\\" ["\\/]) char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
integer ::= "-"? ([0-9] | [1-9] [0-9]{1,15})
number ::= integer ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ( "," ws string ws ":" ws value ){0,15} )? ws "}"
array ::= "[" ws ( value ( "," ws value ){0,15} )? ws "]"
"""


def reply_grammar(tools: Mapping[str, ToolDeclaration],
                  first: Iterable[str] | None = None, *, response: bool = True,
                  most: int = MAX_STEPS) -> str:
    """A GBNF grammar (llama.cpp dialect) for a response or a plan over ``tools``:
    tool names are exactly the offered ones, arguments follow each tool's schema, the
    first step uses one of ``first`` when given, at most ``most`` steps; a plan only if
    not ``response`` (and there are tools)."""
    builder = _Gbnf()
    steps = []
    allowed_first = set(tools if first is None else first)
    first_steps = []
    for index, (name, declaration) in enumerate(tools.items()):
        args = builder.rule(f"args{index}", declaration.args_schema)
        rule = f"step{index}"
        builder.rules[rule] = (
            f'"{{\\"tool\\":" {_literal(name)} ",\\"args\\":" {args} "}}"')
        steps.append(rule)
        if name in allowed_first:
            first_steps.append(rule)
    # an answer opens with a word, never "{" or "[" (a plan begun inside the answer:
    # "{" three times over had failed a request) nor a blank
    response_rule = '"{\\"type\\":\\"response\\",\\"text\\":" answer "}"'
    root = ["response"]
    if steps:
        builder.rules["step"] = " | ".join(steps)
        builder.rules["first"] = " | ".join(first_steps or steps)
        more = f' ( "," step ){{0,{most - 1}}}' if most > 1 else ""
        builder.rules["plan"] = f'"{{\\"type\\":\\"plan\\",\\"steps\\":[" first{more} "]}}"'
        root.insert(0, "plan")
        if not response:
            root.remove("response")
    if "response" in root:
        builder.rules["response"] = response_rule
    lines = [f"root ::= ({' | '.join(root)})"]
    lines += [f"{name} ::= {body}" for name, body in builder.rules.items()]
    return "\n".join(lines) + "\n" + _BASE_RULES


def _literal(value: Any, quote: bool = True) -> str:
    """A GBNF string literal matching ``value`` as JSON (or raw text with quote=False)."""
    text = json.dumps(value) if quote else str(value)
    return json.dumps(text)


class _Gbnf:
    """Turns the JSON-schema subset tools use into GBNF rules."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def rule(self, name: str, schema: Any) -> str:
        self.rules[name] = self.body(name, schema)
        return name

    def body(self, name: str, schema: Any) -> str:
        if not isinstance(schema, dict):
            return "value"
        if "const" in schema:
            return _literal(schema["const"])
        if "enum" in schema:
            return " | ".join(_literal(v) for v in schema["enum"]) or "value"
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [self.rule(f"{name}-{i}", s) for i, s in enumerate(schema[key])]
                return " | ".join(options) or "value"
        kind = schema.get("type")
        if isinstance(kind, list):
            return " | ".join(self.body(name, {**schema, "type": k}) for k in kind)
        if kind == "object":
            return self._object(name, schema)
        if kind == "array":
            item = self.rule(f"{name}-item", schema.get("items", {}))
            return f'"[" ( {item} ( "," {item} ){{0,31}} )? "]"'
        if kind == "integer":
            return _integer(schema)
        if kind == "string":
            # bounded: a small model that loops inside a string must still end the reply
            limit = min(int(schema.get("maxLength") or MAX_STRING), MAX_STRING)
            if schema.get("pattern") == ONE_WORD:  # a name: "hotfix/x off release/1.0" ends
                self.rules.setdefault("wchar", _WORD_CHAR)  # at the space
                self.rules.setdefault(f"word-{limit}", f'"\\"" wchar{{1,{limit}}} "\\""')
                return f"word-{limit}"
            rule = f"string-{limit}"
            self.rules.setdefault(rule, f'"\\"" char{{0,{limit}}} "\\""')
            return rule
        return {"number": "number", "boolean": "boolean",
                "null": "null"}.get(str(kind), "value")

    def _object(self, name: str, schema: dict[str, Any]) -> str:
        props: dict[str, Any] = schema.get("properties", {})
        if not props:
            return "object"
        required = [p for p in schema.get("required", []) if p in props]
        optional = [p for p in props if p not in required]
        pairs = {p: f'{_literal(json.dumps(p) + ":", quote=False)} '
                    f'{self.rule(f"{name}-{_safe(p)}", props[p])}' for p in props}
        # Each key at most once, in the declared order (a strict decoder refuses repeats).
        parts = []
        for index, prop in enumerate(required):
            parts.append(("" if index == 0 else '"," ') + pairs[prop])
        if required:
            parts += [f'( "," {pairs[p]} )?' for p in optional]
        elif optional:  # whichever optional key comes first has no comma before it
            starts = []
            for index, prop in enumerate(optional):
                rest = " ".join(f'( "," {pairs[p]} )?' for p in optional[index + 1:])
                starts.append(f"{pairs[prop]} {rest}".strip())
            alternatives = self.rule(f"{name}-opt", None)
            self.rules[alternatives] = " | ".join(f"( {a} )" for a in starts)
            parts.append(f"{alternatives}?")
        return '"{" ' + " ".join(parts) + ' "}"'


def _integer(schema: dict[str, Any]) -> str:
    """An integer of no more digits than its bounds allow (small models like to write
    huge numbers), and never negative when the minimum is not."""
    low, high = schema.get("minimum"), schema.get("maximum")
    if not isinstance(high, int) or isinstance(high, bool) or high < 0:
        return "integer"
    digits = len(str(high))
    body = f"[0-9]{{1,{digits}}}" if digits > 1 else "[0-9]"
    negative = not (isinstance(low, int) and low >= 0)
    return f'"-"? {body}' if negative else body


def _safe(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "-", name)
