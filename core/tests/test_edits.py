"""An edit the request states whole ("change the currency in config/settings.json from
EUR to GBP") is written as a diff by the operator, from the file read as a prompt file
would be: the small model, which has not seen the file, wrote patches of invented
lines up to its token limit (11 to 27 s), or overwrote the file with one line
(heldout22, after its run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adjutant.operator._edits import stated_edit
from adjutant.testing import FakeRead, Harness, ScriptedProvider, fake_tools
from adjutant.testing import plan as steps
from adjutant_hookspecs import (
    ExecutionResult,
    ProviderCapabilities,
    ToolCall,
    ToolContext,
    ToolDeclaration,
)

pytestmark = pytest.mark.anyio

SETTINGS = '{"warehouse": "north", "currency": "EUR", "debug": false}\n'


@pytest.fixture
def space(tmp_path: Path) -> Path:
    files = {"config/settings.json": SETTINGS, "notes.txt": "buy milk\ncall the plumber\n",
             "src/util.py": "def average(values):\n    return sum(values) / len(values)\n",
             "app.yaml": "name: shop\ndebug: no\n", "conf.py": "DEBUG = False\n",
             "todo.md": "- write tests\n- ship\n", "README.md": "# inventory\n\nA tiny one.\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def _edit(request: str, space: Path) -> str | None:
    def read(path: str) -> str | None:
        try:
            return (space / path).read_text()
        except OSError:
            return None
    return stated_edit(request, str(space), read)


def _lines(diff: str | None) -> list[str]:
    assert diff is not None
    return [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in (
        "---", "+++")]


@pytest.mark.parametrize(("request_", "old", "new"), [
    ("I moved my stall; change the currency in config/settings.json from EUR to GBP.",
     '"currency": "EUR"', '"currency": "GBP"'),
    ("in config/settings.json, change EUR to GBP", '"EUR"', '"GBP"'),
    # a setting's name: its value changes, quoted as the file quotes it
    ("change the currency to USD in config/settings.json", '"EUR"', '"USD"'),
    # on and off in the file's own spelling: JSON, YAML, Python
    ("Turn the debug flag on in config/settings.json.", "false}", "true}"),
    ("turn on debug in app.yaml", "debug: no", "debug: yes"),
    ("switch DEBUG on in conf.py", "DEBUG = False", "DEBUG = True"),
    ("set debug to true in config/settings.json", "false}", "true}"),
    # named without its ending; "flip ... from ... to"
    ("in config/settings flip debug from false to true, as a patch", "false}", "true}"),
    ("in notes.txt, replace 'call the plumber' with 'call the electrician'",
     "call the plumber", "call the electrician"),
    ("In src/util.py, rename the function average to mean.", "def average(", "def mean("),
    # the article is no value (tuning set: "call the the")
    ("apply this patch to notes.txt: replace the plumber with the electrician",
     "call the plumber", "call the electrician"),
    ("in todo.md change '- ship' to '- ship 1.0'", "- ship", "- ship 1.0"),
    ("capitalise the title in README.md (# inventory -> # Inventory)", "# inventory",
     "# Inventory"),
])
def test_the_diff_changes_what_the_request_says_and_nothing_else(
        space: Path, request_: str, old: str, new: str) -> None:
    [removed, added] = _lines(_edit(request_, space))
    assert old in removed and new in added
    assert removed.replace(old, new, 1)[1:] == added[1:]


@pytest.mark.parametrize("request_", [
    "change EUR to GBP",  # no file named
    "in notes.txt and todo.md change ship to sail",  # two files
    "in notes.txt change bread to cake",  # not in the file
    "in nothing.txt change a to b",  # no such file
    "read notes.txt and tell me about it",  # no edit
    "change the readme title to Stock",  # no old value stated
    "in notes.txt change milk to milk",  # no change
    "in src change average to mean",  # a folder
    # a description, a path, a pronoun: no value (heldout22 and heldout10, after their runs)
    "in src/app.py swap the comment for an actual check that returns 0",
    "Replace todo.md with three items: glaze the mugs, fire the kiln.",
    "search config for currency, then change it to GBP in config/settings.json",
])
def test_no_diff_when_the_request_does_not_state_one_edit_of_one_file(
        space: Path, request_: str) -> None:
    assert _edit(request_, space) is None


def test_a_word_inside_another_is_left_alone(space: Path) -> None:
    """"change ship to sail" changes "ship", not "relationship"."""
    (space / "todo.md").write_text("- ship\n- relationship\n")
    assert _lines(_edit("in todo.md change ship to sail", space)) == ["-- ship", "+- sail"]


class EditFirst(ScriptedProvider):
    """Scores the patch tool far above every other choice for a request that asks an
    edit (not for the content-free one the choice is calibrated against)."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        asked = "currency" in str(request.prompt)
        return [20.0 if asked and "notes.patch" in c else 0.0 for c in continuations]


class FakePatch:
    """Takes a unified diff; its preview is the diff (nothing here applies it)."""

    declaration = ToolDeclaration(
        name="notes.patch", version="1", description="Apply a unified diff to files.",
        args_schema={"type": "object", "properties": {"patch": {"type": "string"}},
                     "required": ["patch"], "additionalProperties": False},
        examples=({"patch": "--- a/x\n+++ b/x\n"},))

    async def dry_run(self, call: ToolCall, ctx: ToolContext) -> ExecutionResult:
        return ExecutionResult(tool=call.tool, args=call.args, status="dry_run",
                               dry_run_diff=call.args["patch"])

    execute = dry_run


def _patch_tool() -> Any:
    return fake_tools(FakePatch(), FakeRead("notes.read"), name="notes")


async def test_the_plan_carries_the_operators_diff_as_one_step() -> None:
    """The model writes the step with the pasted mark (its grammar allows nothing
    else); the diff goes in; the plan has one step, as the request asks one thing."""
    provider = EditFirst(steps(("notes.patch", {"patch": "the diff made from the request"})))
    async with Harness(_patch_tool(), provider=provider) as h:
        (h.workspace / "config").mkdir()
        (h.workspace / "config/settings.json").write_text(SETTINGS)
        run = await h.run("change the currency in config/settings.json from EUR to GBP")
        [step] = run.plan.steps
        assert step.tool == "notes.patch"
        assert '+{"warehouse": "north", "currency": "GBP", "debug": false}' in step.args["patch"]
        [planned] = [r for r in provider.requests if "notes.patch" in (r.grammar or "")]
        assert "the diff made from the request" in (planned.grammar or "")


async def test_a_protected_file_or_a_link_out_is_never_read_into_a_plan(tmp_path: Path) -> None:
    """Secrets: the file is read the way a file joins a prompt (`PromptFiles`): a
    protected name (.env) or a link out of the workspace gives no diff, so none of its
    lines reach the plan, the log or the model."""
    outside = tmp_path / "outside.txt"
    outside.write_text("token = abc\n")
    async with Harness(_patch_tool(), provider=EditFirst(steps())) as h:
        (h.workspace / ".env").write_text("PASSWORD=hunter2\n")
        (h.workspace / "linked.txt").symlink_to(outside)
        (h.workspace / "plain.txt").write_text("token = abc\n")
        patch_for = h.copilot.prompting.patch_for
        cwd = str(h.workspace)
        assert patch_for("in .env change hunter2 to swordfish", cwd) is None
        assert patch_for("in linked.txt change abc to xyz", cwd) is None
        assert "+token = xyz" in (patch_for("in plain.txt change abc to xyz", cwd) or "")


class SwitchFirst(ScriptedProvider):
    """Scores a tool named by the request's words ("switch") far above the patch."""

    capabilities = ProviderCapabilities(grammar=True)

    async def score(self, request: Any, continuations: Any) -> list[float]:
        return [20.0 if "notes.read" in c else 0.0 for c in continuations]


@pytest.mark.parametrize(("asked", "edits"), [
    # heldout19, after its run: planned as git.switch, then dropped as a copied value
    ("switch the currency in config/settings.json from EUR to USD", True),
    ("what would happen if I switch the currency in config/settings.json from EUR to USD?",
     False),  # a question: never made a change by this rule
    ("commit config/settings.json with 'switch EUR to USD'", False),  # quoted: a message
])
async def test_an_edit_stated_whole_is_planned_as_the_patch(asked: str, edits: bool) -> None:
    provider = SwitchFirst(steps(("notes.read", {"path": "config/settings.json"})))
    async with Harness(_patch_tool(), provider=provider) as h:
        h.copilot.prompting.viewers = {"edit": "notes.patch"}
        (h.workspace / "config").mkdir()
        (h.workspace / "config/settings.json").write_text(SETTINGS)
        await h.run(asked)
        grammar = provider.requests[0].grammar or ""
        rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
        chosen = rules.get(rules.get("first", ""), rules["root"])  # the first step as chosen
        assert ("notes.patch" in chosen) is edits, chosen


@pytest.mark.parametrize("asked", ["in config/settings.json change YEN to GBP",
                                   "in config/settings.json change eur to gbp"])
async def test_an_edit_of_what_the_file_does_not_hold_is_answered_so(asked: str) -> None:
    """Bad input: the file holds nothing the request names. The model is not asked
    for a reply (it had made up a patch); the answer says what is missing and that
    nothing was changed."""
    provider = EditFirst(steps(("notes.patch", {"patch": "made up"})))
    async with Harness(_patch_tool(), provider=provider) as h:
        (h.workspace / "config").mkdir()
        (h.workspace / "config/settings.json").write_text(SETTINGS)
        run = await h.run(asked)
        assert run.outcome.status == "answered" and run.plan is None
        assert "Nothing was changed" in (run.outcome.text or "")
        assert "config/settings.json" in (run.outcome.text or "")
        assert (h.workspace / "config/settings.json").read_text() == SETTINGS


async def test_an_edit_that_cannot_be_made_stops_the_steps_after_it() -> None:
    """Orders dropped loudly: "in README.md change 'Version 1' to 'Version 2' and commit
    it", where README.md holds no 'Version 1', is answered so; no commit of the
    unchanged file is planned after it."""
    provider = EditFirst(steps(("notes.read", {"path": "README.md"})))
    async with Harness(_patch_tool(), provider=provider) as h:
        (h.workspace / "README.md").write_text("# inventory\n")
        run = await h.run("in README.md change 'Version 1' to 'Version 2', then read "
                          "README.md")
        assert run.outcome.status == "answered" and run.plan is None
        assert (run.outcome.text or "").startswith("Nothing was changed: README.md")


def test_a_diff_taking_out_lines_a_file_here_does_not_hold_is_made_up(tmp_path: Path) -> None:
    """"rename notes.txt to Notes.txt" had been a patch of notes.txt taking out a worked
    example's line (from the CLI, stop 55): chosen again. A diff that matches, one of a
    file not here, and one through a link out are not judged here."""
    from adjutant.operator._edits import unmatched

    (tmp_path / "notes.txt").write_text("buy milk\ncall the plumber\n")
    made_up = "--- a/notes.txt\n+++ b/notes.txt\n@@ -3 +3 @@\n-status = 'beta'\n+status = 'x'\n"
    assert unmatched(made_up, str(tmp_path)) == "notes.txt"
    fits = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n buy milk\n-call the plumber\n+x\n"
    assert unmatched(fits, str(tmp_path)) == ""
    assert unmatched(made_up.replace("notes.txt", "gone.txt"), str(tmp_path)) == ""
    outside = tmp_path.parent / "outside-unmatched.txt"
    outside.write_text("secret\n")
    (tmp_path / "link.txt").symlink_to(outside)
    assert unmatched(made_up.replace("notes.txt", "link.txt"), str(tmp_path)) == ""
