"""Strict decoding of what a model says: a plan or a response, nothing else.

Model output is untrusted. It must be exactly one JSON object in one of the
two forms, with no duplicate keys (``{"tool": "a", "tool": "b"}`` is an attack on
parsers that keep the last), no NaN/Infinity, nothing trailing, and bounded size.
Anything else is refused with a reason that can be shown to the user and fed back
to the model in the retry.
"""

from __future__ import annotations

import json
import re
from typing import Any

from adjutant_hookspecs import ContractError, Plan, Reply, Response, convert

from ._grammar import END

__all__ = ["MAX_REPLY_BYTES", "closed_answer", "closed_plan", "parse_reply"]

MAX_REPLY_BYTES = 256 * 1024
MAX_STEPS = 64


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ContractError(f"duplicate key {key!r} in model output")
        seen[key] = value
    return seen


def _no_constants(name: str) -> Any:
    raise ContractError(f"{name} is not valid JSON")


def parse_reply(text: str) -> Plan | Response:
    """Decode one reply; raise `ContractError` saying exactly what is wrong."""
    if len(text.encode()) > MAX_REPLY_BYTES:
        raise ContractError(f"model output is larger than {MAX_REPLY_BYTES} bytes")
    stripped = text.strip()
    if not stripped:
        raise ContractError("model output is empty; expected a JSON object")
    try:
        data = json.loads(stripped, object_pairs_hook=_no_duplicates,
                          parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        if exc.msg == "Extra data":
            raise ContractError(f"trailing text after the JSON object at {where}") from None
        raise ContractError(f"not valid JSON ({exc.msg} at {where})") from None
    if not isinstance(data, dict):
        raise ContractError(f"expected a JSON object, got {type(data).__name__}")
    reply: Plan | Response = convert(data, Reply)  # type: ignore[arg-type]
    if isinstance(reply, Response) and any(c in "{}[]" for c in reply.text) \
            and not any(c.isalnum() for c in reply.text):
        # "{": a small model that began a plan inside the answer; shown, it means nothing
        raise ContractError(f"the answer says nothing in words: {reply.text[:40]!r}")
    if isinstance(reply, Plan):
        if not reply.steps:
            raise ContractError("a plan needs at least one step")
        if len(reply.steps) > MAX_STEPS:
            raise ContractError(f"a plan may have at most {MAX_STEPS} steps")
    return reply


_ANSWER_HEAD = re.compile(r'\s*\{\s*"type"\s*:\s*"response"\s*,\s*"text"\s*:\s*"')
_SENTENCE_END = re.compile(r'[.!?](?=\s)')


def closed_answer(text: str, *, ended: bool = False) -> str:
    """``text`` as it is, or, when it is an answer in words cut off inside its text (the
    reply's token limit: "what's the weather in Lisbon?" rambled past 200 tokens; or
    the end sentinel written inside the text, ``ended``: a haiku's first line, then
    ``<END>``), that answer closed after its last whole sentence (for ``ended``, the
    text's own end, when it ends one: the model said it was done). An answer cut inside its first
    sentence ("The file says: invent") is no answer and stays malformed, as a cut plan
    does: both are asked for again (and the CLI and dock say the reply was not used)."""
    head = _ANSWER_HEAD.match(text)
    if head is None:
        return text
    try:
        whole = json.loads(text)
    except ValueError:
        pass
    else:  # whole (or malformed some other way: parse_reply says how)
        said = whole.get("text") if isinstance(whole, dict) else None
        if isinstance(said, str) and END in said:  # the examples' end, written as text
            return _ended(said.partition(END)[0])
        return text
    body = text[head.end():]
    if '"' in body.replace('\\\\', '').replace('\\"', ''):
        return text  # the string ended: not a cut answer
    ends = [m.end() for m in _SENTENCE_END.finditer(body)]
    if ended and body.rstrip()[-1:] in (".", "!", "?"):
        ends.append(len(body.rstrip()))
    for end in reversed(ends):
        try:
            said = json.loads(f'"{body[:end].rstrip()}"')
        except ValueError:
            continue  # cut inside an escape
        if said.strip():
            return json.dumps({"type": "response", "text": said}, ensure_ascii=False)
    return text


def closed_plan(text: str, carried: str) -> str:
    """``text`` as it is, or, when it is a plan cut off (not valid JSON) with a text
    value that holds all of ``carried`` (the text the request carries: "add to the
    project notes: tests are run with pytest"), that plan ended where the first such
    value ends ``carried``, every open object and list closed: the model wrote the
    user's words, then rambled to the token limit ("- add the line 'call mom' to
    notes.md ...", a step more). Nothing it wrote past them is kept; a plan cut
    anywhere else stays malformed."""
    if not carried or not text.lstrip().startswith('{"type":"plan"'):
        return text
    try:
        json.loads(text)
        return text
    except ValueError:
        pass
    opened: list[str] = []
    index, start = 0, -1
    while index < len(text):
        char = text[index]
        if start >= 0:  # inside a string
            if char == "\\":
                index += 1
            elif char == '"' or index == len(text) - 1:
                end = index if char == '"' else len(text)
                if closed := _ended_at(text, start, end, carried, opened):
                    return closed
                start = -1
        elif char == '"':
            start = index + 1
        elif char in "{[":
            opened.append("}" if char == "{" else "]")
        elif char in "}]" and opened:
            opened.pop()
        index += 1
    return text


def _ended_at(text: str, start: int, end: int, carried: str, opened: list[str]) -> str:
    """The plan ``text`` ended in its string ``text[start:end]`` where that string ends
    ``carried`` (the longest prefix of it that decodes), closed; empty when it does
    not hold ``carried`` or the result is no JSON."""
    for stop in range(end, start, -1):
        try:
            said = json.loads(f'"{text[start:stop]}"')
        except ValueError:
            continue
        at = said.lower().find(carried.lower())
        if at < 0:
            return ""
        closed = (text[:start - 1] + json.dumps(said[:at + len(carried)], ensure_ascii=False)
                  + "".join(reversed(opened)))
        try:
            json.loads(closed)
        except ValueError:
            return ""
        return closed
    return ""


def _ended(said: str) -> str:
    """An answer the model ended with the worked examples' end sentinel written inside
    its text ("... you can use the following command: <END>"): the text before it, to
    its last whole sentence when it stops mid-way (a colon promising what never came)."""
    said = said.rstrip()
    if said[-1:] not in (".", "!", "?", ")", '"', "`") and (
            ends := [m.end() for m in _SENTENCE_END.finditer(said + " ")]):
        said = said[:ends[-1]]
    return json.dumps({"type": "response", "text": said}, ensure_ascii=False)
