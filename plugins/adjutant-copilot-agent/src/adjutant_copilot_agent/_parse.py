"""The model's answer as a `CopilotCycleResult`, whatever shape it came in: the fields
that parse are kept, the rest default; nothing here raises.

Accepted: a JSON object, in a code fence or not, with text around it, with trailing
garbage, or cut off (the open strings, arrays and objects are closed); fields of the
wrong type are dropped (a list item that is not a string is skipped; a question or
concept given as a bare string is taken as its text; the compact answer's concept,
``"term: context"``, is split at its first colon)."""

from __future__ import annotations

import json
from typing import Any

from adjutant_hookspecs import CopilotConcept, CopilotCycleResult, CopilotQuestion

__all__ = ["FIELDS", "parse_cycle_result"]

FIELDS = ("new_content", "updated_summary", "key_points", "decisions", "action_items",
          "open_questions", "suggested_questions", "key_concepts")
#: Longest text kept for one item (a runaway string is cut here).
MAX_TEXT = 2000
MAX_ITEMS = 50


def _close(text: str) -> str:
    """``text`` (a JSON document cut short) with its open string and brackets closed."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}" and stack:
            stack.pop()
    out = text + ("\\" if escaped else "") + ('"' if in_string else "")
    out = out.rstrip()
    while out.endswith((",", ":")):
        out = out[:-1].rstrip()
        if out.endswith(":"):
            continue
    return out + "".join(reversed(stack))


def _object(text: str) -> dict[str, Any]:
    start = text.find("{")
    if start < 0:
        return {}
    body = text[start:]
    decoder = json.JSONDecoder()
    for candidate in (body, _close(body)):
        try:
            value, _ = decoder.raw_decode(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    # cut off inside a key or after a key: drop the last member and try again
    for cut in range(len(body) - 1, 0, -1):
        if body[cut] in ",":
            try:
                value, _ = decoder.raw_decode(_close(body[:cut]))
            except (ValueError, RecursionError):
                continue
            if isinstance(value, dict):
                return value
    return {}


def _text(value: Any) -> str:
    return value.strip()[:MAX_TEXT] if isinstance(value, str) else ""


def _texts(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(t for t in (_text(v) for v in value[:MAX_ITEMS]) if t)


def _questions(value: Any) -> tuple[CopilotQuestion, ...]:
    out = []
    for v in value[:MAX_ITEMS] if isinstance(value, list) else ():
        if isinstance(v, str) and v.strip():
            out.append(CopilotQuestion(question=_text(v)))
        elif isinstance(v, dict) and _text(v.get("question")):
            out.append(CopilotQuestion(question=_text(v.get("question")),
                                       reason=_text(v.get("reason"))))
    return tuple(out)


def _concepts(value: Any) -> tuple[CopilotConcept, ...]:
    out = []
    for v in value[:MAX_ITEMS] if isinstance(value, list) else ():
        if isinstance(v, str) and v.strip():
            # the compact answer's "term: context" (a bare term without the colon)
            term, colon, context = v.partition(":")
            if colon and _text(term) and _text(context):
                out.append(CopilotConcept(term=_text(term), context=_text(context)))
            else:
                out.append(CopilotConcept(term=_text(v)))
        elif isinstance(v, dict) and _text(v.get("term")):
            out.append(CopilotConcept(term=_text(v.get("term")),
                                      context=_text(v.get("context"))))
    return tuple(out)


def parse_cycle_result(text: str) -> CopilotCycleResult:
    """The fields of the model's answer ``text`` that parse, defaults for the rest.
    When no JSON object is found at all, the text itself is ``new_content`` (the
    summary stays empty, so the running summary is kept)."""
    found = _object(text)
    if not found:
        return CopilotCycleResult(new_content=_text(text))
    return CopilotCycleResult(
        new_content=_text(found.get("new_content")),
        updated_summary=_text(found.get("updated_summary")),
        key_points=_texts(found.get("key_points")),
        decisions=_texts(found.get("decisions")),
        action_items=_texts(found.get("action_items")),
        open_questions=_texts(found.get("open_questions")),
        suggested_questions=_questions(found.get("suggested_questions")),
        key_concepts=_concepts(found.get("key_concepts")))
