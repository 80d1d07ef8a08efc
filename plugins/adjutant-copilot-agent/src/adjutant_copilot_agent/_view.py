"""The state as people read it: Markdown for ``show`` and ``export --format md``, and
the same text escaped for a terminal (what a recording said is untrusted: a terminal
escape in a transcript is shown as ``\\x1b``, never obeyed)."""

from __future__ import annotations

from ._log import mmss
from ._state import CopilotState, Item

__all__ = ["markdown"]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _items(state: CopilotState, title: str, items: tuple[Item, ...], words: bool) -> list[str]:
    if not items:
        return []
    out = [f"## {title}", ""]
    for n, item in enumerate(items, 1):
        span = f"{mmss(item.evidence.start_s)}–{mmss(item.evidence.end_s)}"  # noqa: RUF001
        out.append(f"{n}. {_one_line(item.text)} [{span}]")
        heard = state.words(item.evidence) if words else ""
        if heard:
            out.append(f"   > {_one_line(heard)}")
    return [*out, ""]


def markdown(state: CopilotState, *, title: str = "Co-Pilot", words: bool = True) -> str:
    """``state`` as Markdown: each item with its span, and (``words``) what was said
    there; suggested questions numbered for ``dismiss``, dismissed ones marked."""
    meta = state.cycle_metadata
    out = [f"# {title}", "",
           f"Cycles: {meta.cycle_number} ({meta.failed_cycles} failed), audio analysed: "
           f"{mmss(meta.total_audio_seconds)}, updated: {meta.last_updated_at or '-'}"
           + (" (processing)" if meta.processing else ""), ""]
    if state.running_summary:
        out += ["## Summary", "", _one_line(state.running_summary), ""]
    out += _items(state, "Decisions", state.decisions, words)
    out += _items(state, "Action items", state.action_items, words)
    out += _items(state, "Key points", state.key_points, words)
    out += _items(state, "Open questions", state.open_questions, words)
    if state.suggested_questions:
        out += ["## Suggested questions", ""]
        for n, q in enumerate(state.suggested_questions, 1):
            mark = " (dismissed)" if q.dismissed else ""
            reason = f" ({_one_line(q.reason)})" if q.reason else ""
            out.append(f"{n}. {_one_line(q.question)}{reason}{mark}")
        out.append("")
    if state.key_concepts:
        out += ["## Key concepts", ""]
        out += [f"- {_one_line(c.term)} ({c.mention_count}x): {_one_line(c.context)}"
                for c in state.key_concepts]
        out.append("")
    return "\n".join(out)
