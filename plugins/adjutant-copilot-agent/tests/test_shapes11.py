"""The eleventh work's sentence shapes (held-out 11 and 12's misreadings and extras,
taught in other words): what one can remember or how someone is doing is no task;
waiting to see, looking again later, parking a point, going home are put off or closed;
a proposal by "what about a ..." and small talk about a trip are no open questions; a
limit "per X at most", a plan "off for the season", a rule "from this season", a
conclusion "then we're ..." are decisions; a need put to a name and "that's you" are
tasks; a question only asking the room ("Does anyone know?") asks the sentence before;
a yes-or-no question answered is no longer open; a commitment across an
acknowledgement or a remark joins the request it answers. Held-out 13 and 14's, after
their blind run: a decision announced ("Let's set a limit.") is the sentence after it; a
short choice carries the proposal whose words it takes; rules for a season, caps of N,
"not more than N", ", full stop"; a need said as a cleft and an order closed by
"please" are tasks; "we can/could" is a possibility, "I should have" a past; put off by
"let's see how", "keep it in mind"; a question said as what someone "hasn't said" or
"came in asking"; a story's past verb is no decision of the model's."""

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
    # held-out 13 and 14's shapes, in other words
    ("Then in that case, no bonfire this year.", "decisions"),
    ("I'd like a strict cap of forty tickets a night.", "decisions"),
    ("Not more than twelve.", "decisions"),
    ("Never more than two trays in the oven at once.", "decisions"),
    ("After that, we stop selling raffle tickets, full stop.", "decisions"),
    ("No problem this year.", ""),
    ("We could always hire a second van.", ""),
    ("We can either paint it or sand it.", ""),
    ("I ate far more than I should have.", ""),
    ("Yusuf can do the posters.", "action_items"),
    ("What I really need is someone to count the float.", "action_items"),
    ("What we need is a bigger hall.", ""),
    ("What I want to know is whether the hall has a piano.", "open_questions"),
    ("Clean the yard before the vet comes, please.", "action_items"),
    ("When you get a moment, ring the farrier.", "action_items"),
    ("Two sugars, please.", ""),
    ("Let's see how the first week goes.", ""),
    ("Fine, let's keep it in mind.", ""),
    ("Right, I'd better head off.", ""),
    ("The landlord still hasn't told us whether the rent goes up.", "open_questions"),
    ("A parent rang in asking if the trip is still on.", "open_questions"),
    ("Which brings me to the raffle.", ""),
    ("Lena, how was your sister's graduation?", ""),
    ("Did anyone get out on the bikes this weekend?", ""),
    ("What do you both reckon?", ""),
    ("Just a thought, what if we ran it on a Sunday?", ""),
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


def test_a_decision_announced_is_the_sentence_after_it() -> None:
    said = ["Then here's the rule from now on.",
            "Bikes stay outside the hall, whoever is on duty."]
    assert with_cues(CopilotCycleResult(), said).decisions == (" ".join(said),)
    said = ["Let's set a limit.", "Six puppies a class, whichever of us is teaching it."]
    got = with_cues(CopilotCycleResult(), said)
    assert got.decisions == (" ".join(said),) and got.action_items == ()
    # a question after it is asked, not announced
    said = ["Let's set a limit.", "How many can the hall hold?"]
    assert with_cues(CopilotCycleResult(), said).open_questions == (said[1],)


def test_a_short_choice_carries_the_proposal_it_takes() -> None:
    said = ["I think we should close the orders on Friday at six.",
            "Last year we were still baking at midnight.", "Friday at six it is."]
    assert with_cues(CopilotCycleResult(), said).decisions == (f"{said[0]} {said[2]}",)
    # a choice of something else than proposed carries no proposal
    said = ["I think we should close the orders on Friday at six.",
            "Last year we were still baking at midnight.", "Saturday at six it is."]
    assert not with_cues(CopilotCycleResult(), said).decisions[-1].startswith(said[0])


def test_the_models_story_in_the_past_is_no_decision() -> None:
    said = ["The delivery van broke down on the bypass.", "Three boxes got soaked."]
    got = with_cues(CopilotCycleResult(decisions=("The delivery van broke down on the bypass",
                                                  "Three boxes got soaked")), said)
    assert got.decisions == ()
