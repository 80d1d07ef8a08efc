"""An edit the request states whole, written as a diff by the operator.

"change the currency in config/settings.json from EUR to GBP", "in notes.txt replace
'call the plumber' with 'call the electrician'", "turn the debug flag on in
config/settings.json": the file and both values are the request's. A small model that
has not seen the file cannot write its diff (measured: a patch of invented lines,
repeated up to the token limit, 11 to 27 s; or the whole file overwritten with one
line). The operator reads the file, as a file joining a prompt would be read
(`PromptFiles`: inside the cages, the deny rules, one link), makes the change and
writes the diff; the model's reply carries it as pasted, the way a diff the request
pastes is carried (`planner.PASTED`). The pipeline previews and approves it like any
other patch: nothing here writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from adjutant_hookspecs import Plan

from ..toolkit import unified_diff
from ._here import files_called, here, inside
from ._words import QUOTED, carried_patch, named_paths

if TYPE_CHECKING:
    from ..safety.protection import PromptFiles

__all__ = ["NOTHING_CHANGED", "nothing_to_change", "patch_for", "patches_here", "stated_edit",
           "unmatched"]

#: How the answer to an edit that cannot be made opens (`nothing_to_change`).
NOTHING_CHANGED = "Nothing was changed: "

#: A value as typed: quoted (any text), or one word of a name, number or setting.
_V = r"(?:'[^'\n]+'|\"[^\"\n]+\"|`[^`\n]+`|[\w.@:/+#-]+)"
#: Where a new value ends: the request's end, a mark, or words that go on to say where
#: or what next; not more words of a description ("swap the comment for an actual
#: check that ..." states no value).
_ENDS = (r"(?=\s*$|\s*[.,;:!?)]|\s+(?:in|on|at|inside|within|and|then|please|for me|too|"
         r"instead|everywhere|throughout)\b)")
#: "... from EUR to GBP": the old value, then the new.
_FROM_TO = re.compile(rf"\bfrom\s+(?P<old>{_V})\s+to\s+(?P<new>{_V})" + _ENDS,
                      re.IGNORECASE)
#: "(# inventory -> # Inventory)": text as typed, an arrow between.
_ARROW = re.compile(r"\((?P<old>[^()\n]+?)\s+(?:->|\u2192|=>)\s+(?P<new>[^()\n]+?)\)")
#: "change EUR to GBP", "replace 'a' with 'b'", "rename the function average to mean".
_X_TO_Y = re.compile(
    r"\b(?:change|replace|swap|switch|rename|correct|update|edit|set|flip|turn)\s+(?:(?:the|"
    r"every|all|each)\s+)?(?:(?:word|text|line|string|name|function|def|variable|value|key|"
    r"method|class|title|heading|entry|setting|flag|field|option)s?\s+)?"
    rf"(?P<old>{_V})\s+(?:to|with|into|for|->|\u2192|=>|by)\s+(?:(?:the|a|an)\s+)?(?P<new>{_V})"
    + _ENDS, re.IGNORECASE)
#: "turn the debug flag on", "turn off debug", "switch debug off".
_ON_OFF = re.compile(
    r"\b(?:turn|switch|flip|set)\s+(?:(?P<before>on|off)\s+)?(?:the\s+)?(?P<key>[\w-]+)"
    r"(?:\s+(?:flag|setting|option|mode))?(?(before)|\s+(?P<after>on|off)\b)", re.IGNORECASE)
#: A setting's line in JSON, YAML, TOML or INI: its key, then its value.
_SETTING = r"(?P<q>[\"']?)\b{key}\b(?P=q)\s*[:=]\s*(?P<val>\"[^\"\n]*\"|'[^'\n]*'|[^,}}\]\s#]+)"
#: How each kind of file says yes and no, by the old value's spelling.
_BOOLS = {"true": ("true", "false"), "false": ("true", "false"), "True": ("True", "False"),
          "False": ("True", "False"), "yes": ("yes", "no"), "no": ("yes", "no"),
          "on": ("on", "off"), "off": ("on", "off")}
_YES = frozenset(("true", "on", "yes", "1", "enabled"))


def patch_for(request: str, cwd: str, files: Callable[[], PromptFiles] | None) -> str | None:
    """The diff the request pastes (`carried_patch`), or else the one written for an
    edit it states whole (`stated_edit`), its file read through ``files`` (the check
    for files joining a prompt); None for neither, or no ``files`` to read with."""
    if carried := carried_patch(request):
        return carried[0]
    return stated_edit(request, cwd, _reader(cwd, files)) if cwd and files else None


def nothing_to_change(request: str, cwd: str,
                      files: Callable[[], PromptFiles] | None) -> str | None:
    """Why the edit ``request`` states cannot be made, in words, when the one file it
    names is here and readable but holds nothing it names ("in config/settings.json
    change YEN to GBP"): the small model had made up a patch. None otherwise."""
    if not cwd or not files or carried_patch(request):
        return None
    return _edit(request, cwd, _reader(cwd, files))[1] or None


def _reader(cwd: str, files: Callable[[], PromptFiles]) -> Callable[[str], str | None]:
    def text_of(path: str) -> str | None:
        try:  # PromptFileRefused is a PermissionError
            return files().read(os.path.join(cwd, path)).data.decode()
        except (OSError, UnicodeDecodeError):
            return None
    return text_of


def stated_edit(request: str, cwd: str, read: Callable[[str], str | None]) -> str | None:
    """The unified diff of the edit ``request`` states: one file here it names, an
    old and a new value (`_FROM_TO`, `_X_TO_Y`) or a setting turned on or off
    (`_ON_OFF`). The old value is a setting's name (its value is replaced, in the
    file's own spelling) or text in the file (each place it stands as a word is
    changed). None when the request states no such edit, names no one file here, or
    the file (``read``: its text, None when it may not be read) does not hold it."""
    return _edit(request, cwd, read)[0]


def _edit(request: str, cwd: str, read: Callable[[str], str | None]) -> tuple[str | None, str]:
    """(the diff, "") or (None, why the edit stated cannot be made; "" when none is)."""
    path = _the_file(request, cwd)
    wanted = _values(request) if path is not None else None
    old_text = read(path) if path is not None and wanted is not None else None
    if path is None or wanted is None or old_text is None or wanted[0] == wanted[1]:
        return None, ""
    new_text = _changed(old_text, *wanted[:3])
    if new_text is None:  # said only of an old value typed: a setting may go by another name
        return None, (wanted[3] and f"{NOTHING_CHANGED}{path} has no {wanted[0]!r} to "
                      f"change to {wanted[1]!r}. Say the text as it stands in the file.")
    return (unified_diff(path, old_text, new_text) if new_text != old_text else None), ""


def _the_file(request: str, cwd: str) -> str | None:
    """The one file here the request names (as it exists here, links resolved inside
    the working directory), outside its quotes."""
    named = {real for p in named_paths(QUOTED.sub(" ", request))
             if (real := here(cwd, p) or _by_stem(cwd, p))}
    named = {os.path.relpath(os.path.join(cwd, p), cwd) for p in named
             if inside(cwd, p) and os.path.isfile(os.path.join(cwd, p))} \
        or set(files_called(request, cwd))
    return named.pop() if len(named) == 1 else None


def _by_stem(cwd: str, path: str) -> str | None:
    """``path`` named without its ending ("config/settings"): the one file there with
    that stem, when there is one."""
    folder, stem = os.path.split(path)
    if os.path.splitext(stem)[1] or not (real := here(cwd, folder or ".")):
        return None
    try:
        same = [n for n in os.listdir(os.path.join(cwd, real))
                if os.path.splitext(n)[0].lower() == stem.lower()]
    except OSError:
        return None
    return os.path.normpath(os.path.join(real, same[0])) if len(same) == 1 else None


def _values(request: str) -> tuple[str, str, bool, str] | None:
    """(old, new, old is surely text, "typed" when the request typed the old value)
    the request states, outside quoted text (a commit message 'change EUR to GBP'
    states no edit); None for none."""
    quoted = [m.span() for m in QUOTED.finditer(request)]

    def said(pattern: re.Pattern[str]) -> re.Match[str] | None:
        return next((m for m in pattern.finditer(request)
                     if not any(a <= m.start() < b for a, b in quoted)), None)

    if found := said(_ARROW) or said(_FROM_TO):
        return _unquoted(found["old"]), _unquoted(found["new"]), True, "typed"
    if (found := said(_X_TO_Y)) and not named_paths(found["old"]) and found["old"].lower() \
            not in ("it", "this", "that", "them", "these", "those"):  # "replace todo.md with"
        old = found["old"]
        return _unquoted(old), _unquoted(found["new"]), old[0] in "'\"`", "typed"
    if found := said(_ON_OFF):  # a setting's name, no old value typed: "" marks it
        return found["key"], (found["before"] or found["after"]).lower(), False, ""
    return None


def _unquoted(value: str) -> str:
    value = value.rstrip(".,;:!?") if value[0] not in "'\"`" else value
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"`" \
        else value


def _changed(text: str, old: str, new: str, literal: bool) -> str | None:
    """``text`` with the setting ``old`` given the value ``new`` (one such line), or
    else with ``old`` as a word changed to ``new``; None when neither is there."""
    if not old or old == new:
        return None
    if not literal:
        lines = list(re.finditer(_SETTING.format(key=re.escape(old)), text))
        if len(lines) == 1:
            value = lines[0]
            start, end = value.span("val")
            return text[:start] + _spelled(new, value["val"]) + text[end:]
    edge = (r"(?<!\w)" if old[0].isalnum() or old[0] == "_" else "") + re.escape(old) + (
        r"(?!\w)" if old[-1].isalnum() or old[-1] == "_" else "")
    changed, count = re.subn(edge, lambda _: new, text)
    return changed if count else None


def _spelled(new: str, old: str) -> str:
    """``new`` written the way the file wrote ``old``: quoted if it was, and yes or no
    in its spelling (``on`` for a JSON ``false`` is ``true``)."""
    if old in _BOOLS and (new.lower() in _YES or new.lower() in ("false", "off", "no", "0",
                                                                   "disabled")):
        yes, no = _BOOLS[old]
        return yes if new.lower() in _YES else no
    if old[:1] in "\"'" and new[:1] not in "\"'":
        return f"{old[0]}{new}{old[0]}"
    return new


#: The file a diff edits: its ``--- a/PATH`` line (a new file's is ``/dev/null``).
_EDITED = re.compile(r"^--- (?:a/)?(?P<path>[^\t\n]+)", re.MULTILINE)


def patches_here(plan: Plan, cwd: str, asked: str) -> Plan:
    """``plan`` without a step whose diff (a ``patch`` the model wrote) edits a file
    that is not here and that ``asked`` does not name, when other steps remain ("Court
    stenographer here, I have to read this log back for a hearing. Look through the logs
    folder ..." had a made-up patch of a log.txt before the search). A diff the request
    pastes or states is not passed here: whatever it names, its preview says what is
    wrong; so is one of a file the request names ("patch util.py", in src/)."""
    def made_up(step: object) -> bool:
        patch = getattr(step, "args", {}).get("patch")
        return isinstance(patch, str) and any(
            (path := m["path"].strip()) != "/dev/null" and not here(cwd, path)
            and os.path.basename(path).lower() not in asked.lower()
            for m in _EDITED.finditer(patch))

    kept = tuple(s for s in plan.steps if not made_up(s))
    return msgspec.structs.replace(plan, steps=kept) if kept and kept != plan.steps else plan


def unmatched(patch: str, cwd: str) -> str:
    """The file here that a diff the model wrote removes lines from that it does not
    hold ("rename notes.txt to Notes.txt" had been a patch of notes.txt taking out a
    worked example's "status = 'beta'"; from the CLI, stop 55), or empty. Only regular
    files inside ``cwd``, read up to 1 MiB."""
    for part in re.split(r"^(?=--- )", patch, flags=re.MULTILINE):
        found = _EDITED.match(part)
        path = found["path"].strip() if found else ""
        real = here(cwd, path) if path and path != "/dev/null" else None
        full = os.path.join(cwd, real) if real else ""
        if not real or not inside(cwd, real) or os.path.islink(full) or not os.path.isfile(full):
            continue
        with open(full, "rb") as handle:
            lines = set(handle.read(1 << 20).decode("utf-8", "replace").splitlines())
        removed = [line[1:] for line in part.splitlines()[2:] if line.startswith("-")]
        if any(line not in lines for line in removed):
            return real
    return ""
