"""The planner: what makes small local models reliable.

Three levers, each measured on the golden set (``bench/planning.py``):

- **Narrowing.** A lexical ranking (BM25) over each tool's name, description,
  argument names and the natural-language requests it declares picks the few tools
  relevant to a request; only those are offered, each with a worked example.
- **Constraint.** The reply's shape is built from the offered tools: a GBNF grammar
  for backends that take one (tool names limited to real tools, arguments to each
  tool's schema), a JSON schema for those that take that, nothing for the rest.
- **Validation.** Whatever the backend claims, the reply is decoded strictly and each
  step's arguments validated against its tool's schema; the operator retries with the
  error fed back.

Pure Python, no model needed: `Planner` is cheap to build per request.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from adjutant_hookspecs import ToolDeclaration

__all__ = ["END", "Planner", "reply_grammar", "reply_schema"]

#: The sentinel a reply ends with (and the stop sequence sent with it).
END = "<END>"
#: The longest string the reply grammar lets a model write (unless a schema says less).
MAX_STRING = 400
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset([  # words that say nothing about which tool is wanted
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "at", "by", "from",
    "is", "are", "be", "it", "this", "that", "me", "my", "i", "you", "your", "we", "us", "our",
    "what", "which", "who", "how", "do", "does", "did", "can", "could", "would", "should",
    "please", "show", "tell", "give", "get", "let", "just", "all", "any", "some", "here",
    "there", "into", "as", "if", "then", "so", "now", "right", "currently", "want", "need",
])
#: A provenance label leading a description (``[MCP server 'x'; its own words,
#: untrusted]``): shown to the model, never searched (its words are about origin).
_LABEL = re.compile(r"^\[[^\]]*\]\s*")
#: Everyday words for what tools do, so a request need not use the tool's own words.
_SYNONYMS = {
    "open": "read", "cat": "read", "view": "read", "contents": "read", "look": "read",
    "display": "read", "print": "read", "see": "read",
    "create": "write", "save": "write", "overwrite": "write", "make": "write",
    "add": "append", "log": "log", "history": "log", "commits": "log",
    "find": "search", "grep": "search", "occurrences": "search", "where": "search",
    "locate": "search", "todo": "search",
    "fix": "patch", "edit": "patch", "change": "patch", "replace": "patch",
    "compare": "diff", "difference": "diff", "differences": "diff",
    "zip": "compress", "archive": "compress", "bundle": "compress",
    "run": "exec", "execute": "exec", "command": "exec", "launch": "exec",
    "processes": "proc", "process": "proc", "running": "proc", "ps": "proc",
    "kill": "kill", "stop": "kill", "terminate": "kill", "end": "kill",
    "memory": "info", "cpu": "info", "disk": "info", "system": "info", "os": "info",
    "machine": "info", "ram": "info", "kernel": "info",
    "port": "port", "listening": "port", "listen": "port", "server": "port",
    "branch": "branch", "checkout": "switch", "switch": "switch",
    "commit": "commit", "staged": "diff", "modified": "status", "changed": "status",
    "uncommitted": "status",
}


def _terms(text: str) -> list[str]:
    words = []
    for word in _WORD.findall(text.lower()):
        if word in _STOPWORDS:
            continue
        for stem in {word, _stem(word), _SYNONYMS.get(word, word)}:
            words.append(stem)
    return words


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _document(declaration: ToolDeclaration) -> list[str]:
    """The words a tool is found by; its name and declared requests count twice."""
    schema = declaration.args_schema
    requests = " ".join(schema.get("x-adjutant-requests", []))
    props = schema.get("properties", {})
    names = declaration.name.replace(".", " ").replace("_", " ")
    text = " ".join([names, names, _LABEL.sub("", declaration.description), requests, requests,
                     " ".join(props)])
    return _terms(text)


class Planner:
    """Ranks tools for a request and builds the prompt and output constraint."""

    def __init__(self, tools: Mapping[str, ToolDeclaration], *, k1: float = 1.2,
                 b: float = 0.75) -> None:
        self.tools = dict(tools)
        self._docs = {name: Counter(_document(d)) for name, d in self.tools.items()}
        lengths = [sum(c.values()) for c in self._docs.values()] or [1]
        self._avg = sum(lengths) / len(lengths)
        frequency: Counter[str] = Counter()
        for counts in self._docs.values():
            frequency.update(counts.keys())
        total = len(self._docs)
        self._idf = {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
        self.k1, self.b = k1, b

    def rank(self, request: str) -> list[tuple[str, float]]:
        """Every tool with its BM25 score for ``request``, best first (ties by name)."""
        query = Counter(_terms(request))
        scores = []
        for name, counts in self._docs.items():
            length = sum(counts.values())
            score = 0.0
            for term in query:
                tf = counts.get(term, 0)
                if tf:
                    norm = tf + self.k1 * (1 - self.b + self.b * length / self._avg)
                    score += self._idf[term] * tf * (self.k1 + 1) / norm
            scores.append((name, score))
        return sorted(scores, key=lambda item: (-item[1], item[0]))

    def menu(self, request: str, k: int = 4) -> list[str]:
        """The ``k`` most relevant tools (all of them when there are few)."""
        ranked = self.rank(request)
        if len(ranked) <= k:
            return [name for name, _ in ranked]
        return [name for name, _ in ranked[:k]]

    def first_choices(self, request: str, names: Sequence[str],
                      confidence: float = 1.4) -> list[str]:
        """The tools a plan may start with: the best-ranked one alone when it outscores
        the next by ``confidence`` times, else the best two; all of ``names`` when the
        request shares no word with any of them. The model still writes the arguments,
        the later steps and whether to answer in words instead."""
        ranked = [(n, s) for n, s in self.rank(request) if n in names]
        if len(ranked) < 2 or ranked[0][1] <= 0:
            return list(names)
        if ranked[0][1] >= confidence * ranked[1][1]:
            return [ranked[0][0]]
        return [ranked[0][0], ranked[1][0]]

    # -- the prompt ----------------------------------------------------------------------

    def prompt(self, request: str, names: Sequence[str], *, system: str,
               context: Mapping[str, Any] | None = None, error: str = "",
               schemas: bool = True) -> str:
        """A completion prompt: instructions, the offered tools with one worked example
        each, the context, then the request; the model continues after ``Answer:``."""
        parts = [system.strip(), f"End every answer with {END}.", "Tools:"]
        for name in names:
            declaration = self.tools[name]
            line = f"- {name}: {declaration.description}"
            if schemas:
                props = declaration.args_schema.get("properties", {})
                required = set(declaration.args_schema.get("required", []))
                args = ", ".join(f"{p}{'' if p in required else '?'}: "
                                 f"{spec.get('type', 'any')}" for p, spec in props.items())
                line += f" Arguments: {{{args}}}"
            parts.append(line)
        # Worked examples, the most relevant last: small models lean on the nearest one.
        parts.append("Examples:")
        parts.append('Request: what is a unified diff?\nAnswer: {"type":"response","text":'
                     '"A text format that shows the lines removed (-) and added (+) '
                     f'between two versions of a file."}}{END}')
        for name in reversed(names):
            parts.extend(self._example(name))
        if context:
            parts.append("Context: " + json.dumps(context, separators=(",", ":"),
                                                  sort_keys=True)[:2000])
        if error:
            parts.append(f"Your previous answer was refused: {error}. Answer with one JSON "
                         "object only, a plan with fewer steps if in doubt.")
        parts.append(f"Request: {request}\nAnswer:")
        return "\n".join(parts)

    def _example(self, name: str) -> list[str]:
        declaration = self.tools[name]
        requests = declaration.args_schema.get("x-adjutant-requests") or []
        if not requests or not declaration.examples:
            return []
        step = {"tool": name, "args": declaration.examples[0]}
        reply = json.dumps({"type": "plan", "steps": [step]}, separators=(",", ":"))
        return [f"Request: {requests[0]}\nAnswer: {reply}{END}"]

    # -- constraints ---------------------------------------------------------------------

    def grammar(self, names: Iterable[str], first: Iterable[str] | None = None) -> str:
        return reply_grammar({n: self.tools[n] for n in names}, first)

    def json_schema(self, names: Iterable[str],
                    first: Iterable[str] | None = None) -> dict[str, Any]:
        return reply_schema({n: self.tools[n] for n in names}, first)


# -- JSON schema of a reply ----------------------------------------------------------------


def reply_schema(tools: Mapping[str, ToolDeclaration],
                 first: Iterable[str] | None = None) -> dict[str, Any]:
    """A JSON schema accepting exactly a response or a plan over ``tools`` (whose first
    step uses one of ``first``, when given)."""
    steps = {name: {"type": "object", "additionalProperties": False,
                    "required": ["tool", "args"],
                    "properties": {"tool": {"const": name}, "args": _plain(d.args_schema),
                                   "explain": {"type": "string"}}}
             for name, d in tools.items()}
    array: dict[str, Any] = {"type": "array", "minItems": 1, "maxItems": 8,
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
                  first: Iterable[str] | None = None) -> str:
    """A GBNF grammar (llama.cpp dialect) for a response or a plan over ``tools``:
    tool names are exactly the offered ones, arguments follow each tool's schema, and
    the first step uses one of ``first`` when given."""
    builder = _Gbnf()
    steps = []
    allowed_first = set(tools if first is None else first)
    first_steps = []
    for index, (name, declaration) in enumerate(tools.items()):
        args = builder.rule(f"args{index}", declaration.args_schema)
        rule = f"step{index}"
        builder.rules[rule] = (
            f'"{{" ws "\\"tool\\"" ws ":" ws {_literal(name)} ws "," ws '
            f'"\\"args\\"" ws ":" ws {args} ws "}}"')
        steps.append(rule)
        if name in allowed_first:
            first_steps.append(rule)
    response = '"{" ws "\\"type\\"" ws ":" ws "\\"response\\"" ws "," ws "\\"text\\"" ws ":" ' \
               'ws string ws "}"'
    root = ["response"]
    if steps:
        builder.rules["step"] = " | ".join(steps)
        builder.rules["first"] = " | ".join(first_steps or steps)
        builder.rules["plan"] = ('"{" ws "\\"type\\"" ws ":" ws "\\"plan\\"" ws "," ws '
                                 '"\\"steps\\"" ws ":" ws "[" ws first ( "," ws step ){0,7} '
                                 'ws "]" ws "}"')
        root.insert(0, "plan")
    builder.rules["response"] = response
    lines = [f"root ::= ({' | '.join(root)}) {_literal(END, quote=False)}?"]
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
            return f'"[" ws ( {item} ( "," ws {item} ){{0,31}} )? ws "]"'
        if kind == "integer":
            return _integer(schema)
        if kind == "string":
            # bounded: a small model that loops inside a string must still end the reply
            limit = min(int(schema.get("maxLength") or MAX_STRING), MAX_STRING)
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
        pairs = {p: f'{_literal(p)} ws ":" ws {self.rule(f"{name}-{_safe(p)}", props[p])}'
                 for p in props}
        # Each key at most once, in the declared order (a strict decoder refuses repeats).
        parts = []
        for index, prop in enumerate(required):
            parts.append(("" if index == 0 else '"," ws ') + pairs[prop])
        if required:
            parts += [f'( "," ws {pairs[p]} )?' for p in optional]
        elif optional:  # whichever optional key comes first has no comma before it
            starts = []
            for index, prop in enumerate(optional):
                rest = " ".join(f'( "," ws {pairs[p]} )?' for p in optional[index + 1:])
                starts.append(f"{pairs[prop]} {rest}".strip())
            alternatives = self.rule(f"{name}-opt", None)
            self.rules[alternatives] = " | ".join(f"( {a} )" for a in starts)
            parts.append(f"{alternatives}?")
        return '"{" ws ' + " ws ".join(parts) + ' ws "}"'


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
