"""The planner: what makes small local models reliable.

Levers, each measured on the tuning and the held-out golden sets
(``bench/planning.py``):

- **The model chooses.** Every allowed tool is offered (up to `ALL_TOOLS`; beyond
  that a lexical ranking, BM25 over names, descriptions and declared requests, narrows
  the menu), with ``response`` as a first-class choice; no ranking forces a tool.
- **A static prompt first.** Instructions, the tools and their worked examples depend
  only on the tools offered: `system_text` is the same for every request, so a
  provider keeps its evaluated state (llama.cpp's prefix cache) and a request pays only
  for `user_text`: its context, the workspace's files and its own words.
- **Grounded examples.** A worked example is a declared request paired with a declared
  call whose every value the request states, so examples teach copying from the request
  and never leak a placeholder.
- **Constraint.** The reply's shape is built from the offered tools: a GBNF grammar
  for backends that take one (tool names limited to real tools, arguments to each
  tool's schema, and the path arguments of tools that only read limited to paths that
  exist or that the request names), a JSON schema for those that take that.
- **One step at a time.** "Do X and then Y" is planned clause by clause (`_clauses`).
- **Validation.** Whatever the backend claims, the reply is decoded strictly and each
  step's arguments validated against its tool's schema; the operator retries with the
  error fed back.

Pure Python, no model needed: `Planner` is cheap to build per request.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from adjutant_hookspecs import CompletionRequest, ToolDeclaration

from ._bank import Bank, Example
from ._grammar import END, MAX_STEPS, grounded, reply_grammar, reply_schema
from ._heads import named_by_words, runner_among, timer_among
from ._here import workspace_paths
from ._in_words import only_asks, qualified, unworded, wants_words, wants_words_anyway
from ._when import later, recurring
from ._words import (
    MAX_REQUEST,
    about_here,
    bad_request,
    content_cut,
    is_question,
    named_paths,
)
from ._words import shape as _shape
from ._words import terms as _terms

__all__ = [
    "ALL_TOOLS",
    "BANK_WEIGHT",
    "CALIBRATION",
    "END",
    "LEXICAL_WEIGHT",
    "MAX_REQUEST",
    "PASTED",
    "SIMILAR",
    "TIE_MARGIN",
    "WEAK_WORDS",
    "Planner",
    "bad_request",
    "is_question",
    "named_paths",
    "reply_grammar",
    "reply_schema",
    "workspace_paths",
]

#: Up to this many tools, every one is offered (the model chooses); beyond, a ranking
#: narrows the menu to this many.
ALL_TOOLS = 32
#: How many of the workspace's paths the prompt names (the grammar knows more).
PROMPT_PATHS = 40
#: How much of the context bulletin the prompt carries (characters of JSON).
CONTEXT_CHARS = 600
#: Two calibrated scores closer than this (nats) are a tie: which is higher can flip
#: with the thread count's rounding, so `Planner.decide` breaks it deliberately.
TIE_MARGIN = 0.1
#: How much the request's own words weigh in the choice between tools (nats added to
#: the calibrated score of the tool the lexical ranking puts first, proportionally
#: less to the others). A small model's choice between near neighbours flips on
#: punctuation ("List, Python, Processes." went to fs.list, "List Python processes."
#: to proc.list); the rarest words the request shares with a tool's declaration are
#: the steadier signal. It never turns an answer into a tool (words that touch no
#: tool only lean towards an answer: `WEAK_WORDS`).
LEXICAL_WEIGHT = 0.5
#: How much the bank's nearest requests weigh in the choice (nats, times the share of
#: them that start the same way; `Bank.votes`). With `CALIBRATION`, set on the bank
#: itself (each request voted on by the others: 81% right first step of 754, against
#: 65% for the model alone and 71% for the bank alone) and the tuning set (86%, 73 of
#: 85), never on a held-out set. Raised from 4 at stop 40: the model's scores for 586
#: first choices of the tuning material (tuning, heldout4-7), each decided again offline
#: with weights 2 to 8: 4 gave 544 right, 6 gave 549, 8 gave 549 (flat beyond).
BANK_WEIGHT = 6.0
#: How much of the content-free request's likelihood is taken off each choice's: all of
#: it over-corrects (a read the model barely liked after "N/A" wins on a small margin).
CALIBRATION = 0.75
#: How many of the chosen tool's nearest examples in the bank the prompt shows after
#: the choice (`Planner.shots`). None by default: on the tuning set, three bought 2 more
#: right values of 66 and 1 more multi-step plan of 11, for 171 more prompt tokens a
#: request (warm median 5.6 s against 2.3 s, 2 cores, one thread).
SIMILAR = 0
#: Below this BM25 score of its best-matching tool, a request's words barely touch
#: any tool ("thank you!"): the answer in words gains up to `LEXICAL_WEIGHT` nats as
#: the overlap goes to none; a strong preference for a tool still stands. Set from the
#: tuning set alone (its tool requests all score 2.7 or more, five of eight answers less).
WEAK_WORDS = 2.5
#: What a ``patch`` argument holds in the model's reply when the request carries the
#: diff (`_words.carried_patch`) or states an edit whole (`_edits.stated_edit`): the
#: diff itself goes in, as pasted or as the operator wrote it.
PASTED = "the diff made from the request"
#: A request naming a path that exists here is about it: an answer in words cannot
#: have read it ("cat docs/guide.md pls" was echoed back), so it loses `LEXICAL_WEIGHT`.
#: The content-free request the model's choice is calibrated against.
_CONTENT_FREE = "N/A"
#: How the planner itself teaches the ``response`` choice.
_RESPONSE_EXAMPLES = (
    ("what is a unified diff?", "A text format that shows the lines removed (-) and "
                                "added (+) between two versions of a file."),
    ("thanks, that was helpful!", "You are welcome."),
    ("book me a table for two tonight", "I cannot do that: none of my tools books "
                                        "tables. I can read, search and change files "
                                        "here, run programs and use git."),
)
#: Worked examples for the bundled tools whose declared requests and calls do not pair
#: up (each value stated in its request; the names are made up, so nothing here is a
#: file of the user's). Used only for the tools offered; the tools' own pairs first.
_MORE_EXAMPLES: dict[str, tuple[tuple[str, dict[str, Any]], ...]] = {
    "fs.list": (("what is in the build folder?", {"path": "build"}),),
    "fs.write": (("create hello.txt containing 'hi there'",
                  {"path": "hello.txt", "content": "hi there\n"}),),
    "fs.append": (("add the line 'call mom' to todo.md",
                   {"path": "todo.md", "content": "call mom\n"}),),
    "editor.patch": (("in setup.py change 'beta' to 'stable'",
                      {"patch": "--- a/setup.py\n+++ b/setup.py\n@@ -3 +3 @@\n-status = 'beta'\n"
                                "+status = 'stable'\n"}),),
    "search.grep": (("search for 'hello world' ignoring case",
                     {"pattern": "hello world", "ignore_case": True}),),
    "shell.exec": (("run make test", {"argv": ["make", "test"]}),),
    "proc.list": (("list the node processes", {"name": "node"}),),
    "sys.info": (("how much memory is free?", {"sections": ["memory"]}),),
    "git.log": (("show the history of setup.py", {"path": "setup.py"}),),
    "git.commit": (("commit setup.py with the message 'bump version'",
                    {"message": "bump version", "paths": ["setup.py"]}),
                   ("commit everything as 'wip'", {"message": "wip", "all": True})),
    "git.branch": (("create a branch called fix/login", {"name": "fix/login"}),),
}
#: Multi-step worked examples: (request, [(tool, call), ...]), shown when all are offered.
_MULTI_EXAMPLES: tuple[tuple[str, tuple[tuple[str, dict[str, Any]], ...]], ...] = (
    ("make a branch fix/login and commit setup.py as 'fix login'",
     (("git.branch", {"name": "fix/login"}),
      ("git.commit", {"message": "fix login", "paths": ["setup.py"]}))),
    ("read setup.py, then run it with python",
     (("fs.read", {"path": "setup.py"}), ("shell.exec", {"argv": ["python", "setup.py"]}))),
)
_log = logging.getLogger("adjutant.planner")
#: A provenance label leading a description (``[MCP server 'x'; its own words,
#: untrusted]``): shown to the model, never searched (its words are about origin).
_LABEL = re.compile(r"^\[[^\]]*\]\s*")
def _document(declaration: ToolDeclaration) -> list[str]:
    """The words a tool is found by; its name and declared requests count twice."""
    schema = declaration.args_schema
    requests = " ".join(schema.get("x-adjutant-requests", []))
    props = schema.get("properties", {})
    names = declaration.name.replace(".", " ").replace("_", " ")
    text = " ".join([names, names, _LABEL.sub("", declaration.description), requests, requests,
                     " ".join(props)])
    return _terms(text)


class Planner:
    """Ranks tools for a request and builds the prompt and output constraint."""

    def __init__(self, tools: Mapping[str, ToolDeclaration], *, k1: float = 1.2,
                 b: float = 0.75, bank_weight: float = BANK_WEIGHT) -> None:
        self.tools = dict(tools)
        self.bank_weight = bank_weight
        self._bank: Bank | None = None
        self._docs = {name: Counter(_document(d)) for name, d in self.tools.items()}
        lengths = [sum(c.values()) for c in self._docs.values()] or [1]
        self._avg = sum(lengths) / len(lengths)
        frequency: Counter[str] = Counter()
        for counts in self._docs.values():
            frequency.update(counts.keys())
        total = len(self._docs)
        self._idf = {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}
        self.k1, self.b = k1, b

    def rank(self, request: str) -> list[tuple[str, float]]:
        """Every tool with its BM25 score for ``request``, best first (ties by name)."""
        query = Counter(_terms(request))
        scores = []
        for name, counts in self._docs.items():
            length = sum(counts.values())
            score = 0.0
            for term in query:
                tf = counts.get(term, 0)
                if tf:
                    norm = tf + self.k1 * (1 - self.b + self.b * length / self._avg)
                    score += self._idf[term] * tf * (self.k1 + 1) / norm
            scores.append((name, score))
        return sorted(scores, key=lambda item: (-item[1], item[0]))

    def menu(self, request: str, k: int = 4) -> list[str]:
        """The ``k`` most relevant tools (all of them when there are few)."""
        ranked = self.rank(request)
        if len(ranked) <= k:
            return [name for name, _ in ranked]
        return [name for name, _ in ranked[:k]]

    def first_choices(self, request: str, names: Sequence[str],
                      confidence: float = 1.4) -> list[str]:
        """The tools a plan may start with: the best-ranked one alone when it outscores
        the next by ``confidence`` times, else the best two; all of ``names`` when the
        request shares no word with any of them. The model still writes the arguments,
        the later steps and whether to answer in words instead."""
        ranked = [(n, s) for n, s in self.rank(request) if n in names]
        if len(ranked) < 2 or ranked[0][1] <= 0:
            return list(names)
        if ranked[0][1] >= confidence * ranked[1][1]:
            return [ranked[0][0]]
        return [ranked[0][0], ranked[1][0]]

    # -- the prompt ----------------------------------------------------------------------

    def offered(self, request: str, size: int = 0) -> list[str]:
        """The tools to offer: all of them (up to `ALL_TOOLS`, in a stable order, so the
        prompt's static part is the same for every request), else the ``size`` (or
        `ALL_TOOLS`) most relevant."""
        if len(self.tools) <= (size or ALL_TOOLS):
            return sorted(self.tools)
        return self.menu(request, size or ALL_TOOLS)

    def system_text(self, names: Sequence[str], *, system: str, schemas: bool = True) -> str:
        """The static part of the prompt: instructions, the offered tools and their
        worked examples. Depends only on ``names`` and ``system``."""
        parts = [system.strip(), _INSTRUCTIONS, f"End every answer with {END}.", "Tools:"]
        for name in names:
            declaration = self.tools[name]
            line = f"- {name}: {_first_sentence(_LABEL.sub('', declaration.description))}"
            if schemas:
                props = declaration.args_schema.get("properties", {})
                required = set(declaration.args_schema.get("required", []))
                args = ", ".join(f"{p}{'' if p in required else '?'}: "
                                 f"{_type(spec)}" for p, spec in props.items())
                line += f" Arguments: {{{args}}}"
            parts.append(line)
        parts.append("- response: no tool; answer in words (general questions, "
                     "explanations, small talk, what no tool can do).")
        parts.append("Examples:")
        for asked, text in _RESPONSE_EXAMPLES:
            parts.append(_worked(asked, {"type": "response", "text": text}))
        for name in names:
            for asked, call in self.examples(name)[:2]:
                parts.append(_worked(asked, _plan(name, call)))
        for asked, steps in _MULTI_EXAMPLES:
            if all(tool in names for tool, _ in steps):
                reply = {"type": "plan", "steps": [{"tool": t, "args": a} for t, a in steps]}
                parts.append(_worked(asked, reply))
        return "\n".join(parts)

    def user_text(self, request: str, names: Sequence[str] = (), *,
                  context: Mapping[str, Any] | None = None, paths: Sequence[str] = (),
                  error: str = "", similar: int = 0, retrieved: str = "") -> str:
        """The part of the prompt that is the request's own: its context, the files
        here, ``similar`` worked examples nearest to it (`shots`), what memory
        ``retrieved`` (labelled untrusted), the error of a refusal, the request."""
        parts = []
        if context := _present(context):  # "clipboard":null and the like cost tokens
            parts.append("Context: " + json.dumps(context, separators=(",", ":"),
                                                  sort_keys=True)[:CONTEXT_CHARS])
        if paths:
            shown = list(paths[:PROMPT_PATHS])
            more = f" (and {len(paths) - len(shown)} more)" if len(paths) > len(shown) else ""
            parts.append("Files here: " + ", ".join(shown) + more)
        if similar:
            parts.extend(self.shots(request, n, similar) for n in names)
        if retrieved:
            parts.append(retrieved)
        if error:
            parts.append(f"Your previous answer was refused: {error}. Answer with one JSON "
                         "object only, a plan with fewer steps if in doubt.")
        parts.append(f"Request: {request}\nAnswer:")
        return "\n".join(parts)

    def prompt(self, request: str, names: Sequence[str], *, system: str,
               context: Mapping[str, Any] | None = None, error: str = "",
               schemas: bool = True, paths: Sequence[str] = ()) -> str:
        """The whole completion prompt: `system_text`, then `user_text`; the model
        continues after ``Answer:``."""
        return (self.system_text(names, system=system, schemas=schemas) + "\n"
                + self.user_text(request, names, context=context, paths=paths, error=error))

    def examples(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        """The tool's worked examples: each declared request paired with a declared call
        whose every value the request states (a flag by its name), and the first request
        with an empty call if there is one, so no example teaches a value the request
        did not give."""
        declaration = self.tools[name]
        requests = declaration.args_schema.get("x-adjutant-requests") or []
        calls = [dict(c) for c in declaration.examples if isinstance(c, Mapping)]
        pairs = []
        for index, request in enumerate(requests):
            fitting = [c for c in calls if c and _states(request, c)]
            if fitting:
                pairs.append((request, fitting[0]))
            elif index == 0 and {} in calls:
                pairs.append((request, {}))
        props = declaration.args_schema.get("properties", {})
        pairs.extend((r, c) for r, c in _MORE_EXAMPLES.get(name, ()) if set(c) <= set(props))
        return pairs

    @property
    def bank(self) -> Bank:
        """The bundled bank's examples for the offered tools, with the tools' own."""
        if self._bank is None:
            own = [Example(r, ((n, a),)) for n in sorted(self.tools) for r, a in self.examples(n)]
            own += [Example(r) for r, _ in _RESPONSE_EXAMPLES]
            own += [Example(r, tuple(steps)) for r, steps in _MULTI_EXAMPLES]
            self._bank = Bank.for_tools(self.tools, own, _shape)
        return self._bank

    def shots(self, request: str, name: str, count: int) -> str:
        """The ``count`` one-step worked examples of the tool ``name`` nearest to
        ``request`` in the bank, nearest last (next to the request): how people word a
        request for that tool and which of its values they state."""
        near = self.bank.nearest_of(request, name, count)
        return "\n".join(_worked(e.request, e.reply()) for e in reversed(near))

    # -- the model's own choice of first step -------------------------------------------

    @staticmethod
    def heads(names: Sequence[str]) -> list[str]:
        """How a reply starts for each choice: a plan whose first step is each offered
        tool, then a response."""
        return [f'{{"type":"plan","steps":[{{"tool":{json.dumps(n)}' for n in names] + [
            '{"type":"response"']

    async def choose(self, scorer: Any, request: CompletionRequest, names: Sequence[str],
                     priors: dict[Any, list[float]], *,
                     paths: Sequence[str] | None = None, calibrate: bool = True,
                     asked: str = "", existing: Sequence[str] = (), similar: int = 0,
                     past: Sequence[Example] = (), exclude: Sequence[str] = (),
                     most: int = MAX_STEPS, passages: str = "", pasted: bool = False,
                     ) -> tuple[CompletionRequest, str]:
        """Let the model choose how its reply starts, then constrain the reply to that.

        ``scorer(request, continuations)`` (a provider's ``score``) gives each head's
        log-likelihood after the prompt in one pass; with ``calibrate``, minus
        `CALIBRATION` times its likelihood after a content-free request (kept in
        ``priors``), which removes the
        model's bias towards some names or towards answering in words ("contextual
        calibration"). Returns the request with its grammar fixed to the chosen head,
        and the choice (a tool name or ``response``); ``asked``, the request's own
        words, gives `decide` its second look and tie-break; ``existing``, the paths
        it names that exist here. With ``similar``, the chosen tool's nearest worked
        examples in the bank (`shots`) go before the prompt: shown only after the
        choice, so they teach its values and never sway which tool it is. ``past``:
        this user's earlier successful plans for requests like it (`decide`). Without
        ``exclude``, choices already tried and found wanting (a tool, ``response``);
        ``most``, the plan's longest (one for a clause of a request). ``passages``: the
        part of the prompt (memory's, `user_text`'s ``retrieved``) that only an answer in
        words needs: left out of the scoring and of a tool's reply. ``pasted``: the
        request carries a diff, which a ``patch`` argument only mentions (`PASTED`)."""
        heads = self.heads(names)
        full = request
        if passages and (bare := request.prompt.replace(passages + "\n", "", 1)) \
                != request.prompt:
            request = msgspec.structs.replace(request, prompt=bare)
        key = (request.system, request.model, tuple(heads))
        if calibrate and key not in priors:  # first: the reply goes on from the request's
            # own pass (after another, its last digits, and run after run its values, differ)
            empty = msgspec.structs.replace(request, prompt=self.user_text(_CONTENT_FREE))
            priors[key] = list(await scorer(empty, heads))
        scores = list(await scorer(request, heads))
        if calibrate:
            scores = [s - CALIBRATION * p for s, p in zip(scores, priors[key], strict=True)]
        scores = [-math.inf if c in exclude else s
                  for c, s in zip([*names, "response"], scores, strict=True)]
        best = self.decide(asked, [*names, "response"], scores, existing=existing,
                           past=past)
        if best == len(names):
            return msgspec.structs.replace(full, grammar=reply_grammar({})), "response"
        grammar = reply_grammar({n: self._grounded(n, paths, pasted) for n in names},
                                [names[best]],
                                response=False, most=most)
        prompt = request.prompt
        if similar and (shots := self.shots(asked, names[best], similar)):
            prompt = f"{shots}\n{prompt}"
        return msgspec.structs.replace(request, grammar=grammar, prompt=prompt), names[best]

    def decide(self, asked: str, choices: Sequence[str], scores: Sequence[float], *,
               existing: Sequence[str] = (), past: Sequence[Example] = ()) -> int:
        """The index of the chosen head among ``choices`` (tool names and
        ``response``), from the model's ``scores``, with a second look: a request
        that only asks (every sentence a question, none a polite order; or it says
        "just asking"), or says nothing in English or in a tool's words (gibberish), is
        never planned as a write or destructive first step, the best read tool or
        ``response`` is taken instead (a question planned as a change is the worst
        miss), and a question about a file that exists here is not answered in words
        (which cannot have read it): the best read tool is taken. Two scores within
        `TIE_MARGIN` are a tie, broken deliberately by the lexical ranking of the
        request (then by order), not by rounding noise that differs with the thread
        count. Each second look and tie-break is logged.

        ``past``, the user's own earlier successful plans for similar requests (from
        the plan recallers), vote beside the bank: half the vote is theirs when there
        are any (what this user meant before is the nearest neighbour there is)."""
        _log.debug("scores for %r: %s", asked[:80], ", ".join(
            f"{c} {s:.2f}" for c, s in sorted(zip(choices, scores, strict=True),
                                            key=lambda i: -i[1])[:4]))
        intent = content_cut(asked)  # what to do, not the content it carries
        votes = self.bank.votes(intent) if asked and self.bank_weight else {}
        mine = Counter(e.label for e in past if e.label in choices)
        if mine and self.bank_weight:
            total = sum(mine.values())
            votes = {c: ((votes.get(c, 0.0) + mine[c] / total) / 2 if votes
                         else mine[c] / total) for c in {*votes, *mine}}
            _log.info("past plans: %r: %s", asked[:80], ", ".join(
                f"{c} x{n}" for c, n in mine.most_common(3)))
        if votes:  # what the nearest requests in the bank meant
            scores = [s + self.bank_weight * votes.get(c, 0.0)
                      for c, s in zip(choices, scores, strict=True)]
            _log.info("bank: %r: %s", asked[:80], ", ".join(
                f"{c} {v:.2f}" for c, v in sorted(votes.items(), key=lambda i: -i[1])[:3]))
        lexical = dict(self.rank(intent)) if asked else {}
        strongest = max(lexical.values(), default=0.0)
        lean = (-LEXICAL_WEIGHT if existing or about_here(asked) else LEXICAL_WEIGHT * (
            1 - strongest / WEAK_WORDS)
                if asked and strongest < WEAK_WORDS else 0.0)
        if lean and "response" in choices:  # named paths exist / words touch no tool
            scores = [s + lean if c == "response" else s
                      for c, s in zip(choices, scores, strict=True)]
            _log.info("words: %r (best %.2f, exists: %s): response %+.2f", asked[:80],
                      strongest, ", ".join(existing[:3]) or "-", lean)
        order = sorted(range(len(choices)), key=lambda i: (-scores[i], i))
        if strongest > 0 and self.tools.get(choices[order[0]]) is not None:
            fused = [s + LEXICAL_WEIGHT * lexical.get(c, 0.0) / strongest
                     if self.tools.get(c) is not None else s
                     for c, s in zip(choices, scores, strict=True)]
            tools_first = [i for i in order if self.tools.get(choices[i]) is not None]
            best = max(tools_first, key=lambda i: (fused[i], -i))
            if best != order[0]:
                _log.info("words: %s (%.3f + words) over %s (%.3f) for %r", choices[best],
                          scores[best], choices[order[0]], scores[order[0]], asked[:80])
                scores = fused
                order = sorted(range(len(choices)), key=lambda i: (-scores[i], i))
        # 3+ words, none English's commonest nor a tool's ("play some music"; not "dir")
        senseless = strongest <= 0 and unworded(asked) and len(asked.split()) >= 3
        if asked and "response" in choices and (wants_words_anyway(asked) or (not existing and (
                wants_words(asked) or senseless))) \
                and scores[choices.index("response")] > -math.inf:
            _log.info("words only: %r asks for an explanation, not an action", asked[:80])
            return choices.index("response")
        if asked and (named := named_by_words(asked, choices, order[0],
                                              lambda t: dict(self.rank(content_cut(t))),
                                              WEAK_WORDS, self.tools)) is not None \
                and scores[named] > -math.inf:
            _log.info("named by its words: %r; %s instead of %s", asked[:80], choices[named],
                      choices[order[0]])
            return named
        if asked and (recurring(asked) or later(asked)) and (
                timer := timer_among(self.tools, choices)) is not None:
            if timer != order[0]:
                _log.info("scheduled: %r asks for it again and again, or later; %s instead "
                          "of %s", asked[:80], choices[timer], choices[order[0]])
            return timer
        if (runner := runner_among(self.tools, asked, choices)) is not None and runner != order[0]:
            _log.info("named program: %r says which program to use; %s instead of %s",
                      asked[:80], choices[runner], choices[order[0]])
            return runner
        asking = bool(asked) and only_asks(asked)  # "just asking", of a file here too
        if asked and (asking or is_question(asked) or (strongest <= 0 and unworded(asked))
                      or (not existing and is_question(qualified(asked)))):
            # "...? Just the format." asks too (of a file here, "...? Only asking." may
            # ask how, in words: the model's choice of a read or an answer stands)
            reads = [i for i in order if not self.writes(choices[i])]
            if existing and not asking:  # about a file here: words cannot have read it
                reads = [i for i in reads if choices[i] != "response"] or reads
            if reads and reads[0] != order[0]:
                _log.info("second look: %r only asks%s; %s (%.3f) instead of %s "
                          "(%.3f)", asked[:80], " about a file here" if existing else "",
                          choices[reads[0]], scores[reads[0]], choices[order[0]],
                          scores[order[0]])
            order = reads or order  # a tie below must not bring a write back
        if len(order) > 1 and scores[order[0]] - scores[order[1]] < TIE_MARGIN:
            top = order[:2]
            # equal words: the answer before a tool (it acts on nothing), then by order
            pick = min(top, key=lambda i: (-lexical.get(choices[i], 0.0),
                                           self.tools.get(choices[i]) is not None, i))
            _log.info("tie-break: %s %.3f vs %s %.3f for %r; took %s", choices[top[0]],
                      scores[top[0]], choices[top[1]], scores[top[1]], asked[:80],
                      choices[pick])
            return pick
        return order[0]

    def writes(self, name: str) -> bool:
        """Whether a first step with ``name`` would change something."""
        declaration = self.tools.get(name)
        if declaration is None:
            return False  # ``response``
        level = getattr(declaration.safety, "level", "write")
        return level != "read"

    # -- constraints ---------------------------------------------------------------------

    def grammar(self, names: Iterable[str], first: Iterable[str] | None = None, *,
                paths: Sequence[str] | None = None, most: int = MAX_STEPS,
                pasted: bool = False) -> str:
        """The reply grammar (plans of at most ``most`` steps); with ``paths``, the path
        arguments of the tools that only read may name only those; with ``pasted``, a
        ``patch`` argument is only a mention of the diff the request carries (`PASTED`)."""
        return reply_grammar({n: self._grounded(n, paths, pasted) for n in names}, first,
                             most=most)

    def json_schema(self, names: Iterable[str], first: Iterable[str] | None = None, *,
                    paths: Sequence[str] | None = None, most: int = MAX_STEPS,
                    pasted: bool = False) -> dict[str, Any]:
        return reply_schema({n: self._grounded(n, paths, pasted) for n in names}, first,
                            most=most)

    def _grounded(self, name: str, paths: Sequence[str] | None,
                  pasted: bool = False) -> ToolDeclaration:
        return grounded(self.tools[name], paths, PASTED if pasted else "")


_INSTRUCTIONS = (
    "You cannot see the files, the processes, the machine or the git repository: to show, "
    "read, list, search or change any of them, answer with a plan of tool steps. Answer "
    "with a response only for general knowledge, explanations, small talk, or what no "
    "tool can do. Put the values the request states (file names, quoted text, words to "
    "find, numbers, branch names, commands) into the arguments, exactly; never invent "
    "values.")


def _present(context: Mapping[str, Any] | None) -> dict[str, Any]:
    """``context`` without its empty parts (null, "", [], {}), at every level: they
    tell the model nothing and each costs prompt tokens on every request."""
    out: dict[str, Any] = {}
    for key, value in (context or {}).items():
        if isinstance(value, Mapping):
            value = _present(value)
        if value is not None and not (isinstance(value, (str, list, tuple, dict))
                                      and not value):
            out[key] = value
    return out


def _first_sentence(text: str, limit: int = 160) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", text.strip())
    sentence = match.group(1) if match else text.strip()
    return sentence if len(sentence) <= limit else sentence[: limit - 3].rstrip() + "..."


def _type(spec: Any) -> str:
    if not isinstance(spec, Mapping):
        return "any"
    if "enum" in spec:
        return "|".join(json.dumps(v) for v in spec["enum"])
    kind = spec.get("type", "any")
    if kind == "array" and isinstance(spec.get("items"), Mapping):
        return f"[{_type(spec['items'])}]"
    return str(kind)


def _plan(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "plan", "steps": [{"tool": name, "args": dict(args)}]}


def _worked(request: str, reply: Mapping[str, Any]) -> str:
    return f"Request: {request}\nAnswer: {json.dumps(reply, separators=(',', ':'))}{END}"


def _states(request: str, call: Mapping[str, Any]) -> bool:
    """Whether the request states every value of the call: each string and number in
    its words, each true flag by its name (``ignore_case``: "ignore case")."""
    text = request.lower()

    def stated(key: str, value: Any) -> bool:
        if isinstance(value, Mapping):
            return all(stated(k, v) for k, v in value.items())
        if isinstance(value, (list, tuple)):
            return all(stated(key, v) for v in value)
        if isinstance(value, bool):
            return value and key.replace("_", " ").lower() in text
        words = str(value).strip().lower()
        return value is None or re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text) is not None

    return stated("", call)

