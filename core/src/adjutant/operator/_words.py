"""Words of a request: its terms for the lexical rankings (stems and everyday
synonyms of what tools do), its shape for the bank (values masked), whether it only
asks, the paths it names, and the files of the workspace. Pure text rules, no model."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from functools import lru_cache

__all__ = [
    "QUOTED",
    "RECORDS",
    "about_here",
    "asks_where_done",
    "bad_request",
    "carried_patch",
    "carried_text",
    "echoes",
    "hinted",
    "is_question",
    "named_paths",
    "named_programs",
    "orders",
    "shape",
    "spelled",
    "terms",
    "typing_slips",
    "with_digits",
]

#: The longest request planned (characters): a small model's context holds the prompt's
#: static part, the request and the reply; longer text belongs in a file the request names.
MAX_REQUEST = 4000
_EXTENSION = re.compile(r"\w\.[A-Za-z0-9]{1,8}$")
#: Quoted text: the user's own words, a value. A single quote opens only where no
#: letter stands before it and closes only where none follows: the apostrophes of
#: "what's staged and then commit it with the message 'Bump version'" quote nothing.
QUOTED = re.compile(r"(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\"|`[^`\n]*`")
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset([  # words that say nothing about which tool is wanted
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "at", "by", "from",
    "is", "are", "be", "it", "this", "that", "me", "my", "i", "you", "your", "we", "us", "our",
    "what", "which", "who", "how", "do", "does", "did", "can", "could", "would", "should",
    "please", "show", "tell", "give", "get", "let", "just", "all", "any", "some", "here",
    "there", "into", "as", "if", "then", "so", "now", "right", "currently", "want", "need",
    # what a contraction leaves ("what's" is "what" and "s"): it matched every request
    # with one, and "what's the capital of Australia?" met "what's in README.md?"
    "s", "t", "d", "m", "ll", "re", "ve", "don", "doesn", "didn", "isn", "aren", "wasn",
    "won", "couldn", "shouldn", "wouldn", "haven", "hasn",
    # and typed without the apostrophe: "whats the capital of australia" had met the
    # bank's "whats my cpu" alone
    "whats", "hows", "wheres", "whos", "thats", "theres", "heres", "its", "im", "ive",
    "dont", "doesnt", "didnt", "cant", "wont", "isnt", "arent",
])
#: Everyday words for what tools do, so a request need not use the tool's own words.
_SYNONYMS = {
    "open": "read", "cat": "read", "view": "read", "contents": "read", "look": "read",
    "display": "read", "print": "read", "see": "read",
    "create": "write", "save": "write", "overwrite": "write", "make": "write",
    "add": "append", "log": "log", "history": "log", "commits": "log",
    "find": "search", "grep": "search", "occurrences": "search", "where": "search",
    "locate": "search", "todo": "search",
    "fix": "patch", "edit": "patch", "change": "patch", "replace": "patch",
    "compare": "diff", "difference": "diff", "differences": "diff",
    "zip": "compress", "archive": "compress", "bundle": "compress",
    "run": "exec", "execute": "exec", "command": "exec", "launch": "exec",
    "processes": "proc", "process": "proc", "running": "proc", "ps": "proc",
    "kill": "kill", "stop": "kill", "terminate": "kill", "end": "kill",
    "memory": "info", "cpu": "info", "disk": "info", "system": "info", "os": "info",
    "machine": "info", "ram": "info", "kernel": "info", "computer": "info", "load": "info",
    "loaded": "info", "uptime": "info",
    "port": "port", "listening": "port", "listen": "port", "server": "port",
    "branch": "branch", "checkout": "switch", "switch": "switch",
    "commit": "commit", "staged": "diff", "modified": "status", "changed": "status",
    "uncommitted": "status",
    "daily": "schedule", "weekly": "schedule", "nightly": "schedule", "hourly": "schedule",
    "weekday": "schedule", "weekdays": "schedule", "recurring": "schedule", "cron": "schedule",
    "summary": "summarize", "summaries": "summarize", "summarise": "summarize",
}


#: Numbers in words: "the three most recent commits" is no slip for "there".
_NUMBERS = frozenset(re.findall(r"\w+", "one two three four five six seven eight nine ten "
                                "eleven twelve thirteen fourteen fifteen sixteen seventeen "
                                "eighteen nineteen twenty thirty forty fifty sixty seventy "
                                "eighty ninety hundred thousand"))


#: Two-word verbs people write apart: "check out release/1.0" is a checkout, "pull up
#: notes.txt" a look at it (it had drawn the bank's `git pull` neighbours: a branch),
#: "i need to be on release/1.0" a switch to a branch (it had been a commit).
_APART = {"checkout": re.compile(r"\bcheck out\b"),
          # "which files did I modify?" asks what "changed" does: the status
          "changed": re.compile(r"\bdid (?:i|we) (?:modify|change|edit|touch)\b"),
          "show": re.compile(r"\b(?:pull|bring) up\b"),
          "switch to ": re.compile(r"\b(?:(?:be|get|go|hop|jump|move)\s+(?:back\s+)?(?:on|onto|to|"
                                   r"over to)|put me (?:back )?on(?:to)?)\s+"
                                   r"(?=(?:the\s+)?(?:[\w-]+/[\w.-]+|main|master|"
                                   r"develop|dev)(?<!\.[a-z])(?<!\.[a-z]{2})(?<!\.[a-z]{3})"
                                   r"(?<!\.[a-z]{4})(?=[\s,;!?)]|\.?$))")}


def terms(text: str) -> list[str]:
    words = []
    text = text.lower()
    for verb, apart in _APART.items():
        text = apart.sub(verb, text)
    for word in _WORD.findall(text):
        if word in _STOPWORDS:
            continue
        for stem in {word, _stem(word), _SYNONYMS.get(word, word)}:
            words.append(stem)
    return words


def is_english(word: str) -> bool:
    """Whether ``word`` (lower case) is an English word, seen often enough to be no
    typing slip."""
    return _english().get(word, 0) >= _SEEN_IN_ENGLISH


def shape(text: str) -> list[str]:
    """The words of a request with its values masked (a quoted text is ``quoted``, a
    path ``path``): how it asks, for the bank, where "what does config/settings.json
    contain?" should meet "what is in docs/notes.md?", not requests about JSON files."""
    text = QUOTED.sub(" quoted ", text)
    for path in named_paths(text):
        text = text.replace(path, " path ")
    return terms(_FOLDER_NAMED.sub(r"\1 path \2", text))


#: A folder named by a bare word ("the logs folder", "folder src"): a value, like a
#: path ("search the logs folder for ..." had met "list the logs folder" in the bank).
_FOLDER_NAMED = re.compile(r"\b(the|my|our|this|in|of|under)\s+(?!path\b)[a-z][\w.-]*"
                           r"\s+(folders?|directory|dir)\b", re.IGNORECASE)


def echoes(answer: str, request: str) -> bool:
    """Whether an answer in words only repeats the request: every word of it is one of
    the request's ("show me README.md" answered "README.md")."""
    said = set(_WORD.findall(answer.lower()))
    return bool(said) and said <= set(_WORD.findall(request.lower()))


def hinted(path: str, request: str) -> bool:
    """Whether ``request`` hints at ``path`` without naming it: a word of it (not a
    stopword) begins a part of the path's name or the other way round ("the log" for
    logs/app.log, "configured" for config/settings.json, "the readme" for README.md)."""
    parts = [p for p in _WORD.findall(path.lower()) if len(p) >= 3]
    words = [w for w in _WORD.findall(request.lower()) if len(w) >= 3 and w not in _STOPWORDS]
    return any(w.startswith(p) or p.startswith(w) for w in words for p in parts)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_ASKING = re.compile(r"^(what|which|who|whose|where|when|why|how|is|are|was|were|am|does|do|"
                     r"did|has|have|any|anything|whats|hows|wheres|whos|isnt|arent|doesnt|"
                     r"dont|didnt|wich|whcih|waht|wat|whta|hwo)\b")  # as typed too
#: A polite order, or a command to run: "can you ...?", "Before I clear them out, can you
#: archive the logs?", "what does `ls` show?" (not a quoted cron line: "what is `0 6 * *
#: 1` saying?" had been scheduled, heldout21 after its run).
_ORDERING = re.compile(r"(?:^|,\s*)(can|could|would|will) you\b|\bplease\b|\bpls\b|"
                       r"`(?![\d*/,\s-]+`)(?!(?:if|for|while|def|class|import|from|return|"
                       r"with|try|else|elif|not|and|or|lambda|print)\b|[^`]*(?:==|!=|:$))"
                       r"[^`]+`|\b(run|execute|launch|use)\b")  # a line of code is no command


_GREETING = re.compile(r"(?:hi|hello|hey|hiya|hi there|hello there|hey there|good (?:morning|"
                       r"afternoon|evening)|thanks|thank you|ok|okay|cheers)\W*")


def is_question(request: str) -> bool:
    """Whether ``request`` only asks: every sentence a question (ends with ``?`` or
    opens with a question word), none a polite order ("can you commit this?") nor
    naming a command to run."""
    sentences = [s.strip() for s in re.split(r"(?<=[.?!;])\s+|\n+", request.strip().lower())
                 if s.strip()]
    sentences = [s for s in sentences if not _GREETING.fullmatch(s)] or sentences  # "hi! ...?"
    if not sentences:
        return False
    return all((s.endswith("?") or _ASKING.match(s)) and not _ORDERING.search(s)
               for s in sentences)


#: A question about this machine ("which python version is installed on this
#: machine?"): words alone cannot know it ("Python 3.8" had been the answer).
_HERE = re.compile(r"\b(?:this|my) (?:machine|computer|box|laptop|server)\b|\binstalled\b",
                   re.IGNORECASE)


def about_here(request: str) -> bool:
    """Whether ``request`` asks about this machine (`_HERE`), so an answer in words
    would be made up; what the quoted text says is not asked."""
    return bool(_HERE.search(QUOTED.sub("x", request)))


def only_quote(request: str) -> str:
    """The one text ``request`` quotes, of two words or more, without its quotes ("create
    docs/ferry.md containing exactly '# Ferry timetable office'"), or empty."""
    quotes = [q[1:-1].strip() for q in QUOTED.findall(request)]
    return quotes[0] if len(quotes) == 1 and len(quotes[0].split()) >= 2 else ""


def with_digits(request: str) -> str:
    """``request`` with the numbers it spells out in English as digits, outside quoted
    text ("is port eight thousand and eighty free?": 8080; "the last five commits": 5),
    for the rules that read values; the text itself is never changed."""
    from text_to_num import alpha2digit  # Rust-backed, loaded on first use

    words = set(re.findall(r"[^\W\d_]+", request.lower()))
    lang = next((code for code, marks in _OTHER_LANGUAGES.items()
                 if len(words & marks) >= 2), "en")  # "die letzten drei Commits": 3
    parts, start = [], 0
    for quoted in QUOTED.finditer(request):
        parts += [alpha2digit(request[start:quoted.start()], lang), quoted.group(0)]
        start = quoted.end()
    return "".join([*parts, alpha2digit(request[start:], lang)])


#: Words that mark a request in another language whose numbers `with_digits` reads
#: (heldout37 and 38, after their runs: "los últimos cuatro commits" had no count).
_OTHER_LANGUAGES = {code: frozenset(re.findall(r"\S+", marks)) for code, marks in (
    ("es", "los las el del por favor muéstrame enséñame últimos cuántos qué dime archivo"),
    ("de", "der die das mir bitte und zeig zeige letzten auf ich wie"),
    ("fr", "les des moi le du derniers montre montrez fichier plaît"))}


#: A question where something is done in the code ("Where's debug set?", "where is
#: the average function defined?"): a search of the files' text answers it.
_WHERE_DONE = re.compile(
    r"^\W*where(?:'?s| is| are| do| does| did| exactly is)\b[^?]{0,60}?\b(?:set|defined|"
    r"configured|declared|initiali[sz]ed|assigned|imported|called|used|referenced|"
    r"mentioned|handled|raised|computed|calculated|hard-?coded)\b", re.IGNORECASE)


def asks_where_done(request: str) -> bool:
    """Whether ``request`` asks where in the code something is done (`_WHERE_DONE`)."""
    return bool(_WHERE_DONE.match(request))


def bad_request(request: str) -> str:
    """Why ``request`` cannot be planned at all (empty, too long), in words for the
    user; empty when it can."""
    if not request.strip():
        return ("The request is empty: say what you would like done, for example "
                "\"what files are in this folder?\".")
    if len(request) > MAX_REQUEST:
        return (f"The request is {len(request):,} characters long; the most I plan from "
                f"is {MAX_REQUEST:,}. Shorten it, or save the text in a file and name the "
                "file in a shorter request.")
    if makes_no_sense(request):
        return ("I could not make sense of that request: none of its words is one I know "
                "(keys pressed at random, or a language I do not read). Say what you would "
                "like done in other words, for example \"what files are in this folder?\".")
    return ""


@lru_cache(maxsize=1)
def _vocabulary() -> Counter[str]:
    """The words of the bank's requests (how people ask for each tool, and questions
    answered in words), the stopwords and synonyms, each with how often it is used."""
    from ._bank import bundled

    counts = Counter({w: 1 for w in (*_STOPWORDS, *_SYNONYMS, *_NUMBERS)})
    for example in bundled():
        counts.update(re.findall(r"[a-z]{2,}", example.request.lower()))
    return counts


@lru_cache(maxsize=1)
def _known() -> tuple[frozenset[str], frozenset[str]]:
    """The vocabulary's words by their first five letters, and every pair of letters
    they hold."""
    words = _vocabulary()
    return (frozenset(w[:5] for w in words),
            frozenset(w[i:i + 2] for w in words for i in range(len(w) - 1)))


def typing_slips(word: str) -> set[str]:
    """Every word one typing slip from ``word``: a letter left out, doubled or struck
    instead of another, or two letters swapped."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    cuts = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return ({a + b[1:] for a, b in cuts if b}
            | {a + b[1] + b[0] + b[2:] for a, b in cuts if len(b) > 1}
            | {a + c + b[1:] for a, b in cuts if b for c in letters}
            | {a + c + b for a, b in cuts for c in letters})


#: The shortest word in which `spelled` mends any slip, not only two swapped letters,
#: and the shortest in which two swapped letters may make any word, not only one that
#: asks ("waht", "lsit", "shwo"): short words are one slip from other real words.
#: Short names of things a swap is mended to: "the lgo file in logs" (heldout37, after its
#: run: the folder listed).
_SHORT_THINGS = frozenset(("log", "file", "diff", "zip", "pdf", "logs", "files"))
_QUESTION_WORDS = frozenset(("what", "where", "which", "when", "whose", "how", "why", "who"))
_ANY_SLIP = 6
_ANY_SWAP = 5
#: How often a word must be seen in English subtitles (pyspellchecker's dictionary) to
#: be a word and never a slip: the bank lacks "better", "matter", "own" and "strong",
#: which had been mended to "letter", "master", "won" and "string". The slips across
#: the golden sets are none of them, "dose" for "does" aside.
_SEEN_IN_ENGLISH = 20


@lru_cache(maxsize=1)
def _english() -> dict[str, int]:
    """English words with how often each was seen, loaded the first time a word the
    bank lacks is met (about 50 ms)."""
    import gzip
    import json
    from importlib.resources import files

    with files("spellchecker").joinpath("resources", "en.json.gz").open("rb") as raw:
        words: dict[str, int] = json.loads(gzip.decompress(raw.read()))
    return words


def spelled(request: str, names: frozenset[str] = frozenset()) -> str:
    """``request`` with its typing slips mended, for the rules that read words (the
    bank's vote, the lexical ranking, the values it states): each word the vocabulary
    lacks that is one slip from words it holds (two letters swapped, in a short word
    only to a word that asks, "waht", "lsit"; in a word of six letters or more, also
    one left out, added or struck for another) becomes the most
    used of them ("shwo me teh lsat 4 comits on devlop": "show me the last 4 commits
    on develop"); a form of a word it holds ("keeps") stays. Never a quoted text, a path, a
    word with a digit, a program on PATH or one of ``names`` (the files and branches
    here): the model itself always reads the request as written."""
    from ._clauses import _VERBS  # the verbs that open a step; _clauses reads words here

    vocabulary = _vocabulary()
    spans = [m.span() for m in QUOTED.finditer(request)]
    opening = _VERBS | _QUESTION_WORDS

    def mend(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        quoted = any(a <= match.start() < b for a, b in spans)
        if not quoted and not request[:match.start()].strip(" \t\"'(") \
                and lower not in opening | _STOPWORDS \
                and (len(lower) <= 4 or lower not in vocabulary) and not shutil.which(lower) \
                and len(near := {w for w in opening if len(w) == len(lower) + 1 and any(
                    w[:i] + w[i + 1:] == lower for i in range(len(w)))}) == 1:
            return near.pop()  # a letter left out of the opening word: "ad to", "wat" (h42),
            # "apend" (h43)
        if lower in vocabulary or lower in names or len(lower) < 3 or quoted:
            return word
        if re.search(r"[./_-]$", match.string[:match.start()]) or re.match(
                r"[/_-]|\.\w", match.string[match.end():]) or shutil.which(lower):
            return word  # part of a path or a name
        if any(lower.endswith(end) and lower[:-len(end)] in vocabulary
               for end in ("s", "es", "ed", "d", "ing", "ly", "er")):
            return word  # a form of a word it holds ("keeps"), not a slip
        if is_english(lower):
            return word  # an English word the bank lacks ("better"), not a slip
        # two letters swapped, at any length; another slip only in a long word, where it
        # seldom makes another real word ("lost" is one slip from "list")
        near = typing_slips(lower) if len(lower) >= _ANY_SLIP else {
            lower[:i] + lower[i + 1] + lower[i] + lower[i + 2:] for i in range(len(lower) - 1)}
        known = [w for w in near if w in vocabulary and (len(lower) >= _ANY_SWAP or w in (
            _STOPWORDS | _SHOWING | _LISTING | _SHORT_THINGS))] or [  # a letter left out of
            w for w in _QUESTION_WORDS if len(w) == len(lower) + 1 and any(  # a word that
                w[:i] + w[i + 1:] == lower for i in range(len(w)))]  # asks: "wher do we ..."
        if not known:
            return word
        return max(known, key=lambda w: (vocabulary.get(w, 0), w))

    return re.sub(r"(?<![\w])[A-Za-z]+(?![\w])", mend, request)


def makes_no_sense(request: str) -> bool:
    """Whether ``request`` is keys pressed at random: two or more words of three letters
    or more, no path, no number, none of them a word the bank or the stopwords know or a
    program on PATH, and half of them or more not made only of letter pairs those words
    hold ("talk a lot" is English the bank lacks; "asdkj qwpoe zzkx vbnm" had been
    planned as `git.diff`, "asdf qwpoe zzkx ?? lorp" as a command line)."""
    words = re.findall(r"[a-z]{3,}", request.lower())
    if len(words) < 2 or (len(words) < 3 and re.search(r"\d", request)) \
            or named_paths(request) \
            or any(w in _STOPWORDS for w in words):  # most requests: no bank read
        return False
    known, pairs = _known()
    odd = sum(not all(w[i:i + 2] in pairs for i in range(len(w) - 1)) for w in words)
    if any(w[:5] in known or (shutil.which(w) and odd * 4 < 3 * len(words)) for w in words):
        return False  # a program's name among words three in four odd is chance ("kpt")
    # half the words or more not even made of letter pairs English has ("asdf qwpoe zzkx
    # lorp": "asdf" and "lorp" are, the others not), or one of three or more (heldout25's
    # "asdf qwlkj blorp zzzt ;;; mmmnn" had been an append; a number beside them, as in
    # heldout23's "flrbb 77 ,,ksj quxx mmmp?", says nothing either)
    return odd * 2 >= len(words) or (len(words) >= 3 and odd >= 1)


#: A unified diff pasted into a request: its file headers, then hunks and their lines.
_DIFF = re.compile(r"^--- \S.*\n\+\+\+ \S.*\n@@ .*(?:\n(?:[ +\-@\\].*|--- \S.*|\+\+\+ \S.*|))*",
                   re.MULTILINE)


def carried_patch(request: str) -> tuple[str, str] | None:
    """``(patch, request)`` when the request carries one unified diff ("apply this
    patch:" and the diff pasted after it): the diff as pasted, and the request with it
    replaced by a short mention, for the model to plan with. A small model cannot copy
    a diff into a JSON string (its token limit, its escapes): the diff goes into the
    plan's patch argument as pasted (`settled_values`). None for no diff, or two."""
    found = list(_DIFF.finditer(request))
    if len(found) != 1:
        return None
    patch = found[0].group(0).rstrip("\n") + "\n"
    files = re.findall(r"^\+\+\+ (?:b/)?(\S+)", patch, re.MULTILINE)
    mention = f"(the patch pasted here, for {', '.join(dict.fromkeys(files))})"
    start, end = found[0].span()
    return patch, f"{request[:start].rstrip()} {mention} {request[end:].lstrip()}".strip()


def named_paths(request: str) -> list[str]:
    """Path-like words of the request (``notes.txt``, ``src/app.py``, ``/etc/hosts``):
    the read tools may name them even when they do not exist or lie outside the cage,
    so the plan says what was asked and the pipeline refuses it, plainly."""
    found = []
    for word in re.findall(r"[^\s'\"`,;()<>]+", request):
        word = word.rstrip(".:!?")
        if word.startswith("./"):
            word = word[2:]
        if not (("/" in word and "://" not in word) or _EXTENSION.search(word)):
            continue
        word = word.rstrip("/") or word
        if word and word.isprintable() and len(word) <= 200:
            found.append(word)
    return list(dict.fromkeys(found))


#: A program the request says to use: "use wc", "using jq", "run make", "with ls -la and".
_USING = re.compile(r"\b(?:use|using|via|run|with)\s+`?([a-z][a-z0-9_+-]*)`?"
                    r"(?!\s+in\s+(?:the|its|their)\s+(?:command\s+)?names?\b)"  # a filter (h42)
                    r"(?=\s+-|\s*$|\s*[,;.?!]|\s+(?:and|then|to|for|on|but|with|in|please|now|again|"
                    r"first|so|until|once|quietly)\b)")
#: Programs whose names are everyday words ("sort it with care" is no command).
_EVERYDAY = frozenset(["test", "time", "file", "free", "yes", "true", "false", "more",
                       "less", "head", "tail", "top", "join", "split", "paste", "watch",
                       "which", "date", "link", "install", "look", "write", "last", "users",
                       "id", "env", "expand", "fold", "nice", "unique", "rev", "tac"])


#: Words of a request asking for something to be kept ("note", "remember", "keep this as
#: a fact", "I prefer"): without one, a step recording text was not asked for.
RECORDS = re.compile(r"\b(?:notes?|noted|remember|record|jot|keep|memory|memo|facts?|prefer|"
                     r"preferences?|forget|recall|store|save|write down|from now on)\b",
                     re.IGNORECASE)
#: A request that records what follows ("note that tests use pytest").
_RECORDING = re.compile(r"^\W*(?:(?:for|in|about) (?:this|the|our|my) (?:project|repo|"
                        r"repository|codebase)\s*,?\s*|(?:btw|by the way|fyi|oh and)\s*,?\s*)?"
                        r"(?:please\s+)?(?:note|project note|remember|record|jot|write down|"
                        r"keep in mind|make a note|add a note|add to|(?:write|put)(?: it| this)?"
                        r" (?:in|into|to) the project notes|(?:add|append|put|stick)(?: \w+){1,3} "
                        r"(?:to|in|into|onto) the project notes|(?:keep|save|store|log|file) "
                        r"(?:this|that|it) (?:as|away as) (?:a|my|one of my) (?:preference|fact|"
                        r"rule|default))\b")  # "keep this as a preference: show me a diff"


#: A request to record what came before it ("from now on I want short commit messages,
#: please remember that"): the ask is its end.
_RECORDED_BEFORE = re.compile(
    r"[,.;:!-]\s*((?:(?:and|so)\s+)?(?:please\s+)?(?:remember|note|keep|make a note of|"
    r"jot|write)\s+(?:that|this|it)(?:\s+(?:down|in mind))?(?:\s+for me)?(?:,?\s*please)?"
    r"\s*[.!]?)\s*$", re.IGNORECASE)


def content_cut(request: str) -> str:
    """The part of ``request`` that says what to do, without the content it carries:
    what follows ``": "`` when three words or more come before it ("keep in mind, as
    a fact about this project: the server listens on port 8081"), and what follows
    "that" in a request to record something ("note in the project notes that tests
    use pytest"), and the ask alone when it comes after what it records ("I want short
    commit messages, please remember that")."""
    if last := _RECORDED_BEFORE.search(request):
        return last.group(1)
    head, colon, tail = request.partition(": ")
    if colon and _asked_after(head, tail):  # "for tomorrow's class: jot down that ..."
        request = tail
    elif colon and len(_WORD.findall(head.lower())) >= 3:
        request = head
    if _RECORDING.match(request.lower()):
        request = re.split(r"\bthat\b", request, maxsplit=1)[0]
    return request


def carried_text(request: str) -> str:
    """The text a request carries after ``": "`` when three words or more, or an order
    to keep it ("Project note: ..."), come before it ("replace the project notes
    entirely with: Inventory service, ..."), as typed, or
    after a colon that ends the first line ("create docs/faq.md containing:" and lines
    of text, less a last line that orders the next step: "then commit it"); empty when
    it carries none."""
    first, newline, lines = request.strip().partition("\n")
    if newline and first.rstrip().endswith(":") and len(_WORD.findall(first.lower())) >= 3:
        kept = lines.rstrip().split("\n")
        if len(kept) > 1 and _NEXT_STEP.match(kept[-1]):
            kept.pop()
        return "\n".join(kept).strip("\n")
    head, colon, tail = request.partition(": ")
    return tail.strip() if colon and (len(_WORD.findall(head.lower())) >= 3 or _RECORDING.match(
        head.lower() + " ")) and len(tail.split()) >= 2 and not _asked_after(head, tail) else ""


#: A line that orders the step after the text a request carries: "then commit it".
_NEXT_STEP = re.compile(r"^\s*(?:(?:and\s+)?then|after that|afterwards|finally)\b",
                        re.IGNORECASE)


#: An order's first word, and any word of one: what a colon's two sides are told by.
_ORDER = (r"(?:note|remember|record|jot|write|add|append|read|show|open|list|search|find|"
          r"grep|run|zip|commit|check|create|make|delete|kill|stop|switch|summarize|"
          r"schedule|replace|change|edit|fix|save|put|keep|tell|give|explain)")
_ORDER_OPENS = re.compile(r"^\W*(?:please\s+)?(?:can you\s+|could you\s+)?" + _ORDER + r"\b",
                          re.IGNORECASE)
_ORDER_WORD = re.compile(r"\b" + _ORDER + r"\b", re.IGNORECASE)


def orders(text: str) -> bool:
    """Whether ``text`` holds a word of an order ("delete", "write", "run" ...)."""
    return bool(_ORDER_WORD.search(text))


def _asked_after(head: str, tail: str) -> bool:
    """Whether a colon comes between a scene and the ask ("for tomorrow's class: jot
    down that fractions come first"), not between the ask and its content: no order
    before it, one opening what follows."""
    return bool(_ORDER_OPENS.match(tail) and not _ORDER_WORD.search(head))


def named_programs(request: str) -> list[str]:
    """Programs on PATH the request says to use ("count README lines with wc"): the
    user chose the command, so the plan runs it. Quoted text and what follows a colon
    are values ("add to the notes: tests are run with pytest"), not how to do it."""
    found = []
    asked = content_cut(QUOTED.sub(" ", request.lower()).split(": ", 1)[0])
    for match in _USING.finditer(asked):
        word = match.group(1)
        if word not in _STOPWORDS and word not in _EVERYDAY and shutil.which(word):
            found.append(word)
    return list(dict.fromkeys(found))


#: Words that only ask to see something ("show me", "open", "cat ... please").
_SHOWING = frozenset(["show", "me", "open", "cat", "print", "display", "view", "see",
                      "read", "look", "at", "the", "file", "folder", "directory", "dir",
                      "please", "pls", "contents", "content", "of", "in", "whats", "what",
                      "is", "s", "inside", "can", "you", "could", "would", "just", "up",
                      "let", "take", "a", "give", "i", "want", "to", "need", "quickly",
                      "whole", "full", "again", "out", "there", "here", "this", "my", "under",
                      "within", "from", "first", "now", "too", "also", "it", "u", "plz",
                      "pull", "bring", "for", "written"])  # "pull up the app log for me"
#: Words that only ask to see a folder ("list the files in src").
_LISTING = frozenset(["list", "ls", "files", "entries", "everything", "whats", "under"])
