"""Per-project notes: the operator proposes an update (``memory.note``), a write like
``memory.remember``: the preview is the diff, nothing is written unless approved (and
never in propose-only), the write is the previewed one or nothing, and the notes go
with the next request in that project only."""

from pathlib import Path

import pytest

from adjutant import StepDecision, StepPacket
from adjutant.testing import Harness, ScriptedApprover, plan
from adjutant_hookspecs import Response
from adjutant_memory import MemoryPlugin
from adjutant_memory._notes import ProjectNotes

pytestmark = pytest.mark.anyio

NOTE = plan(("memory.note", {"text": "The build runs with make.", "append": True}))


async def test_a_note_is_written_after_approval_and_used_next_time(tmp_path: Path) -> None:
    async with Harness(MemoryPlugin, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        run = await h.run("note for this project that the build runs with make", reply=NOTE)
        assert run.status == "executed", run.error
        preview = run.asked[0].preview
        assert preview is not None and "+The build runs with make." in preview
        notes = ProjectNotes(h.kernel.home, str(h.workspace))
        assert notes.read() == "The build runs with make."
        assert not str(notes.path).startswith(str(h.workspace))  # kept outside the project
        [record] = await h.records("memory_noted")
        assert (record["before"], record["after"]) == ("", "The build runs with make.")
        await h.run("how do I build it?", reply=Response(text="make"))
        assert "- project notes: The build runs with make." in h.provider.requests[-1].prompt
        # another project does not get them
        other = tmp_path / "other"
        other.mkdir()
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, MemoryPlugin)
        memory = await plugin.require().context(str(other), "how do I build it?")
        assert "project notes" not in memory["text"]


async def test_a_denied_note_writes_nothing() -> None:
    async with Harness(MemoryPlugin, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["deny"])) as h:
        run = await h.run("note for this project that the build runs with make", reply=NOTE)
        assert run.status != "executed"
        assert ProjectNotes(h.kernel.home, str(h.workspace)).read() == ""


async def test_propose_only_never_writes_notes() -> None:
    async with Harness(MemoryPlugin, mode="propose-only",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        await h.run("note for this project that the build runs with make", reply=NOTE)
        assert ProjectNotes(h.kernel.home, str(h.workspace)).read() == ""


async def test_notes_changed_after_the_preview_are_not_overwritten() -> None:
    async with Harness(MemoryPlugin, mode="execute-with-confirmation") as h:
        notes = ProjectNotes(h.kernel.home, str(h.workspace))

        class ChangeThenGrant(ScriptedApprover):
            async def approve_step(self, packet: StepPacket) -> StepDecision:
                # another process changes the notes while the user looks at the preview
                notes.write("Tests need docker.", base=notes.digest(notes.read()),
                            by="user", run_id=None)
                return await super().approve_step(packet)

        h.approver = ChangeThenGrant(steps=["grant"])
        run = await h.run("note for this project that the build runs with make", reply=NOTE)
        assert run.status != "executed" or run.results[0].status == "error"
        assert notes.read() == "Tests need docker."  # not what the preview showed: kept


async def test_replacing_shows_what_is_removed() -> None:
    async with Harness(MemoryPlugin, mode="execute-with-confirmation",
                       approver=ScriptedApprover(steps=["grant"])) as h:
        notes = ProjectNotes(h.kernel.home, str(h.workspace))
        notes.write("Old convention: tabs.", base=notes.digest(""), by="user", run_id=None)
        run = await h.run("replace the project notes: spaces, not tabs",
                          reply=plan(("memory.note", {"text": "Spaces, not tabs.",
                                                      "append": False})))
        preview = run.asked[0].preview
        assert preview is not None
        assert "-Old convention: tabs." in preview and "+Spaces, not tabs." in preview
        assert notes.read() == "Spaces, not tabs."
