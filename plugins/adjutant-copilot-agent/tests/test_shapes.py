"""The ninth and tenth works' sentence shapes (held-out 6 to 8's misreadings and extras,
in other words): which list a sentence belongs in, and which sentences are no item at
all (small talk, an agenda, a point put off, a question asking only to confirm, a reply
accepting a task already listed, a statement of how things are)."""

from __future__ import annotations

import pytest

from adjutant_copilot_agent._classify import aside, classify
from adjutant_copilot_agent._cues import with_cues
from adjutant_hookspecs import CopilotCycleResult

NINTH = [
    # a choice with its object between: "let's switch X to Y"
    ("Let's switch the rehearsals to the church hall on Thursdays.", "decisions"),
    ("Okay, let's switch suppliers to the one in town.", "decisions"),
    # a proposal's choice by its speaker, with a choosing verb
    ("And I think we shut the cafe on New Year's Day.", "decisions"),
    ("So I reckon we hire a second van for the weekend.", "decisions"),
    ("I think we lost money on that.", ""),
    ("I think we spend too much on biscuits.", ""),
    # a verdict after a concession
    ("I wanted the whole week, but fine, Monday cancelled.", "decisions"),
    ("Fine, both sessions booked.", "decisions"),
    # a restriction agreed or set for now
    ("Yes, adults only for the late show.", "decisions"),
    ("Agreed, cash only at the gate.", "decisions"),
    ("I'd say walk-ins only this time, no bookings.", "decisions"),
    ("Yes, it's only fair.", ""),
    ("Yes, I only want the receipts.", ""),
    ("Yes, that only works in summer.", ""),
    # small talk, with a longer opener or an aside: no open question
    ("Before we start, did anyone watch the final on Sunday?", ""),
    ("Before I go on, did either of you get caught in the snow?", ""),
    ("Has anyone tried the new coffee machine yet?", ""),
    ("How was the quiz last night, Sam?", ""),
    ("Who drank the last of the milk, by the way?", ""),
    ("Has anyone heard back from the council?", "open_questions"),
    # a question asking only to confirm, or proposing: no open question
    ("Everyone's agreed?", ""),
    ("Are we all agreed?", ""),
    ("So, is everyone happy with that?", ""),
    ("What about the library on Fridays instead?", ""),
    ("How about the second week of May?", ""),
    ("What about the budget?", "open_questions"),
    ("How about the cost, who pays for it?", "open_questions"),
    # a point put off: no decision, no task; one taken on is a task
    ("We'll need to come back to that.", ""),
    ("Let's not decide that today.", ""),
    ("Let's think about it and come back to it next week.", ""),
    ("We should find out.", ""),
    ("I'll find out by Friday.", "action_items"),
    ("Let's not go with the cheaper one.", "decisions"),
    # an agenda said by "we": no task; a thing "we" need done is one
    ("Right, so we need to plan the summer fair properly.", ""),
    ("We need to go over the accounts first.", ""),
    ("We need to order more cups.", "action_items"),
    # a thing named, then its certainty (an answer to "where?", "which one?")
    ("The library, surely, the light in there is better.", "decisions"),
    ("The green tent, definitely.", "decisions"),
    ("Yes, definitely, go on.", ""),
    ("Well, surely, someone knows.", ""),
    ("The library, surely not.", ""),
    # a request to someone named about their own
    ("Sam, could your team cover the Friday shift?", "action_items"),
]


def test_a_reply_accepting_a_request_is_one_item_with_it() -> None:
    said = ["Priya, could you ring the caterers?", "Yep, I'll call them Tuesday morning."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)
    said = ["Tom, can you print the programmes?", "Happy to.",
            "I'll laminate the cover so it lasts."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)
    # "I'll do that too. I'll send it out on Monday.": one commitment said in two
    said = ["And someone needs to tell the parents about the new times.", "I'll do that too.",
            "I'll send it out on Monday."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)
    # a commitment of one's own after another's is a task of its own
    said = ["I'll book the hall.", "Sure, I'll bring the urn."]
    assert with_cues(CopilotCycleResult(), said).action_items == tuple(said)
    said = ["Tom, can you print the programmes?", "Sure.", "I'll book the coach."]
    assert with_cues(CopilotCycleResult(), said).action_items == (said[0], said[2])


def test_the_models_items_that_say_small_talk_or_an_agenda_are_dropped() -> None:
    said = ["Before we start, did anyone catch the match on Saturday?",
            "So we need to plan the open day properly this time.",
            "I'll email the school on Monday."]
    model = CopilotCycleResult(
        decisions=("we need to plan the open day properly",),
        action_items=("did anyone catch the match on Saturday", "email the school"),
    )
    got = with_cues(model, said)
    assert got.decisions == ()
    assert got.action_items == ("email the school",)
    # an item of the model's that says nothing set aside stays
    kept = with_cues(CopilotCycleResult(decisions=("the open day moves to June",)),
                     ["The open day moves to June."])
    assert kept.decisions == ("the open day moves to June",)


def test_aside_knows_the_shapes_and_not_a_commitment() -> None:
    assert aside("Before we start, did either of you see the eclipse?")
    assert aside("We'll come back to that.")
    assert not aside("I'll come back to that with the figures tomorrow.")
    assert not aside("We need to order more cups.")


def test_a_report_after_fine_is_no_verdict() -> None:
    assert classify("Fine, the room is booked.") == ""
    assert classify("Okay, Friday cancelled.") == "decisions"


def test_a_task_taken_then_timed_is_one_item() -> None:
    said = ["Sure, leave the flyers with me.", "I'll have them out by Thursday."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)
    # a time accepted for a request, then the commitment
    said = ["Ana, could you get the menu printed by Friday?", "Friday is fine.",
            "I'll print it at the library tomorrow."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)


def test_a_reply_judging_the_question_is_no_question_of_its_own() -> None:
    said = ["Do we open on the bank holiday, or stay shut?", "That's the big question.",
            "Nobody knows yet."]
    got = with_cues(CopilotCycleResult(), said)
    assert got.open_questions == (said[0],)
    # nor the choice of an option ("the" is in both)
    assert got.decisions == ()
    said = ["Can we print it, or do we wait for the proofs?", "That's the real question."]
    assert with_cues(CopilotCycleResult(), said).decisions == ()


def test_an_apology_after_a_word_is_no_order_to_a_name() -> None:
    assert classify("Guilty, sorry.") == ""
    assert classify("Late, sorry.") == ""
    assert classify("Maya, book the room.") == "action_items"


def test_news_after_an_aside_opener_and_the_answer_to_small_talk_are_no_items() -> None:
    assert aside("Before I forget, the boiler made that noise again this morning.")
    assert not aside("Before I forget, can you sign the card for Jo?")
    assert not aside("By the way, I'll send the photos round tonight.")
    said = ["Did anyone else get caught in the hail on the way in?", "Completely soaked.",
            "Right, the boiler is making that noise again."]
    model = CopilotCycleResult(decisions=("completely soaked",),
                               key_points=("the boiler is noisy",))
    assert with_cues(model, said).decisions == ()


def test_a_story_of_before_and_an_offer_are_no_items() -> None:
    assert aside("Last year we used the church car park and it flooded.")
    assert aside("We ran out of chairs two weeks ago.")
    # a decision or a commitment said with a time before is still one
    assert not aside("We agreed yesterday to close early on Fridays.")
    assert not aside("The order was short last week, so I'll ring the supplier.")
    assert classify("Shall I open the windows before everyone arrives?") == ""
    assert classify("Shall we start?") == ""
    model = CopilotCycleResult(decisions=("last year we used the church car park",))
    said = ["Last year we used the church car park and it flooded."]
    assert with_cues(model, said).decisions == ()


def test_the_models_items_that_only_say_a_statement_are_dropped() -> None:
    # the tenth work: a 0.5B model files what was said as a decision or a task whatever
    # it says; a sentence the cues read as no item (a fact, an opinion, a story, a
    # reason) is none in the model's list either
    said = ["Okay, the summer fete.", "The village green is free, but it floods.",
            "The marquee looked lovely last year.", "Bookings are already at forty stalls.",
            "I'll ring the council on Monday."]
    model = CopilotCycleResult(
        decisions=("The village green is free, but it floods", "bookings are already at 40 "
                   "stalls"),
        action_items=("The marquee looked lovely last year", "ring the council"),
    )
    got = with_cues(model, said)
    assert got.decisions == ()
    assert got.action_items == ("ring the council",)
    # (and the cues alone read none of those statements)
    assert with_cues(CopilotCycleResult(), said).decisions == ()
    # what the model says in its own words, or of a sentence the cues read, stays
    kept = with_cues(CopilotCycleResult(decisions=("fete on the green in July",),
                                        action_items=("I'll ring the council on Monday",)),
                     said)
    assert kept.decisions == ("fete on the green in July",)
    assert kept.action_items == ("I'll ring the council on Monday",)


def test_the_models_choice_in_an_agreement_or_a_thing_named_stays() -> None:
    # a reply that agrees may carry the choice ("Fine by me, sixty chairs."), and a
    # thing named with no verb is how a choice is said ("The barn, surely.")
    said = ["How many chairs do we hire?", "Fine by me, sixty chairs and no more."]
    got = with_cues(CopilotCycleResult(decisions=("Fine by me, sixty chairs",)), said)
    assert "Fine by me, sixty chairs" in got.decisions
    said = ["Where do we put the bar?", "The old barn, I reckon.", "It has the power points."]
    got = with_cues(CopilotCycleResult(decisions=("The old barn, I reckon",)), said)
    assert got.decisions and "barn" in got.decisions[0]
    # a statement is no thing named, in either list
    got = with_cues(CopilotCycleResult(decisions=("It has the power points",),
                                       action_items=("it has the power points",)), said)
    assert got.decisions == () and got.action_items == ()
    said = ["I missed the fireworks completely.", "I was asleep by ten."]
    got = with_cues(CopilotCycleResult(decisions=("I missed the fireworks completely",)), said)
    assert got.decisions == ()


TENTH = [
    # "X will/has to": a task of a person, not of a thing ("the bill will go up")
    ("Lovely, anyway, the water bill will go up again.", ""),
    ("Something has to go.", ""),
    ("Nothing will change until spring.", ""),
    ("Priya will send the minutes.", "action_items"),
    ("Someone has to ring the caterers.", "action_items"),
    # an order to a name takes its object: a list of capitalised words is none
    ("Characters, inn, tickets, I'd say ten pounds.", ""),
    ("Chairs, tables, cups, all borrowed.", ""),
    ("Sunita, print the menus.", "action_items"),
    ("And Leo, please set up the projector.", "action_items"),
    # "as it is" / "and it is" is no choice; "X it is" is
    ("The margins on the frames are thin as it is.", ""),
    ("The van is old and it is.", ""),
    ("Hollow Ridge it is.", "decisions"),
    ("Then the blue one it is.", "decisions"),
    # a shrug is no open question; asking who knows something is one
    ("The plumber comes on Tuesday, but who knows?", ""),
    ("Who knows?", ""),
    ("Who knows the alarm code?", "open_questions"),
    # a request after a clause of its own, or after a name Whisper wrote no comma for
    ("Leave it with me, and are you still happy to design the leaflet?", "action_items"),
    ("If the hall is booked, could someone ring the school?", "action_items"),
    ("Kofi can you sort out the window posters?", "action_items"),
    ("So what would you do?", "open_questions"),
    ("Okay, and when can you start?", "open_questions"),
    ("Where could you park the van?", "open_questions"),
    # a date moved to a month
    ("The open day moves to June.", "decisions"),
    # what "we" would have to do, as a consequence, a condition or a hedged proposal
    ("Otherwise we have to run the late shift every single time.", ""),
    ("If people want longer episodes, we should rethink the format.", ""),
    ("I think we should cap the dental slots at three a day.", ""),
    ("Maybe we could ask the school.", ""),
    ("If it rains, I'll bring the gazebo.", "action_items"),
    ("We need to order more cups before Friday.", "action_items"),
]


@pytest.mark.parametrize(("said", "kind"), NINTH + TENTH)
def test_each_sentence_lands_in_its_list(said: str, kind: str) -> None:
    """The ninth and tenth works' sentences, each in the list it belongs to ("" for no
    item at all)."""
    assert classify(said) == kind


def test_a_commitment_answering_a_request_is_one_item_with_it() -> None:
    said = ["Sam, can you get a quote from the printer before Friday?",
            "I'll ring them straight after this."]
    assert with_cues(CopilotCycleResult(), said).action_items == (" ".join(said),)
    # a commitment after a statement, or after a question that asks no task, is its own
    said = ["The printer is slow.", "I'll ring the printer on Monday."]
    assert with_cues(CopilotCycleResult(), said).action_items == (said[1],)
    said = ["Where is the printer?", "I'll find the printer on Monday."]
    assert with_cues(CopilotCycleResult(), said).action_items == (said[1],)


def test_a_question_answered_by_a_choice_is_no_longer_open() -> None:
    said = ["First, where do we hold the quiz?", "The pub has a back room.",
            "The library is free that night too.", "The library, definitely."]
    got = with_cues(CopilotCycleResult(), said)
    assert got.open_questions == ()
    assert len(got.decisions) == 1 and got.decisions[0].endswith("The library, definitely.")
    # a question further back, or one a choice does not answer, stays open
    said = ["Where do we hold the quiz?", "The pub has a back room.", "It is small.",
            "The library is free.", "Let's book the library."]
    assert with_cues(CopilotCycleResult(), said).open_questions == (said[0],)
    said = ["Why did the heating fail?", "Let's get it serviced."]
    assert with_cues(CopilotCycleResult(), said).open_questions == (said[0],)
    # the model's decision that is a question is none
    said = ["So, which night do we play?", "Friday suits most people."]
    got = with_cues(CopilotCycleResult(decisions=("which night do we play?",)), said)
    assert got.decisions == ()


def test_a_choice_ruled_out_in_other_words_and_an_answer_naming_no_option() -> None:
    said = ["Saturday suits me.", "Low tide is at noon on Saturday.", "I'd rule it out then."]
    assert with_cues(CopilotCycleResult(), said).decisions == ()
    said = ["Saturday suits me.", "We can't rule it out."]
    assert with_cues(CopilotCycleResult(), said).decisions == (said[0],)
    # "the" is in the question and the reply: no option named, no choice made
    said = ["Are you keeping the paper sacks, or is everything going to plastic?",
            "Honestly, I don't know.", "The mill hasn't told us yet."]
    got = with_cues(CopilotCycleResult(), said)
    assert got.decisions == ()
    assert got.open_questions == (said[0],)
    said = ["Paper sacks or plastic ones?", "Paper, the bakers prefer it."]
    assert with_cues(CopilotCycleResult(), said).decisions == (" ".join(said),)


def test_the_models_task_for_i_and_a_plain_verb_stays() -> None:
    # "After service I'll ring the supplier", heard without its "'ll": the cues read no
    # time, the model's task stays; a story in the past does not
    said = ["After service, I bring the fish supplier and ask for a credit."]
    model = CopilotCycleResult(action_items=("ring the fish supplier and ask for a credit",))
    assert with_cues(model, said).action_items == model.action_items
    said = ["I missed it completely, I wanna sleep by ten."]
    model = CopilotCycleResult(action_items=("I missed it completely, I wanna sleep by ten",))
    assert with_cues(model, said).action_items == ()
