from pathlib import Path

import pytest

import adjutant_wordcount
from adjutant.testing import Harness
from adjutant.testing.conformance import ToolConformance
from adjutant_hookspecs import ToolContext

pytestmark = pytest.mark.anyio


async def test_counts_like_wc() -> None:
    async with Harness(adjutant_wordcount) as h:
        (h.workspace / "notes.txt").write_text("one two three\nfour  five\n\tsix\n")
        result = await h.execute("wordcount.count", path="notes.txt")
    assert (result.status, result.stdout) == ("ok", " 3  6 30 notes.txt\n")


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/hostname", "etc/hostname"])
async def test_escapes_are_refused(path: str) -> None:
    async with Harness(adjutant_wordcount) as h:
        (h.workspace / "etc").symlink_to("/etc")  # a symlink out of the workspace
        result = await h.execute("wordcount.count", path=path)
    assert (result.status, result.stdout) == ("error", "")
    assert repr(path) in result.stderr


class TestConformance(ToolConformance):
    @pytest.fixture
    def tool(self) -> adjutant_wordcount.WordCount:
        return adjutant_wordcount.WordCount()

    @pytest.fixture
    def ctx(self, tmp_path: Path) -> ToolContext:  # the examples' files, so previews succeed
        (tmp_path / "src").mkdir()
        for name in ("notes.txt", "src/main.py"):
            (tmp_path / name).write_text("print('hello')\n")
        return ToolContext(cwd=str(tmp_path), cages=(str(tmp_path),))
