"""The relevance gate: passages only for a question about the project, and only its
strong hits. On the fixture project, the right file still comes for "where do we parse
the config?"; nothing comes for "what files are in this folder?" or "how much disk is
free?" (which, ungated, do draw passages here); commands get none."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from memkit import QUESTIONS, write_project

from adjutant import ModelPreset, Profile
from adjutant.testing import Harness
from adjutant_memory import NOTHING_FOUND, MemoryPlugin, MemoryService
from adjutant_memory._gate import about_the_project, strong
from adjutant_memory._index import Hit

pytestmark = pytest.mark.anyio

OFF_PROJECT = ["what files are in this folder?", "how much disk is free?",
               "how much free memory is there?", "what time is it?",
               "how many files are in the current directory?"]
COMMANDS = ["add a test for parse_config", "rename larkspur/settings.py to config.py",
            "remember that I prefer pytest -q"]


@asynccontextmanager
async def service(*, gate: bool = True) -> AsyncIterator[tuple[MemoryService, str]]:
    profile = Profile(model=ModelPreset(provider="scripted"),
                      plugins={"memory": {"gate": gate}})
    async with Harness(MemoryPlugin, profile=profile) as h:
        write_project(h.workspace)
        plugin = h.kernel.plugin("memory")
        assert isinstance(plugin, MemoryPlugin)
        svc = plugin.require()
        await svc.refresh(str(h.workspace), force=True)
        yield svc, str(h.workspace)


async def test_the_config_question_still_gets_the_right_file() -> None:
    async with service() as (svc, cwd):
        memory = await svc.context(cwd, "where do we parse the config?")
        assert memory["gate"] == "a question about the project"
        assert memory["sources"][0].startswith("larkspur/settings.py:")
        assert "def parse_config" in memory["text"]
        # only the strong hits: the passages holding the most of the question's words
        assert len(memory["sources"]) == 1
        tests = await svc.context(cwd, "how do I run the tests?")
        assert tests["sources"] == ["docs/contributing.md:1-3"]


async def test_every_fixture_question_still_gets_its_file() -> None:
    async with service() as (svc, cwd):
        missed = []
        for question, expected in QUESTIONS:
            memory = await svc.context(cwd, question)
            if not any(s.startswith(f"{expected}:") for s in memory["sources"]):
                missed.append((question, memory["sources"]))
        assert missed == []


async def test_questions_about_the_machine_or_folder_get_nothing() -> None:
    async with service() as (svc, cwd):
        for prompt in OFF_PROJECT:
            memory = await svc.context(cwd, prompt)
            assert memory["sources"] == [], prompt
            assert memory["text"] == "", prompt  # not even the refusal marker
            assert "answer" not in memory
            assert memory["gate"].startswith("about this machine or folder now"), prompt


async def test_without_the_gate_those_questions_drew_passages() -> None:
    # the fixture exercises the gate: ungated, the folder question matches a passage
    # (logging_setup.py takes a `folder`) and costs its tokens
    async with service(gate=False) as (svc, cwd):
        memory = await svc.context(cwd, "what files are in this folder?")
        assert any(s.startswith("larkspur/logging_setup.py:") for s in memory["sources"])
        tests = await svc.context(cwd, "how do I run the tests?")
        assert len(tests["sources"]) == 3  # weaker hits came too (gated: one, below)


async def test_commands_get_no_passages_but_keep_working_memory() -> None:
    async with service() as (svc, cwd):
        await svc.remember("I prefer pytest -q", by="user")
        for prompt in COMMANDS:
            memory = await svc.context(cwd, prompt)
            assert memory["sources"] == [], prompt
            assert memory["gate"] == "not a question"
            assert "I prefer pytest -q" in memory["text"]


async def test_an_unrelated_question_still_gets_the_refusal_marker() -> None:
    async with service() as (svc, cwd):
        memory = await svc.context(cwd, "what is the capital of Mongolia?")
        assert memory["sources"] == [] and memory["answer"] == NOTHING_FOUND


def test_about_the_project() -> None:
    assert about_the_project("where do log files go?")[0]
    assert about_the_project("which files handle uploads?")[0]
    assert about_the_project("how do we read the date a photo was taken?")[0]
    for prompt in OFF_PROJECT:
        assert not about_the_project(prompt)[0], prompt


def _hit(cid: int, coverage: float, cosine: float | None = None) -> Hit:
    return Hit(chunk_id=cid, path=f"f{cid}", start=1, end=2, text="x", score=1.0,
               coverage=coverage, cosine=cosine)


def test_strong_keeps_the_best_tier_and_close_vectors() -> None:
    hits = [_hit(1, 1.0), _hit(2, 0.5), _hit(3, 0.5, 0.9), _hit(4, 0.3)]
    assert [h.chunk_id for h in strong(hits, min_coverage=0.5, min_cosine=0.75)] == [1, 3]
    weak = [_hit(1, 0.3), _hit(2, 0.2, 0.5)]
    assert strong(weak, min_coverage=0.5, min_cosine=0.75) == []
