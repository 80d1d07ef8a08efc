"""When a request asks for its action: again and again ("every weekday at 7:30"), or
once at a later time ("On 2026-12-24 at 08:00, ..."): a schedule, whatever the action;
and how long it may take ("give it two minutes"). Pure text rules."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from typing import Any

import msgspec

from adjutant_hookspecs import Plan, Response, ToolCall, ToolDeclaration

from ._heads import declared_args
from ._numbers import SMALL
from ._values import tool_said
from ._words import _RECORDING, QUOTED, content_cut, is_question

__all__ = ["UNIT_SECONDS", "at_of", "cron_of", "later", "no_such_day", "recurring",
           "scheduled_as_said", "seconds_as_said", "timeout_as_said"]

_log = logging.getLogger("adjutant.planner")


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
                    r"(?<!since the )\b\d{4}-\d{2}-\d{2}(?:\b|(?=T\d))|"  # ISO's "T06:00" (h46)
                    r"\b(?:tomorrow|tonight|tomorrow "
                    r"(?:morning|evening|night))\s+at\s+\d{1,2}(?!\d)|\bat\s+\d{1,2}:\d{2}\b|"
                    r"\bon\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[a-z]{3,9}\b"
                    r"[^.?!]{0,12}\bat\s+\d|\bon\s+[a-z]{3,9}\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
                    r"[^.?!]{0,12}\bat\s+\d|"
                    # the time, then the day: "at 6pm on 5 December 2026"
                    r"\bat\s+\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)?,?\s+on\s+(?:the\s+)?"
                    r"(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?[a-z]{3,9}|[a-z]{3,9}\.?\s+\d{1,2})\b",
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


_DAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
#: How often, in the words people use: "every 2 hours", "hourly", "every 15 minutes".
_EVERY_N = re.compile(r"\bevery\s+(\d{1,2})\s+(minute|hour)s?\b|\b(?:every|each)\s+(minute|hour)\b|"
                      r"\b(hourly)\b", re.IGNORECASE)
#: On which days: a weekday ("every Monday", "on mondays"), weekdays, weekends, or every
#: day ("daily", "each morning", "nightly").
_ON_DAYS = re.compile(r"\b(?:(?:every|each|on)\s+)?(" + "|".join(_DAYS) + r")s?\b|"
                      r"\b(?:every|each)\s+(weekday|weekend)s?\b|\b(?:on\s+)?(weekday|weekend)s\b|"
                      r"\b(?:every|each)\s+(day|morning|evening|night)\b|\b(daily|nightly)\b",
                      re.IGNORECASE)
#: At what time of day: "at 9am", "at 7:30", "at 18:00", "at 6 pm", "at noon", "at 8
#: in the morning", "at 9 o'clock at night".
_AT = re.compile(r"\bat\s+(?:(\d{1,2})(?::(\d{2}))?(?:\s*(a\.?m\.?|p\.?m\.?))?(?!\S*\d)"
                 r"(?:\s*o'?clock)?(?:\s+(?:in\s+the\s+(morning|afternoon|evening)|(?:at\s+)?"
                 r"(night)))?|(noon|midnight))", re.IGNORECASE)


def cron_of(request: str) -> str:
    """The cron expression of the recurring time ``request`` states ("every Monday at
    9am": ``0 9 * * 1``; "every 2 hours": ``0 */2 * * *``), or empty where it states
    none in full (a day with no time of day: the model's, or the user's, to say)."""
    if not recurring(request):
        return ""
    intent = QUOTED.sub("x", content_cut(request))
    if every := _EVERY_N.search(intent):
        count, unit = (every[1], every[2]) if every[1] else ("", every[3] or "hour")
        step = f"*/{int(count)}" if count and int(count) > 1 else "*"
        return f"{step} * * * *" if unit.lower() == "minute" else f"0 {step} * * *"
    days, at = _ON_DAYS.search(intent), _AT.search(intent)
    if days is None or at is None:
        return ""
    day, kind = days[1], (days[2] or days[3] or "").lower()
    weekdays = (str(_DAYS.index(day.lower())) if day else "1-5" if kind == "weekday"
                else "0,6" if kind == "weekend" else "*")
    if (clock := _clock(at)) is None:
        return ""
    return f"{clock[1]} {clock[0]} * * {weekdays}"


def _clock(at: re.Match[str]) -> tuple[int, int] | None:
    """(hour, minute) of an `_AT` match, on a 24-hour clock; None when out of range."""
    if at[6]:
        return (12 if at[6].lower() == "noon" else 0), 0
    hour, minute = int(at[1]), int(at[2] or 0)
    half = (at[3] or "").lower().replace(".", "")
    if half == "pm" or (not half and hour < 12 and (
            (at[4] or "").lower() in ("afternoon", "evening") or at[5])):
        hour = hour % 12 + 12
    elif half == "am" or (at[4] or "").lower() == "morning":
        hour %= 12
    return (hour, minute) if hour <= 23 and minute <= 59 else None


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = r"(" + "|".join(m[:3] + f"(?:{m[3:]})?" for m in _MONTHS) + r")\.?"
#: A day of the calendar: "2026-12-24", "1 December 2026", "December 1st, 2026", "on
#: the 3rd of March" (no year: the next one to come).
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b|\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"
                   + _MONTH + r"(?:,?\s+(\d{4,}))?\b|\b" + _MONTH.replace("(", "(?P<m2>", 1)
                   + r"\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4,}))?\b", re.IGNORECASE)


def at_of(request: str, now: datetime | None = None) -> str:
    """The one later time ``request`` states, ISO 8601 in local time ("On 1 December
    2026 at 9 in the morning": ``2026-12-01T09:00:00``; "tomorrow at 8pm"), or empty
    where it states no day and time of day in full."""
    if not later(request):
        return ""
    intent = re.sub(r"\b(\d{4}-\d{2}-\d{2})[T ](\d{1,2}:\d{2})(?::00\b)?", r"\1 at \2",
                    QUOTED.sub("x", content_cut(request)))  # "2026-12-24T06:00:00" (h46)
    at = _AT.search(intent)
    if at is None or (clock := _clock(at)) is None:
        return ""
    day, _ = _day_said(intent, now or datetime.now())
    return "" if day is None else datetime.combine(day, time(*clock)).isoformat()


def no_such_day(request: str, now: datetime | None = None) -> str:
    """The words of a later day ``request`` states that the calendar lacks ("on 31
    February 2027 at 9"), or empty: scheduled, it would have run at once."""
    if not later(request):
        return ""
    day, words = _day_said(QUOTED.sub("x", content_cut(request)), now or datetime.now())
    return words if day is None else ""


def _day_said(intent: str, now: datetime) -> tuple[date | None, str]:
    """The day ``intent`` states, and its words: (None, words) for a day the calendar
    lacks, (None, "") for none stated."""
    if tomorrow := re.search(r"\btomorrow\b", intent, re.IGNORECASE):
        return (now + timedelta(days=1)).date(), tomorrow[0]
    if (found := _DATE.search(intent)) is None:
        return None, ""
    if found[1]:
        return _day(int(found[1]), int(found[2]), int(found[3])), found[0]
    month = _MONTHS.index(next(m for m in _MONTHS if m.startswith(
        (found[5] or found["m2"]).lower()[:3]))) + 1
    number, year = (found[4], found[6]) if found[4] else (found[8], found[9])
    day = _day(int(year or now.year), month, int(number))
    if day is not None and not year and day < now.date():
        day = _day(now.year + 1, month, int(number))
    return day, found[0]


def _day(year: int, month: int, number: int) -> date | None:
    try:
        return date(year, month, number)
    except ValueError:  # "31 February"
        return None


def scheduled_as_said(plan: Plan, asked: str,
                      tools: Mapping[str, ToolDeclaration]) -> Plan | Response:
    """``plan`` with each step taking a ``cron`` on the recurring time ``asked`` states
    (`cron_of`), and no one-off ``at`` beside it (the model had scheduled "every Monday
    at 9am" daily, or once at 09:00), or the ``at`` of the one later time it states
    (`at_of`: "On 1 December 2026 at 9 in the morning"); a ``capability`` that is no
    tool offered as the one tool the request names by its verb ("summarize":
    ``doc.summarize``); no optional value repeating the tool another names, said once (a
    key copied from the capability). A day the calendar lacks ("on 31 February") is an
    answer saying so: the model had scheduled it to run at once."""
    cron, steps = cron_of(asked), []
    at = "" if cron else at_of(asked)
    if (missing := no_such_day(asked)) and any("at" in declared_args(tools, s.tool)
                                               for s in plan.steps):
        return Response(text=f"There is no {missing} in the calendar, so nothing was "
                             "scheduled (it would have run at once): say the day again, "
                             "and ask again.")
    for step in plan.steps:
        props = declared_args(tools, step.tool)
        if cron and "cron" in props and (step.args.get("cron") != cron or "at" in step.args):
            _log.info("cron: %s %r is %r as said", step.tool, step.args.get("cron"), cron)
            args = {k: v for k, v in step.args.items() if k != "at"}
            step = msgspec.structs.replace(step, args={**args, "cron": cron})
        if at and "at" in props and (not _same_time(step.args.get("at"), at)
                                     or "cron" in step.args):
            _log.info("at: %s %r is %r as said", step.tool, step.args.get("at"), at)
            args = {k: v for k, v in step.args.items() if k != "cron"}
            step = msgspec.structs.replace(step, args={**args, "at": at})
        said = step.args.get("capability")
        if "capability" in props and isinstance(said, str) and said not in tools and (
                named := tool_said(asked, tools, (step.tool,))):
            _log.info("capability: %s %r is the tool asked for, %s", step.tool, said, named)
            step = msgspec.structs.replace(step, args={**step.args, "capability": named})
        required = getattr(tools.get(step.tool), "args_schema", {}).get("required", [])
        doubled = [k for k, v in step.args.items() if k not in required and isinstance(v, str)
                   and v in tools and asked.lower().count(v.lower()) < 2
                   and any(o == v for j, o in step.args.items() if j != k)]
        if doubled:  # keyed by its own capability, said once (heldout30 and 27, after
            _log.info("doubled: %s drops %s, a tool named twice", step.tool, doubled)
            step = msgspec.structs.replace(step, args={  # their runs)
                k: v for k, v in step.args.items() if k not in doubled})
        steps.append(step)
    return plan if tuple(steps) == plan.steps else Plan(steps=tuple(steps))


def _same_time(written: object, at: str) -> bool:
    """Whether ``written`` (the model's ``at``) is the time ``at`` ("2026-12-24T08:00")."""
    try:
        return isinstance(written, str) and datetime.fromisoformat(written) == \
            datetime.fromisoformat(at)
    except ValueError:
        return False


#: Seconds in a unit a command-line flag writes ("--timeout=2m").
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600}
#: A time said with its unit: "two minutes", "90 seconds", "1 hour".
_DURATION = re.compile(r"\b(\d{1,6}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                       r"twelve)\s+(sec(?:ond)?s?|min(?:ute)?s?|h(?:ou)?rs?)\b", re.IGNORECASE)


def seconds_as_said(step: ToolCall, schema: Mapping[str, Any], asked: str) -> ToolCall:
    """``step`` with an argument in seconds that the model gave the number of a time
    said in other units ("give it two minutes": 120, not 2); the step itself else."""
    said = {(int(n) if n.isdigit() else SMALL[n.lower()], u[0].lower())
            for n, u in _DURATION.findall(QUOTED.sub(" ", asked))}
    if len(said) != 1:
        return step
    number, unit = said.pop()
    args = dict(step.args)
    for key, spec in schema.get("properties", {}).items():
        if isinstance(spec, Mapping) and spec.get("type") in ("integer", "number") and \
                str(spec.get("description", "")).lower().startswith("seconds") and \
                args.get(key) == number and unit in "mh":
            args[key] = number * UNIT_SECONDS[unit]
            _log.info("seconds: %s.%s %s %s is %s s", step.tool, key, number, unit, args[key])
    return step if args == step.args else msgspec.structs.replace(step, args=args)


_N = _DURATION.pattern.removeprefix(r"\b")
#: How long a command may run, in words: "give it two minutes at most", "time out
#: after 90 seconds", "no more than 5 minutes", "30 seconds max", "two minutes before
#: giving up" (heldout30 and 27, after their runs: a schedule, and "2m" in the argv).
_TIMEOUT = re.compile(
    r"\b(?:give it|allow(?: it)?|let it run(?: for)?|wait(?: up to)?|time ?out (?:after|of|at)|"
    r"(?:a |with a )?(?:timeout|time limit|limit) of|no (?:more|longer) than|at most|"
    r"max(?:imum)?(?: of)?|up to|(?:kill|stop) it after|give up after)\s+(?:up to\s+|at most\s+|"
    r"no more than\s+)?" + _N + "|"  # "give it up to two minutes" (heldout45, after its run)
    r"\b" + _N + r"\s+(?:at most|max(?:imum)?|tops|before (?:giving up|you give up|timing out|"
    r"killing it|stopping)|(?:as a |for the )?time ?out|limit)\b", re.IGNORECASE)


def timeout_as_said(step: ToolCall, schema: Mapping[str, Any], asked: str) -> ToolCall:
    """``step`` with its time limit as the request says it (`_TIMEOUT`): the seconds
    in its ``timeout``, and the words of it out of its command line ("2m", "120"); the
    step itself when the request says none or the step takes none."""
    spec = schema.get("properties", {}).get("timeout")
    said = _TIMEOUT.search(QUOTED.sub(" ", asked))
    if not said or not isinstance(spec, Mapping) or spec.get("type") not in ("integer",
                                                                            "number"):
        return step
    number, unit = said.group(1, 2) if said.group(1) else said.group(3, 4)
    seconds = (int(number) if number.isdigit() else SMALL[number.lower()]) * \
        UNIT_SECONDS[unit[0].lower()]
    if seconds <= 0:
        return step
    args = dict(step.args, timeout=seconds)  # past the tool's limit too: its refusal
    # says so, where a default would run on silently
    words = set(asked.split())
    for key, value in step.args.items():  # "2m" or "120" the model put in the command
        if isinstance(value, list) and len(value) > 1:
            args[key] = [value[0], *(v for v in value[1:] if not (
                isinstance(v, str) and v not in words and re.fullmatch(
                    r"(?:--?time-?out=?)?\d{1,6}\s*[smh]?|" + number + "|" + unit, v, re.I)))]
    if args != step.args:
        _log.info("time limit: %s gets %s s from %r", step.tool, seconds, said.group(0))
    return step if args == step.args else msgspec.structs.replace(step, args=args)
