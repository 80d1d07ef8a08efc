"""How the terminal shows a step before asking (`adjutant.cli._step_view`): the notes
that only say "approve this" folded into one line naming who asks, the rest kept;
the arguments offered for editing as JSON that is safe on a terminal and parses back."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from adjutant import StepPacket
from adjutant.cli._step_view import approval_notes, editable, show_step
from adjutant.safety.terminal import printable

#: What the mode, the guard and the write-gate say of a plain write, as the packet has it.
PLAIN_WRITE = ("mode: fs.write has effects: confirm it",
               "guard: fs.write changes things (write): it needs your approval",
               "write-gate: fs.write writes: every write needs your explicit approval "
               "(mode execute-with-confirmation)")


def packet(*reasons: str, args: dict[str, Any] | None = None) -> StepPacket:
    return StepPacket(run_id="r", index=0, tool="fs.write", args=args or {"path": "a.txt"},
                      intent="", preview="+a", level="write", reasons=reasons)


def shown(step: StepPacket) -> str:
    out = io.StringIO()
    show_step(step, out)
    return out.getvalue()


def test_three_notes_that_say_the_same_are_one_line_naming_who_asks() -> None:
    assert approval_notes(packet(*PLAIN_WRITE)) == (["mode", "guard", "write-gate"], [])
    text = shown(packet(*PLAIN_WRITE))
    assert "  approval required by: mode, guard, write-gate\n" in text
    assert "note:" not in text


def test_the_kernels_own_backstop_folds_too() -> None:
    backstop = "write-gate: fs.write writes: it needs your approval"
    assert approval_notes(packet(backstop)) == (["write-gate"], [])


def test_a_note_that_says_more_is_kept_and_its_policy_named() -> None:
    outside = "guard: path: writes ../x, outside the working cages (/w)"
    also = ("guard: fs.write changes things (write): it needs your approval; also: path: "
            "the file has 2 hard links")
    fallback = "no safety policy is installed, so every step asks"
    required, notes = approval_notes(packet(PLAIN_WRITE[0], outside, also, fallback,
                                            PLAIN_WRITE[2]))
    assert required == ["mode", "guard", "write-gate"]
    assert notes == [outside, also, fallback]


def test_another_tools_words_are_not_folded() -> None:
    """A reason about some other tool is not this step's approval: it stays."""
    other = "guard: fs.delete changes things (destructive): it needs your approval"
    assert approval_notes(packet(other)) == (["guard"], [other])


def test_a_reason_cannot_forge_a_line_of_its_own() -> None:
    forged = "guard: x\n  approval required by: nobody\x1b[2K"
    text = shown(packet(forged))
    lines = text.splitlines()
    assert [line for line in lines if "approval required by" in line] == [
        "  approval required by: guard",
        "  note: guard: x\\n  approval required by: nobody\\x1b[2K"]
    assert "\x1b" not in text


@given(st.dictionaries(st.text(max_size=6), st.text(max_size=12) | st.integers(), max_size=3))
def test_the_offered_arguments_are_printable_one_line_json_of_the_same(
        args: dict[str, Any]) -> None:
    text = editable(args)
    assert printable(text, multiline=False) == text
    assert json.loads(text) == args


def test_readable_arguments_stay_readable() -> None:
    assert editable({"path": "café.txt", "content": "x\n"}) == \
        '{"path": "café.txt", "content": "x\\n"}'
    assert editable({"path": "a\u202etxt.exe"}) == '{"path": "a\\u202etxt.exe"}'
    assert editable({"path": "a\x7f"}) == '{"path": "a\\u007f"}'
