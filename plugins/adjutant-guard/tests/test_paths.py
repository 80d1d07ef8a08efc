"""The resolver: symlinks in any position, `..` on real directories, loops, refusals."""

import errno
import os
from pathlib import Path

import pytest

from adjutant_guard._paths import MAX_LINKS, PathProblem, lexical, magic_link, resolve, within


def test_relative_path_resolves_against_cwd(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    r = resolve("d/../d/./f", str(tmp_path))
    assert (r.lexical, r.resolved, r.stat) == (f"{tmp_path}/d/f",) * 2 + (None,)


def test_symlinked_parent_is_followed_for_missing_tail(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "ln")
    r = resolve(f"{tmp_path}/ln/not/yet", "/")
    assert r.resolved == f"{tmp_path}/real/not/yet"
    assert r.lexical == f"{tmp_path}/ln/not/yet"


def test_dotdot_applies_to_the_link_target_not_the_string(tmp_path: Path) -> None:
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / "cage").mkdir()
    os.symlink(tmp_path / "a" / "deep", tmp_path / "cage" / "ln")
    r = resolve("ln/../x", str(tmp_path / "cage"))
    assert r.lexical == f"{tmp_path}/cage/x"  # what a string check would believe
    assert r.resolved == f"{tmp_path}/a/x"  # what the kernel opens


def test_every_hop_of_a_link_chain_is_a_name(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    os.symlink(tmp_path / "hop2", tmp_path / "hop1")
    os.symlink("target", tmp_path / "hop2")
    r = resolve(f"{tmp_path}/hop1/f", "/")
    assert r.names == (f"{tmp_path}/hop1/f", f"{tmp_path}/hop2/f", f"{tmp_path}/target/f")


def test_dangling_link_resolves_to_where_a_create_would_land(tmp_path: Path) -> None:
    os.symlink("/nonexistent-dir-for-guard/x", tmp_path / "dangle")
    assert resolve(f"{tmp_path}/dangle", "/").resolved == "/nonexistent-dir-for-guard/x"


def test_file_used_as_directory_is_taken_as_written(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert resolve("f/x/../y", str(tmp_path)).resolved == f"{tmp_path}/f/y"


@pytest.mark.parametrize("count", [1, 2, 3])
def test_loops_are_refused(tmp_path: Path, count: int) -> None:
    for i in range(count):
        os.symlink(f"l{(i + 1) % count}", tmp_path / f"l{i}")
    with pytest.raises(PathProblem, match="symbolic links"):
        resolve("l0/x", str(tmp_path))


def test_long_but_finite_chains_resolve(tmp_path: Path) -> None:
    (tmp_path / "end").mkdir()
    os.symlink("end", tmp_path / f"c{MAX_LINKS - 1}")
    for i in range(MAX_LINKS - 1):
        os.symlink(f"c{i + 1}", tmp_path / f"c{i}")
    assert resolve("c0", str(tmp_path)).resolved == f"{tmp_path}/end"
    os.symlink("c0", tmp_path / "one-more")
    with pytest.raises(PathProblem, match="symbolic links"):
        resolve("one-more", str(tmp_path))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "expected a path string"),
        (7, "expected a path string"),
        (b"/etc", "expected a path string"),
        (["a"], "expected a path string"),
        ("", "empty"),
        ("a\x00b", "NUL"),
        ("\ud800", "encoded"),
        ("a" * 5000, "longer than"),
    ],
)
def test_unjudgeable_values(value: object, message: str) -> None:
    with pytest.raises(PathProblem, match=message):
        resolve(value, "/tmp")


def test_relative_path_needs_an_absolute_cwd() -> None:
    with pytest.raises(PathProblem, match="not absolute"):
        resolve("a", "relative/cwd")


def test_permission_errors_are_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests run as root here, so simulate the EACCES an unprivileged user would get.
    real = os.lstat
    locked = f"{tmp_path}/locked"

    def lstat(path: str) -> os.stat_result:
        if str(path).startswith(locked + "/"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(os, "lstat", lstat)
    with pytest.raises(PathProblem, match="Permission denied"):
        resolve(f"{locked}/x", "/")


def test_name_too_long_is_a_refusal(tmp_path: Path) -> None:
    with pytest.raises(PathProblem, match="too long"):
        resolve(f"{tmp_path}/{'x' * 300}/y", "/")


@pytest.mark.parametrize(
    "path",
    [
        "/proc/self/root/etc/passwd",
        "/proc/self/cwd",
        "/proc/thread-self/root",
        "/proc/1/root/etc",
        "/proc/12345/fd/3",
        "/proc/self",
        "/dev/fd/0",
        "/dev/fd",
        "/dev/stdin",
    ],
)
def test_magic_links_are_refused(path: str) -> None:
    assert magic_link(path)
    with pytest.raises(PathProblem, match="magic link"):
        resolve(path, "/")


def test_a_link_into_proc_self_is_refused(tmp_path: Path) -> None:
    os.symlink("/proc/self/root", tmp_path / "escape")
    with pytest.raises(PathProblem, match="magic link"):
        resolve("escape/etc/passwd", str(tmp_path))


def test_ordinary_proc_files_are_not_magic() -> None:
    assert magic_link("/proc/cpuinfo") is None
    assert resolve("/proc/cpuinfo", "/").resolved == "/proc/cpuinfo"


@pytest.mark.parametrize(
    ("path", "cage", "inside"),
    [
        ("/w/proj", "/w/proj", True),
        ("/w/proj/a", "/w/proj", True),
        ("/w/proj-evil", "/w/proj", False),
        ("/w/proj-evil/a", "/w/proj", False),
        ("/w/projx", "/w/proj", False),
        ("/w", "/w/proj", False),
        ("/anything", "/", True),
    ],
)
def test_within_is_a_component_check(path: str, cage: str, inside: bool) -> None:
    assert within(path, cage) is inside


def test_lexical_collapses_leading_double_slash() -> None:
    assert lexical("//etc//passwd/", "/") == "/etc/passwd"
    assert lexical("../../..", "/a") == "/"
