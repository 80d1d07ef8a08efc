"""A step as the terminal shows it before asking: the confirmation packet, with the
notes that only say "this step needs your approval" folded into one line naming who
requires it, and the step's arguments offered for editing as they are.

Every field from elsewhere (the model, a file, a client, a policy's reason) is made
printable, and one-line fields stay on their line (`adjutant.safety.terminal`).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ..safety.terminal import SafeStream, printable
from ._status import one_line

__all__ = ["approval_notes", "editable", "prefill_possible", "read_prefilled", "show_step"]

#: What the mode gate, the kernel's write backstop, the write-gate and the guard's
#: baseline say of any step with effects, after ``TOOL ``: the same thing four ways.
_ONLY_NEEDS_APPROVAL = re.compile(
    r" (?:writes|has effects|changes things \([\w-]+\)): (?:it needs your approval|confirm it"
    r"|every write needs your explicit approval(?: \(mode [\w-]+\))?)")
_POLICY = re.compile(r"[\w.-]+")


def approval_notes(packet: Any) -> tuple[list[str], list[str]]:
    """Who requires the approval (policy names, in order), and the notes that say more
    than that (each as shown, ``policy: reason``)."""
    required: list[str] = []
    notes: list[str] = []
    for reason in packet.reasons:
        policy, sep, rest = reason.partition(": ")
        named = bool(sep) and _POLICY.fullmatch(policy) is not None
        if named and policy not in required:
            required.append(policy)
        said = rest if named else reason
        if not (said.startswith(f"{packet.tool} ")
                and _ONLY_NEEDS_APPROVAL.fullmatch(said[len(packet.tool):])):
            notes.append(reason)
    return required, notes


def show_step(packet: Any, out: Any = None, *, who: Any = None, ident: str = "") -> None:
    """The confirmation packet, on ``out`` (default stderr)."""
    out = SafeStream(out or sys.stderr)
    named = f", packet #{ident}" if ident else ""
    out.write(f"\nstep {packet.index + 1}: {one_line(packet.summary or packet.tool)}\n")
    out.write(f"  tool: {one_line(packet.tool)} ({one_line(packet.level)}){named}\n")
    if who is not None:
        out.write(f"  asked by: {one_line(who.name, 120)}\n")
    out.write(f"  args: {one_line(json.dumps(packet.args, ensure_ascii=False), 2000)}\n")
    if packet.intent:
        out.write(f"  why: {one_line(packet.intent, 500)}\n")
    required, notes = approval_notes(packet)
    if required:
        out.write(f"  approval required by: {one_line(', '.join(required), 300)}\n")
    for reason in notes:
        out.write(f"  note: {one_line(reason, 500)}\n")
    if packet.preview:
        out.write("  preview:\n")
        for line in printable(packet.preview).splitlines()[:60]:
            out.write(f"    {line}\n")
    out.flush()


def editable(args: Any) -> str:
    """The arguments as one line of JSON to edit: readable where every character is
    safe to put on a terminal, escaped (``\\u202e``) where one is not."""
    text = json.dumps(args, ensure_ascii=False)
    if printable(text, multiline=False) != text:
        text = json.dumps(args).replace("\x7f", "\\u007f")  # DEL is ASCII: escape it too
    return text


def prefill_possible(tty: Any) -> bool:
    """Whether a line can be read with text already typed: stdin and stdout are the
    terminal (not a ``tty`` opened aside) and readline is there."""
    if tty is not None:
        return False
    try:
        import readline  # noqa: F401 - line editing for input()
    except ImportError:
        return False
    try:
        return bool(sys.stdin.isatty() and sys.stdout.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def read_prefilled(prompt: str, text: str) -> str:
    """``input(prompt)`` with ``text`` already typed, to be edited in place (readline);
    the line does not join the chat history. Empty on end of input."""
    import readline  # changes input() once imported: only when a step is edited

    readline.set_startup_hook(lambda: readline.insert_text(text))
    try:
        line = input(prompt)
    except EOFError:
        return ""
    finally:
        readline.set_startup_hook(None)
    if (length := readline.get_current_history_length()) and \
            readline.get_history_item(length) == line:
        readline.remove_history_item(length - 1)
    return line
