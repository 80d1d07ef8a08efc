"""Files that join a prompt are judged where they really are (issue 24 §3): the
selection, and the build file the project's name is read from, through the real
``adjutant context`` and ``adjutant run``. A name in the workspace that leads out of it
(a link, a linked folder, a hard link) sends nothing; a link that stays inside shows
the file's real path.

(A role's skill file, the third source, is the dock's: ``plugins/adjutant-dock/tests/
test_roles.py``.)"""

from __future__ import annotations

import errno
import json
import os

import pytest

from .helpers import MARKER, Attack


def hard_link(source: os.PathLike[str], name: os.PathLike[str]) -> None:
    try:
        os.link(source, name)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        pytest.skip("the workspace and the home are on different file systems")


def test_the_selection_sends_only_files_that_really_are_in_the_workspace(
        attack: Attack) -> None:
    documents = attack.home / "Documents"
    documents.mkdir()
    (documents / "passwords.md").write_text(f"bank: {MARKER}\n")
    work = attack.work
    (work / "notes.md").symlink_to(documents / "passwords.md")  # a file linked out
    (work / "papers").symlink_to(documents)  # a folder linked out
    hard_link(attack.id_rsa, work / "key.txt")  # a second name of the key
    hard_link(documents / "passwords.md", work / "copy.md")  # of another file outside
    (work / "docs").mkdir()
    (work / "docs" / "real.md").write_text("a real note\n")
    (work / "short.md").symlink_to("docs/real.md")  # a link that stays inside
    (work / "plain.md").write_text("plain\n")
    (attack.data / "selected_files.json").write_text(json.dumps(
        ["notes.md", "papers/passwords.md", "key.txt", "copy.md", "short.md", "plain.md",
         str(work / "docs" / ".." / "plain.md")]))
    done = attack.cli("context", "--json", check=True)
    bulletin = json.loads(done.stdout)
    real = os.path.realpath(work)
    assert bulletin["selected_files"] == [f"{real}/docs/real.md", f"{real}/plain.md"]
    attack.script(json.dumps({"type": "response", "text": "ok"}))
    run = attack.cli("run", "what did I select?", "--json", check=True)
    shown = attack.cli("context", check=True).stdout
    for said in (done.stdout, run.stdout, run.stderr, shown):
        assert "passwords" not in said and "key.txt" not in said and MARKER not in said
    (context,) = [r for r in attack.log() if r["kind"] == "context"]
    assert context["bulletin"]["selected_files"] == bulletin["selected_files"]


def test_a_build_file_linked_out_of_the_project_is_not_read(attack: Attack) -> None:
    elsewhere = attack.home / "other"
    elsewhere.mkdir()
    (elsewhere / "pyproject.toml").write_text(f'[project]\nname = "{MARKER}"\n')
    (attack.work / "pyproject.toml").symlink_to(elsewhere / "pyproject.toml")
    (attack.work / "package.json").write_text('{"name": "inner", "version": "1.0.0"}')
    bulletin = json.loads(attack.cli("context", "--json", check=True).stdout)
    assert bulletin["project"] == {"name": "inner", "version": "1.0.0",
                                   "language": "javascript", "files": ["package.json"]}
    (attack.work / "pyproject.toml").unlink()  # a second name instead of a link
    hard_link(elsewhere / "pyproject.toml", attack.work / "pyproject.toml")
    done = attack.cli("context", "--json", check=True)
    assert json.loads(done.stdout)["project"]["files"] == ["package.json"]
    assert MARKER not in done.stdout
