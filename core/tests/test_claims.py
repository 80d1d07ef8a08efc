"""An answer in words never says an order was carried out: words change nothing.
"stash my changes" had been answered "Stashed your changes." with nothing done."""

from __future__ import annotations

import pytest

from adjutant.operator._claims import claims_done
from adjutant.operator._prompting import NOTHING_DONE
from adjutant.testing import Harness, ScriptedProvider
from adjutant_hookspecs import Response

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("answer", "request_", "claims"), [
    ("Stashed your changes.", "stash my changes", True),
    ("Stashed changes.", "stash my changes", True),  # as `adjutant run` answered it
    ("The tmp folder has been deleted.", "delete the tmp folder", True),
    ("Done!", "restart the web server", True),
    ("I have pushed the branch.", "push my branch", True),
    ("OK, done.", "clean the build folder", True),
    ("Paris", "what's the capital of France?", False),  # a question: words answer it
    ("Deleted files go to the trash.", "where do deleted files go?", False),
    ("Rebased branches rewrite history.", "explain rebase vs merge", False),  # words asked
    ("You can run git stash.", "stash my changes", False),  # says how, not that it did
    ("Committed.", "commit my work", True),  # a doubled consonant
    ("Deleted it all!", "delete the logs", True),
    ("Answered here.", "summarize this: lorem ipsum", False),  # not the verb asked
    ("reviewed", "review this", False),  # words can review (the dock test's reply)
    ("Installed packages are listed by pip list, which prints each with its version.",
     "list my packages", False),  # a long answer opening with a participle
    # an order to reach people: any answer in words reached nobody (heldout17, after its
    # run: "Please text your volunteers that Saturday's shift moved to 10am.")
    ("Please text your volunteers that Saturday's shift moved to 10am.",
     "Please text my volunteers that Saturday's shift moved to 10am.", True),
    ("Hi all, practice is off today.", "email the parents that practice is off", True),
    ("Draft: practice is off today.", "write me a note for the parents", False),
    # names of files in the claim (no tool renames: it had been shown as done)
    ("Renamed notes.txt to Notes.txt.", "rename notes.txt to Notes.txt", True),
])
def test_words_saying_an_order_was_carried_out_are_a_claim(answer: str, request_: str,
                                                           claims: bool) -> None:
    assert claims_done(answer, request_) is claims


async def test_the_user_is_told_nothing_was_done_and_what_to_say_instead() -> None:
    provider = ScriptedProvider(Response(text="Stashed your changes."))
    async with Harness(provider=provider) as h:
        outcome = await h.run("stash my changes")
    assert outcome.status == "answered" and outcome.text == NOTHING_DONE
    assert "Nothing was done" in outcome.text and "run" in outcome.text
