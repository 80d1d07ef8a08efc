"""When a request asks for its action: again and again ("every weekday at 7:30"), or
once at a later time ("On 2026-12-24 at 08:00, ..."): a schedule, whatever the action.
Pure text rules."""

from __future__ import annotations

import re

from ._words import _RECORDING, QUOTED, content_cut, is_question

__all__ = ["later", "recurring"]


#: A recurring time: "every weekday at 7:30", "each morning", "nightly", "every 2 hours".
_RECURRING = re.compile(
    r"\b(?:every|each)\s+(?:other\s+)?(?:\d+\s+)?(?:minutes?|hours?|days?|mornings?|"
    r"evenings?|nights?|weekdays?|weekends?|weeks?|months?|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday)\b(?!['\u2019])|\b(?:hourly|daily|nightly|weekly|monthly)\b",
    re.IGNORECASE)


def recurring(request: str) -> bool:
    """Whether ``request`` asks for something done again and again ("every weekday at
    7:30 summarize the PDFs"): a schedule, whatever the action. Not in quoted text, in
    what a request records ("remember: backups run nightly"), nor in a question."""
    intent = QUOTED.sub("x", content_cut(request))
    return (bool(_RECURRING.search(intent)) and not _RECORDING.match(intent.lower())
            and not is_question(request))


#: A later time of its own: "On 2026-12-24 at 08:00, summarize the pdfs here",
#: "tomorrow at 9 zip the logs" (a date after "since", "until", "from" ... filters).
_LATER = re.compile(r"(?<!since )(?<!until )(?<!till )(?<!before )(?<!after )(?<!from )"
                    r"(?<!since the )\b\d{4}-\d{2}-\d{2}\b|\b(?:tomorrow|tonight|tomorrow "
                    r"(?:morning|evening|night))\s+at\s+\d{1,2}\b|\bat\s+\d{1,2}:\d{2}\b",
                    re.IGNORECASE)


def later(request: str) -> bool:
    """Whether ``request`` asks for something done once at a later time (`_LATER`): a
    schedule too. Not in quoted text, in what a request records or writes, nor in a
    question."""
    intent = QUOTED.sub("x", content_cut(request))
    return (bool(_LATER.search(intent)) and not _RECORDING.match(intent.lower())
            and not _WRITES_TEXT.match(intent) and not is_question(request))


#: An order to write text, whose words may hold a time ("add standup at 9:30 to notes").
_WRITES_TEXT = re.compile(r"^\W*(?:please\s+)?(?:add|append|write|put|insert|type)\b",
                          re.IGNORECASE)
