"""A request that only asks to see one thing here ("open TODO", "cat Settings", "README
please", "show me logs/app.log", "show me src") is planned as a read of that file or a
listing of that folder: the 0.5B model answered such requests in words, or chose
`schedule.task` for "show me logs/app.log"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adjutant.operator._here import compared_files, content_asked, shown_path
from adjutant.testing import FakeRead, Harness, ScriptedProvider, fake_tools
from adjutant.testing import plan as steps
from adjutant_hookspecs import ProviderCapabilities

pytestmark = pytest.mark.anyio


@pytest.fixture
def space(tmp_path: Path) -> Path:
    for name in ("README.md", "todo.md", "notes.txt", "notes.old", "config/settings.json",
                 "logs/app.log", "src/app.py", "docs/guide.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    return tmp_path


@pytest.mark.parametrize(("request_", "expected"), [
    ("show me logs/app.log", ("file", "logs/app.log")),
    ("open TODO", ("file", "todo.md")),  # a stem, in another case
    ("cat Settings", ("file", "config/settings.json")),  # a stem, in a folder
    ("README please", ("file", "README.md")),
    # a list kept in a file; a scene before the order (heldout15, after its run: a grep)
    ("read me the todo list", ("file", "todo.md")),
    ("hands covered in flour over here, just read me the todo list", ("file", "todo.md")),
    # a scene with commas in it, "pull up", what is written in a file (stop 50,
    # heldout24 after its run: a summary, an answer made up)
    ("Hospital porter here, five minutes between runs \u2014 pull up NOTES.TXT for me",
     ("file", "notes.txt")),
    ("I bind books for a living, not software, so go gently: what's written in the guide "
     "under docs?", ("file", "docs/guide.md")),
    ("what's written in the guide under docs?", ("file", "docs/guide.md")),
    ("in notes.txt, show the todo list", None),  # the first clause names a file
    ("readme, show it", ("file", "README.md")),  # a name, no scene
    ("show me the readme", ("file", "README.md")),
    ("what's in todo.md?", ("file", "todo.md")),
    ("show me src", ("dir", "src")),
    ("open the docs folder", ("dir", "docs")),
    ("list the files in src", ("dir", "src")),
    ("open the guide in the docs folder", ("file", "docs/guide.md")),  # where it is
    # named in another case, in a folder said after it (heldout11, after its blind run:
    # a listing of the root)
    ("Settings.JSON under config — what's in it?", ("file", "config/settings.json")),
    ("under docs, show me guide", ("file", "docs/guide.md")),
    ("read me the guide first", ("file", "docs/guide.md")),  # heldout11, after its run
    ("can u show me the readme", ("file", "README.md")),  # heldout14, after its run
    # a scene before a dash; "bring up" (heldout17 and heldout18, after their runs:
    # doc.summarize)
    ("I'm translating the docs to Italian - first show me the readme", ("file", "README.md")),
    ("Bring up the guide in docs", ("file", "docs/guide.md")),
    # why, after the order (heldout38, after its run: the todo list's history)
    ("pull up the todo list, I want to see what's left before the glass-blowing studio "
     "open day", ("file", "todo.md")),
    # a log called by its kind, "for me" (heldout17, after stop 49's run: git.log)
    ("Pull up the app log for me.", ("file", "logs/app.log")),
    # a file called by its kind alone, the one of that kind here (heldout27, after its
    # run: git.log); two of a kind name none
    ("show me the log file", ("file", "logs/app.log")),
    ("show me the markdown file", None),
    ("delete the docs folder - show me the readme", None),  # an order is no scene
    # a file not here, named with its ending: its read's preview says it is missing
    # (heldout13, after its blind run: planned as doc.summarize)
    ("show me docs/install.md", ("file", "docs/install.md")),
    ("list todo.md", None),  # a listing of a file: the model decides
    ("what does README.md say about installing?", None),  # more than seeing it
    ("show me what changed in notes.txt", None),
    ("delete todo.md", None),
    ("cat notes", None),  # two files have that stem
    ("show me notes.txt and todo.md", None),  # two things
    ("show me the readme and the docs folder", None),  # two things, not one inside
    ("can you guide me through git rebase?", None),  # a word, not the folder docs/guide
    ("cat /etc/passwd", None),  # outside: the model names it, the cage refuses it
    ("show me ../outside.txt", None),
])
def test_a_request_to_see_one_thing_here_names_it(
        space: Path, request_: str, expected: tuple[str, str] | None) -> None:
    (space.parent / "outside.txt").write_text("secret\n")
    assert shown_path(request_, str(space)) == expected


class AnswerFirst(ScriptedProvider):
    """Scores an answer in words above every tool, as the 0.5B model did."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        return [3.0 if '"response"' in c else 0.0 for c in continuations]


async def test_a_typing_slip_in_the_display_word_still_plans_the_read() -> None:
    """"shwo me the readme" (heldout12, after its blind run) was answered in words ("The
    README file is located in the root"): the slip is mended before the rule looks."""
    provider = AnswerFirst(steps(("notes.read", {"path": "README.md"})))
    notes = fake_tools(FakeRead("notes.read"), FakeRead("notes.list"), name="notes")
    async with Harness(notes, provider=provider) as h:
        h.copilot.prompting.viewers = {"file": "notes.read", "dir": "notes.list"}
        (h.workspace / "README.md").write_text("# inventory\n")
        run = await h.run("shwo me the readme")
        assert [s.tool for s in run.plan.steps] == ["notes.read"]
        assert "response" not in (provider.requests[0].grammar or "").splitlines()[0]


@pytest.mark.parametrize(("request_", "tool", "path", "absent"), [
    ("open TODO", "notes.read", "todo.md", "notes.txt"),
    ("show me src", "notes.list", "src", "docs"),
])
async def test_it_is_planned_as_a_read_of_that_file_or_a_listing_of_that_folder(
        request_: str, tool: str, path: str, absent: str) -> None:
    """With the viewers the operator is told of (adjutant-files' fs.read and fs.list by
    default; fakes here, so core's own tests run without the plugin)."""
    provider = AnswerFirst(steps((tool, {"path": path})))
    notes = fake_tools(FakeRead("notes.read"), FakeRead("notes.list"), name="notes")
    async with Harness(notes, provider=provider) as h:
        h.copilot.prompting.viewers = {"file": "notes.read", "dir": "notes.list"}
        for name in ("todo.md", "notes.txt", "src/app.py", "docs/guide.md"):
            (h.workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (h.workspace / name).write_text("x\n")
        run = await h.run(request_)
        assert [s.tool for s in run.plan.steps] == [tool]
        [asked] = provider.requests
        grammar = asked.grammar or ""
        assert "response" not in grammar.splitlines()[0]  # the answer in words is not
        assert f'\\"{tool}\\"' in grammar or f'"{tool}"' in grammar  # offered at all
        assert path in grammar and absent not in grammar  # the path is the one named


def test_a_link_out_of_the_working_directory_is_left_to_the_model_and_the_cage(
        space: Path) -> None:
    """"show me link.txt" where link.txt points outside: the rule never resolves a link
    out of the working directory, nor says whether its target is a file or a folder."""
    outside = space.parent / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (space / "link.txt").symlink_to(outside / "secret.txt")
    (space / "linkdir").symlink_to(outside)
    assert shown_path("show me link.txt", str(space)) is None
    assert shown_path("open linkdir", str(space)) is None
    assert shown_path("show me linkdir/secret.txt", str(space)) is None


@pytest.mark.parametrize(("request_", "expected"), [
    # a file as the subject of a question about what it holds (heldout11, after its
    # blind run: "what does the CHANGELOG say about version 1.0?" answered in words,
    # then planned as git.diff)
    ("what does the CHANGELOG say about version 1.0?", ("file", "CHANGELOG")),
    ("according to notes.txt, what should I buy?", ("file", "notes.txt")),
    ("what is in readme.md these days?", ("file", "README.md")),
    ("whats in src/ right now", ("dir", "src")),
    ("what's in data/raw", ("dir", "data/raw")),  # not here, no ending: a folder
    ("what does git log say about README.md?", None),  # git's, not the file's
    ("what does a README usually contain?", None),  # a kind of file
    ("show me what's in /etc/shadow", None),  # outside: as asked, and the cage says no
    # a file called by its stem, and "it" (heldout12, after its blind run: answered with
    # made-up lines)
    ("Hey, quick one: the Todo file, what's on it?", ("file", "todo.md")),
    ("the guide file: what does it say?", ("file", "docs/guide.md")),
    ("the notes file, what's in it?", None),  # notes.txt or notes.old
    ("the logs file, what's in it?", None),  # a folder
    ("the todo file, delete it", None),  # no question about what it holds
    # what a list a file keeps holds (heldout14, after its blind run: a search of TODO)
    ("whats on the todo list", ("file", "todo.md")),
    ("what is on my todo list?", ("file", "todo.md")),
    ("what's on the shopping list?", None),  # no such file here
    ("what's in the notes file?", None),  # notes.txt or notes.old
    # a file called by its stem, in a question of what it says (heldout30, after its
    # run: summarized as a PDF)
    ("What does the guide in docs actually say? Print it out.", ("file", "docs/guide.md")),
    ("what does the app log say about errors?", ("file", "logs/app.log")),
    # the file first, then what is on it (heldout39, after its run: a search for it)
    ("TODO.MD - what's on it?", ("file", "todo.md")),
    ("notes.txt: what does it say?", ("file", "notes.txt")),
    ("notes.txt - delete it", None),
])
def test_a_question_about_what_a_named_file_holds_names_it(
        space: Path, request_: str, expected: tuple[str, str] | None) -> None:
    assert content_asked(request_, str(space)) == expected


@pytest.mark.parametrize(("request_", "expected"), [
    # two files side by side after a word that compares (heldout14, after its blind
    # run: git.diff of both paths)
    ("diff notes.txt against notes.old", ("notes.txt", "notes.old")),
    ("compare README.MD with todo.md please", ("README.md", "todo.md")),
    ("what's the difference between notes.txt and notes.old?", ("notes.txt", "notes.old")),
    ("diff notes.txt", None),  # one file's changes: git's to show
    ("compare src with docs", None),  # folders
    ("diff notes.txt against missing.txt", None),  # one is not here
    ("read notes.txt and notes.old", None),  # no word that compares
    ("diff notes.txt and then read todo.md", None),  # not side by side
    # two named, then "them" compared (heldout15, after its run: a patch, then the diff)
    ("treat notes.old as the old version and notes.txt as the new one and show me the "
     "differences between them", ("notes.old", "notes.txt")),
    ("read notes.txt and todo.md, then compare the two", ("notes.txt", "todo.md")),
    ("compare them later: notes.txt, then todo.md", None),  # "them" before the names
    # "different" between them (stop 50, heldout24 after its run: diffed the other way)
    ("how is notes.old different from notes.txt?", ("notes.old", "notes.txt")),
    ("is notes.txt any different than todo.md", None),  # words between: not side by side
    ("is notes.txt different than todo.md", ("notes.txt", "todo.md")),
    # put side by side, compared after; a project's file by its name alone (heldout39,
    # after its run: an append of "README" to the guide, then a diff with notes.old)
    ("Put the README next to docs/guide.md and show me what differs, README as the old "
     "side.", ("README.md", "docs/guide.md")),
    ("put notes.txt next to todo.md on my desk", None),  # nothing compared
    # the old one first, when said (heldout40, after its run)
    ("how does notes.txt differ from notes.old? old one first please",
     ("notes.old", "notes.txt")),
    # what changed since the one after "from" (heldout42, after its run)
    ("how does notes.txt differ from notes.old?", ("notes.old", "notes.txt")),
    ("how is notes.txt different from notes.old", ("notes.old", "notes.txt")),
    ("what changed between notes.old and notes.txt?", ("notes.old", "notes.txt")),  # h43
])
def test_two_files_compared_with_each_other_are_named(
        space: Path, request_: str, expected: tuple[str, str] | None) -> None:
    assert compared_files(request_, str(space)) == expected


def test_two_files_compared_are_diffed_in_the_order_named() -> None:
    """The model's a and b swapped are put back in the order the request names them; a
    step with other values is left as it is."""
    from adjutant.operator._typed import compared_in_order
    from adjutant_hookspecs import Plan, ToolCall

    swapped = Plan(steps=(ToolCall(tool="fs.diff", args={"a": "notes.txt", "b": "notes.old"}),))
    assert compared_in_order(swapped, ("notes.old", "notes.txt")).steps[0].args == {
        "a": "notes.old", "b": "notes.txt"}
    other = Plan(steps=(ToolCall(tool="fs.diff", args={"a": "notes.txt", "b": "todo.md"}),))
    assert compared_in_order(other, ("notes.old", "notes.txt")) == other


class SummaryFirst(ScriptedProvider):
    """Scores the PDF summarizer above every other choice, then the answer in words."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        # not the content-free calibration request
        asked = "summarize" in request.prompt or "say?" in request.prompt
        return [5.0 * asked if "notes.pdfsum" in c else 3.0 * asked if '"response"' in c else
                4.0 * asked if "notes.write" in c else 0.0 for c in continuations]


@pytest.mark.parametrize(("request_", "first", "then"), [
    # a file of another kind than a tool's paths take (its schema's ``pattern``): a
    # read still, never a write or words (heldout30, after its run: "summarize" of a
    # text file had been `doc.summarize`, then an append)
    ("summarize notes.txt", "notes.read", {"path": "notes.txt"}),
    # named in another case, in a folder (note 53: "what does GUIDE.MD in docs say?")
    ("what does GUIDE.MD in docs say?", "notes.read", {"path": "docs/guide.md"}),
    # the kind it takes: as chosen
    ("summarize report.pdf", "notes.pdfsum", {"paths": ["report.pdf"]}),
])
async def test_a_tool_taking_files_of_one_kind_is_not_planned_for_another(
        request_: str, first: str, then: dict) -> None:
    from adjutant.testing import FakeWrite

    provider = SummaryFirst(steps((first, then)))
    pdfsum = FakeRead("notes.pdfsum")
    pdfsum.declaration = pdfsum.declaration.__class__(**{
        **{f: getattr(pdfsum.declaration, f) for f in pdfsum.declaration.__struct_fields__},
        "args_schema": {"type": "object", "properties": {"paths": {
            "type": "array", "items": {"type": "string", "pattern": r"\.[Pp][Dd][Ff]$",
                                       "x-adjutant-role": "path"}}}}})
    notes = fake_tools(FakeRead("notes.read"), pdfsum, FakeWrite("notes.write"),
                       name="notes")
    async with Harness(notes, provider=provider) as h:
        h.copilot.prompting.viewers = {"file": "notes.read"}
        h.copilot.prompting.bank_weight = 0  # the bank knows none of these tools
        (h.workspace / "docs").mkdir()
        for name in ("notes.txt", "report.pdf", "docs/guide.md"):
            (h.workspace / name).write_text("x\n")
        run = await h.run(request_)
        assert [s.tool for s in run.plan.steps] == [first]
        lines = (provider.requests[0].grammar or "").splitlines()
        assert "response" not in lines[0]  # no answer in words: a plan whose first step
        [chosen] = [line.split("::=")[1].strip() for line in lines  # is the one chosen
                    if line.startswith("first ::=")]
        [rule] = [line for line in lines if line.startswith(f"{chosen} ::=")]
        assert f'\\"{first}\\"' in rule, rule


def test_a_file_compared_with_a_file_not_named_where_a_branch_is_named_is_amiss(
        space: Path) -> None:
    """"how does notes.txt differ from the develop branch" had been `fs.diff` of
    notes.txt with notes.old (heldout43, after its run): compared amiss, chosen again;
    two files named are not."""
    import subprocess

    from adjutant.operator._here import compared_amiss
    from adjutant_hookspecs import ToolCall, ToolDeclaration

    subprocess.run(["git", "init", "-q", "-b", "work", str(space)], check=True)
    subprocess.run(["git", "-C", str(space), "branch", "-q", "develop"], check=False)
    (space / ".git" / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (space / ".git" / "refs" / "heads" / "develop").write_text("0" * 40 + "\n")
    diff = ToolDeclaration(name="fs.diff", version="1", description="d", args_schema={
        "type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string", "x-adjutant-role": "path"},
            "b": {"type": "string", "x-adjutant-role": "path"}}})
    step = ToolCall(tool="fs.diff", args={"a": "notes.txt", "b": "notes.old"})
    assert compared_amiss(step, diff, "how does notes.txt differ from the develop branch",
                          str(space)) == "notes.old"
    assert compared_amiss(step, diff, "how does notes.txt differ from notes.old",
                          str(space)) is None
    same = ToolCall(tool="fs.diff", args={"a": "src", "b": "src"})
    assert compared_amiss(same, diff, "how does src differ from develop?", str(space)) == "src"
    # HEAD is a ref wherever git is (heldout46, after its run)
    assert compared_amiss(step, diff, "how does notes.txt differ from HEAD?",
                          str(space)) == "notes.old"
