"""Jump-forward decoding: the text a GBNF grammar forces at the start of a reply.

A reply whose shape is fixed (``{"type":"plan","steps":[{"tool":"fs.read","args":{"path":``
once the first tool is chosen) need not be generated token by token: `forced_start`
finds that text and the grammar for the rest, so the provider evaluates it with the
prompt in one batch and samples only where the model has a choice.

Only what is certain is taken: literals in sequence, through rules and groups with a
single alternative and no quantifier. Anything this reader does not understand (a
comment, an unknown construct) means no jump: the grammar is used as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["forced_start"]

_RULE = re.compile(r"^([a-zA-Z0-9_-]+)\s*::=\s*(.*)$")
_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_QUANT = re.compile(r"\?|\*|\+|\{\s*\d*\s*(,\s*\d*\s*)?\}")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "[": "[", "]": "]",
            "/": "/", "b": "\b", "f": "\f"}


class _Unsupported(ValueError):
    pass


@dataclass
class _Item:
    raw: str
    kind: str  # "lit", "ref", "group", "class"
    text: str = ""  # a literal's value, a reference's rule name
    alts: list[list[_Item]] = field(default_factory=list)
    quantified: bool = False


def _literal(body: str, start: int) -> tuple[str, int]:
    """The decoded literal opening at ``body[start]`` (a ``"``), and where it ends."""
    out: list[str] = []
    i = start + 1
    while i < len(body):
        char = body[i]
        if char == '"':
            return "".join(out), i + 1
        if char == "\\":
            code = body[i + 1: i + 2]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                i += 2
            elif code in ("x", "u", "U"):
                width = {"x": 2, "u": 4, "U": 8}[code]
                out.append(chr(int(body[i + 2: i + 2 + width], 16)))
                i += 2 + width
            else:
                raise _Unsupported(f"escape \\{code}")
        else:
            out.append(char)
            i += 1
    raise _Unsupported("unterminated literal")


def _sequence(body: str, i: int, closing: str) -> tuple[list[list[_Item]], int]:
    """Alternatives (each a sequence of items) from ``body[i]`` up to ``closing``."""
    alts: list[list[_Item]] = [[]]
    while i < len(body):
        char = body[i]
        if char.isspace():
            i += 1
            continue
        if char == closing:
            return alts, i + 1
        if char == "|":
            alts.append([])
            i += 1
            continue
        start = i
        if char == '"':
            text, i = _literal(body, i)
            item = _Item("", "lit", text)
        elif char == "[":
            end = i + 1
            while end < len(body) and body[end] != "]":
                end += 2 if body[end] == "\\" else 1
            if end >= len(body):
                raise _Unsupported("unterminated class")
            i = end + 1
            item = _Item("", "class")
        elif char == "(":
            inner, i = _sequence(body, i + 1, ")")
            item = _Item("", "group", alts=inner)
        elif match := _NAME.match(body, i):
            i = match.end()
            item = _Item("", "ref", match.group())
        else:
            raise _Unsupported(f"unexpected {char!r}")
        if quant := _QUANT.match(body, i):
            i = quant.end()
            item.quantified = True
        item.raw = body[start:i]
        alts[-1].append(item)
    if closing:
        raise _Unsupported("unbalanced group")
    return alts, i


def _rules(grammar: str) -> dict[str, tuple[str, list[list[_Item]]]]:
    rules: dict[str, tuple[str, list[list[_Item]]]] = {}
    for line in grammar.splitlines():
        if not line.strip():
            continue
        match = _RULE.match(line)
        if match is None:  # a rule continued on the next line: not for this reader
            raise _Unsupported("a continued rule")
        rules[match.group(1)] = (match.group(2), _sequence(match.group(2), 0, "")[0])
    return rules


def forced_start(grammar: str, limit: int = 400) -> tuple[str, str]:
    """The text every reply under ``grammar`` starts with, and a grammar for what may
    follow it (``("", grammar)`` when nothing is forced or the grammar is not
    understood). At most ``limit`` characters are taken."""
    try:
        rules = _rules(grammar)
        if "root" not in rules or any(
                item.text == "root" for _, alts in rules.values() for seq in alts
                for item in _walk(seq)):
            return "", grammar
        alts = rules["root"][1]
        if len(alts) != 1:
            return "", grammar
        sequence, text = list(alts[0]), ""
        while sequence and len(text) < limit:
            item = sequence[0]
            if item.quantified:
                break
            if item.kind == "lit":
                text += item.text
                sequence.pop(0)
            elif item.kind in ("ref", "group"):
                inner = item.alts if item.kind == "group" else rules[item.text][1]
                if len(inner) != 1:
                    break
                sequence[0:1] = inner[0]
            else:
                break
    except (_Unsupported, KeyError, ValueError):
        return "", grammar
    if not text or not sequence:
        return "", grammar  # nothing forced, or nothing left to choose: generate as is
    rest = [f"root ::= {' '.join(item.raw for item in sequence)}"]
    rest += [line for line in grammar.splitlines()
             if line.strip() and not line.lstrip().startswith("root ")
             and not line.startswith("root::=")]
    return text, "\n".join(rest) + "\n"


def _walk(sequence: list[_Item]) -> list[_Item]:
    found = []
    for item in sequence:
        found.append(item)
        for alt in item.alts:
            found.extend(_walk(alt))
    return found
