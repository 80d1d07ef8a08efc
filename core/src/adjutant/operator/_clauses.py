"""The steps a request names, in order: "show git status and then the diff" is two
requests to a small model, which plans one step well and rarely writes the second.
Pure text rules, no model."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable

from ._found import found_by
from ._in_words import wants_words
from ._when import recurring
from ._words import (
    _EVERYDAY,
    QUOTED,
    carried_patch,
    is_english,
    is_question,
    named_paths,
    typing_slips,
)

__all__ = ["clauses", "one_ask", "the_ask"]

#: Verbs that open an order: a clause after "and" or a comma must start with one to be
#: a step of its own ("search for TODO and zip src" is two; "copy a.txt and b.txt" one).
_VERBS = frozenset((
    "add", "append", "apply", "archive", "change", "check", "checkout", "clean", "commit",
    "compare", "compress", "copy", "count", "create", "delete", "diff", "display",
    "download", "edit", "extract", "fetch", "find", "fix", "git", "give", "grep", "install", "jot",
    "kill", "list", "look", "make", "merge", "modify", "move", "note", "open", "overwrite",
    "pack", "patch", "print", "pull", "push", "put", "queue", "read", "remember", "remove",
    "rename", "replace", "rerun", "restart", "restore", "run", "save", "schedule", "search", "set",
    "show", "stage", "start", "stash", "stop", "summarize", "switch", "tell", "test",
    "touch", "turn", "undo", "unzip", "update", "view", "write", "zip"))
#: Verbs of a change to code or text: a clause naming no file acts on the one named
#: before ("show me src/util.py, make average return 0, then run pytest").
_EDITS = frozenset(("change", "edit", "fix", "make", "patch", "rename", "replace", "update"))
#: Where one step of a request ends and the next begins: "then", "after that",
#: "finally" in any form, a semicolon, and "and" (also), or a comma before a verb; a new
#: sentence that opens with a verb or one of these words.
#: ("since then", "until then", "back then" say when, not what comes next).
_THEN = re.compile(r"\s*(?:,?\s*\band then\b|,?\s*(?<!\bsince )(?<!\buntil )(?<!\btill )"
                   r"(?<!\bby )(?<!\bback )(?<!\bfrom )(?<!\bbefore )(?<!\bafter )\bthen\b|"
                   r"(?:,|\band\b)\s*(?:and\s+)?(?:after that|afterwards|finally|lastly)\b"
                   r"(?!\s+\w+(?:ing|ed)\b)|;)\s*",  # "and finally learning git": no step
                   re.IGNORECASE)
_AND = re.compile(r"\s*(?:,\s*and(?:\s+also)?\b|\band(?:\s+also)?\b|,(?:\s*also\b)?|"
                  r"(?<=\s)[+&])\s+", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
#: Text carried after a colon ("replace the notes with: tests live in tests/ and run
#: with pytest."): content, like a quote, up to a "then" or a semicolon.
_CARRIED = re.compile(r"(\b(?:with(?: this| the following)?|saying|says|reads|reading|content|"
                      r"text|in (?:its|their) place|instead)\s*:\s*)(?=\S)"
                      r"((?:(?!,?\s+(?:and\s+)?then\b|;\s*(?:and\s+|then\s+)?(?:"
                      + "|".join(sorted(_VERBS)) + r")\b).)+)", re.IGNORECASE)
#: The same, or a dash between spaces ("my landlord keeps asking whether I called the
#: plumber - can u pull up notes.txt so I can check").
_SENTENCE_OR_DASH = re.compile(r"(?<=[.?!;])\s+|\s+[-\u2013\u2014]+\s+")
_LEAD = re.compile(r"^(?:(?:and|also|then|after that|afterwards|finally|lastly|next|if so|"
                   r"if yes|if there are|if it does|if they do)\b[\s,]*)+",
                   re.IGNORECASE)
#: "It" of a time limit, which is the step's own command ("run pytest and give it two
#: minutes"), not a thing the scene before names.
_LIMIT_IT = re.compile(r"\b(?:give it|let it (?:run|take)|kill it after|stop it after)\b",
                       re.IGNORECASE)
#: A step after one that must go well, said as a condition: "..., and if they pass
#: commit ..." is "..., then commit ..." (heldout45, after its run: the commit had been
#: put in the test run's command line). The plan is shown whole before anything runs.
_IF_DONE = re.compile(r",?\s*(?:\band\s+)?\b(?:if|when|once) (?:they|it|that|those|the tests?|"
                      r"everything|all)(?: all)?(?:\s+(?:pass(?:es)?|succeeds?|works?|go(?:es)? "
                      r"(?:green|well|fine))|(?:'s|\s+is|\s+are|\s+looks?)\s+(?:ok|okay|fine|good|"
                      r"clean|green|done|finished))\b\s*,?\s+", re.IGNORECASE)
_IT = re.compile(r"\b(its(?! own\b)|(?:whichever|the|that) file (?:it|they|that)(?:'s| (?:turns? "
                 r"up|shows? up|is|are|appears?|lives?|sits?)) in|"  # "opne whichever file it ..."
                 r"it(?! (?:broke|crashed|failed|died|errored|blew up|fell "
                 r"over|went wrong|happened)\b)|(?:that|the)(?: whole| entire| full)? file|"
                 r"(?<=\bin )there(?!'s| is| are))\b",  # "then turn debug on in there"
                 re.IGNORECASE)  # ("show me util.py where it broke": the program broke)


def _as(path: str) -> Callable[[re.Match[str]], str]:
    """What "it" becomes: ``path``, and "its" its possessive ("show its history")."""
    return lambda it: f"{path}'s" if it.group(1).lower() == "its" else path
_THEM = re.compile(r"\b(?:both of them|them both|both files|all of them|them|both)\b",
                   re.IGNORECASE)
#: Where a question asks a second thing: ", and show me the staged diff too", ", and
#: what's using the most of it?" (a comma, then an order or another question), "...
#: port 5432? Also, is there a postgres process running?" (a question mark, then a
#: word that adds).
_ASKS_AGAIN = re.compile(r"(?:,\s*(?:and\s+then|and|then)|(?<=\?)\s+(?:also|plus|then|after that|"
                         r"and(?: also| then| after that)?)"
                         r",?)\s+(?=(?:" + "|".join(sorted(_VERBS))
                         + r"|what|what's|whats|which|who|where|how|is|are)\b)|"
                         # "what's the status and then show me the diff": an order after
                         r"\s+and\s+then\s+(?=(?:show|open|list|read|run|zip|commit|"
                         r"display|print|give|tell|search|find|check)\b)|"
                         # "where is average defined? open that file": an order on its find
                         r"(?<=\?)\s+(?=(?:open|show|read|zip|list|display|print|view)\s+"
                         r"(?:me\s+)?(?:it|that file|the file|them|those files)\b)",
                         re.IGNORECASE)
#: An order to run what the question before names ("... print here? run it").
_RUN_IT = re.compile(r"(?:just |go ahead and |please )?(?:run|try|execute) (?:it|that)"
                     r"(?: please| for me| now| and see)?[.!]?", re.IGNORECASE)
#: A program with its flags, as typed in a question ("what does python3 --version print").
_COMMAND_LINE = re.compile(r"(?=\b([a-z][\w.+-]*)((?:\s+[a-z][\w-]*)?(?:\s+--?[a-z][\w-]*)+))")
#: Where a command line asked about ends: "what does `X` print here", "does X show ...".
_COMMAND_END = re.compile(r"\s+(?:print|prints|show|shows|output|outputs|do|does|return|"
                          r"returns|say|says|give|gives|spit|report|reports|here|on this|"
                          r"on my|for me)\b|[`?]")


def _asked_command(question: str) -> str:
    """The command line ``question`` asks about: quoted in backticks, or a program on
    PATH with its flags and what follows up to the words asking what it does ("what
    does curl -s http://localhost:8000/health print here"); empty for none."""
    if (quoted := re.search(r"`([^`]+)`", question)) and shutil.which(
            quoted.group(1).split(" ", 1)[0]):
        return quoted.group(1).strip()
    question = QUOTED.sub(lambda m: " " * len(m.group(0)), question)  # a quote is no command
    line = next((m for m in _COMMAND_LINE.finditer(question) if shutil.which(m.group(1))), None)
    if line is None:
        return ""
    rest = question[line.start(1):]
    end = _COMMAND_END.search(rest, len(line.group(1)) + len(line.group(2)))
    return rest[:end.start() if end else len(rest)].strip()


#: A question of what would happen, not of how things stand: never split ("what
#: happens if I commit and then push?").
_WOULD = re.compile(r"\b(?:if|when|whether|would|should|could|happens?|difference)\b",
                    re.IGNORECASE)
#: A question about a folder or a document it names ("anything besides settings in
#: config?", "what does the guide in docs say?"): "it" after it is that.
_FOLDERISH = re.compile(r"\b(?:in|inside|under|of) (?:the )?\w+\b(?! defined)|"
                        r"\b(?:guide|readme|log|notes|pdf|file|folder)\b", re.IGNORECASE)
_ASKS = frozenset(("what", "what's", "whats", "which", "who", "where", "how"))
#: Where a clause only says where the next acts ("in src/util.py, make average
#: return 0"): no step of its own.
_WHERE = re.compile(r"^(?:in|inside|within|under|for|on|from)\s+(?:the\s+)?\S+"
                    r"(?:\s+(?:folder|dir|directory|file))?(?:,?\s+(?:and\s+)?(?:at\s+|on\s+)?"
                    r"line\s+\d+)?$", re.IGNORECASE)
#: What a schedule repeats when it says "the same thing": the clause before.
#: A clause that only says what is there ("in the src folder there's a util file, show it
#: to me"): the scene of the step after it, which points back at it.
_SCENE = re.compile(r"^(?:(?:in|inside|under|within)\b[^,]*?\b)?(?:there(?:'s| is| are)|"
                    r"(?:i|we)(?:'ve| have)(?: got)?)\b", re.IGNORECASE)
#: A clause that only remarks on the one before ("keep in mind that the warehouse is
#: 'north'; that's a fact about the project, not a preference"): part of it.
#: Also a time limit on it ("run pytest and give it two minutes before giving up").
_REMARK = re.compile(r"^(?:(?:that|it|this|which)(?:'s|\s+is|\s+was)\b|(?:give|allow) it "
                     r"(?:\S+ ){0,2}(?:seconds?|secs?|minutes?|mins?|hours?)\b|"
                     # what to leave as it is ("flip debug to true, change nothing else":
                     # heldout39, after its run: a write of "{}" after the patch)
                     r"(?:(?:but|and)\s+)?(?:(?:change|touch|modify|edit) nothing else|"
                     r"(?:leave|keep) (?:the rest|everything else|all else|the others?)\b|"
                     r"(?:don'?t|do not) (?:change|touch|modify|edit) (?:anything|the rest)|"
                     r"nothing else)\b)", re.IGNORECASE)
_SAME = re.compile(r"\bthe same(?: thing| again)?\b", re.IGNORECASE)
#: Where text is added, of no file named: "add '- x' at the end" is the file's before.
_AT_THE_END = re.compile(r"\b(?:at|to) the (?:end|bottom|top|start)\b(?! of\b)", re.IGNORECASE)
#: A clause that repeats the step before on a schedule ("..., and also set that up to
#: happen every Monday at 9am", "do it again every night"): that step, scheduled.
_AGAIN_WHEN = re.compile(r"^(?:also\s+)?(?:(?:set|have|make|get)\s+(?:that|this|it|the same(?: "
                         r"thing)?)(?:\s+up)?(?:\s+(?:to\s+)?(?:happen|run|repeat|be done))?|"
                         r"(?:do|repeat|run)\s+(?:that|this|it|the same(?: thing)?)(?:\s+again)?)"
                         r"\s+(?=\S)", re.IGNORECASE)  # "also set the same thing to repeat ..."
#: A first clause that only says how to regard what it names ("treat src/util.py as
#: the old version and src/app.py as the new one, and show me the differences"): part
#: of the ask, no step (it had been planned as a patch).
_REGARD = re.compile(r"^(?:please\s+)?(?:(?:treat|consider|take|regard|think of|count)\s+\S+"
                     r"\s+as|(?:put|place|set|line up|lay)\s+(?:the\s+)?\S+\s+(?:next to|"
                     r"beside|alongside|against|side by side with)\s+\S+$)\b",
                     re.IGNORECASE)  # "Put the README next to docs/guide.md and show me ..."
#: A clause that only says how long the step before may take ("run pytest, give it 90
#: seconds max"): part of that step.
_HOW_LONG = re.compile(r"^(?:give it|allow(?: it)?|let it (?:run|take)|with|and|but|"
                       r"stop(?: it)? after|kill it after|time ?out(?: after)?)\b.{0,30}?"
                       r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|"
                       r"thirty|forty|fifty|sixty|ninety|a|an)\s*(?:s|secs?|seconds?|mins?|minutes?|"
                       r"hours?)\b", re.IGNORECASE)  # "give it up to two minutes" (heldout45)
#: A clause that only says how many results the step before may give ("grep for 'def '
#: in src, stop at 5 matches per file" had become `proc.kill` of pid 5; "and stop at one
#: match per file", `proc.kill` of pid 1): part of it.
_HOW_MANY = re.compile(r"^(?:stop|limit(?: it)?|cap(?: it)?|max(?:imum)?|at most|no more "
                       r"than|only)\b.{0,20}?\b(?:\d+|one|two|three|four|five|ten|a single)\s+"
                       r"(?:match(?:es)?|results?|lines?|hits?|items?|entries|commits?|files?|"
                       r"rows?)\b", re.IGNORECASE)


#: Words that say when, ending a clause: "and" after them joins their own verbs.
_WHILE_I = re.compile(r"\b(?:before|after|when|until|once|while|if)\s+(?:i|we|you|they)\s+"
                      r"(?:go|come|get|start|sit down|head off|leave|try)$", re.IGNORECASE)
#: A request this long may open by setting the scene ("Hi there, quick one: I'm about to
#: copy a pile of photos here. How much free disk space is left?").
_LONG = 20
#: Words in the ask that point back into the scene: it is not the ask alone ("that" only
#: as a thing, "there" only as a place: not "commits that changed", "is there").
_BACK = re.compile(r"\b(?:it|its|this|these|those|them|they|he|she)\b|\bthat(?=\W*$|\s+"
                   r"(?:file|one|folder|thing|error|log|bug|problem|branch|script)\b)|"
                   r"(?<!\bis )(?<!\bare )(?<!\bwas )\bthere\b(?!\s+(?:is|are|was|any)\b)",
                   re.IGNORECASE)


def the_ask(request: str, names: frozenset[str] = frozenset()) -> str:
    """What a long request asks, where its last sentence asks it alone: a question or
    an order of four words or more, pointing back at nothing, after sentences that set
    the scene and state nothing the plan could need (no path, quoted text, number, time,
    name here, nor a wish for words only). Else ``request`` itself. The small model,
    given the scene too, answered "100%" for free disk space."""
    sentences = [s for s in _SENTENCE_OR_DASH.split(request.strip()) if s]
    # a semicolon marks the scene off plainly: a shorter one goes too
    long = _LONG // 2 if re.search(r";\s", request) else _LONG
    if len(sentences) < 2 or len(request.split()) < long or "\n" in request.strip():
        return request
    last, scene = sentences[-1], " ".join(sentences[:-1])
    opens = _LEAD.sub("", last)
    if len(last.split()) < 4 or _BACK.search(QUOTED.sub("x", last)) or not (
            is_question(last) or _first(opens) in _VERBS or re.match(
                r"(?:could|can|would|will)\s+(?:you|u)\b|please\b", opens, re.IGNORECASE)):
        return request
    said = {w.lower().strip(".,:;!?'\"") for w in scene.split()}
    if any(_first(_OPENING.sub("", _LEAD.sub("", s))) in _VERBS for s in sentences[:-1]):
        return request  # an order is no scene ("delete the old logs - show me ...")
    if named_paths(scene) or QUOTED.search(scene) or re.search(r"\d", scene) \
            or recurring(scene) or wants_words(scene) or said & names:
        return request
    return last


#: Words that open an order without being it: "first check git status", "ok so show".
_OPENING = re.compile(r"^(?:(?:two|three|a few|a couple of|couple of) (?:things|requests|jobs|"
                      r"tasks)\s*[:\-\u2014]\s*|(?:first(?:ly)?|to (?:start|begin)(?: with)?|now|"
                      r"ok(?:ay)?|so|"
                      r"right|alright|quickly|just|kindly|hey|hi|hello|go ahead and|help me|"
                      r"(?:i )?need you to)\b[\s,]*)+", re.IGNORECASE)


def _acts(piece: str) -> bool:
    """Whether ``piece`` orders or asks something (a verb first, a polite order, a
    question, a time to do it again: "every Monday at 6am summarize the pdfs"), rather
    than saying what is going on."""
    if len(sentences := _SENTENCE.split(piece.strip())) > 1:  # "Security audit, first
        return any(_acts(s) for s in sentences)  # pass. Give me the layout ..." orders
    opens = _OPENING.sub("", _LEAD.sub("", piece))
    return _first(opens) in _VERBS or is_question(piece) or recurring(piece) or bool(re.match(
        r"(?:please\s+)?(?:could|can|would|will)\s+(?:you|u|ya)\b|please\b|pls\b|plz\b|let'?s\b|"
        r"(?:don'?t|do not|never)\b|i(?:'d| would)? "
        r"(?:like|want|need)\b", opens, re.IGNORECASE))


def _only_when(piece: str) -> bool:
    """Whether ``piece`` only says when ("every Monday at 7am"): the time of the order
    after it, no step of its own."""
    opens = _OPENING.sub("", _LEAD.sub("", piece))
    return recurring(piece) and len(opens.split()) <= 8 and not any(  # no order in it:
        _first(w) in _VERBS for w in opens.split()) \
        and not is_question(piece)


#: Going over to a branch: "then go over to develop", "then put me on release/1.0"
#: (heldout39 and 41, after their runs: a verb borrowed, a commit).
_GO_TO = re.compile(r"(?:(?:go|hop|jump|head)\s+(?:over\s+|back\s+)?(?:to|onto)|put me (?:back )?"
                    r"on(?:to)?)\s+(?=\S)", re.IGNORECASE)


def _first(text: str) -> str:
    """The first word of ``text``, as the verb it is one typing slip from ("swtich to
    develop and show me the log" orders two steps)."""
    word = text.split(" ", 1)[0].lower()
    if _GO_TO.match(text):  # "then go over to develop" (not "go ahead and commit")
        return "switch"
    if word.endswith("s") and word[:-1] in _VERBS:  # "src and tests into code.zip": a
        return word  # thing, no slip of "test"
    if word in _VERBS or is_english(word):  # "staged", "ready": no slip of "stage", "read"
        return word
    if len(word) >= 5 and len(near := typing_slips(word) & _VERBS) == 1:
        return near.pop()
    swapped = {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    if len(word) == 4 and len(near := swapped & _VERBS) == 1:  # "opne", "lsit", "shwo"
        return near.pop()
    if 3 <= len(word) <= 4 and len(near := {v for v in _VERBS if len(v) == len(word) + 1 and any(
            v[:i] + v[i + 1:] == word for i in range(len(v)))}) == 1:
        return near.pop()  # a letter left out: "chek git status and then show me ..."
    return word


#: Any word or mark that could join a second ask to a first: "and", "then" (as typed
#: too), "both", a comma, a second sentence, a new line. Not "with": "run the tests
#: with pytest" had been three steps, and it joins no second ask across the sets' 80.
_JOINS = re.compile(r"\b(?:and|then|thne|tehn|hten|also|plus|both|after|afterwards|before|"
                    r"too|as well|each|all|next|finally|followed|once|while|first|again)\b|"
                    r"[,;&+\n]|[.?!:]\s+\S", re.IGNORECASE)


def one_ask(request: str) -> bool:
    """Nothing in ``request`` could join a second ask to the first: its plan is one
    step. (Given the room, the model wrote "show the history of release/1.0" as a log
    of "." and a search for the ref its log lost.) A pasted diff that ends a request of
    one clause is one step too ("..., so here is the change, put it in:" and the diff
    had been the patch and an append of words no one said, heldout42)."""
    carried = carried_patch(request) if "\n" in request.strip() else None
    if carried is not None and request.rstrip().endswith(carried[0].rstrip()):
        return _around_a_diff(request) is None
    return not _JOINS.search(request)


#: Leave to go on, no ask of its own: "go ahead and commit it as 'wip'" had run a
#: program "go" with the argument "ahead".
_GO_AHEAD = re.compile(r"^(?:ok(?:ay)?[\s,]+|yes[\s,]+|sure[\s,]+)?(?:go ahead|go on|go for it)"
                       r"(?:\s*,\s*|\s+and\s+|\s*[:;-]\s*|\s+)(?=\S)", re.IGNORECASE)


def clauses(request: str) -> list[str]:
    """The steps a request names in order, one clause each ("show git status and then
    the diff" -> "show git status", "show the diff"), or ``[request]`` when it names
    one. A small model plans one step well and rarely writes a second: the operator
    plans each clause on its own. A clause without a verb borrows the one before's
    ("the diff" -> "show the diff"); "it" is the last file named before."""
    if "\n" in request.strip():
        return _around_a_diff(request) or [request]
    quoted: list[str] = []  # quoted text is never split ("append 'a, then b'")

    def hide(match: re.Match[str]) -> str:
        quoted.append(match.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    def shown(piece: str) -> str:
        while "\x00" in piece:  # a quote in carried text: hidden twice
            piece = re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], piece)
        return piece.strip(" ,.")

    def carried(match: re.Match[str]) -> str:
        quoted.append(match.group(2))
        return f"{match.group(1)}\x00{len(quoted) - 1}\x00"

    masked = QUOTED.sub(hide, _GO_AHEAD.sub("", request.strip()))
    if (lead := _CARRIED.search(masked)) and _listed(masked[lead.end(1):]):
        quoted.append(masked[lead.end(1):])  # "with: a; run b; c is in d": all of it content
        masked = f"{masked[:lead.end(1)]}\x00{len(quoted) - 1}\x00"
    masked = _IF_DONE.sub(", then ", _CARRIED.sub(carried, masked))
    asked, _, then = masked.rpartition("?")
    if asked and _RUN_IT.fullmatch(then.strip()) and (command := _asked_command(shown(asked))):
        return [f"run {command}"]  # "what does python3 --version print here? run it" (h42)
    if is_question(request):  # one question, unless a comma opens a second ask
        asks = [shown(a) for a in _ASKS_AGAIN.split(masked)] if not _WOULD.search(
            masked) else [request]
        if not (1 < len(asks) <= 3 and all(len(a.split()) >= 2 for a in asks)):
            return [request]
        for i in range(1, len(asks)):  # "what's the log of release/1.0, and how does my
            if named := named_paths(" ".join(asks[:i])):  # tree differ from it?"
                asks[i] = _IT.sub(_as(named[-1]), asks[i])
        return asks
    # a new sentence is a step after a connective ("is port 8000 taken? also show the
    # processes"), or an order after an order; after a question or a statement it says
    # what was meant ("the report crashes. find where average is defined": one)
    sentences: list[str] = []
    for sentence in _SENTENCE.split(masked):
        opens = _LEAD.sub("", sentence)
        ordered = sentences and _first(opens) in _VERBS and (
            _first(sentences[-1]) in _VERBS
            # or an order on what a question finds ("where is X defined? open that
            # file"; "who touched a.py? show its history" asks one thing twice)
            or (sentences[-1].endswith("?") and _IT.search(opens)
                and not named_paths(sentences[-1]) and not _FOLDERISH.search(sentences[-1])))
        if sentences and opens == sentence and not ordered:
            sentences[-1] = f"{sentences[-1]} {sentence}"
        else:
            sentences.append(opens if sentences else sentence)
    pieces: list[str] = []
    for part in (p for sentence in sentences for p in _THEN.split(sentence)):
        words = _AND.split(part)
        current = words[0]
        for word in words[1:]:
            opens = _first(word)
            if _WHILE_I.search(current):  # "... before I go and comit anything?": the
                current = f"{current} and {word}"  # time of the ask, no order (heldout34,
                continue  # after its run: a commit)
            if (opens in _VERBS and len(current.split()) >= 2 and not _WHERE.match(current)
                    and not _HOW_LONG.match(word) and not _HOW_MANY.match(word)
                    and not re.search(r"\bbetween\s+(?:(?!\band\b).)+$", current)) or (
                    # a question, then another
                    opens in _ASKS and is_question(current)) or (
                    # an order, then a question ("show my top 3 cpu processes and also
                    # how loaded the cpu is overall")
                    opens in _ASKS and _acts(current) and len(word.split()) >= 4
                    and not _BACK.search(word)) or (
                    (again := _AGAIN_WHEN.match(word)) and recurring(word[again.end():])):
                pieces.append(current)
                current = word
            else:
                current = f"{current} and {word}" if not current.endswith(",") else \
                    f"{current} {word}"
        pieces.append(current)
    pieces = [shown(p) for p in (_LEAD.sub("", p) for p in pieces) if p.strip(" ,.")]
    if len(pieces) >= 2 and ((_SCENE.match(pieces[0]) and _IT.search(pieces[1])) or (
            # a file named, then an order on it ("the app.py in src, opne it"): one ask
            re.fullmatch(r"(?:the|that|this|my|our)\s+\S+(?:\s+(?:in|under|inside)\s+\S+)?",
                         pieces[0], re.IGNORECASE) and _IT.search(pieces[1])) or (
            not _acts(pieces[0]) and _acts(pieces[1]) and not pieces[0].endswith("?")
            and len(_OPENING.sub("", _LEAD.sub("", pieces[0])).split()) >= 3
            and not re.search(r"\bfirst\W*$", pieces[0])  # "git status first, then ..."
            and not named_paths(pieces[0]) and not QUOTED.search(pieces[0])
            and not _IT.search(_LIMIT_IT.sub("", pieces[1])))):  # "give it two minutes"
        # a scene, or what is going on, before the ask ("before I leave for holiday, zip
        # the logs"; "customer says the app is down; is anything on port 8000?"): no step
        # ("on a new branch docs/guide, ..." and "app.py is broken: read ..." name one;
        # "the report crashed, fix it" says what "it" is, as before)
        pieces[:2] = [f"{pieces[0]}, {pieces[1]}"]
    if len(pieces) >= 2 and _only_when(pieces[0]) and _acts(pieces[1]):
        pieces[:2] = [f"{pieces[0]}, {pieces[1]}"]  # "every Monday at 7am, run X": when
    if len(pieces) >= 2 and _REGARD.match(pieces[0]):  # "treat a as old and b as new, ..."
        pieces[:2] = [f"{pieces[0]}, {pieces[1]}"]
    for i in range(len(pieces) - 1, 0, -1):  # "...; that's a fact, not a preference"
        if _REMARK.match(pieces[i]):
            pieces[i - 1:i + 1] = [f"{pieces[i - 1]}; {pieces[i]}"]
    if len(pieces) < 2 or len(pieces) > 6:
        return [request]
    steps: list[str] = []
    verb, last_path, last_paths = "", "", list[str]()
    for piece in pieces:
        if steps and (again := _AGAIN_WHEN.match(piece)) and recurring(piece[again.end():]):
            piece = f"schedule the same thing {piece[again.end():]}"  # "set that up weekly"
        head = _first(piece)
        if head in _VERBS and len(pieces) > 1 and head != piece.split(" ", 1)[0].lower():
            piece = _GO_TO.sub("switch to ", piece, count=1) if _GO_TO.match(piece) else (
                head + piece[len(piece.split(" ", 1)[0]):])  # "opne ...": "open ..."
        if head in _VERBS:  # "git status, then the staged diff": no "git" borrowed
            verb = piece.split(" ", 1)[0] if head != "git" else ""
        elif verb and steps:  # "then rm notes.txt" runs rm, whatever the verb before
            piece = f"{'run' if shutil.which(head) and head not in _EVERYDAY else verb} {piece}"
        if head == "schedule" and steps:  # "..., and schedule the same thing weekly"
            piece = _SAME.sub(re.sub(r"\s+(?:now|right now|today)$", "", steps[-1]), piece,
                              count=1)
        if len(last_paths) > 1 and steps:  # "compare a with b, then zip both of them"
            piece = _THEM.sub(" and ".join(last_paths), piece)
        if last_path and steps:
            # "it" after a file this clause names is that file ("make notes.old match by
            # writing ... into it" had written notes.txt, named in the clause before)
            it = _IT.search(piece)
            before = named_paths(QUOTED.sub(" ", piece[:it.start()])) if it else []
            piece = _IT.sub(_as(before[-1] if before else last_path), piece)
            if head in _EDITS and not named_paths(piece):  # "show me a.py, fix the bug"
                piece = f"{piece} in {last_path}"
            elif head in ("add", "append") and not named_paths(QUOTED.sub(" ", piece)):
                # "read todo.md and then add '- x' at the end" (it had gone to notes.txt)
                piece = _AT_THE_END.sub(rf"\g<0> of {last_path}", piece, count=1)
        # a name in quoted content is not the file acted on ("write docs/faq.md with
        # 'settings: config/settings.json', then commit it"); a quoted name is
        if named := named_paths(QUOTED.sub(
                lambda m: m.group(0) if len(m.group(0).split()) < 3 else " ", piece)):
            last_path, last_paths = named[-1], named
        if head in _VERBS and steps:  # "could you read todo.md and then add X to it?":
            piece = piece.rstrip("?")  # the polite question's mark ends an order
        steps.append(piece)
    return steps


def _listed(text: str) -> bool:
    """Whether carried ``text`` is a list of facts split by semicolons, an order among
    them ("replace the notes with: Inventory service; run python3 src/app.py; settings
    are in config/settings.json." had run the app, h42): a part that orders nothing
    after one that does, and no "then"."""
    parts = [part.strip() for part in text.split(";") if part.strip(" .")]
    return len(parts) >= 3 and not re.search(r"\bthen\b", text, re.IGNORECASE) and any(
        _acts(part) for part in parts[1:]) and not _acts(parts[-1])


#: Words that apply a diff: the clause the pasted diff goes with.
_APPLIES = re.compile(r"\b(?:apply|patch|fix|change|diff|edit)\b", re.IGNORECASE)


def _around_a_diff(request: str) -> list[str] | None:
    """The steps of a request whose words end with a pasted diff ("Apply this fix and
    then run python3 src/app.py:" and the diff; heldout30 and 27, after their runs: the
    run was lost): the clauses of its words, the diff after the one that applies it.
    None when the request carries no diff, words after it, or one step."""
    carried = carried_patch(request)
    if carried is None or not request.rstrip().endswith(carried[0].rstrip()):
        return None
    words = request[:request.rfind(carried[0].split("\n", 1)[0])].strip()
    if not words or "\n" in words:
        return None
    parts = [part.rstrip(" :") for part in clauses(words)]
    if len(parts) < 2 or not all(_acts(part) for part in parts):
        return None  # "my co-host emailed me this fix, apply it please:" is one step
    at = next((i for i, part in enumerate(parts) if _first(_OPENING.sub("", part)) in (
        "apply", "patch")), next((i for i, p in enumerate(parts) if _APPLIES.search(p)), 0))
    parts[at] = f"{parts[at]}:\n{carried[0]}"
    return parts


#: The places the step before listed: "search src and tests for 'average', and zip those
#: two folders as average-code.zip" (heldout39, after its run: the zip had been dropped).
_THOSE = re.compile(r"\b(?:(?:those|these)(?:\s+two|\s+2|\s+both)?|the\s+(?:two|2)|both(?:\s+the)?"
                    r"|both\s+of\s+those)\s+(?:folders|files|directories|dirs|places)\b|"
                    r"\bboth of them\b", re.IGNORECASE)


def refers_back(clause: str, before: object, cwd: str = "", asked: str = "") -> str:
    """``clause`` with "it" (`_IT`, no file named before it, see `clauses`) as the path
    the step planned just ``before`` acts on: "let me see the readme first, then append
    a line to it" had appended to notes.txt; "list src and zip it" zips src. After a
    search, the one file here it finds (`found_by`): "find where TODO is written, then
    open that file" opens src/app.py (``asked``: the search's clause)."""
    steps = getattr(before, "steps", ())
    listed = steps[-1].args.get("paths") if steps else None
    if isinstance(listed, list) and 2 <= len(listed) <= 5 and all(
            isinstance(p, str) and p.strip() for p in listed) and (
                those := _THOSE.search(QUOTED.sub(lambda m: " " * len(m.group(0)), clause))):
        return f"{clause[:those.start()]}{' and '.join(listed)}{clause[those.end():]}"
    path = steps[-1].args.get("path") if steps else None
    if steps and "pattern" in steps[-1].args:
        path = found_by(steps[-1].args, cwd, asked)
    it = _IT.search(QUOTED.sub(lambda m: " " * len(m.group(0)), clause))
    if not isinstance(path, str) or not path.strip() or it is None:
        return clause
    return f"{clause[:it.start()]}{_as(path)(it)}{clause[it.end():]}"
