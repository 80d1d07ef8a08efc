"""What a request names here: the files of the workspace, a name as it exists (case
and folder forgiven), the one thing a request only asks to see, and the file it asks
what holds. Pure; reads the workspace's names, never its contents."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from adjutant_hookspecs import ToolCall, ToolDeclaration

from ._refs import git_names
from ._words import _LISTING, _SHOWING, _WORD, named_paths, orders

__all__ = ["asks_content", "compared_amiss", "compared_files", "content_asked", "files_called",
           "glob_of_kind", "here", "inside", "misfits", "named_documents", "names_here",
           "shown_path", "workspace_paths"]


#: Files a project names without an extension, written as it writes them.
_CONVENTIONAL = re.compile(r"(?<![\w./-])(?:README|CHANGELOG|CHANGES|LICEN[CS]E|CONTRIBUTING|"
                           r"AUTHORS|NOTICE|COPYING|HISTORY|Makefile|Dockerfile|Procfile|Jenkinsfile|"
                           r"Vagrantfile|Gemfile|Rakefile)(?![\w/-]|\.\w)")
#: A question about what a file holds: "what does the CHANGELOG say about 1.0?".
_ABOUT_CONTENT = re.compile(r"\bwhat\b.{0,40}\b(?:say|says|said|contain|contains|mention|"
                            r"mentions|list|lists)\b|\baccording to\b|\bwhat(?:'?s| is) in\b",
                            re.IGNORECASE)


def named_documents(request: str) -> list[str]:
    """The files ``request`` names (`named_paths`), with a project's files named
    without an extension ("the CHANGELOG", "the Makefile"), but no version number
    ("1.0" names no file)."""
    found = [p for p in named_paths(request)
             if re.search(r"[A-Za-z]", os.path.basename(p))]
    return list(dict.fromkeys([*found, *_CONVENTIONAL.findall(request)]))


def content_asked(request: str, cwd: str) -> tuple[str, str] | None:
    """``("file" | "dir", path)`` for the thing ``request`` asks what it holds, as its
    subject ("what does the CHANGELOG say about 1.0?", "according to notes.txt, what
    should I buy?", "what's in config/settings.json these days?"), as it is here when
    it is; None when it asks no such thing."""
    for document in named_documents(request):
        named = r"(?:the |my |our |this )?" + re.escape(document) + r"/?(?: file| folder)?"
        end = r"(?![\w/-]|\.\w)"
        if re.search(rf"\bwhat (?:does|do|did) {named} (?:say|mention|contain|list)|"
                     rf"\bwhat(?:'?s| is) in {named}{end}|\baccording to {named}{end}",
                     request, re.IGNORECASE) or (  # "TODO.MD - what's on it?" (heldout39,
                re.match(rf"\W*{named}{end}\s*[,:;\-\u2013\u2014]", request, re.IGNORECASE)
                and _ABOUT_IT.search(request)):  # after its run: a search for "TODO.MD")
            real = here(cwd, document) or document
            full = os.path.realpath(os.path.join(cwd, real))
            if not full.startswith(os.path.realpath(cwd) + os.sep):
                return None  # outside: the model names it as asked, and the cage refuses it
            folder = os.path.isdir(full) if os.path.lexists(full) else not (
                "." in os.path.basename(real) or _CONVENTIONAL.fullmatch(real))
            return ("dir" if folder else "file"), real
    if _ABOUT_CONTENT.search(request) and len(the := files_called(request, cwd)) == 1:
        return "file", the[0]  # "What does the guide in docs actually say?"
    # "the Todo file, what's on it?", "whats on the todo list"
    stems = _ON_THE_LIST.findall(request) or (
        _CALLED_FILE.findall(request) if _ABOUT_IT.search(request) else [])
    called = {only[0] for stem in stems if len(only := _stems(cwd).get(stem.lower(), [])) == 1
              and os.path.isfile(os.path.join(cwd, only[0]))}
    return ("file", called.pop()) if len(called) == 1 else None


#: A file's name with an ending ("install.md"): a file, here or not.
_ENDING = re.compile(r"\w\.[A-Za-z0-9]{1,8}$")
#: A file called by its stem ("the Todo file", "my notes file"), and a question about
#: what "it" holds; what is on a list a file keeps ("whats on the todo list").
_CALLED_FILE = re.compile(r"\b(?:the|my|our|this|that)\s+([A-Za-z][\w-]{2,40})\s+file\b",
                          re.IGNORECASE)
_ON_THE_LIST = re.compile(r"\bwhat(?:'?s| is| are) (?:on|in) (?:the|my|our) ([A-Za-z][\w-]{2,40})"
                          r" (?:list|file|notes)\b", re.IGNORECASE)
_ABOUT_IT = re.compile(r"\bwhat(?:'?s| is) (?:in|on|inside) it\b|\bwhat does it (?:say|"
                       r"contain|hold|list)\b", re.IGNORECASE)


def asks_content(request: str) -> bool:
    """Whether ``request`` asks what a file it names holds (`_ABOUT_CONTENT`), or only
    to see it ("show me the Makefile": display words and its name)."""
    if not (documents := named_documents(request)):
        return False
    named = {w for d in documents for w in _WORD.findall(d.lower())}
    words = _WORD.findall(request.lower().replace("'", ""))
    return bool(_ABOUT_CONTENT.search(request)) or all(
        w in _SHOWING or w in named for w in words)


def inside(cwd: str, path: str) -> bool:
    """Whether ``path`` resolves (links followed) to a place inside ``cwd``: the only
    paths a rule may put in a plan for the model (the user may still name others, and
    the cage refuses them)."""
    root = os.path.realpath(cwd)
    return os.path.realpath(os.path.join(cwd, path)).startswith(root + os.sep)


def here(cwd: str, path: str) -> str | None:
    """``path`` as it exists under ``cwd``: itself, else the one entry per part that
    differs only in case ("readme.md" for README.md: people type names in lower case,
    and an answer in words about a file it has not read is the miss); None when there
    is no such file or two entries match a part."""
    if os.path.lexists(os.path.join(cwd, path)):
        return path
    if os.path.isabs(path):
        return None
    real: list[str] = []
    for part in path.strip("/").split("/"):
        if part in ("", "."):
            continue
        folder = os.path.join(cwd, *real)
        if os.path.lexists(os.path.join(folder, part)):
            real.append(part)
            continue
        try:
            names = [n for n in os.listdir(folder) if n.lower() == part.lower()]
        except OSError:
            return None
        if len(names) != 1:
            return None
        real.append(names[0])
    found = "/".join(real)
    # a name corrected by listing folders only inside ``cwd``: never a listing that
    # tells the model which files exist outside it ("../../ETC/PASSWD")
    root = os.path.realpath(cwd)
    inside = os.path.realpath(os.path.join(cwd, found)) if found else ""
    return found if inside.startswith(root + os.sep) else None


def by_name(cwd: str, name: str) -> str | None:
    """The one file here whose name is ``name`` in any case, in whatever folder: "what
    does GUIDE.MD in docs say?" names docs/guide.md. None for a path, or none or two."""
    if "/" in name:
        return None
    found = [p for p in workspace_paths(cwd) if p.rsplit("/", 1)[-1].lower() == name.lower()
             and os.path.isfile(os.path.join(cwd, p))]
    return found[0] if len(found) == 1 else None


def workspace_paths(cwd: str, limit: int = 300) -> list[str]:
    """Files and directories under ``cwd`` (relative, breadth first, hidden ones and
    links left out, at most ``limit``): what the read tools' path arguments may name."""
    found: list[str] = []
    level = [""]
    while level and len(found) < limit:
        deeper = []
        for folder in level:
            try:
                with os.scandir(os.path.join(cwd, folder) if folder else cwd) as entries:
                    items = sorted(entries, key=lambda e: e.name)
            except OSError:
                continue
            for entry in items:
                if entry.name.startswith(".") or entry.is_symlink() \
                        or len(entry.name) > 100 or not entry.name.isprintable():
                    continue  # names shown to the model: short and printable only
                relative = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in ("node_modules", "__pycache__"):
                        continue
                    deeper.append(relative)
                found.append(relative)
                if len(found) >= limit:
                    return found
        level = deeper
    return found


def names_here(cwd: str) -> frozenset[str]:
    """The names of the files and folders under ``cwd`` and their stems, lowercased:
    words `spelled` leaves as they are ("util" is a file here, not "until")."""
    names: set[str] = set()
    for path in workspace_paths(cwd) if cwd else []:
        name = path.rsplit("/", 1)[-1].lower()
        names.update((name, name.split(".", 1)[0]))
    return frozenset(names)


#: A name without a path or an extension that names a file here by its stem ("TODO",
#: "Settings", "README"): people name files the shortest way.
_BARE = re.compile(r"[A-Za-z][\w-]{2,40}")


def _stems(cwd: str) -> dict[str, list[str]]:
    """The paths here by the name people call them: a folder's name, a file's stem
    ("todo" for todo.md), lowercased."""
    stems: dict[str, list[str]] = {}
    for path in workspace_paths(cwd):
        name = path.rsplit("/", 1)[-1]
        key = name.lower() if os.path.isdir(os.path.join(cwd, path)) \
            else name.split(".", 1)[0].lower()
        stems.setdefault(key, []).append(path)
    return stems


#: A file called by its stem after "the", "my" or "our": "who touched the readme lately",
#: and by its stem and its kind: "grep the app log for errors" (app.log, not app.py).
_THE_STEM = re.compile(r"\b(?:the|my|our)\s+([A-Za-z][\w-]{2,40})\b(?![./])"
                       r"(?:\s+(log|json|yaml|yml|toml|md|markdown|txt|csv|py|python|script))?",
                       re.IGNORECASE)
_KIND_ENDINGS = {"markdown": "md", "python": "py", "script": "py", "yml": "yaml"}
#: A file called by its kind alone: "show me the log file" (the one .log here).
_THE_KIND = re.compile(r"\b(?:the|my|our)\s+(log|json|yaml|yml|toml|csv|markdown|md|txt|"
                       r"pdf)\s+file\b", re.IGNORECASE)


def files_called(request: str, cwd: str) -> list[str]:
    """The files here ``request`` calls by their stem after "the", "my" or "our" (the
    readme: README.md), each the one file with that stem (and that kind, when said: the
    app log); folders are named by their own names."""
    stems, found = _stems(cwd), []
    for stem, kind in _THE_STEM.findall(request):
        ending = _KIND_ENDINGS.get(kind.lower(), kind.lower())
        only = [p for p in stems.get(stem.lower(), []) if os.path.isfile(os.path.join(cwd, p))
                and (not kind or p.lower().endswith(f".{ending}"))]
        if len(only) == 1:
            found.append(only[0])
    for kind in _THE_KIND.findall(request):
        ending = f".{_KIND_ENDINGS.get(kind.lower(), kind.lower())}"
        only = [p for p in workspace_paths(cwd) if p.lower().endswith(ending)
                and os.path.isfile(os.path.join(cwd, p))]
        if len(only) == 1:
            found.append(only[0])
    return list(dict.fromkeys(found))


#: A clause of three words or more on what is going on before a comma, a dash or a colon
#: and an order to show ("hands covered in flour over here, just read me the todo list";
#: "I'm translating the docs to Italian - first show me the readme"): the order is the
#: request ("readme, show it" is one).
_SCENE_FIRST = re.compile(r"^(?:[^\s?]+\s+){2,15}?[^\s,?]+\s*(?:,|\s[-\u2013\u2014]|:)\s*"
                          r"(?:(?:so|now|just|please|ok|okay|first)\s+)*"
                          r"(?=(?:show|open|cat|print|display|view|read|pull up|bring up|"
                          r"what'?s in|what'?s written in|what is in)\b)", re.IGNORECASE)


#: Why, after the order to show: "pull up the todo list, I want to see what's left
#: before the open day" (heldout38, after its run: the todo list's history); never one
#: ordering something more ("..., I want to commit it afterwards" is a second ask).
_WHY_AFTER = re.compile(r"\s*[,;.\u2014-]\s*(?:i want to|i need to|i'd like to|so (?:that )?"
                        r"(?:i|we) can|because|since|as i|i'm|we're)\b(?![^?]*\b(?:commit|add|"
                        r"append|delete|remove|write|change|edit|replace|kill|run|zip|push|"
                        r"create|rename|move|fix|update|put|send|schedule|switch|branch|patch|"
                        r"save|stage|tag|merge|copy|clear|empty|rewrite)\b)[^?]*$", re.IGNORECASE)


def shown_path(request: str, cwd: str) -> tuple[str, str] | None:
    """``("file" | "dir", path)`` when the request only asks to see one thing here:
    display words and one name of a file or folder that exists ("show me
    logs/app.log", "open TODO", "cat Settings", "README please", "open the guide in
    the docs folder"); a bare name must be the stem of exactly one file here, or a
    folder's name. None otherwise."""
    if (scene := _SCENE_FIRST.match(request)) and not named_paths(scene[0]) \
            and not orders(scene[0]):  # "delete it all, just show me x" is no scene
        request = request[scene.end():]  # "hands covered in flour, just read me the ..."
    request = _WHY_AFTER.sub("", request)  # "..., I want to see what's left before ..."
    words = _WORD.findall(request.lower().replace("'", ""))
    if not words or len(words) > 12 or (request.rstrip().endswith("?") and len(words) > 7):
        return None
    named = named_paths(request)[:3]
    found: list[str] = [real for p in named if (real := here(cwd, p))] or files_called(
        request, cwd)  # "the app log": the one log called app
    if not found:
        stems = _stems(cwd)
        found = [only[0] for w in _BARE.findall(request)
                 if len(only := stems.get(w.lower(), [])) == 1]
    if len(named) == 1 and _ENDING.search(named[0]) and not os.path.isabs(named[0]) \
            and ".." not in named[0].split("/") and not here(cwd, named[0]) \
            and not any(os.path.basename(f).lower() == os.path.basename(named[0]).lower()
                        for f in found):
        found = named  # a file not here: its read's preview says so ("docs/install.md")
    # a folder that holds another thing named only says where it is ("the guide in
    # the docs folder": docs/guide.md)
    found = [f for f in found if not any(o.startswith(f + "/") for o in found)]
    root = os.path.realpath(cwd)
    if len(set(found)) != 1 or not os.path.realpath(
            os.path.join(cwd, found[0])).startswith(root + os.sep):
        return None  # outside: the model names it as asked, and the cage refuses it
    parts = set(_WORD.findall(found[0].lower()))
    folder = os.path.isdir(os.path.join(cwd, found[0]))
    said = [w for i, w in enumerate(words) if w not in _SHOWING
            and not (folder and w in _LISTING)
            and not (w == "list" and i and words[i - 1] in parts)]  # "the todo list"
    if any(not any(part.startswith(w) or w.startswith(part) for part in parts)
           for w in said):
        return None  # something more is asked than seeing it
    return ("dir" if folder else "file"), found[0]


#: Two files compared with each other: "diff notes.txt against notes.old", "compare
#: a.json with b.json", "what's the difference between x.md and y.md".
_COMPARING = re.compile(r"\b(?:diff|compare|comparing|differences?|differs?|different|"
                        r"changed? between)\b",
                        re.IGNORECASE)
_AGAINST = re.compile(r"\s*(?:,\s*)?(?:(?:is\s+|are\s+)?(?:different|differs?)\s+)?(?:against|"
                      r"with|to|and|vs\.?|versus|from|than|next to|beside|alongside)\s+"
                      r"(?:the\s+)?", re.IGNORECASE)


#: A comparison of the two files named before ("treat a.py as the old version and b.py
#: as the new one and show me the differences between them").
_COMPARING_THEM = re.compile(r"\b(?:diff|compare|differences?|differ)\b(?:\s+\w+){0,2}?\s+"
                             r"(?:them|the two(?: files)?|both(?: of them)?)\b", re.IGNORECASE)


#: Two files put side by side, compared after: "Put the README next to docs/guide.md
#: and show me what differs" (heldout39, after its run: an append, then a diff).
_SIDE_BY_SIDE = re.compile(r"\b(?:next to|beside|alongside)\b", re.IGNORECASE)


#: Which side is the old one: "old one first", "README as the old side".
_OLD_FIRST = re.compile(r"\bold(?:er)?(?: one| file| version| side)? (?:first|on the left)\b",
                        re.IGNORECASE)

#: The new one said first, the old one after "from": "how does notes.txt differ from
#: notes.old?" shows what changed since notes.old (heldout42, after its run).
_DIFFERS_FROM = re.compile(r"\b(?:differs?|different|changed?)\s+from\b", re.IGNORECASE)


def compared_files(request: str, cwd: str) -> tuple[str, str] | None:
    """The two files here ``request`` compares with each other, as they are here, when it
    names them side by side after a word that compares, or names two and then compares
    "them", the one it says is the old one first ("how does notes.txt differ from
    notes.old? old one first please"; heldout37 and 40, after their runs); None
    otherwise (one file's changes are git's to show)."""
    pair = _compared(request, cwd)
    if pair and (_OLD_FIRST.search(request) or _DIFFERS_FROM.search(request)) \
            and "old" not in pair[0].lower() and "old" in pair[1].lower():
        return pair[1], pair[0]
    return pair


def _compared(request: str, cwd: str) -> tuple[str, str] | None:
    # in the order said: "the README next to docs/guide.md"
    names = sorted(named_documents(request), key=request.find)
    if len(names) == 2 and (them := _COMPARING_THEM.search(request)) \
            and request.find(names[1]) < them.start():
        return _both_here(cwd, *names)
    for first, second in pairwise(names):
        start = request.find(first)
        end = request.find(second, start + len(first))
        between = request[start + len(first):end]
        if start >= 0 and end >= 0 and _AGAINST.fullmatch(between) \
                and _COMPARING.search(request[max(0, start - 40):start] + between + (
                    request[end:end + len(second) + 40] if _SIDE_BY_SIDE.search(between)
                    else "")) \
                and (pair := _both_here(cwd, first, second)):
            return pair
    return None


def _both_here(cwd: str, first: str, second: str) -> tuple[str, str] | None:
    """Two different files, as they are here, inside ``cwd``: never a link, nor a path,
    leading out."""
    stems = _stems(cwd)  # "the README": README.md, its one file of that stem
    found = [here(cwd, name) or (only[0] if "/" not in name and len(
        only := [p for p in stems.get(name.lower(), []) if os.path.isfile(
            os.path.join(cwd, p))]) == 1 else None) for name in (first, second)]
    if all(f and os.path.isfile(os.path.join(cwd, f)) and inside(cwd, f) for f in found) \
            and found[0] != found[1]:
        return str(found[0]), str(found[1])
    return None


def misfits(tools: Mapping[str, Any], names: Sequence[str], request: str, cwd: str,
            chosen: str, viewer: str | None = None) -> list[str]:
    """What to choose again without when ``chosen`` (declared in ``tools``, one of
    ``names``) takes only files of a kind, by the ``pattern`` its path arguments
    declare, and the files ``request`` names here are none of that kind: "What does the
    guide in docs actually say?" names no PDF for `doc.summarize` (heldout30, after its
    run: it had been summarized). Such a read wanted is a read still: every other tool
    of the kind, every write, an answer in words (which cannot have read the file), and
    for one file named, every read but ``viewer``. Empty when ``chosen`` fits."""
    named = [p for p in (*(here(cwd, d) or by_name(cwd, d) for d in named_documents(request)[:20]),
                         *files_called(request, cwd))
             if p and os.path.isfile(os.path.join(cwd, p))]
    out = [n for n in names if named and (kinds := _kinds(tools.get(n))) and not any(
        re.search(k, p) for k in kinds for p in named)]
    if chosen not in out:
        return []
    if _reads(tools.get(chosen)):
        out += ["response", *(n for n in names if n not in out and (
            not _reads(tools.get(n)) or (len(set(named)) == 1 and viewer in names
                                         and n != viewer)))]
    return out


def _kinds(declaration: Any) -> list[str]:
    """The patterns of the file names a tool's path arguments take ("\\.[Pp][Dd][Ff]$")."""
    specs = [s.get("items", s) for s in getattr(declaration, "args_schema", {}).get(
        "properties", {}).values() if isinstance(s, Mapping)]
    return [s["pattern"] for s in specs if isinstance(s, Mapping) and "pattern" in s
            and s.get("x-adjutant-role") in ("path", "paths")]


def _reads(declaration: Any) -> bool:
    """Whether a tool only reads ("summarize notes.txt" had become an append)."""
    return getattr(getattr(declaration, "safety", None), "level", "write") == "read"


#: Files named by their kind ("in json files", "only the python files"), and the ending
#: of each kind not named by its ending.
_KIND_NAMES = (r"json|ya?ml|python|py|markdown|md|te?xt|toml|javascript|js|typescript|ts|"
               r"html|css|shell|sh|log|csv|ini|cfg|rust|go|java")
_KIND_OF_FILES = re.compile(r"(?:\b(?:in|only|just|among|through|across|of|list|show|find|"
                            r"search|grep|serach|look at|the|which|what|every|any)\s+(?:the\s+|"
                            rf"my\s+|all\s+)?)\.?\b({_KIND_NAMES})\s+files\b|"
                            rf"\b(?:every|any|each)\s+(?:\.(\w{{1,10}})|({_KIND_NAMES}))\s+file\b",
                            re.IGNORECASE)  # "every markdown file" (heldout38, after its run)
_KINDS = {"python": "py", "markdown": "md", "text": "txt", "javascript": "js",
          "typescript": "ts", "shell": "sh", "rust": "rs"}


def glob_of_kind(asked: str) -> str:
    """The glob of the one kind of file ``asked`` names by its kind ("only look in json
    files": ``*.json``), or empty."""
    kinds = {f"*.{_KINDS.get(k.lower(), k.lower())}" for pair in _KIND_OF_FILES.findall(asked)
             for k in pair if k}  # "every .md file" too (heldout27, after its run)
    return kinds.pop() if len(kinds) == 1 else ""


def compared_amiss(step: ToolCall, declaration: ToolDeclaration, prompt: str,
                   cwd: str) -> str | None:
    """The path of a step comparing two (two required path arguments) that compares a
    path with itself ("how does src differ from develop?" planned as `fs.diff` src with
    src, when a branch was meant), or with a file ``prompt`` does not name where it
    names a branch here ("how does notes.txt differ from the develop branch" had been
    diffed with notes.old, heldout43); None otherwise."""
    props = declaration.args_schema.get("properties", {})
    keys = [k for k in declaration.args_schema.get("required", [])
            if props.get(k, {}).get("x-adjutant-role") == "path"]
    paths = {os.path.normpath(str(step.args.get(k))) for k in keys}
    unsaid = [p for p in sorted(paths) if os.path.basename(p).lower() not in prompt.lower()]
    refs = git_names(cwd) | {"HEAD"} if cwd else set()  # "differ from HEAD?" (heldout46)
    if len(keys) >= 2 and unsaid and set(re.findall(r"[\w./-]+", prompt)) & refs:
        return unsaid[0]
    return paths.pop() if len(keys) >= 2 and len(paths) == 1 else None
