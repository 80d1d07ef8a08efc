"""The checks before git is trusted with a repository (`adjutant.safety.protection._repo`),
shared by the git tools and the context bulletin; here on git's printed answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from adjutant.safety.protection import GitRefusal, audit_git_config, confined_repository, inside


def _where(top: Path, git_dir: Path, common: Path | None = None) -> list[str]:
    return [str(top), str(git_dir), str(common or git_dir)]


def test_inside_is_by_whole_components(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj-evil").mkdir()
    assert inside(str(tmp_path / "proj"), [str(tmp_path / "proj")])
    assert not inside(str(tmp_path / "proj-evil"), [str(tmp_path / "proj")])
    (tmp_path / "proj" / "link").symlink_to(tmp_path / "proj-evil")
    assert not inside(str(tmp_path / "proj" / "link"), [str(tmp_path / "proj")])


def test_a_repository_inside_passes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git" / "objects").mkdir(parents=True)
    found = confined_repository(str(repo), _where(repo, repo / ".git"), [str(repo)])
    assert found == (str(repo), str(repo / ".git"), str(repo / ".git"))


@pytest.mark.parametrize("which", ["work tree", "git directory", "common directory"])
def test_each_directory_outside_is_refused(tmp_path: Path, which: str) -> None:
    repo, away = tmp_path / "repo", tmp_path / "away"
    for d in (repo / ".git" / "objects", away / "objects"):
        d.mkdir(parents=True)
    dirs = {"work tree": repo, "git directory": repo / ".git", "common directory": repo / ".git"}
    dirs[which] = away
    with pytest.raises(GitRefusal, match=f"repository's {which} is {away}, outside") as e:
        confined_repository(str(repo), [str(p) for p in dirs.values()], [str(repo)])
    assert e.value.rule == "cage"


def test_alternates_outside_are_refused_also_when_chained(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    objects = repo / ".git" / "objects"
    (objects / "info").mkdir(parents=True)
    (repo / "second" / "info").mkdir(parents=True)
    (objects / "info" / "alternates").write_text("# a comment\n../../second\n")
    where = _where(repo, repo / ".git")
    assert confined_repository(str(repo), where, [str(repo)])  # inside: fine
    (repo / "second" / "info" / "alternates").write_text(f'"{tmp_path / "away"}"\n')
    with pytest.raises(GitRefusal, match="alternate object directory"):
        confined_repository(str(repo), where, [str(repo)])


def test_an_included_file_outside_is_refused(tmp_path: Path) -> None:
    listing = (f"local\tfile:.git/config\tcore.bare=false\n"
               f"local\tfile:{tmp_path}/away/inc\tuser.name=x\n")
    with pytest.raises(GitRefusal, match="configuration file"):
        audit_git_config(listing, str(tmp_path / "repo"), [str(tmp_path / "repo")])
    audit_git_config(listing.splitlines()[0], str(tmp_path / "repo"), [str(tmp_path / "repo")])


def test_keys_that_run_programs(tmp_path: Path) -> None:
    cage = [str(tmp_path)]
    ok = ("local\tfile:.git/config\tcore.fsmonitor=/x/evil\n"   # overridden on every run
          "local\tfile:.git/config\tpager.log=/x/evil\n"        # moot under --no-pager
          "command\tcommand line:\tcore.pager=cat\n")
    audit_git_config(ok, str(tmp_path), cage)
    with pytest.raises(GitRefusal, match=r"filter\.x\.clean") as e:
        audit_git_config("local\tfile:.git/config\tfilter.x.clean=/x/evil\n", str(tmp_path),
                         cage)
    assert e.value.rule == "repository-config-runs-code"
