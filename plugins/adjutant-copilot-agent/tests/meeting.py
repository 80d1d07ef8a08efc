"""Scripted meetings spoken by espeak-ng in two voices, and the recall of their items in
a copilot state: shared by the end-to-end test and ``bench/copilot_agent.py``.

``LAUNCH`` is the meeting the end-to-end test runs. ``SCIENCE_FAIR`` is the held-out
check (another topic, other names and voices, decisions and tasks said without the
words "decided", "agreed" or "you will"): it was written before the analysis was
changed for recall and is never used to tune it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VOICES = {"Alice": "en-us+f3", "Bob": "en-us"}
LINES = [
    ("Alice", "Good morning Bob. Thanks for joining the launch planning meeting."),
    ("Bob", "Good morning Alice. The beta feedback from our customers was very positive."),
    ("Alice", "The design team finished the new icons and the onboarding screens."),
    ("Bob", "Support tickets went down by ten percent last month."),
    ("Alice", "So we decided to launch the mobile app on March tenth."),
    ("Bob", "Agreed. We also decided to use Postgres for the new billing database."),
    ("Alice", "Bob, you will update the pricing page by Friday."),
    ("Bob", "Sure. Alice, you will send the press release to the marketing team."),
    ("Alice", "Yes. And Carol will fix the login bug before the launch."),
    ("Bob", "One open question: how many servers do we need on launch day?"),
    ("Alice", "Good question. We will find out with the load test next week."),
    ("Bob", "Great. Let us meet again next Monday. Thank you Alice."),
]
#: The scripted items, each recognised by any one of its keyword sets (all words of a
#: set in one item's text, case and punctuation aside).
DECISIONS = {"launch on March tenth": [{"march"}, {"launch", "tenth"}],
             "use Postgres for billing": [{"postgres"}, {"billing", "database"}]}
ACTIONS = {"Bob updates the pricing page": [{"pricing"}],
           "Alice sends the press release": [{"press"}, {"release", "marketing"}],
           "Carol fixes the login bug": [{"login"}, {"bug"}]}
QUESTIONS = {"how many servers on launch day": [{"servers"}]}


@dataclass(frozen=True)
class Meeting:
    name: str
    voices: dict[str, str]
    lines: list[tuple[str, str]]
    decisions: dict[str, list[set[str]]]
    actions: dict[str, list[set[str]]]
    questions: dict[str, list[set[str]]] = field(default_factory=dict)


LAUNCH = Meeting("launch planning", VOICES, LINES, DECISIONS, ACTIONS, QUESTIONS)
SCIENCE_FAIR = Meeting(
    "science fair (held out)", {"Priya": "en-gb+f2", "Marcus": "en-us+m3"},
    [("Priya", "Hello Marcus, let us get started on the science fair."),
     ("Marcus", "Hi Priya. Last year we had forty projects and only three judges."),
     ("Priya", "The gym is free on the twelfth of May, which helps a lot."),
     ("Marcus", "Then let us go with the gym for the main hall."),
     ("Priya", "Fine with me. And the entry fee stays at five dollars, the board "
               "settled that yesterday."),
     ("Marcus", "Good. I am going to order the trophies this week."),
     ("Priya", "I will email the parents about the rules tomorrow."),
     ("Marcus", "Elena needs to book the judges before the end of April."),
     ("Priya", "Who is going to pay for the insurance?"),
     ("Marcus", "Nobody knows yet, sadly."),
     ("Priya", "Alright. Thanks Marcus, talk to you next week.")],
    {"hold it in the gym": [{"gym"}],
     "the entry fee stays at five dollars": [{"fee"}, {"five", "dollars"}]},
    {"Marcus orders the trophies": [{"trophies"}, {"trophy"}],
     "Priya emails the parents": [{"parents"}],
     "Elena books the judges": [{"judges", "book"}, {"elena"}]},
    {"who pays for the insurance": [{"insurance"}]})
#: Written after the cue rules (`adjutant_copilot_agent._cues`), with phrasings they do
#: not list, and run once: the check nothing was tuned on.
OFFSITE = Meeting(
    "team offsite (written after the rules)", {"Nina": "en-us+f4", "Omar": "en-gb"},
    [("Nina", "Morning Omar, shall we sort out the offsite?"),
     ("Omar", "Morning. The hotel in Lisbon sent a quote yesterday."),
     ("Nina", "It is cheaper than Porto, so Lisbon it is."),
     ("Omar", "Fine. The budget is capped at twelve thousand euros."),
     ("Nina", "Omar, book the flights for the whole team."),
     ("Omar", "Sure. Nina, you'll draft the agenda, right?"),
     ("Nina", "Yes, and Tom is handling the catering contract."),
     ("Omar", "Do we invite the interns as well?"),
     ("Nina", "Not sure, we can think about that later."),
     ("Omar", "Okay, thanks Nina.")],
    {"the offsite is in Lisbon": [{"lisbon"}],
     "the budget is capped at twelve thousand euros": [{"budget"}, {"twelve", "thousand"}]},
    {"Omar books the flights": [{"flights"}],
     "Nina drafts the agenda": [{"agenda"}],
     "Tom handles the catering contract": [{"catering"}]},
    {"do we invite the interns": [{"interns"}]})
#: Tuning meetings written for the recall work of issue 26 (the three above are tuning
#: material too now): commitments, decisions and questions in many phrasings ("leave it
#: with me", "we're going with", "let's not", "can someone check", "is on it", an
#: imperative to a name, a plain "X it is"). The blind check is a file of meetings
#: nobody here has read (`bench/copilot_agent.py --meetings FILE`).
WEBSITE = Meeting(
    "website redesign (tuning)", {"Sofia": "en-us+f2", "Ravi": "en-us+m1"},
    [("Sofia", "Hi Ravi, thanks for making time for the website redesign."),
     ("Ravi", "No problem. The new mockups came back from the agency on Monday."),
     ("Sofia", "After looking at both options, we're going with the dark theme."),
     ("Ravi", "Good call. And let's not migrate the old blog posts, nobody reads them."),
     ("Sofia", "The contact form is broken on phones. I'll take that one."),
     ("Ravi", "Thanks. The image compression is slow too, leave it with me."),
     ("Sofia", "Can someone check the analytics before we switch over?"),
     ("Ravi", "Jenny can do that, she set up the tracking last year."),
     ("Sofia", "What about the domain renewal, does anyone know when it expires?"),
     ("Ravi", "No idea, honestly."),
     ("Sofia", "Okay. Talk soon, Ravi.")],
    {"the dark theme": [{"dark"}, {"theme"}],
     "the old blog posts are not migrated": [{"blog"}]},
    {"Sofia fixes the contact form": [{"contact"}, {"form"}],
     "Ravi speeds up the image compression": [{"compression"}, {"image"}],
     "Jenny checks the analytics": [{"analytics"}]},
    {"when does the domain expire": [{"domain"}, {"expires"}]})
HIRING = Meeting(
    "hiring plan (tuning)", {"Grace": "en-gb+f3", "Leo": "en-us+m2"},
    [("Grace", "Morning Leo. Let's go through the hiring plan for next quarter."),
     ("Leo", "Sure. We have budget for two backend engineers."),
     ("Grace", "Final call then: both roles are remote first."),
     ("Leo", "Makes sense. We'll skip the recruiting agency this time, it cost too much."),
     ("Grace", "I can put together the job description by Thursday."),
     ("Leo", "Great. Hassan should schedule the first interviews."),
     ("Grace", "And Leo, please set up the coding exercise."),
     ("Leo", "Will do."),
     ("Grace", "Who is going to own onboarding for the new people?"),
     ("Leo", "Good point, we have not figured that out."),
     ("Grace", "Thanks Leo, see you tomorrow.")],
    {"both roles are remote first": [{"remote"}],
     "no recruiting agency": [{"agency"}, {"recruiting"}]},
    {"Grace writes the job description": [{"description"}, {"job"}],
     "Hassan schedules the interviews": [{"interviews"}, {"hassan"}],
     "Leo sets up the coding exercise": [{"coding"}, {"exercise"}]},
    {"who owns onboarding": [{"onboarding"}]})
KITCHEN = Meeting(
    "kitchen renovation (tuning)", {"Maria": "en-us+f1", "Daniel": "en-gb+m3"},
    [("Maria", "So, the kitchen. The builder can start in three weeks."),
     ("Daniel", "The quote for the marble counter was far too high."),
     ("Maria", "Then the wooden counter it is, it is half the price."),
     ("Daniel", "Fine by me. We are keeping the old cabinets and just painting them."),
     ("Maria", "My brother is sorting out the plumber."),
     ("Daniel", "I'm on the paint, I will pick the colours this weekend."),
     ("Maria", "Could you also ask the neighbours about the noise?"),
     ("Daniel", "Sure, no problem."),
     ("Maria", "Do we need a permit for moving the sink?"),
     ("Daniel", "I really don't know, we should find out."),
     ("Maria", "Alright, that is it for today.")],
    {"the wooden counter": [{"wooden"}, {"counter"}],
     "keep the old cabinets, painted": [{"cabinets"}]},
    {"the brother sorts out the plumber": [{"plumber"}],
     "Daniel picks the paint colours": [{"paint"}, {"colours"}, {"colors"}],
     "Daniel asks the neighbours about the noise": [{"neighbours"}, {"neighbors"},
                                                    {"noise"}]},
    {"is a permit needed to move the sink": [{"permit"}]})
MEETINGS = {"launch": LAUNCH, "science-fair": SCIENCE_FAIR, "offsite": OFFSITE,
            "website": WEBSITE, "hiring": HIRING, "kitchen": KITCHEN}


def load_meetings(path: Path) -> list[Meeting]:
    """The meetings of a JSON file: a list of objects (or ``{"meetings": [...]}``) with
    ``title`` (or ``name``), ``voices``, ``lines`` ([speaker, text] pairs), and
    ``decisions``, ``actions``, ``questions`` (item to a list of word lists). A file
    that does not have that shape is a ``ValueError`` naming what is wrong."""
    import json

    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(raw, dict):
        raw = raw.get("meetings", [raw] if "lines" in raw else None)
    if not isinstance(raw, list):
        raise ValueError(f"{path}: expected a list of meetings")

    def ways(items: Any, where: str) -> dict[str, list[set[str]]]:
        if not isinstance(items, dict):
            raise ValueError(f"{where}: expected an object of item to word lists")
        out = {}
        for item, sets in items.items():
            if not isinstance(sets, list) or not sets:
                raise ValueError(f"{where}: {item!r} has no word lists")
            if all(isinstance(w, str) for w in sets):  # one set given flat
                sets = [sets]
            out[str(item)] = [{str(w).lower() for w in way} for way in sets]
        return out

    meetings = []
    for n, m in enumerate(raw):
        where = f"{path}: meeting {n + 1}"
        if not isinstance(m, dict) or not isinstance(m.get("lines"), list):
            raise ValueError(f"{where}: expected an object with lines")
        voices = {str(k): str(v) for k, v in dict(m.get("voices") or {}).items()}
        lines = [(str(who), str(text)) for who, text in m["lines"]]
        for who, _ in lines:
            voices.setdefault(who, "en-us")
        meetings.append(Meeting(str(m.get("title") or m.get("name") or f"meeting {n + 1}"),
                                voices, lines, ways(m.get("decisions", {}), where),
                                ways(m.get("actions", {}), where),
                                ways(m.get("questions", {}), where)))
    return meetings


def speak(folder: Path, pause_s: float = 1.0, meeting: Meeting = LAUNCH) -> Path:
    """The meeting as one WAV (22.05 kHz mono, as espeak-ng writes it)."""
    import numpy as np
    import soundfile as sf

    pieces = []
    rate = 22_050
    for n, (who, text) in enumerate(meeting.lines):
        path = folder / f"line{n}.wav"
        subprocess.run(["espeak-ng", "-v", meeting.voices[who], "-s", "160", "-w", str(path),
                        text], check=True, timeout=60)
        data, rate = sf.read(str(path), dtype="float32")
        pieces += [data, np.zeros(int(pause_s * rate), dtype=np.float32)]
    out = folder / "meeting.wav"
    sf.write(str(out), np.concatenate(pieces), rate, subtype="PCM_16")
    return out


def _found(texts: list[str], ways: list[set[str]]) -> bool:
    from adjutant_copilot_agent._state import normalize

    words = [set(normalize(t).split()) for t in texts]
    return any(way <= w for w in words for way in ways)


def recall(state: Any, meeting: Meeting = LAUNCH) -> dict[str, Any]:
    """How many scripted items the state holds: ``strict`` (in their own list) and
    ``anywhere`` (in any list of items, or the summary)."""
    def texts(items: Any) -> list[str]:
        return [i.text for i in items]

    everything = (texts(state.decisions) + texts(state.action_items)
                  + texts(state.key_points) + texts(state.open_questions)
                  + [state.running_summary])
    groups = {"decisions": (meeting.decisions, texts(state.decisions)),
              "action_items": (meeting.actions, texts(state.action_items)),
              "open_questions": (meeting.questions, texts(state.open_questions))}
    out: dict[str, Any] = {}
    strict = anywhere = total = listed = extra = 0
    for name, (scripted, own) in groups.items():
        hits = {item: _found(own, ways) for item, ways in scripted.items()}
        listed += len(own)
        extra += sum(not any(_found([t], ways) for ways in scripted.values()) for t in own)
        loose = {item: _found(everything, ways) for item, ways in scripted.items()}
        out[name] = hits
        strict += sum(hits.values())
        anywhere += sum(loose.values())
        total += len(scripted)
    total = total or 1
    out["strict"], out["anywhere"], out["total"] = strict / total, anywhere / total, total
    #: items in the three lists, and those of them that name no scripted item of their list
    out["listed"], out["extra"] = listed, extra
    return out
