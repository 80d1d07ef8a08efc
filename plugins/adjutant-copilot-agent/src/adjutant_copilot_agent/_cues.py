"""The sentences of a transcript that say, in the ordinary words of a meeting, that
something was decided, that someone will do something, or that a question is open;
and a check of the model's items against them.

A small model (the embedded 0.5B) notes the gist of a meeting but files its items
badly: a decision among the action items, a statement among the questions, a greeting
as a decision, and items left out. These cues are the common English phrasings of a
decision ("we decided", "agreed", "let's go with", "settled"), of a commitment ("I
will", "you'll", "is going to", "needs to", "can you") and of a question (Whisper
writes its question mark); they are not the words of any one meeting. The sentence so
found is an item, in the words said (its evidence is exact), unless the model's items
in that list already say it (the model's words are kept first); the model's question
that is not one is dropped.

What is heard stays data: a cued sentence is only ever text in a list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from adjutant_hookspecs import CopilotCycleResult

from ._classify import (
    _ADDRESS,
    _BARE,
    _MINE,
    _PLAIN_VERB,
    _REFERS,
    _REQUEST,
    _REQUEST_AFTER,
    _WH,
    aside,
    classify,
)
from ._state import normalize, words_in

__all__ = ["classify", "with_cues"]
_PROPOSAL = re.compile(r"\b(?:I'd|I would|let's|let us|we could|we should|we might|we can|"
                       r"^(?:[\w']+,\s+)?(?:can|could|may) I (?:have|take|get|keep|use)|"
                       r"how about|what about|what if we|why don't we|why not|I suggest|I propose|"
                       r"maybe we|shall we|I'd rather|I'd prefer|my vote is|I vote)\b",
                       re.IGNORECASE)
#: A question that offers a choice: "Glasgow or Edinburgh for the last night?".
_CHOICE_Q = re.compile(r"\bor\b[^?]*\?\s*$", re.IGNORECASE)
#: A reply that agrees, alone ("Agreed.", "Fine by me.", "Sounds good.") or opening a
#: sentence ("Yes, dark mode waits for the next version.").
_AGREE = (r"(?:agreed|deal|done|fine by me|fine with me|"
          r"(?:(?:that|it|this) )?(?:works for me|sounds good|sounds great|sounds fine|"
          r"makes sense|suits me)|no objections?|no arguments? (?:from me|here)|none from me|"
          r"good idea|great idea|(?:that's|that is) (?:even )?better|"
          r"let's do (?:it|that)|fair enough|happy with that|yes|yeah|yep|fine|ok|okay|"
          r"alright|all right|perfect|great|good|right|sure)")
#: A reply that agrees by judging the proposal: "Appointments only sounds sensible."
_AGREE_JUDGED = re.compile(r"^(?:[\w'-]+ ){0,5}(?:sounds|seems|looks|is) (?:good|great|fine|"
                           r"sensible|reasonable|right|perfect|ideal|fair|like a plan|like a "
                           r"good idea)\b", re.IGNORECASE)
#: A reply that agrees outright, opening the sentence ("Works for me, go with that").
_AGREE_STRONG = re.compile(r"^(?:(?:fine|okay|ok|alright|all right|oh|actually|yes|yeah)[,.]?"
                           r"\s+){0,2}(?:agreed|deal|"
                           r"fine by me|fine with me|(?:(?:that|it|this) )?(?:works for me|"
                           r"sounds good|sounds great|makes sense|suits me)|"
                           r"no objections?|no arguments? (?:from me|here)|good idea|"
                           r"great idea|(?:that's|that is) (?:even )?better|"
                           # a concession: "Fine, you win.", "Oh, go on then."
                           r"you win|go on then|if you insist|have it your way|"
                           r"you(?:'ve| have) convinced me|"
                           r"let's do (?:it|that)|fair enough|happy with that|perfect)\b",
                           re.IGNORECASE)
#: An acknowledgement that agrees to nothing by itself.
_WEAK = re.compile(r"^(?:sure|ok|okay|right|good|great)[.!]?$", re.IGNORECASE)
_AGREE_ALONE = re.compile(rf"^(?:(?:actually|well|oh)[,.]?\s+)?(?:{_AGREE}[,.!]?\s*)+$",
                          re.IGNORECASE)
_AGREE_FIRST = re.compile(rf"^(?:(?:actually|well|oh)[,.]?\s+)?{_AGREE}[,.!]?\s+"
                          r"(?!thanks|thank|no problem|see you|bye|"
                          r"that is it|that's it|that's all|that is all|that's everything)",
                          re.IGNORECASE)

#: An agreement closing a reply: "..., I'm happy with that.", "..., that works for me."
_AGREE_INSIDE = re.compile(r"[,.]\s*(?:and\s+)?(?:I'm|I am|we're|we are) "
                           r"(?:happy|fine|good|okay|ok) with (?:that|it|this)\b"
                           r"|[,.]\s*(?:that|it|this) (?:works|suits) (?:for )?(?:me|us)\b"
                           r"|[,.]\s*fine by me\b", re.IGNORECASE)
#: A question that asks the room to agree to what was just said: "Agreed?", "Everyone
#: happy?", "Any objections?", or such a tag closing the sentence ("..., okay?").
_ASKS_AGREEMENT = re.compile(
    r"(?:^|[,.]\s*)(?:(?:so|then|and),?\s+)?(?:(?:are )?(?:we )?(?:all )?agreed|"
    r"(?:is )?(?:everyone|everybody) (?:happy|okay|ok|agreed|fine|good)(?: with (?:that|this))?|"
    r"any objections?|(?:is )?(?:that|this) (?:okay|ok|alright|all right|fine|agreed)"
    r"(?: with (?:everyone|everybody|you))?|(?:okay|ok|alright|all right|fine) with "
    r"(?:everyone|everybody|you)|okay|ok|alright|all right|yes|right|deal|happy)\s*\?$",
    re.IGNORECASE)
_AGREE_WORDS = frozenset(("agreed", "deal", "done", "fine", "okay", "alright", "all", "right",
                          "perfect", "great", "good", "yes", "yeah", "yep", "sure", "that",
                          "this", "with", "happy", "sounds", "works"))


#: A request granted: "The tenants have asked for a later date." "Fine, give them until
#: Friday." (what was asked for, with the grant, is decided).
_ASKED_FOR = re.compile(r"\b(?:asked for|asks for|asking for|(?:has|have) asked|requested|"
                        r"wants? (?:a|an|the|to|more|another)|would like|'d like)\b",
                        re.IGNORECASE)
_GRANT = re.compile(r"^(?:(?:okay|ok|fine|alright|all right|yes|yeah|sure|right|go on)[,.]?"
                    r"\s+)+(?:then,?\s+)?(?:give|let|allow|offer) (?:them|him|her|us)\b"
                    r"|^(?:(?:okay|ok|fine|alright|all right|yes|yeah|sure)[,.]?\s+)?"
                    r"(?:they|he|she) can have (?:it|that|one|them|the)\b", re.IGNORECASE)


def _in_reply(text: str, prev: str) -> tuple[str, str]:
    """What ``text``, said right after ``prev`` and cued as nothing alone, is as its reply:
    an agreement to a proposal is a decision (the proposal with it when the reply alone
    says nothing: "I'd rather wait. Agreed."), so is a request granted ("They asked for
    a late checkout." "Okay, give them until one."), and an answer naming one of the options of
    a choice question ("Glasgow or Edinburgh?" "Edinburgh, the venue is bigger.") is
    the choice made. ``("", text)`` otherwise."""
    if text.rstrip().endswith("?"):
        return "", text
    if _GRANT.match(text) and _ASKED_FOR.search(prev) and not prev.rstrip().endswith("?"):
        return "decisions", f"{prev} {text}"
    if _PROPOSAL.search(prev):
        if prev.rstrip().endswith("?") and _AGREE_STRONG.match(text):
            # "How about the last Sunday in April?" "Works for me.": the proposal agreed
            return "decisions", f"{prev} {text}"
        if _AGREE_INSIDE.search(text) and not _AGREE_FIRST.match(text):
            # "Behind the shed, I'm happy with that.": the agreement closing the reply
            return "decisions", f"{prev} {text}"
        if (prev.rstrip().endswith("?") and _AGREE_FIRST.match(text)
                and len(words_in(text) & words_in(prev) - _AGREE_WORDS) >= 1):
            # "How about behind the shed?" "Fine, behind the shed.": the proposal's own
            # words said back after an agreement
            return "decisions", text if len(words_in(text)) >= 4 else f"{prev} {text}"
        if _AGREE_JUDGED.match(text) and not prev.rstrip().endswith("?"):
            return "decisions", text if len(words_in(text)) >= 3 else f"{prev} {text}"
        if _AGREE_ALONE.match(text) and not _WEAK.match(text):
            return "decisions", f"{prev} {text}"
        if (_AGREE_FIRST.match(text) and len(words_in(text)) >= 3
                and not prev.rstrip().endswith("?")):
            return "decisions", text
    if _CHOICE_Q.search(prev):
        options = words_in(prev.split(",")[-1]) - _FUNCTION
        first = words_in(" ".join(re.split(r"[,.;:]", text)[0].split()[:4])) - _FUNCTION
        if options & first and not _AGREE_ALONE.match(text) and not _UNKNOWN.match(text):
            return "decisions", text
    return "", text


#: Words of three letters or more that name no option ("The mill hasn't told us." names
#: none of "Paper sacks, or is everything going to plastic?").
_FUNCTION = frozenset(("the", "and", "but", "for", "are", "was", "were", "you", "your", "our",
                       "they", "them", "their", "his", "her", "its", "this", "that", "these",
                       "those", "with", "not", "all", "any", "has", "have", "had", "will",
                       "would", "can", "could", "should", "shall", "may", "might", "must",
                       "does", "did", "what", "which", "who", "how", "why", "when", "where",
                       "there", "then", "just", "yet", "too", "very", "also", "from", "into"))


def _repeats(item: str, sentence: str) -> bool:
    """Whether the model's ``item`` says what ``sentence`` says (most of its content
    words are the sentence's)."""
    mine, theirs = words_in(item), words_in(sentence)
    return bool(mine) and len(mine & theirs) * 3 >= len(mine) * 2


def _covers(item: str, sentence: str) -> bool:
    """Whether ``item`` keeps most of what ``sentence`` says (three in four of its
    content words), not just a piece of it."""
    mine, theirs = words_in(item), words_in(sentence)
    return len(mine & theirs) * 4 >= len(theirs) * 3


def _loops(text: str) -> bool:
    """Whether the model's item says one clause twice ("We met; we met"): a small model
    looping, not something said."""
    parts = [normalize(p) for p in re.split(r"[;.!?]", text) if normalize(p)]
    return len(parts) != len(set(parts))


#: What a sentence with a verb has: a subject pronoun, an auxiliary or a copula ("The
#: church, surely." has none: a thing named).
_FINITE = re.compile(r"\b(?:I|we|you|he|she|they|it|is|are|was|were|am|be|been|have|has|had|"
                     r"do|does|did|will|would|can|could|should|shall|may|might|must|"
                     r"\w+'(?:s|re|ve|ll|d|m)|\w+n't|"
                     # a story's verb in the past: "Biscuit refused to get out of the car."
                     r"got|went|came|made|took|gave|ran|saw|said|left|told|thought|brought|"
                     r"bought|lost|won|fell|broke|sold|paid|spent|sent|found|felt|stood|sat|"
                     r"refused|happened|arrived|started|finished|tried|turned|seemed|"
                     r"tangled|squeezed|wanted|needed|asked|worked|looked|moved|called)\b",
                     re.IGNORECASE)
#: A hedge around a thing named: "The barn, I reckon.", "I think the blue one."
_HEDGE = re.compile(r"\bI (?:reckon|think|guess|suppose|'d say|would say)\b", re.IGNORECASE)


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?") or bool(_WH.match(text.strip()))

#: A reply that says the sentence before asked what nobody knows: "Good question.", "I
#: honestly don't know.", "No idea." (the sentence before is an open question, whatever
#: Whisper made of its words and its question mark).
_UNKNOWN = re.compile(r"^(?:[\w']+,\s+){0,2}(?:good question|(?:(?:I've|I have|we've|we have) )?"
                      r"no idea|(?:that's|that is|it's) "
                      r"(?:the|a) (?:\w+ )?question|(?:I )?(?:\w+ )?"
                      r"(?:don't|do not) know|nobody knows|no one knows|who knows|not a clue|"
                      r"no clue|(?:I'm|I am) not sure|not sure|not a word|no word|no news|"
                      r"nothing yet)\b", re.IGNORECASE)
#: A question that only asks the room about the sentence before it: "Does anyone know?",
#: "Has anyone heard?", "Any ideas?" (what is asked is that sentence).
_ASKS_ROOM = re.compile(r"^(?:[\w']+,\s+)?(?:(?:does|do|did) (?:anyone|anybody|any of you|we) "
                        r"know|(?:has|have) (?:anyone|anybody|any of you) heard|any (?:ideas|"
                        r"thoughts)|anyone|anybody|any idea|(?:are|do|will|can|should|shall|"
                        r"would) we)\s*\?$", re.IGNORECASE)
#: A decision announced, said in the sentence after it: "Let's set a limit." "Never more
#: than four dogs a walk."; "Then here's the rule from now on." "The kiln is fired..."
_ANNOUNCE = re.compile(r"^(?:[\w']+[,.]\s+)?(?:(?:then|so|right|okay|ok|well),?\s+)?(?:"
                       r"(?:here's|here is) (?:the|my|our|what) (?:\w+ )?(?:rule|plan|deal|idea|"
                       r"proposal|thing|policy|suggestion|propose|suggest)\b|let(?:'s| us) (?:set|"
                       r"make|have|agree on|put in) (?:a|some|one|the) (?:\w+ )?(?:limit|rule|cap|"
                       r"ceiling|maximum|minimum)s?\b)[^.?!]*[.!:]?$", re.IGNORECASE)
#: A choice short enough to need what it chose: "Thursday at noon it is."
_SHORT_CHOICE_WORDS = 6
#: A reply that answers a yes-or-no question: "No, it's still leaking." (not "No idea.").
_ANSWER = re.compile(r"^(?:no|nope|not yet|yes|yeah|yep|it is|it's not|they have|they haven't)"
                     r"[,.]\s+\S", re.IGNORECASE)
#: A reply acknowledging what was asked of the speaker, before the commitment: "You're
#: right, I've been putting it off." "I'll draw it up tonight."
_ACK = re.compile(r"^(?:you're right|you are right|fair enough|good point|true|that's true|"
                  r"point taken|I know|I know, I know)\b", re.IGNORECASE)


#: A question asking who will do something, and a reply that volunteers: "Who can take
#: the minutes?" "Me." / "I will." / "I can do that."
_WHO_DOES = re.compile(r"^(?:[\w']+,\s+){0,2}who(?:'s| is| will| can| could| wants to|'ll| "
                       r"would)\b[^?]*\?$", re.IGNORECASE)
_VOLUNTEER = re.compile(r"^(?:(?:oh|ok|okay|yes|yeah|well),?\s+)?(?:me|I will|I can|I'll|"
                        r"I could|that'll be me|that's me|I'll do it|I'm happy to|happy to)\b"
                        r"(?! not\b| never\b)", re.IGNORECASE)


#: A choice undone: "Scrap Sundays.", "OK, drop the second van." (the thing dropped).
_UNDO = re.compile(r"^(?:[\w']+(?: [\w']+){0,3}[,.]\s+)?(?:(?:and|so|then|just)\s+)?"
                   r"(?:drop|skip|scrap|ditch|cancel|forget(?: about)?)\s+(?:the\s+)?"
                   r"([\w'-]+)", re.IGNORECASE)
_NOT_THING = frozenset(("that", "this", "those", "these", "them", "all", "any", "one"))


#: A choice just made, ruled out: "Ah, that rules it out.", "Scrap that.", "That won't
#: work." (the last decision, said a few sentences before, is no decision).
_RULED_OUT = re.compile(r"\b(?:(?:that|this) rules (?:it|that|this|them) out|(?<!n't )(?<!not )"
                        # "That rules it out.", "I'd rule it out then."
                        r"rules? (?:it|that) out|scrap that|forget that|(?:that|it) won't "
                        r"work|(?:that|it) "
                        r"doesn't work|that's a no[- ]go)\b", re.IGNORECASE)
#: How many sentences back a choice may be ruled out.
_RULED_OUT_WITHIN = 4


def _undone(text: str, earlier: list[str]) -> list[str]:
    """``earlier`` decisions without those the decision ``text`` undoes ("Then we meet on
    Mondays and Sundays." ... "Scrap Sundays."): only the final choice counts."""
    m = _UNDO.match(text)
    thing = normalize(m.group(1)) if m else ""
    if len(thing) < 3 or thing in _NOT_THING:
        return earlier
    stem = thing.removesuffix("s")
    return [d for d in earlier if not any(w.removesuffix("s") == stem for w in words_in(d))]


#: A reply that opens with a yes, and a question that asks for more than a yes or no.
_YES = re.compile(r"^(?:(?:actually|well|oh)[,.]?\s+)?(?:yes|yeah|yep|agreed|sure)\b",
                  re.IGNORECASE)
#: A question a choice answers: "Where are we holding it?", "Which van do we take?"
_WHICH = re.compile(r"^(?:[\w']+,\s+)?(?:what|when|where|which|how many|how much)\b",
                    re.IGNORECASE)
_WH_WORD = re.compile(r"^(?:[\w']+,\s+)?(?:who|what|when|where|why|how|which|whose)\b",
                      re.IGNORECASE)


#: A task's acceptance, opening a reply ("Sure, I'll get that out by Friday."), or a
#: short one alone ("Happy to."): the task asked for just before, not a task of its own.
_ACCEPTS = re.compile(r"^(?:yes|yeah|yep|sure|ok|okay|of course|no problem|will do|"
                      r"absolutely|definitely|certainly|happy to|fine|"
                      # "Monday is fine.": the time asked for, accepted
                      r"[\w'-]+ (?:is|'s) fine(?: by me)?)[,.!]?(?:\s+|$)",
                      re.IGNORECASE)


#: A commitment opening a reply: "I'll try her office straight after this."
_ANSWERS = re.compile(r"^(?:(?:and|so|ok|okay|well|right),?\s+)?I(?:'ll| will|'m going to| am "
                      r"going to)\b(?! (?:be|see|say|never|not|let|talk|miss)\b)", re.IGNORECASE)


#: A task taken on by its thing: "leave the posters with me", "the raffle is mine".
_TAKEN = re.compile(r"\bleave (?:it|that|this|them|the [\w-]+(?: [\w-]+)?) with me\b|\bis mine\b"
                    r"|\b(?:I'm|I am) on (?:it|that|this|the)\b", re.IGNORECASE)


def _continues(text: str, prev: str, before: str, last: str) -> str:
    """The action item ``last`` (the last one cued) with ``text`` added when ``text``, a
    commitment, only carries it on: the acceptance of the request before ("Callum, could
    you book the pitch?" "Yep, I'll call them Monday."), after a bare "Happy to." ("I'll
    laminate it."), or a second sentence of the same commitment ("I'll do that too. I'll
    send it out on Monday.", "Leave the posters with me. I'll have them up by Friday.").
    ``""`` when it is a task of its own."""
    if last.endswith(prev) and _ACCEPTS.match(text) and classify(prev) == "action_items" \
            and (prev.rstrip().endswith("?") or not _MINE.search(prev)):
        return f"{last} {text}"
    if (last.endswith(prev) and prev.rstrip().endswith("?") and _ANSWERS.match(text)
            and classify(prev) == "action_items"):
        # "Can you get one before six?" "I'll try her office straight after this.": the
        # request's answer, in the first person
        return f"{last} {text}"
    if (before and last.endswith(before) and ((_ACCEPTS.match(prev) and len(words_in(prev)) <= 3)
                                              or (_ACK.match(prev) and not classify(prev)))
            and classify(before) == "action_items" and (_REFERS.search(text)
                                                       or _ACCEPTS.match(text))):
        return f"{last} {prev} {text}"
    if (before and last.endswith(before) and classify(before) == "action_items"
            and re.search(r"\byou\b", before, re.IGNORECASE) and not classify(prev)
            and not prev.rstrip().endswith("?") and _ANSWERS.match(text)
            and _REFERS.search(text)):
        # "Priya, you need to renew the licence." "The letter came on Friday." "Right,
        # I'll get that done this week.": the request answered across a remark
        return f"{last} {text}"
    if (last.endswith(prev) and len(words_in(prev)) <= 6 and not prev.rstrip().endswith("?")
            and (_MINE.search(prev) or _TAKEN.search(prev)) and _REFERS.search(text)
            and _MINE.search(text)):
        return f"{last} {text}"
    return ""


#: What "we" do from now, said as a plain statement: "We hold the paper for the autumn."
_WE_DO = re.compile(r"^(?:so |then |and |ok,? |okay,? )?we (?!were|was|had|did|used|talked|"
                    r"tried|met|saw|went|got|need|should|could|might|can|don't|didn't|"
                    r"have|are|will|would)[a-z]+\b(?<!ed)", re.IGNORECASE)


def with_cues(result: CopilotCycleResult, lines: Sequence[str],
              before: Sequence[str] = ()) -> CopilotCycleResult:
    """``result`` with the cued sentences of ``lines`` added to their lists, after the
    model's items and unless one of those already says it; the model's one-word items
    dropped, and its "open questions" that are no questions, requests, or questions
    nobody asked in ``lines``. A cued commitment or decision
    that refers back ("I'll take that one") carries the sentence before it."""
    import msgspec

    cued: dict[str, list[str]] = {"decisions": [], "action_items": [], "open_questions": []}
    said = [line.strip() for line in (*before, *lines)]
    answered: set[str] = set()  # choice questions answered by a choice
    decided_at = -1  # the sentence the last cued decision ends with
    for n in range(len(before), len(said)):
        text = said[n]
        prev = said[n - 1] if n > 0 else ""
        kind = classify(text)
        if (not kind and _RULED_OUT.search(text) and cued["decisions"]
                and n - decided_at <= _RULED_OUT_WITHIN):
            cued["decisions"].pop()  # "Saturday suits me." ... "Ah, that rules it out."
            continue
        if not kind and prev and _WE_DO.match(text) and classify(prev) == "decisions" \
                and len(words_in(prev)) <= 4:
            # "Agreed, that settles it. We hold the paper for the autumn.": what the
            # marker settled is said after it; one item of the two
            if cued["decisions"] and cued["decisions"][-1].endswith(prev):
                cued["decisions"].pop()
            kind, text = "decisions", f"{prev} {text}"
        if not kind and prev:
            kind, text = _in_reply(text, prev)
            if kind and prev.rstrip().endswith("?"):  # a choice made, a proposal agreed
                answered.add(prev)
        bare = _ASKS_AGREEMENT.match(prev) is not None
        if not kind and prev and _ASKS_AGREEMENT.search(prev) and not text.endswith("?") \
                and (_AGREE_ALONE.match(text) or _AGREE_FIRST.match(text)
                     or _AGREE_STRONG.match(text)) \
                and (not bare or (n >= 2 and not said[n - 2].endswith("?")
                     and classify(said[n - 2]) in ("", "decisions"))):
            # "Anyone late pays a fine. Agreed?" "Agreed.": what was put to the room is
            # decided (with its sentence before when the question is bare; not a task
            # or a question, which a "Sure." only acknowledges)
            put = f"{said[n - 2]} {prev}" if bare else prev
            if bare and cued["decisions"] and cued["decisions"][-1] == said[n - 2]:
                cued["decisions"].pop()  # one item, put to the room and agreed
            kind, text = "decisions", f"{put} {text}"
            answered.add(prev)
        if not kind and n >= 2 and prev and len(words_in(prev)) <= 8 \
                and not classify(prev) and not _AGREE_FIRST.match(prev) \
                and not _AGREE_ALONE.match(prev):
            # the proposal two sentences back, its reason or a "please?" between:
            # "How about the garage? It's dry there." "Fine, the garage."
            kind, text = _in_reply(text, said[n - 2])
            if kind:
                answered.add(said[n - 2])
                if text.startswith(said[n - 2]):
                    text = f"{said[n - 2]} {prev}{text[len(said[n - 2]):]}"
        if prev and _WHO_DOES.match(prev) and _VOLUNTEER.match(text) \
                and kind in ("", "action_items"):
            # a volunteer: the task is the question's, and it is no longer open
            kind, text = "action_items", f"{prev} {text}"
            answered.add(prev)
        if (not kind and prev and _UNKNOWN.match(text) and not prev.endswith("?")
                and not _UNKNOWN.match(prev)
                and len(words_in(prev)) >= 4 and classify(prev) != "decisions"
                and not _MINE.search(prev)):
            # "Do we know yet whether the hall has a piano" (heard with no question
            # mark, or as anything) "Good question.": the sentence before is asked
            for found in cued.values():
                if found and found[-1].endswith(prev):
                    found.pop()
            kind, text = "open_questions", prev
        if kind == "open_questions" and prev and _ASKS_ROOM.match(text):
            if cued["open_questions"] and cued["open_questions"][-1] in said[max(0, n - 2):n]:
                continue  # "Nobody has told me whether X. Does anyone know?": one question
            if len(words_in(prev)) < 4 or classify(prev) not in ("", "open_questions"):
                continue  # "Are we?" after a remark: it asks nothing of its own
            text = f"{prev} {text}"
        if (prev and _ANNOUNCE.match(prev) and not text.endswith("?")
                and classify(text) in ("", "decisions", "action_items")):
            # the decision announced is this sentence: one item of the two
            if cued["decisions"] and cued["decisions"][-1] == prev:
                cued["decisions"].pop()
            kind, text = "decisions", f"{prev} {text}"
        carried = False  # a proposal carried already: the sentence before is not
        chose = words_in(text) - _AGREE_WORDS - _FUNCTION - {"it", "is", "then", "final"}
        if (kind == "decisions" and text == said[n] and chose and not _UNDO.match(text)
                and len(words_in(text)) <= _SHORT_CHOICE_WORDS
                and not _REFERS.search(re.sub(r",?\s*it is(?: then)?\s*[.!]?$", "", text))):
            # "I think we should stop advance orders on Thursday at noon." ... "Thursday at
            # noon it is.": a short choice carries the proposal it takes (every word it
            # chose is the proposal's), a few sentences back
            for m in range(n - 1, max(-1, n - 4), -1):
                if (_PROPOSAL.search(said[m]) and not said[m].endswith("?")
                        and chose <= words_in(said[m])
                        and len(words_in(said[m])) > len(words_in(text))):
                    text, carried = f"{said[m]} {text}", True
                    break
        if (prev.endswith("?") and _ANSWER.match(text) and not _UNKNOWN.match(text)
                and not _WH_WORD.match(prev) and prev in cued["open_questions"]):
            # "Is the coffee machine fixed yet?" "No, it's still leaking.": answered
            answered.add(prev)
        if not kind:
            continue
        if kind == "action_items" and cued["action_items"] and text == said[n]:
            longer = _continues(text, prev, said[n - 2] if n >= 2 else "",
                                cued["action_items"][-1])
            if longer:
                cued["action_items"][-1] = longer
                continue
        if kind == "decisions":
            cued["decisions"] = _undone(text, cued["decisions"])
        tail = _REQUEST_AFTER.search(text)
        if tail and kind == "decisions" and classify(tail.group(1)) == "action_items":
            cued["action_items"].append(text)  # a decision, then a task asked for
        elif tail and kind == "action_items" and classify(text[:tail.start()]) == "decisions":
            cued["decisions"].append(text)
        agreed = (kind == "action_items" and prev and not prev.endswith("?")
                  and _PROPOSAL.search(prev) is not None and not classify(prev)
                  and _AGREE_FIRST.match(text) is not None)
        if agreed:
            # "Let's give them the risotto." "Fine by me. Dev, can you get the stock on
            # for it?", heard as one sentence: the proposal agreed, and a request after
            cued["decisions"].append(prev)
        if (kind != "open_questions" and prev and prev not in text and not agreed
                and not carried
                and (_REFERS.search(text) or _BARE.match(text)) and len(words_in(prev)) >= 3
                and not _RULED_OUT.search(prev)
                and not any(item.endswith(prev) and item != prev
                            for item in cued[kind][-1:])):
            # (not when the sentence before is in an item with its own sentence before:
            # one item per sentence said, not a chain of them)
            text = f"{prev} {text}"
            if (kind == "action_items" and n >= 2 and _ADDRESS.match(prev) and not classify(prev)
                    and not said[n - 2].endswith("?") and not classify(said[n - 2])):
                # "We're down to forty boxes." "Nina, you know the supplier." "Order
                # another two hundred, would you?": the thing is said before the address
                text = f"{said[n - 2]} {text}"
        if (kind != "open_questions" and prev and text.startswith(prev) and cued[kind]
                and cued[kind][-1] == prev):  # one item, said in two
            cued[kind].pop()
        if (kind == "decisions" and prev and text.startswith(prev) and cued["action_items"]
                and cued["action_items"][-1] == prev and _PROPOSAL.search(prev)):
            # "We should cap it at three." "Three it is.": the proposal, decided, was no
            # task
            cued["action_items"].pop()
        if kind == "decisions":
            decided_at = n
            if (prev.endswith("?") and _YES.match(text) and not _WH_WORD.match(prev)
                    and classify(prev) == "open_questions"):
                # "Prices stay as they are, same as last year?" "Yes, let's leave them
                # as they are.": the question put is answered by the decision
                answered.add(prev)
            asked_at = [m for m in (n - 1, n - 2, n - 3) if m >= 0 and said[m].endswith("?")]
            if asked_at and _WHICH.match(said[asked_at[0]]) and not _YES.match(said[n]):
                # "First, where are we holding it?" "The hall is free." "So is the
                # church." "The church, surely.": the question is answered by the choice
                # (a "yes" answers no what-question: it agrees to something else)
                answered.add(said[asked_at[0]])
        cued[kind].append(text)
    cued["open_questions"] = [q for q in cued["open_questions"] if q not in answered]

    asked = [line for line in lines if line.strip() not in answered
             and (line.rstrip().endswith("?") or classify(line) == "open_questions")]

    def heard_asked(text: str) -> bool:
        """A question of the model's that was asked (not one it made up, and not a
        request, which is an action item)."""
        return (_is_question(text) and not _REQUEST.match(text.strip())
                and any(_repeats(text, line) for line in asked))

    def elsewhere(name: str, text: str) -> bool:
        """Whether the model's item ``text`` says a sentence the cues filed in another
        list, and none of this one: it was filed in the wrong list (the cued sentence is
        in the right one)."""
        return (not any(_repeats(text, s) for s in cued[name])
                and any(_repeats(text, s) for other, found in cued.items() if other != name
                        for s in found))

    asides = [line for line in lines if aside(line)]
    # the short answer to small talk ("Did anyone get caught in the rain?" "Soaked.")
    asides += [b for a, b in pairwise(lines)
               if a in asides and a.rstrip().endswith("?") and len(words_in(b)) <= 4
               and not classify(b)]

    def idle(text: str) -> bool:
        """Whether the model's item says a sentence that is no item (small talk, an
        agenda, a point put off) and nothing the cues found."""
        return (any(_repeats(text, s) for s in asides)
                and not any(_repeats(text, s) for found in cued.values() for s in found))

    def unread(name: str, text: str) -> bool:
        """Whether the model's decision or task only says again sentences that say no
        item ("The sound in there is lovely.", "We patched it last year."): not a reply
        that agrees ("Fine by me, eighty turkeys."), which may carry a choice, nor, for a
        decision, a thing named with no verb ("The church, surely."), nor, for a task,
        "I" and a verb in the present ("After service, I bring the supplier": Whisper
        may have lost its "'ll")."""
        said = [s for s in (*before, *lines) if _repeats(text, s)]
        return (bool(said) and not any(classify(s) or _AGREE_STRONG.match(s)
                                       or _AGREE_INSIDE.search(s)
                                       or (name == "action_items" and _PLAIN_VERB.match(s))
                                       or (name == "decisions"
                                           and not _FINITE.search(_HEDGE.sub("", s)))
                                       for s in said)
                and not any(_repeats(text, s) for found in cued.values() for s in found))

    def merged(name: str, model: tuple[str, ...]) -> tuple[str, ...]:
        kept = [t for t in model if len(words_in(t)) >= 2 and not elsewhere(name, t)
                and not idle(t) and (name == "open_questions" or not unread(name, t))
                and (name != "decisions" or not t.rstrip().endswith("?"))
                and not _loops(t)
                and (name != "open_questions" or heard_asked(t))]
        added = []
        for s in cued[name]:
            said = [i for i, t in enumerate(kept) if _repeats(t, s)]
            if not said:
                added.append(s)
            elif not any(_covers(kept[i], s) for i in said):
                # the model kept a piece of it ("The board settled at yesterday"): the
                # sentence says it whole, in its place
                kept[said[0]] = s
        return tuple(dict.fromkeys(kept + added))

    return msgspec.structs.replace(
        result, decisions=merged("decisions", result.decisions),
        action_items=merged("action_items", result.action_items),
        open_questions=merged("open_questions", result.open_questions),
        key_points=tuple(t for t in result.key_points
                         if len(words_in(t)) >= 2 and not _loops(t)))
