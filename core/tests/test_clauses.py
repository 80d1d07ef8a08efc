"""Requests of several steps ("do X and then Y") are planned clause by clause: a small
model plans one step well and rarely writes the second."""

from __future__ import annotations

from typing import Any

import pytest

from adjutant.operator._clauses import clauses, one_ask, refers_back, the_ask
from adjutant.testing import (
    FakeRead,
    FakeWrite,
    Harness,
    ScriptedApprover,
    ScriptedProvider,
    fake_tools,
)
from adjutant.testing import plan as steps
from adjutant_hookspecs import Plan, Response, ToolCall

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("request_", "expected"), [
    ("show git status and then the diff", ["show git status", "show the diff"]),
    ("read notes.txt and then append 'call mom' to it",
     ["read notes.txt", "append 'call mom' to notes.txt"]),
    ("search for TODO and zip the src folder", ["search for TODO", "zip the src folder"]),
    ("create branch feature/x, write a.md; then commit everything",
     ["create branch feature/x", "write a.md", "commit everything"]),
    # a new sentence opening with a verb or "also", "after that", "and", "finally"
    ("is port 8000 taken? also show me the top processes",
     ["is port 8000 taken?", "show me the top processes"]),
    ("what changed since develop? and give me the last 3 commits",
     ["what changed since develop?", "give me the last 3 commits"]),
    ("how much memory is free? after that run make", ["how much memory is free?", "run make"]),
    ("open a.log, and after that show me b.py", ["open a.log", "show me b.py"]),
    ("show the log and after that diff b.py again", ["show the log", "diff b.py again"]),
    ("summarize the PDFs now, and also schedule that weekly",
     ["summarize the PDFs now", "schedule that weekly"]),
    ("status first, then commit a.txt as 'x', and finally show the log",
     ["status first", "commit a.txt as 'x'", "show the log"]),
    # an apostrophe quotes nothing: "what's ... 'Bump version'" had been one quote
    ("show me what's staged and then commit it with the message 'Bump version'",
     ["show me what's staged", "commit it with the message 'Bump version'"]),
    ("don't touch a.txt, then list src", ["don't touch a.txt", "list src"]),
    # a question asks a second thing after a comma: an order or another question
    ("what's the status, and show me the staged diff too",
     ["what's the status", "show me the staged diff too"]),
    ("which branch am I on, and is anything staged?",
     ["which branch am I on", "is anything staged?"]),
    ("how much memory is free, and whats using the most of it? top 3",
     ["how much memory is free", "whats using the most of it? top 3"]),
    # a polite question's mark ends the order after it, no question of its own
    ("could you read todo.md and then add '- release 1.0' to the end of it?",
     ["could you read todo.md", "add '- release 1.0' to the end of todo.md"]),
    ("show me what's under docs, then pack that folder into docs.zip",
     ["show me what's under docs", "pack that folder into docs.zip"]),
    ("read the README and put how to run it into the notes",
     ["read the README", "put how to run it into the notes"]),
    # "+" joins two orders as "and" does; a schedule of "the same thing" repeats the
    # clause before
    ("switch to develop + show me last 5 commits pls",
     ["switch to develop", "show me last 5 commits pls"]),
    ("summarize the PDFs now, and also schedule the same thing every Monday at 9",
     ["summarize the PDFs now", "schedule summarize the PDFs every Monday at 9"]),
    # a change naming no file acts on the one named before
    ("show me src/util.py, make average return 0 for an empty list, then run pytest",
     ["show me src/util.py", "make average return 0 for an empty list in src/util.py",
      "run pytest"]),
    # "it" in a second question is the thing named in the first (heldout11, after its
    # blind run: the diff had been of nothing)
    ("what's the log of release/1.0, and how does my working tree differ from it?",
     ["what's the log of release/1.0", "how does my working tree differ from release/1.0?"]),
    # a question, then what to do if its answer is yes
    ("Are there any PDFs here? If so summarize all of them.",
     ["Are there any PDFs here?", "summarize all of them"]),
    ("is port 8000 taken? if so, show the processes", ["is port 8000 taken?",
                                                       "show the processes"]),
    # a second question after a word that adds (heldout14, after its blind run: the
    # process list had been dropped)
    ("Is anything bound to port 5432? Also, is there a postgres process of mine running?",
     ["Is anything bound to port 5432?", "is there a postgres process of mine running?"]),
    # a first clause naming a path is no scene (the scene rule had merged these two, and
    # dropped a step of each, on the tuning set in stop 45)
    ("on a new branch docs/guide, add a line to docs/guide.md and commit it",
     ["on a new branch docs/guide", "add a line to docs/guide.md", "commit docs/guide.md"]),
    # "first" opens an order, it is no scene before one
    ("first check git status, then show me the last 3 commits",
     ["first check git status", "show me the last 3 commits"]),
    # "both of them" are the files named before (heldout13, after stop 45's run: a zip
    # of "notes")
    ("Compare notes.old with notes.txt, then zip both of them into notes.zip.",
     ["Compare notes.old with notes.txt", "zip notes.old and notes.txt into notes.zip"]),
    # "it" is the file written, not a path inside the text written (heldout14, after
    # its blind run: the commit had been of config/settings.json)
    ("Write docs/faq.md with 'Q: where are settings? A: config/settings.json', then "
     "commit it as 'docs: add faq'",
     ["Write docs/faq.md with 'Q: where are settings? A: config/settings.json'",
      "commit docs/faq.md as 'docs: add faq'"]),
    # the step before, on a schedule (heldout15, after its run: only the schedule)
    ("Summarize the PDFs here right now, and also set that up to happen every Monday "
     "at 9am.", ["Summarize the PDFs here right now",
                 "schedule Summarize the PDFs here every Monday at 9am"]),
    ("zip the logs, then do it again every night at 11pm",
     ["zip the logs", "schedule zip the logs every night at 11pm"]),
    # a verb one typing slip off; a command named, no scene (heldout15, after its run:
    # the switch, then what is staged, had been lost)
    ("swtich to develop and show me the last 5 commits there",  # the verb mended
     ["switch to develop", "show me the last 5 commits there"]),
    # a letter left out of a short verb (heldout37, after its run: the diff lost)
    ("chek git status and then show me the unstaged diff",
     ["check git status", "show me the unstaged diff"]),
    # "set" opens its own step (heldout39, after its run: the branch was lost; heldout3's
    # "read set debug to true" before)
    ("read config/settings.json, then set debug to true in it",
     ["read config/settings.json", "set debug to true in config/settings.json"]),
    ("Make a branch feature/fair, set debug to true in config/settings.json, and commit it",
     ["Make a branch feature/fair", "set debug to true in config/settings.json",
      "commit config/settings.json"]),
    # a git command opens its own step, and lends no verb to the next; two things
    # weighed are one question (heldout41, after its run)
    ("git status, then the staged diff", ["git status", "the staged diff"]),
    # "put me on" a branch is a switch (heldout41,
    # after its run: a zip of "git/status", a commit "put me on release/1.0")
    ("zip src, docs and README.md into street-food-van.zip, then git status",
     ["zip src and docs and README.md into street-food-van.zip", "git status"]),
    ("Create a branch 'kites' off develop without switching to it, and then put me on "
     "release/1.0.", ["Create a branch 'kites' off develop without switching to it",
                      "switch to release/1.0"]),
    # going over to a branch is a switch (heldout39, after its run: "create go over to
    # develop" had borrowed the verb before)
    ("create the branch archive/old-notes without switching to it, then go over to develop",
     ["create the branch archive/old-notes without switching to it",
      "switch to develop"]),
    ("first git status, then what's staged", ["first git status", "what's staged"]),
    # an order, then a question of its own; a schedule, then an order (heldout18, after
    # its run: the second step had been lost, the schedule taken for a scene)
    ("show the status and finally commit it as wip", ["show the status", "commit it as wip"]),
    ("show my top 3 cpu processes and also how loaded the cpu is overall",
     ["show my top 3 cpu processes", "show how loaded the cpu is overall"]),
    # "it" after a file the clause names is that file; text added "at the end" of no
    # file named goes to the file before (heldout19, after its run: both had written
    # notes.txt)
    ("Compare notes.old with notes.txt, then make notes.old match by writing it again",
     ["Compare notes.old with notes.txt", "make notes.old match by writing notes.old again"]),
    ("read todo.md and then add '- defend thesis chapter 3' at the end",
     ["read todo.md", "add '- defend thesis chapter 3' at the end of todo.md"]),
    # "both" alone is the two files named before (heldout16, after stop 47's run: a zip
    # of "notes")
    ("Show the diff between notes.old and notes.txt, then zip both into "
     "notes-archive.zip.", ["Show the diff between notes.old and notes.txt",
                            "zip notes.old and notes.txt into notes-archive.zip"]),
    # a scene sentence, then an order, in one clause: no scene (heldout17, after its run:
    # the search had been lost)
    ("Security audit, first pass. Give me the layout of the project two levels deep, then "
     "look for anything matching 'password' or 'secret' regardless of case, and finally "
     "open the settings json.",
     ["Security audit and first pass. Give me the layout of the project two levels deep",
      "look for anything matching 'password' or 'secret' regardless of case",
      "open the settings json"]),
    ("I'd like to see which python processes are running, and also how much memory the "
     "machine has free.", ["I'd like to see which python processes are running",
                           "how much memory the machine has free"]),
    ("Every Monday at 6am summarize the pdfs here, and write in the project notes that "
     "this job exists.", ["Every Monday at 6am summarize the pdfs here",
                          "write in the project notes that this job exists"]),
    # "X first" is a step, not a scene before the ask (heldout20, after its run: the
    # zip between had been dropped)
    ("git status first, then zip docs and README.md into handover.zip, then commit all "
     "tracked changes with 'handover'", ["git status first",
                                         "zip docs and README.md into handover.zip",
                                         "commit all tracked changes with 'handover'"]),
    # text carried after "with:" is content up to a "then", like a quote
    ("write notes.md with: hello and bye, then commit it",
     ["write notes.md with: hello and bye", "commit notes.md"]),
    # stop 49, heldout22 after its run: "two things:" opens the first order, it is no
    # scene (the note had been dropped); a semicolon before a clause with no verb is
    # carried text (it had become `shell.exec pytest`); "change" is a verb
    ("Two things: remember that I prefer tabs, and note for the project that the "
     "warehouse setting must stay 'north'.",
     ["Two things: remember that I prefer tabs",
      "note for the project that the warehouse setting must stay 'north'"]),
    ("show me config/settings.json and then change the currency to USD",
     ["show me config/settings.json", "change the currency to USD in config/settings.json"]),
    ("write notes.md with: a; b, then commit it", ["write notes.md with: a; b",
                                                  "commit notes.md"]),
    # stop 50, heldout24 after its run: a time alone says when the order after it runs
    # (it had been a schedule of nothing, then the order run now); a time limit is the
    # step's own; "turn" orders; text after "in their place:" is carried
    ("every Monday at 7am, run doc.summarize", ["every Monday at 7am, run doc.summarize"]),
    ("run pytest on tests and give it two minutes before giving up",
     ["run pytest on tests and give it two minutes before giving up"]),
    ("show me the settings and then turn debug on in there",
     ["show me the settings", "turn debug on in there"]),
    # "queue" orders (heldout25, after its run: the summary now had been dropped)
    ("Summarize the PDFs here now, and also queue doc.summarize to run every night at 2am.",
     ["Summarize the PDFs here now", "queue doc.summarize to run every night at 2am"]),
    ("Wipe the project notes and put this in their place: Inventory service; logs in logs/.",
     ["Wipe the project notes and put this in their place: Inventory service; logs in "
      "logs/."]),
    # a question, then an order (stop 52, heldout7, 11, 28 and 29 after their runs: the
    # second step had been lost)
    ("what's the status and then show me the unstaged diff",
     ["what's the status", "show me the unstaged diff"]),
    ("is port 8000 in use? and after that show me the memory info",
     ["is port 8000 in use?", "show me the memory info"]),
    ("is port 5000 in use? also list my python processes",
     ["is port 5000 in use?", "list my python processes"]),
    ("Where is average defined? Open that file for me.",
     ["Where is average defined?", "Open that file for me"]),
    ("append '- x' to todo.md then show me the whole file",
     ["append '- x' to todo.md", "show me todo.md"]),
    ("read logs/app.log and then show me src/util.py where it broke",
     ["read logs/app.log", "show me src/util.py where it broke"]),
    # "then" after a word ending in "back" (heldout30, after its run: one step); a verb
    # typed with two letters swapped is mended ("grep opne ..." before)
    ("search logs/app.log for Traceback then show me the util file",
     ["search logs/app.log for Traceback", "show me the util file"]),
    ("grep for TODO in src, then opne whichever file it turns up in",
     ["grep for TODO in src", "open whichever file it turns up in"]),
    ("the app.py in src, opne it", ["the app.py in src, opne it"]),  # a file, then its order
    # English words are no verbs typed wrong ("staged" is no "stage", "ready" no "read")
    ("show modified and staged files", ["show modified and staged files"]),
    ("show what's in the index, ready to commit", ["show what's in the index, ready to commit"]),
    # heldout34 and 35, after their runs: the time of the ask is no order ("before I go
    # and comit anything" had been a commit); the same thing set to repeat is scheduled
    ("could you explain what staging a file means before I go and comit anything?",
     ["could you explain what staging a file means before I go and comit anything?"]),
    ("summarize the PDFs now, and also set the same thing to repeat every Friday at 5pm",
     ["summarize the PDFs now", "schedule summarize the PDFs every Friday at 5pm"]),
    # heldout42, after its run: "run it" after a question runs the command line it asks
    # about ("python setup.py" had been made up); an order among carried facts is one
    ("what does python3 --version print here? run it", ["run python3 --version"]),
    ("what does git log --oneline show? run it please", ["run git log --oneline"]),
    ("replace notes.txt with: buy milk; run git status; show the log",
     ["replace notes.txt with: buy milk", "run git status", "show the log"]),
    # heldout45, after its run: a step after one that must go well (the commit had been
    # put in the test run's command line); a time limit in words is the step's own
    ("Run the tests with python3 -m pytest, and if they pass commit all tracked changes as "
     "'Tests pass'", ["Run the tests with python3 -m pytest",
                      "commit all tracked changes as 'Tests pass'"]),
    ("run pytest and if it passes, commit everything as wip", ["run pytest",
                                                              "commit everything as wip"]),
    ("run `python3 -m pytest tests` and give it up to two minutes",
     ["run `python3 -m pytest tests` and give it up to two minutes"]),
])
def test_the_steps_a_request_names(request_: str, expected: list[str]) -> None:
    assert clauses(request_) == expected


@pytest.mark.parametrize("request_", [
    "copy a.txt and b.txt to backup",            # "and" between two things, not steps
    # a remark on the clause before is part of it (heldout12, after its blind run: a
    # second memory.remember of "project is a fact about the project")
    "keep in mind that the warehouse is 'north'; that's a fact about the project",
    "from the src folder, open util",  # where, then what (heldout13, after its run)
    "search for TODO and FIXME in src",
    "find and delete tmp files",                 # one verb phrase
    "append 'buy milk, then eggs' to notes.txt",  # quoted text is never split
    "note 'tests first, then commits' in the project's notes",
    "write hello, world to a.txt",
    "what branch am I on and what changed?",      # a question is answered whole
    "show me notes.txt",
    "first line\nand then run the tests",        # several lines: as written
    "the report is broken. can you run it?",     # a sentence of context, then the ask
    "search for TODO and also FIXME in src",     # "also" before no verb
    "e.g. this. that",
    "the report crashes when it is empty. find where average is defined",  # context
    "what's changed? give me the status",       # a question, then what it means
    "what is the difference between a list, and a tuple?",  # a comma, no second ask
    "in src/util.py, make average() return 0 for an empty list",  # where, then the step
    "inside docs, list the markdown files",
    "in the src folder, open util.py",
    "copy a.txt & b.txt to backup",  # "&" between two things
    "run pytest on tests/test_app.py, give it 90 seconds max",  # how long: same step
    "run the tests and stop after 30 seconds",
    # "since then" says when, not what comes next (a statement before it had been
    # planned as a step of its own, an append: heldout11, after its blind run)
    "I keep a backup as notes.old and I added a few things since then. Can you show me "
    "the difference between the backup and notes.txt?",
    # a clause saying what is there, then the step pointing back at it (heldout11,
    # after its blind run: "show it to me" alone had been answered in words)
    "in the src folder there's a util file, show it to me",
    "there's a notes file in docs, read it please",
    "is it raining? if so what should I wear?",  # a question after "if so": one
    # what is going on, then the ask: no step of its own (a "customer says ..." clause
    # had been planned as fs.write of its words)
    "customer says the app is down; is anything on port 8000?",
    "before I leave for holiday, zip up the logs folder as logs-backup.zip",
    # how to regard the files is no step (heldout15, after its run: a patch)
    "Put the README next to docs/guide.md and show me what differs, README as the old side.",
    # what to leave as it is; leave to go on (heldout39, after its run: a write of "{}"
    # after the patch; "go ahead and commit" had run a program "go")
    "In config/settings.json flip debug from false to true, change nothing else.",
    "set debug to true in config/settings.json and leave the rest as it is",
    "go ahead and commit it as 'wip'",
    "what's the difference between git push and git push --force? my boss keeps yelling",
    "Treat src/util.py as the old version and src/app.py as the new one and show me the "
    "differences between them.",
    "read notes.txt and do it quickly",  # "do it" with no time: no schedule
    # how many results is part of the step (heldout17, after its run: proc.kill of pid 5)
    "grep for 'def ' in the python files under src, stop at 5 matches per file",
    "show the log of develop, limit it to 3 commits",
    # said in words (heldout38, after its run: proc.kill of pid 1)
    "search for the literal text average(counts):.1f and stop at one match per file",
    # a plural is no slip of a verb (heldout18, after its run: "tests into code.zip" had
    # been a step, and the zip had zipped code.zip)
    "Bundle src and tests into code.zip for the new assistant coach.",
    # "and finally" before no order (heldout18, after its run: a grep of the scene)
    "Retired last spring and finally learning git. Could you show me the last five "
    "commits, please?",
    # what follows "with:" is the text (heldout20, after its run: "and run with pytest"
    # had been a second step running pytest)
    "Replace the project notes entirely with: tests live in tests/ and run with pytest.",
    "add a line saying: call 'mum, then dad' and the vet",
    # where the next clause acts, with its line (stop 49: "in src/app.py line 12" had
    # been a step of its own)
    "in src/app.py line 12, change `def get_user(id):` to `def fetch_user(id):`",
    "in scripts/deploy.sh, line 2, change 'set -e' to 'set -euo pipefail'",
    "Throw away the old project notes and replace them entirely with: settings live in "
    "config/settings.json; tests run with pytest.",
    # what would happen is one question; a question naming the file, then an order on
    # it, asks once (stop 52)
    "what happens if I commit and then push?",
    "who touched src/util.py? show me its commit history",
    "is there anything besides settings in config? list it for me",
    # facts carried after a colon, split by semicolons, an order among them (heldout42,
    # after its run: the app had been run, and "settings are in ..." run as a program)
    "Replace the project notes entirely with: Inventory service; run python3 src/app.py; "
    "settings are in config/settings.json.",
    "what is in notes.txt? open it",  # a file, not a command line: one ask
])
def test_what_is_one_step_stays_whole(request_: str) -> None:
    assert clauses(request_) == [request_]


def notes() -> Any:
    return fake_tools(FakeRead("notes.read"), FakeWrite("notes.write"), name="notes")


async def test_each_clause_is_planned_and_the_plan_holds_every_step_in_order() -> None:
    approver = ScriptedApprover(plan="execute")
    async with Harness(notes(), mode="execute-with-confirmation", approver=approver) as h:
        h.copilot.split_steps = True  # as for the embedded model (it scores)
        (h.workspace / "a.txt").write_text("old\n")
        h.provider.queue(steps(("notes.read", {"path": "a.txt"})),
                         steps(("notes.write", {"path": "a.txt", "text": "new\n"})))
        run = await h.run("read a.txt and then write new to it")
        assert [s.tool for s in run.plan.steps] == ["notes.read", "notes.write"]
        sent = [r.prompt for r in h.provider.requests]
        assert "read a.txt" in sent[0] and "write new to a.txt" in sent[1]
        assert "write new" not in sent[0]  # each clause asked on its own
        assert (h.workspace / "a.txt").read_text() == "new\n"  # approved as one plan
        assert len(approver.plans) == 1


async def test_a_clause_answered_in_words_adds_no_step() -> None:
    async with Harness(notes()) as h:
        h.copilot.split_steps = True
        h.provider.queue(Response(text="nothing to do"),
                         steps(("notes.read", {"path": "a.txt"})))
        run = await h.run("tell me a joke and then read a.txt")
        assert [s.tool for s in run.plan.steps] == ["notes.read"]


async def test_a_clause_the_model_cannot_plan_falls_back_to_the_whole_request() -> None:
    async with Harness(notes()) as h:
        h.copilot.split_steps = True
        h.provider.queue(steps(("notes.read", {"path": "a.txt"})),
                         "not json", "still not json", "nor this",  # the second clause
                         steps(("notes.read", {"path": "b.txt"})))  # the whole request
        run = await h.run("read a.txt and then read b.txt")
        assert [s.args["path"] for s in run.plan.steps] == ["b.txt"]
        assert "read a.txt and then read b.txt" in h.provider.requests[-1].prompt
        attempts = [r["attempt"] for r in run.logged("attempt")]
        assert attempts == sorted(set(attempts))  # numbered once each across clauses


class Scoring(ScriptedProvider):
    """A provider that scores continuations, as the embedded llama.cpp one does."""

    async def score(self, request: Any, continuations: Any) -> list[float]:
        return [0.0 for _ in continuations]


async def test_by_default_only_a_provider_that_scores_is_asked_clause_by_clause() -> None:
    async with Harness(notes()) as h:  # the scripted provider writes whole plans
        run = await h.run("read a.txt and then read b.txt",
                          reply=steps(("notes.read", {"path": "a.txt"}),
                                      ("notes.read", {"path": "b.txt"})))
        assert len(h.provider.requests) == 1 and len(run.plan.steps) == 2
    scoring = Scoring(steps(("notes.read", {"path": "a.txt"})),
                      steps(("notes.read", {"path": "b.txt"})))
    async with Harness(notes(), provider=scoring) as h:
        run = await h.run("read a.txt and then read b.txt")
        assert len(scoring.requests) == 2 and len(run.plan.steps) == 2


async def test_each_clause_is_one_step_and_a_whole_request_may_be_several() -> None:
    """A clause names one step: its reply may hold one ("run pytest" had become
    shell.exec then sys.info, every extra step a decode of a dozen tokens); a request
    planned whole may still hold several."""
    from adjutant_hookspecs import ProviderCapabilities

    class Grammared(Scoring):
        capabilities = ProviderCapabilities(grammar=True)

        async def score(self, request: Any, continuations: Any) -> list[float]:
            return [0.0 if '"response"' in c else 40.0 for c in continuations]  # a tool

    provider = Grammared(steps(("notes.read", {"path": "a.txt"})),
                         steps(("notes.read", {"path": "b.txt"})))
    async with Harness(notes(), provider=provider) as h:
        run = await h.run("read a.txt and then read b.txt")
        assert len(run.plan.steps) == 2
        plans = [line for r in provider.requests for line in (r.grammar or "").splitlines()
                 if line.startswith("plan ::=")]
        assert len(plans) == 2 and all('"," step' not in line for line in plans)
    provider = Grammared(steps(("notes.read", {"path": "a.txt"}),
                               ("notes.read", {"path": "b.txt"})))
    async with Harness(notes(), provider=provider) as h:
        h.copilot.split_steps = False
        run = await h.run("read a.txt and then read b.txt")
        assert len(run.plan.steps) == 2
        assert '( "," step ){0,7}' in (provider.requests[0].grammar or "")


DIFF = ("--- a/src/util.py\n+++ b/src/util.py\n@@ -1,2 +1,4 @@\n def average(values):\n"
        "+    if not values:\n+        return 0.0\n     return sum(values) / len(values)\n")


@pytest.mark.parametrize(("request_text", "expected"), [
    # the clauses of the words before a pasted diff, the diff after the one applying it
    # (heldout30 and 27, after their runs: the run after the patch was lost)
    (f"Apply this fix and then run python3 src/app.py to see if the crash is gone:\n{DIFF}",
     [f"Apply this fix:\n{DIFF}", "run python3 src/app.py to see if the crash is gone"]),
    (f"run pytest, then apply this patch:\n{DIFF}", ["run pytest", f"apply this patch:\n{DIFF}"]),
    # a scene, then one order: one step, as written
    (f"podcast editor here, my co-host emailed me this fix, apply it please:\n{DIFF}",
     [f"podcast editor here, my co-host emailed me this fix, apply it please:\n{DIFF}"]),
    (f"apply this:\n{DIFF}", [f"apply this:\n{DIFF}"]),
    (f"apply this and then run pytest:\n{DIFF}and tell me", [  # words after the diff
        f"apply this and then run pytest:\n{DIFF}and tell me"]),
])
def test_a_pasted_diff_goes_with_the_clause_that_applies_it(request_text: str,
                                                            expected: list[str]) -> None:
    assert clauses(request_text) == expected


@pytest.mark.parametrize(("request_text", "one"), [
    # given room, the embedded model wrote a log of "." and a grep for the ref the log
    # lost (stop 52, by the CLI with every plugin's tools)
    ("show the history of release/1.0", True),
    ("what changed in src/app.py since yesterday?", True),
    ("read src/app.py and src/util.py", False),  # two steps in one clause
    ("is port 5432 up, and 6379?", False),
    ("run pytest thne show git status", False),  # "then" as typed
    ("where is average defined? open that file", False),
    ("write a.md with\n# title", False),
    ("run the tests with pytest", True),  # "with" joins no second ask (it had been three)
    # a pasted diff ending a request of one clause (heldout42, after its run: the patch
    # and an append of words no one said); an order before it and one after are two
    ("The volunteers want verbose output while we chase the bug, so here is the change, "
     "put it in:\n--- a/config/settings.json\n+++ b/config/settings.json\n@@ -1 +1 @@\n"
     "-{\"debug\": false}\n+{\"debug\": true}\n", True),
    ("apply this and then run python3 src/app.py:\n--- a/config/settings.json\n"
     "+++ b/config/settings.json\n@@ -1 +1 @@\n-{\"debug\": false}\n+{\"debug\": true}\n",
     False),
])
def test_a_request_joining_no_second_ask_is_one_step(request_text: str, one: bool) -> None:
    assert one_ask(request_text) is one


async def test_a_request_of_one_ask_is_planned_with_room_for_one_step() -> None:
    from adjutant_hookspecs import ProviderCapabilities

    class Grammared(Scoring):
        capabilities = ProviderCapabilities(grammar=True)

        async def score(self, request: Any, continuations: Any) -> list[float]:
            return [0.0 if '"response"' in c else 40.0 for c in continuations]

    for asked, room, whole in (("show the history of notes", False, False),
                               ("read a.txt and b.txt", True, False),
                               ("show the history of notes", True, True)):
        provider = Grammared(steps(("notes.read", {"path": "a.txt"})))
        async with Harness(notes(), provider=provider) as h:
            if whole:  # a larger model, planning whole requests, keeps the room
                h.copilot.split_steps = False
            await h.run(asked)
        [line] = [line for line in (provider.requests[0].grammar or "").splitlines()
                  if line.startswith("plan ::=")]
        assert ('"," step' in line) is room, asked


@pytest.mark.parametrize(("request_text", "ask"), [
    # the scene says nothing the plan needs: the last sentence asks alone
    # (after a dash too: heldout18, after its run: the scene's "called" made a branch)
    ("my landlord keeps asking whether I ever called the plumber - can u pull up "
     "notes.txt so I can check", "can u pull up notes.txt so I can check"),
    ("Hi there, quick one, and apologies if it's a silly question: I'm about to copy a "
     "pile of photos into this project and I'd hate to fill the drive up halfway through. "
     "How much free disk space is left?", "How much free disk space is left?"),
    ("Sorry to bug you, my machine has felt really sluggish since this morning and I've "
     "already closed most of my browser tabs. Could you show me the biggest processes?",
     "Could you show me the biggest processes?"),
    ("Good morning, hope the week is going well for you and the whole team over there. "
     "Is there anything listening on the usual web port?",
     "Is there anything listening on the usual web port?"),
    # the whole request: the scene names a file, a number, a branch here, a wish for
    # words only; the ask points back at it, is short, or is no ask; the request is short
    ("I broke notes.txt earlier today while tidying up my whole desk and all the files. "
     "Could you show me what changed since the last commit?", None),
    ("My build has failed 3 times this morning and I have no idea why it keeps happening. "
     "Could you show me the last commits on the branch?", None),
    ("I keep mixing up the branches since the develop one was made last week by Sam. "
     "Could you show me which branch is checked out now?", None),
    ("Just explain in words please, I am only curious and want to learn more about git. "
     "What does a rebase actually do to the history?", None),
    ("The stock report has been crashing all morning and my manager keeps asking me. "
     "Could you run it and show me what it prints?", None),
    ("The stock report has been crashing all morning and my manager keeps asking me "
     "about it. Why?", None),
    ("The stock report has been crashing all morning and my manager keeps asking. "
     "I am so tired of this whole thing today.", None),
    ("the report crashes. find where average is defined", None),
    # a semicolon marks a shorter scene off (stop 49, heldout22 after its run: the scene
    # had made `fs.write` of the request itself)
    ("My pottery students keep asking what the stock report says before class; run "
     "python3 src/app.py for me.", "run python3 src/app.py for me."),
    ("I moved my cheese stall so prices are in pounds now; change the currency in "
     "config/settings.json from EUR to GBP.",
     "change the currency in config/settings.json from EUR to GBP."),
    ("report crashes; run it", None),  # short, and pointing back
])
def test_a_long_request_plans_from_the_sentence_that_asks(request_text: str,
                                                          ask: str | None) -> None:
    assert the_ask(request_text, frozenset({"develop", "notes.txt", "notes"})) == (
        ask or request_text)


@pytest.mark.parametrize(("clause", "path", "expected"), [
    # "it" is what the step before acted on (heldout22, after its run: appended to
    # notes.txt "the line ... to it", after a read of the readme)
    ("append the line 'x' to it", "README.md", "append the line 'x' to README.md"),
    ("zip it", "src", "zip src"),
    ("append 'do it' to notes.txt", "README.md", "append 'do it' to notes.txt"),  # quoted
    ("commit it", None, "commit it"),  # the step before named no path
    # "its" is its possessive (heldout21, after its run: the history had lost its path)
    ("show its history, 5 entries", "src/util.py", "show src/util.py's history, 5 entries"),
    # "in there" too (stop 50, heldout24 after its run: a patch of a made-up file)
    ("turn debug on in there", "config/settings.json",
     "turn debug on in config/settings.json"),
    ("is there a log in there", "logs", "is there a log in logs"),
    ("open whichever file it turns up in", "src/app.py", "open src/app.py"),
    ("show me the file it's in", "src/app.py", "show me src/app.py"),
])
def test_it_is_the_path_of_the_step_before(clause: str, path: str | None,
                                           expected: str) -> None:
    before = Plan(steps=(ToolCall(tool="t", args={"path": path} if path else {}),))
    assert refers_back(clause, before) == expected


@pytest.mark.parametrize(("clause", "expected"), [
    # the places the step before listed (heldout39, after its run: the zip dropped)
    ("zip those two folders as average-code.zip", "zip src and tests as average-code.zip"),
    ("bundle both folders into b.zip", "bundle src and tests into b.zip"),
    ("zip 'those two folders' as a.zip", "zip 'those two folders' as a.zip"),  # quoted
    ("zip the folders", "zip the folders"),  # which ones: not said
])
def test_those_places_are_the_ones_the_step_before_listed(clause: str,
                                                          expected: str) -> None:
    before = Plan(steps=(ToolCall(tool="search.grep", args={
        "pattern": "average", "paths": ["src", "tests"]}),))
    assert refers_back(clause, before) == expected
