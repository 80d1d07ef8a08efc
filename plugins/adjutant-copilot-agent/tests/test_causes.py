"""The bench's breakdown of the recall's misses (``meeting.causes``): each scripted item
missed in its own list is put down to the step that lost it, so the next change goes to
the biggest cause."""

from __future__ import annotations

import meeting

from adjutant_copilot_agent import CopilotState
from adjutant_copilot_agent._cues import classify
from adjutant_copilot_agent._state import Evidence, Item
from adjutant_hookspecs import TranscriptSegment

SAID = ["We decided to order the navy kit.",  # cued a decision, lost by the cycles
        "We decided Sam bakes the cake.",  # an action item the cues call a decision
        "The spare key was lost somewhere.",  # the model's key point, the script's question
        "Ann and the fence this weekend.",  # an action item nothing flags
        "Omar will print the programmes."]  # found


def _item(text: str) -> Item:
    return Item(text=text, evidence=Evidence(start_s=0, end_s=1), cycle_added=1)


def test_each_miss_is_put_down_to_the_step_that_lost_it() -> None:
    assert classify(SAID[3]) == ""  # (the premise of the cues-none row)
    state = CopilotState(
        transcript=tuple(TranscriptSegment(start_s=n, end_s=n + 1, text=t)
                         for n, t in enumerate(SAID)),
        key_points=(_item("The spare key was lost"),),
        action_items=(_item("Omar will print the programmes."),))
    script = meeting.Meeting(
        "test", {"A": "en-us"}, [("A", s) for s in SAID],
        decisions={"navy kit": [{"navy"}]},
        actions={"Sam bakes the cake": [{"cake"}], "Ann paints the fence": [{"fence"}],
                 "Omar prints the programmes": [{"programmes"}],
                 "Lee hires the van": [{"van"}]},
        questions={"where is the spare key": [{"spare", "key"}]})
    got = meeting.causes(state, script)
    assert got == {"hearing": ["action_items: Lee hires the van"],
                   "cues-none": ["action_items: Ann paints the fence"],
                   "cues-wrong": ["action_items: Sam bakes the cake"],
                   "filing": ["open_questions: where is the spare key"],
                   "merging": ["decisions: navy kit"]}
    assert set(got) == set(meeting.CAUSES)
