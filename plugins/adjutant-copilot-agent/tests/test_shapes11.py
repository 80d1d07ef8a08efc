"""The eleventh work's sentence shapes (held-out 11 and 12's misreadings and extras,
taught in other words): what one can remember or how someone is doing is no task;
waiting to see, looking again later, parking a point, going home are put off or closed;
a proposal by "what about a ..." and small talk about a trip are no open questions; a
limit "per X at most", a plan "off for the season", a rule "from this season", a
conclusion "then we're ..." are decisions; a need put to a name and "that's you" are
tasks; a question only asking the room ("Does anyone know?") asks the sentence before;
a yes-or-no question answered is no longer open; a commitment across an
acknowledgement or a remark joins the request it answers."""

from __future__ import annotations

import pytest

from adjutant_copilot_agent._classify import aside, classify
from adjutant_copilot_agent._cues import with_cues
from adjutant_hookspecs import CopilotCycleResult

ELEVENTH = [
    # no task: what one can remember or imagine, a state, waiting to see
    ("The hall has cost forty pounds for as long as I can remember.", ""),
    ("I can imagine the queue on opening day.", ""),
    ("Neither can I.", ""),
    ("Nor can I.", ""),
    ("The new puppy is doing fine, by the way.", ""),
    ("We'll just have to wait and see.", ""),
    ("I can collect the keys on Friday.", "action_items"),
    ("Dana is doing the leaflets.", "action_items"),
    # put off or closed: no decision, no task
    ("We can look at it again when the grant comes through.", ""),
    ("Let's not try to decide the menu tonight.", ""),
    ("Let's park the minibus for now.", ""),
    ("Right, let's call it a night.", ""),
    ("It's gone nine, so let's go home.", ""),
    ("So we should talk about the car park, because it was chaos.", ""),
    ("I wanted to talk about the rota first.", ""),
    # small talk, a proposal, a topic raised: no open question
    ("Jen, how was Lisbon?", ""),
    ("Did your son's band win the contest?", ""),
    ("Is everybody warm enough?", ""),
    ("What about a raffle at the interval?", ""),
    ("While we're on the garden, what about planting some herbs?", ""),
    ("Omar, you mentioned a second freezer?", ""),
    ("What about the budget?", "open_questions"),
    ("Who is going to lead the Sunday walk?", "open_questions"),
    # asked as a statement
    ("Nobody has managed to tell me whether the lease includes the garden.",
     "open_questions"),
    # a limit, a plan called off, a rule from a time, a conclusion
    ("Three bags per customer at most, and the rest go to the shelter.", "decisions"),
    ("The costs are ten pounds at most, I think.", ""),
    ("Then the summer barbecue is off for this year.", "decisions"),
    ("From this term, no phones in the workshop.", "decisions"),
    ("Then we're closing the side gate.", "decisions"),
    ("Then we're going to need more chairs.", "action_items"),
    # tasks: a need put to a name, a task pointed at someone, "still needs to"
    ("Rosa, we really need the float counted before Friday.", "action_items"),
    ("That's you, Kemal.", "action_items"),
    ("Someone still needs to ring the scout hut about the tables.", "action_items"),
    ("Then book the van today, Priti, and tell the driver.", "action_items"),
    ("Which is why I don't think we can open on Mondays.", ""),
]


@pytest.mark.parametrize(("said", "kind"), ELEVENTH)
def test_each_sentence_lands_in_its_list(said: str, kind: str) -> None:
    assert classify(said) == kind


def test_put_off_closed_and_proposed_sentences_are_asides() -> None:
    for said in ("We can look at it again when the grant comes through.",
                 "Right, let's call it a night.", "What about a raffle at the interval?",
                 "Jen, how was Lisbon?"):
        assert aside(said), said


def test_a_question_asking_the_room_asks_the_sentence_before() -> None:
    said = ["The insurance might not cover the marquee this year.", "Does anyone know?"]
    assert with_cues(CopilotCycleResult(), said).open_questions == (" ".join(said),)
    # said as a question already: one item, not two
    said = ["Nobody has managed to tell me whether the lease includes the garden.",
            "Has anyone heard?"]
    assert with_cues(CopilotCycleResult(), said).open_questions == (said[0],)


def test_a_yes_or_no_question_answered_is_no_longer_open() -> None:
    said = ["Is the boiler fixed yet?", "No, the part comes on Monday."]
    assert with_cues(CopilotCycleResult(), said).open_questions == ()
    # "No idea." and "Not a word." answer nothing; a what-question stays open
    for reply in ("No idea.", "Not a word, sadly."):
        said = ["Has the council replied yet?", reply]
        assert with_cues(CopilotCycleResult(), said).open_questions == (said[0],)
    said = ["What will the council say?", "No, nothing yet."]
    assert with_cues(CopilotCycleResult(), said).open_questions == (said[0],)


def test_a_commitment_across_an_acknowledgement_joins_the_request() -> None:
    said = ["Ben, we really need the rota for the bank holiday.",
            "Fair enough, I keep forgetting it.", "I'll write it up tonight."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)


def test_a_commitment_across_a_remark_joins_the_request_it_answers() -> None:
    said = ["And Li, you need to renew the alcohol licence before June.",
            "The council wrote last week.", "Right, I'll get that sorted on Monday."]
    assert with_cues(CopilotCycleResult(), said).action_items == (
        f"{said[0]} {said[2]}",)
    # a commitment of its own after a remark stays its own
    said = ["And Li, you need to renew the alcohol licence before June.",
            "The council wrote last week.", "I'll email the brewery on Monday."]
    assert with_cues(CopilotCycleResult(), said).action_items == (said[0], said[2])


def test_a_need_then_that_is_you_is_one_task() -> None:
    said = ["Somebody still needs to book the hall for the quiz.", "That's you, Tom."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)
