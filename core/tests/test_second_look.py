"""An answer in words that only repeats a request naming a file ("show me README.md"
answered "README.md") has done nothing: the choice is made again among the tools, and
the user sees that it was."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from adjutant.operator._words import echoes
from adjutant.testing import FakeRead, FakeWrite, Harness, ScriptedProvider, fake_tools
from adjutant.testing import plan as steps
from adjutant_hookspecs import ActivitySnapshot, ProviderCapabilities, Response

pytestmark = pytest.mark.anyio


def prefers(first: str, second: str) -> type[ScriptedProvider]:
    """A scoring provider that ranks the tool `first` over `second` over the rest, as the
    0.5B model ranked the near neighbours the tests below were written from."""

    class Prefers(ScriptedProvider):
        capabilities = ProviderCapabilities(grammar=True)

        async def score(self, request: Any, continuations: Any) -> list[float]:
            return [3.0 if f'"{first}"' in c else 1.0 if f'"{second}"' in c else 0.0
                    for c in continuations]

    return Prefers


class AnswerFirst(ScriptedProvider):
    """A provider that scores continuations (as the embedded one does) and prefers an
    answer in words to every tool, as the 0.5B model did for "show me README.md"."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        return [3.0 if '"response"' in c else 0.0 for c in continuations]


def notes() -> Any:
    return fake_tools(FakeRead("notes.read"), FakeWrite("notes.write"), name="notes")


@pytest.mark.parametrize(("answer", "request_", "expected"), [
    ("README.md", "show me README.md", True),
    ("readme.md", "show me README.md please", True),
    ("The file README.md.", "show me the file README.md", True),
    ("You are welcome.", "thanks", False),
    ("I cannot delete files here.", "delete notes.old", False),
    ("", "show me README.md", False),  # nothing said is no echo (refused elsewhere)
])
def test_an_echo_is_an_answer_made_only_of_the_requests_words(
        answer: str, request_: str, expected: bool) -> None:
    assert echoes(answer, request_) is expected


async def test_a_new_file_whose_content_was_echoed_is_planned_with_a_tool() -> None:
    provider = AnswerFirst(Response(text="buy milk"), steps(("notes.write", {
        "path": "todo.txt", "text": "buy milk\n"})))
    async with Harness(notes(), provider=provider) as h:
        run = await h.run("create todo.txt containing exactly: buy milk")
        assert [s.tool for s in run.plan.steps] == ["notes.write"]
        assert len(provider.requests) == 2


async def test_an_echoed_file_request_is_planned_with_a_tool_instead() -> None:
    provider = AnswerFirst(Response(text="notes.txt"), steps(("notes.read",
                                                              {"path": "notes.txt"})))
    async with Harness(notes(), provider=provider) as h:
        (h.workspace / "notes.txt").write_text("buy milk\n")
        run = await h.run("show me notes.txt")
        assert [s.tool for s in run.plan.steps] == ["notes.read"]
        first, again = provider.requests
        roots = [(r.grammar or "").splitlines()[0] for r in (first, again)]
        assert roots[0] == 'root ::= (response)'  # the answer chosen first,
        assert "response" not in roots[1] and "notes.read" in (again.grammar or "")
        looks = [e.event for e in run.envelopes if isinstance(e.event, ActivitySnapshot)
                 and e.event.activity_type == "second-look"]
        assert len(looks) == 1 and "repeats the request" in looks[0].content["text"]


async def test_an_order_said_back_is_planned_with_a_tool_instead() -> None:
    """"Read the app log" (no file named by its path) had been answered "Read the app
    log.": an order said back did nothing; "say hello" answered "Hello!" is an answer."""
    provider = AnswerFirst(Response(text="Read the notes file."),
                           steps(("notes.read", {"path": "notes.txt"})))
    async with Harness(notes(), provider=provider) as h:
        (h.workspace / "notes.txt").write_text("buy milk\n")
        run = await h.run("Read the notes file")
        assert [s.tool for s in run.plan.steps] == ["notes.read"]
        assert len(provider.requests) == 2
    provider = AnswerFirst(Response(text="Hello!"))
    async with Harness(notes(), provider=provider) as h:
        run = await h.run("say hello")
        assert run.plan is None and len(provider.requests) == 1


async def test_words_about_a_file_unread_are_planned_with_a_tool_instead() -> None:
    """To an order naming a file here, an answer in words about that file cannot say
    what it holds (the model has not read it): "montre-moi le fichier notes.txt" had
    been answered "The file notes.txt is located in the working directory"."""
    provider = AnswerFirst(Response(text="The file notes.txt is in the working directory."),
                           steps(("notes.read", {"path": "notes.txt"})))
    async with Harness(notes(), provider=provider) as h:
        (h.workspace / "notes.txt").write_text("buy milk\n")
        run = await h.run("montre-moi le fichier notes.txt s'il te plaît")
    assert [s.tool for s in run.plan.steps] == ["notes.read"]
    [look] = [e for e in run.of_type(ActivitySnapshot) if e.activity_type == "second-look"]
    assert "a file unread" in look.content["text"]


@pytest.mark.parametrize(("request_", "answer", "why"), [
    ("what is notes.txt usually for?", "notes.txt usually holds notes.", "a question"),
    ("just explain what notes.txt is for", "notes.txt holds notes.", "words wanted"),
    ("show me gone", "gone", "no file named"),
    ("show me notes.txt", "I can only show it once you approve a read.", "not an echo"),
    ("hello", "hello", "no file named"),
])
async def test_other_answers_in_words_stand(request_: str, answer: str, why: str) -> None:
    provider = AnswerFirst(Response(text=answer))
    async with Harness(notes(), provider=provider) as h:
        (h.workspace / "notes.txt").write_text("buy milk\n")
        run = await h.run(request_)
        assert run.status == "answered", why
        assert run.text == answer and len(provider.requests) == 1, why


class ToolFirst(ScriptedProvider):
    """Prefers the read tool to everything, as the 0.5B model did for "what's the
    weather going to be like in Berlin tomorrow?" (a read of src/util.py)."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        return [40.0 if '"notes.read"' in c else 0.0 for c in continuations]


@pytest.mark.parametrize(("path", "request_", "expected"), [
    ("src/util.py", "what's the weather going to be like in Berlin tomorrow?", False),
    ("notes.txt", "how many bytes are in a kibibyte?", False),
    ("config/settings.json", "what currency is the shop configured for?", True),
    ("docs/guide.md", "open the guide in the docs folder", True),
    ("logs/app.log", "show me the log", True),
    ("README.md", "check the readme", True),
])
def test_a_path_is_hinted_by_a_word_that_begins_one_of_its_parts(
        path: str, request_: str, expected: bool) -> None:
    from adjutant.operator._words import hinted

    assert hinted(path, request_) is expected


async def test_a_read_of_a_file_the_request_gives_no_hint_of_is_chosen_again() -> None:
    provider = ToolFirst(steps(("notes.read", {"path": "notes.txt"})),
                         Response(text="I cannot know tomorrow's weather."))
    async with Harness(notes(), provider=provider) as h:
        (h.workspace / "notes.txt").write_text("buy milk\n")
        run = await h.run("what's the weather going to be like in Berlin tomorrow?")
        assert run.status == "answered" and "weather" in run.text
        first, again = provider.requests
        roots = [(r.grammar or "").splitlines()[0] for r in (first, again)]
        assert roots == ['root ::= (plan)', 'root ::= (response)']
        assert "notes.read" in (first.grammar or "").split("step ::=")[0]
        looks = [e.event for e in run.envelopes if isinstance(e.event, ActivitySnapshot)
                 and e.event.activity_type == "second-look"]
        assert len(looks) == 1 and "no hint" in looks[0].content["text"]


async def test_a_read_the_request_hints_at_or_names_stands() -> None:
    for asked in ("show me the notes", "what is in notes.txt?"):
        provider = ToolFirst(steps(("notes.read", {"path": "notes.txt"})))
        async with Harness(notes(), provider=provider) as h:
            (h.workspace / "notes.txt").write_text("buy milk\n")
            run = await h.run(asked)
            assert [s.tool for s in run.plan.steps] == ["notes.read"], asked
            assert len(provider.requests) == 1, asked


class ReadThenWrite(ScriptedProvider):
    """The read first, a write next, the answer last: "the report crashed, fix it"
    planned as a read of logs/app.log, then (that read refused by the second look) as
    `git.commit`, the worst miss."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        return [40.0 if "notes.read" in c else 30.0 if "notes.write" in c else 0.0
                for c in continuations]


async def test_a_read_chosen_again_is_never_replaced_by_a_write() -> None:
    provider = ReadThenWrite(steps(("notes.read", {"path": "notes.txt"})),
                             Response(text="I cannot know that."))
    async with Harness(notes(), provider=provider) as h:
        (h.workspace / "notes.txt").write_text("buy milk\n")
        run = await h.run("tell me tomorrow's weather in Berlin")
        assert run.status == "answered", run.outcome
        again = (provider.requests[-1].grammar or "").splitlines()[0]
        assert again == 'root ::= (response)'  # the write was not offered
        assert (h.workspace / "notes.txt").read_text() == "buy milk\n"


class Brancher:
    """A tool that makes a new branch (its ``name``: "The new branch's name"), or, given
    its own arguments, another tool of the tests below."""

    def __init__(self, name: str, description: str = "Create a new branch.",
                 properties: dict[str, Any] | None = None, required: tuple[str, ...] = ("name",),
                 level: str = "write") -> None:
        from adjutant_hookspecs import ToolDeclaration, ToolSafety

        self.declaration = ToolDeclaration(
            name=name, version="1", description=description,
            args_schema={"type": "object", "properties": properties or {"name": {
                "type": "string", "description": "The new branch's name."}},
                "required": list(required), "additionalProperties": False},
            safety=ToolSafety(writes=level == "write", level=level))

    async def dry_run(self, call: Any, ctx: Any) -> Any:
        from adjutant_hookspecs import ExecutionResult

        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff=f"branch {call.args['name']}")

    async def execute(self, call: Any, ctx: Any) -> Any:  # never reached: propose-only
        raise AssertionError("executed")


async def test_a_new_branch_named_as_one_that_exists_is_chosen_again() -> None:
    """"checkout release/1.0" had been planned as making a new branch release/1.0 (it
    exists: the step cannot be done, and was not meant); a name that is free stays."""
    import anyio

    provider = prefers("vcs.branch", "vcs.switch")(steps(("vcs.branch", {"name": "develop"})),
                           steps(("vcs.switch", {"name": "develop"})),
                           steps(("vcs.branch", {"name": "feature/x"})))
    tools = fake_tools(Brancher("vcs.branch"), Brancher("vcs.switch"), name="vcs")
    async with Harness(tools, provider=provider) as h:
        env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
               "GIT_COMMITTER_EMAIL": "a@b", "PATH": "/usr/bin:/bin"}
        for argv in (["init", "-q", "-b", "work"], ["commit", "-q", "--allow-empty", "-m",
                                                    "x"], ["branch", "develop"]):
            await anyio.run_process(["git", *argv], cwd=h.workspace, env=env)
        taken = await h.run("checkout develop")
        free = await h.run("make a branch feature/x")
    assert [(s.tool, s.args) for s in taken.plan.steps] == [("vcs.switch", {"name": "develop"})]
    [look] = [e for e in taken.of_type(ActivitySnapshot) if e.activity_type == "second-look"]
    assert "a name that exists here" in look.content["text"]
    assert [s.tool for s in free.plan.steps] == ["vcs.branch"] and provider.pending == 0


async def test_an_answer_cut_in_its_first_sentence_is_asked_again_as_an_answer() -> None:
    """The retry after a malformed reply is not chosen again (the simpler prompt), but
    an answer in words stays one: asked again freely, a cut answer had been planned as
    a write of a file."""
    provider = AnswerFirst('{"type":"response","text":"Well, it depends on wh',
                           Response(text="It depends on the weather."))
    async with Harness(notes(), provider=provider) as h:
        run = await h.run("should I take an umbrella tomorrow?")
    assert run.status == "answered" and run.text == "It depends on the weather."
    first, retry = provider.requests
    assert '"notes.write"' not in (retry.grammar or "") and retry.grammar == first.grammar


class Comparer(Brancher):
    """A tool comparing two files (two required paths)."""

    def __init__(self, name: str) -> None:
        path = {"type": "string", "x-adjutant-role": "path"}
        super().__init__(name, "Compare two files.", {"a": path, "b": path}, ("a", "b"),
                         level="read")

    async def dry_run(self, call: Any, ctx: Any) -> Any:
        from adjutant_hookspecs import ExecutionResult

        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run")


async def test_a_path_compared_with_itself_is_chosen_again() -> None:
    """"how does src differ from develop?" had been planned as a comparison of src with
    src: it shows nothing and was not meant, so the choice is made again without that
    tool; two different files compared stand."""
    provider = prefers("files.diff", "vcs.diff")(steps(("files.diff", {"a": "src", "b": "./src"})),
                            steps(("vcs.diff", {"ref": "develop"})),
                            steps(("files.diff", {"a": "a.txt", "b": "b.txt"})))
    vcs = Brancher("vcs.diff")
    vcs.declaration = msgspec.structs.replace(vcs.declaration, args_schema={
        "type": "object", "properties": {"ref": {"type": "string"}}})
    tools = fake_tools(Comparer("files.diff"), vcs, name="cmp")
    async with Harness(tools, provider=provider) as h:
        same = await h.run("how does src differ from develop?")
        other = await h.run("compare a.txt and b.txt")
    assert [(s.tool, s.args) for s in same.plan.steps] == [("vcs.diff", {"ref": "develop"})]
    [look] = [e for e in same.of_type(ActivitySnapshot) if e.activity_type == "second-look"]
    assert "with itself" in look.content["text"]
    assert [s.tool for s in other.plan.steps] == ["files.diff"] and provider.pending == 0


def patcher(name: str) -> Brancher:
    """A tool applying a unified diff (a ``patch`` argument)."""
    return Brancher(name, "Apply a unified diff.", {"patch": {"type": "string"}}, ("patch",))


async def test_a_patch_of_a_file_not_here_is_chosen_again() -> None:
    """"write a CHANGELOG.md containing '# Changelog'" had been planned as a diff from
    nothing: a new file is written, so the choice is made again without the patch; a
    patch of a file that is here, or of one by a slip of its path, stands."""
    new = "--- a/CHANGELOG.md\n+++ b/CHANGELOG.md\n@@ -0,0 +1 @@\n+# Changelog\n"
    old = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-a\n+b\n"
    slip = "--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n-a\n+b\n"  # src/util.py is here
    provider = prefers("edit.patch", "notes.write")(steps(("edit.patch", {"patch": new})),
                          steps(("notes.write", {"path": "CHANGELOG.md",
                                                 "text": "# Changelog\n"})),
                          steps(("edit.patch", {"patch": old})),
                          steps(("edit.patch", {"patch": slip})))
    tools = fake_tools(patcher("edit.patch"), FakeWrite("notes.write"), name="edit")
    async with Harness(tools, provider=provider) as h:
        (h.workspace / "notes.txt").write_text("a\n")
        (h.workspace / "src").mkdir()
        (h.workspace / "src" / "util.py").write_text("a\n")
        made = await h.run("write a CHANGELOG.md containing '# Changelog'")
        patched = await h.run("change a to b in notes.txt")
        slipped = await h.run("in src/util.py change a to b")
    # a patch naming a file here by a slip of its path is not chosen again (written
    # whole, its content would be the model's)
    assert [s.tool for s in slipped.plan.steps] == ["edit.patch"]
    assert [s.tool for s in made.plan.steps] == ["notes.write"]
    [look] = [e for e in made.of_type(ActivitySnapshot) if e.activity_type == "second-look"]
    assert "a file not here" in look.content["text"]
    assert [s.tool for s in patched.plan.steps] == ["edit.patch"] and provider.pending == 0


async def on_todo(tools: Any, provider: Any, *requests: str) -> list[Any]:
    """Each of ``requests`` run in turn in a workspace holding a two-line todo.md."""
    async with Harness(tools, provider=provider) as h:
        (h.workspace / "todo.md").write_text("write tests\nship\n")
        return [await h.run(asked) for asked in requests]


def second_look(run: Any) -> str:
    """The text of the one second look ``run`` took."""
    [look] = [e for e in run.of_type(ActivitySnapshot) if e.activity_type == "second-look"]
    return str(look.content["text"])


async def test_a_file_here_written_whole_to_change_quoted_words_is_an_edit() -> None:
    """"in todo.md make 'ship' say 'ship v1.0'" had been planned as writing todo.md as
    "ship v1.0", losing its other lines: the choice is made again among the tools that
    take a patch. Writing a file whole with words that are not in it, or as asked
    ("replace the whole todo list with ..."), stands."""
    edit = "--- a/todo.md\n+++ b/todo.md\n@@ -2 +2 @@\n-ship\n+ship v1.0\n"
    provider = prefers("notes.write", "edit.patch")(
        steps(("notes.write", {"path": "todo.md", "text": "ship v1.0\n"})),
        steps(("edit.patch", {"patch": edit})),
        steps(("notes.write", {"path": "todo.md", "text": "hello\n"})),
        steps(("notes.write", {"path": "todo.md", "text": "- a\n- ship\n"})))
    changed, replaced, whole = await on_todo(
        fake_tools(patcher("edit.patch"), FakeWrite("notes.write"), name="edit"), provider,
        "in todo.md make 'ship' say 'ship v1.0'", "replace what todo.md says with 'hello'",
        "replace the whole of todo.md with '- a' and '- ship'")
    assert [(s.tool, s.args) for s in changed.plan.steps] == [("edit.patch", {"patch": edit})]
    assert "would lose its other lines" in second_look(changed)
    assert [s.tool for s in replaced.plan.steps] == ["notes.write"]
    assert [s.tool for s in whole.plan.steps] == ["notes.write"] and provider.pending == 0


async def test_text_for_the_end_of_a_file_here_written_whole_is_chosen_again() -> None:
    """"stick '- label the boxes' at the bottom of the todo list" had been planned as
    writing todo.md whole, losing its lines (heldout32, after its run): the writer is
    left out and the choice made again (an append). An append itself loses nothing."""
    provider = prefers("notes.write", "notes.append")(
        steps(("notes.write", {"path": "todo.md", "text": "- label the boxes\n"})),
        steps(("notes.append", {"path": "todo.md", "text": "- label the boxes\n"})),
        steps(("notes.append", {"path": "todo.md", "text": "- y\n"})))
    ended, appended = await on_todo(
        fake_tools(FakeWrite("notes.append"), FakeWrite("notes.write"), name="edit"), provider,
        "stick '- label the boxes' at the bottom of todo.md", "add '- y' to the end of todo.md")
    assert [s.tool for s in ended.plan.steps] == ["notes.append"]
    assert "would lose its other lines" in second_look(ended)
    assert [s.tool for s in appended.plan.steps] == ["notes.append"]
    assert provider.pending == 0


async def test_words_about_what_a_named_file_holds_are_planned_as_a_read() -> None:
    """To a question about what a file holds ("what does the CHANGELOG say about 1.0?",
    a project's file named without its extension), an answer in words made it up: a
    tool is chosen again. A question about a kind of file stands."""
    provider = AnswerFirst(Response(text="The CHANGELOG says 1.0 is a beta."),
                           steps(("notes.read", {"path": "CHANGELOG"})),
                           Response(text="A Makefile says how to build a project."))
    async with Harness(notes(), provider=provider) as h:
        asked = await h.run("what does the CHANGELOG say about version 1.0?")
        general = await h.run("what is a Makefile for?")
    assert [(s.tool, s.args) for s in asked.plan.steps] == [("notes.read",
                                                             {"path": "CHANGELOG"})]
    assert general.status == "answered" and provider.pending == 0


def noter(name: str) -> Brancher:
    """A tool keeping a line of the project's notes (a required ``text``, no path)."""
    return Brancher(name, "Add to the project's notes.", {"text": {"type": "string"}},
                    ("text",))


@pytest.mark.parametrize("asked", ["note that debug is on", "remember: the VPN is down",
                                   "keep this as a fact: prices are in EUR"])
async def test_a_note_the_request_does_not_ask_for_is_chosen_again(asked: str) -> None:
    """"turn debug on in the settings file (it's false right now)" had been planned as
    the note "Debug mode is turned on in the settings file": nothing was asked to be
    kept, so the choice is made again without the tools that keep text. A request that
    asks to note, remember or keep something has its note."""
    edit = "--- a/settings.json\n+++ b/settings.json\n@@ -1 +1 @@\n-false\n+true\n"
    provider = prefers("notes.keep", "edit.patch")(
        steps(("notes.keep", {"text": "Debug mode is turned on."})),
        steps(("edit.patch", {"patch": edit})),
        steps(("notes.keep", {"text": "kept"})))
    tools = fake_tools(patcher("edit.patch"), noter("notes.keep"), name="keep")
    async with Harness(tools, provider=provider) as h:
        (h.workspace / "settings.json").write_text("false\n")
        turned = await h.run("turn debug on in the settings file (it's false right now)")
        kept = await h.run(asked)
    assert [s.tool for s in turned.plan.steps] == ["edit.patch"]
    [look] = [e for e in turned.of_type(ActivitySnapshot) if e.activity_type == "second-look"]
    assert "does not ask to keep" in look.content["text"]
    assert [s.tool for s in kept.plan.steps] == ["notes.keep"] and provider.pending == 0
