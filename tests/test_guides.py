"""The guides' code runs as written: `docs/guides/embedding.md`'s snippets, in order,
as the one program the guide says they are (inside an ``async def`` with ``project``
and ``home`` set), each run bounded by a timeout so a snippet that hangs (its event
reader never ending, as one did) fails instead of blocking."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

GUIDES = Path(__file__).resolve().parents[1] / "docs" / "guides"
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def snippets(guide: Path) -> list[str]:
    return _BLOCK.findall(guide.read_text())


def program(blocks: list[str], project: Path, home: Path) -> str:
    body = "\n".join(blocks)
    return (f"import anyio as _anyio, pathlib as _pathlib\n\nasync def main():\n"
            f"    project = _pathlib.Path({str(project)!r})\n"
            f"    home = _pathlib.Path({str(home)!r})\n"
            f"    with _anyio.fail_after(60):\n"
            f"{textwrap.indent(body, ' ' * 8)}\n\n"
            "_anyio.run(main)\n")


def test_every_embedding_snippet_runs_as_written(tmp_path: Path) -> None:
    blocks = snippets(GUIDES / "embedding.md")
    assert len(blocks) >= 6
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    script = tmp_path / "embedding.py"
    script.write_text(program(blocks, project, home))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # what the guide's comments say each print shows
    assert "executed ['ok']" in lines, lines
    assert (project / "notes" / "todo.md").read_text() == "buy milk\n"
    assert any(line.startswith("['RUN_STARTED'") and line.endswith("RUN_FINISHED")
               for line in lines), lines
    assert "buy milk" in lines, lines
