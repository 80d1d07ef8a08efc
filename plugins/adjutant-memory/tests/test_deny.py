"""Secrets never enter the index: protected paths, hard links to protected files,
links out of the project, and files that become protected later."""

import os
import sqlite3
from pathlib import Path

import pytest
from memkit import write_project

from adjutant_memory import ProjectIndex

pytestmark = pytest.mark.anyio

SECRET = "sk-live-7f3a9c1e55d04b2a"


def everything_stored(index: ProjectIndex) -> str:
    """Every byte the index file holds, as text: a secret must appear nowhere."""
    db = sqlite3.connect(index.path)
    rows = [str(r) for table in ("files", "chunks", "meta")
            for r in db.execute(f"SELECT * FROM {table}")]
    db.close()
    return "\n".join(rows)


async def test_protected_files_and_hard_links_to_them_are_never_indexed(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    (root / ".env").write_text(f"API_KEY={SECRET}\n")
    (root / "deploy").mkdir()
    (root / "deploy" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(f"[credential]\n\thelper = {SECRET}\n")
    # a second name for the secret, with an innocent one, inside the project
    os.link(root / ".env", root / "larkspur" / "notes.txt")
    # a home outside the project with a real protected file, and a hard link to it
    home = tmp_path / "user"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(f"KEY {SECRET}\n")
    os.link(home / ".ssh" / "id_ed25519", root / "docs" / "appendix.md")
    # a symbolic link out of the project
    outside = tmp_path / "outside.txt"
    outside.write_text(f"token {SECRET}\n")
    os.symlink(outside, root / "docs" / "linked.md")

    index = ProjectIndex(tmp_path / "home", str(root), user_home=str(home))
    report = index.scan()
    await index.ingest()
    refused = dict(report.refused)
    assert "protected" in refused[".env"]
    assert "deploy/id_rsa" in refused
    assert "hard link" in refused["larkspur/notes.txt"]
    assert "hard link" in refused["docs/appendix.md"]
    assert "outside" in refused["docs/linked.md"]
    assert ".git/config" not in index.states()  # never walked
    stored = everything_stored(index)
    assert SECRET not in stored
    for path in (".env", "deploy/id_rsa", "larkspur/notes.txt", "docs/appendix.md",
                 "docs/linked.md"):
        assert path not in index.states()
    assert SECRET not in str([h.text for h in await index.search("API key token", 20)])
    assert index.counts()["done"] == len(index.states())  # the rest was indexed


async def test_a_file_that_becomes_a_hard_link_to_a_secret_leaves_the_index(
        tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()
    await index.ingest()
    assert "docs/deployment.md" in index.states()
    (root / ".env").write_text(f"API_KEY={SECRET}\n")
    (root / "docs" / "deployment.md").unlink()
    os.link(root / ".env", root / "docs" / "deployment.md")
    report = index.scan()
    await index.ingest()
    assert "docs/deployment.md" in dict(report.refused)
    assert "docs/deployment.md" not in index.states()
    assert not any(h.path == "docs/deployment.md" for h in
                   await index.search("systemd user service", 10))
    assert SECRET not in everything_stored(index)


async def test_a_file_swapped_for_a_secret_between_scan_and_read_is_not_read(
        tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    index = ProjectIndex(tmp_path / "home", str(root))
    index.scan()  # admitted as an ordinary file ...
    (root / ".env").write_text(f"API_KEY={SECRET}\n")
    (root / "README.md").unlink()
    os.link(root / ".env", root / "README.md")  # ... then replaced by a second name
    await index.ingest()
    assert index.states()["README.md"] == "failed"
    assert "hard link" in index.errors()["README.md"]
    assert SECRET not in everything_stored(index)


async def test_the_data_home_inside_the_project_is_not_indexed(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    home = root / "adjutant-data"  # not hidden: hidden folders are never walked at all
    (home / "memory").mkdir(parents=True)
    (home / "memory" / "working.json").write_text(f'{{"note": "{SECRET}"}}')
    index = ProjectIndex(home, str(root))
    report = index.scan()
    await index.ingest()
    assert "adjutant-data/memory/working.json" in dict(report.refused)
    assert SECRET not in everything_stored(index)


async def test_hidden_folders_are_not_walked(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p")
    (root / ".hypothesis" / "constants").mkdir(parents=True)
    (root / ".hypothesis" / "constants" / "x").write_text("where do we parse the config\n")
    (root / ".github").mkdir()
    (root / ".github" / "ci.yml").write_text("run: pytest\n")
    index = ProjectIndex(tmp_path / "home", str(root))
    walked = set(index.walk())
    assert ".github/ci.yml" in walked
    assert not any(p.startswith(".hypothesis") for p in walked)
