"""Property: whatever the path string, the guard never lets anything out of the cage.

Random paths built from `..`, `.`, empty and doubled slashes, unicode, `~`, random
text and the names of links made for the purpose (out of the cage, into ~/.ssh, a
loop, up, dangling, into /proc/self) are judged against an oracle written
independently with ``os.path.realpath``: a write the guard does not deny, and a read it
allows, must land inside the cage on no protected name; a string that cannot be a
path (NUL, unencodable, not a string, a link loop) is always denied.
"""

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adjutant_guard import Guard

GUARD = Guard()

SEGMENTS = [
    "..", ".", "", "a.txt", "sub", "b.txt", "new", "proj", "proj-evil", "outside", "home",
    ".ssh", "id_rsa", ".git", "hooks", "config", "pre-commit", "data", "log", ".env",
    "out", "keys", "loop", "up", "dangle", "self", "here", "escape",
    "é", "日本語", "x\u0301", "~", "proc", "root", "etc", "passwd", "\udcff", "\ud800", "a\x00",
]
PREFIXES = ["", "/", "//", "~/", "~", "@ROOT@/", "@ROOT@//proj/", "@CAGE@/", "@HOME@/", "/proc/"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory, make_world: Any) -> Any:
    w = make_world(tmp_path_factory.mktemp("prop"))
    for name, target in {
        "out": "../outside",
        "keys": str(w.home / ".ssh"),
        "loop": "loop",
        "up": "..",
        "dangle": "../outside/new",
        "here": ".",
        "self": "/proc/self",
        "sub/escape": "../../outside",
    }.items():
        os.symlink(target, w.cage / name)
    (w.cage / "é").mkdir()
    return w


def _expand(text: str, w: Any) -> str:
    return (
        text.replace("@ROOT@", str(w.root)).replace("@CAGE@", str(w.cage))
        .replace("@HOME@", str(w.home))
    )


paths = st.builds(
    lambda prefix, segments, tail: prefix + "/".join(segments) + tail,
    st.sampled_from(PREFIXES),
    st.lists(st.one_of(st.sampled_from(SEGMENTS), st.text(min_size=1, max_size=5)), max_size=7),
    st.sampled_from(["", "/", "/.", "/.."]),
)
cwds = st.sampled_from(["proj", "proj/sub", "outside", "."])


def _oracle_inside(w: Any, text: str, cwd: str, write: bool = True) -> bool:
    """Where the kernel would land, by realpath, is inside the cage and unprotected
    (git's files against writes; keys, the data home and .env files against both)."""
    full = text if text.startswith("/") else f"{cwd}/{text}"
    try:
        os.stat(full)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENAMETOOLONG, errno.EACCES):
            return False
    except ValueError:
        return False
    cage = os.path.realpath(w.cage)
    real = os.path.realpath(full)
    lexical = os.path.normpath(full)
    if os.path.commonpath([real, cage]) != cage:
        return False
    protected = [str(w.home / ".ssh"), str(w.data), str(w.root / "outside")]
    for name in (real, lexical):
        parts = name.split("/")
        if write and ".git" in (p.lower() for p in parts):
            return False
        if parts[-1].lower() in (".env", "id_rsa"):
            return False
        if any(name == p or name.startswith(p + "/") for p in protected):
            return False
        if name.startswith(("/proc/", "/dev/")):
            return False
    return True


def _parseable(text: str) -> bool:
    if not text or "\x00" in text:
        return False
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        return False
    return True


@settings(max_examples=1000, deadline=None)
@given(raw=paths, cwd_name=cwds, write=st.booleans())
def test_the_guard_never_allows_anything_outside(
    tree: Any, raw: str, cwd_name: str, write: bool
) -> None:
    w = tree
    text = _expand(raw, w)
    cwd = str(w.root / cwd_name) if cwd_name != "." else str(w.root)
    request = (w.write if write else w.request)(path=text, cwd=cwd)
    verdict = GUARD.judge(request)
    assert verdict.decision in ("allow", "ask", "deny")
    assert verdict.reason.strip()

    passed = verdict.decision != "deny" if write else verdict.decision == "allow"
    if not passed:
        return
    assert _parseable(text), (text, verdict)
    readings = [text]
    if text == "~" or text.startswith("~/"):
        readings.append(str(w.home) + text[1:])  # a tool may expand it
    for reading in readings:
        assert _oracle_inside(w, reading, cwd, write), (text, reading, cwd, verdict)


@settings(max_examples=200, deadline=None)
@given(
    value=st.one_of(
        st.integers(), st.floats(), st.binary(), st.booleans(),
        st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=2), st.text()),
    ),
    write=st.booleans(),
)
def test_non_strings_are_always_denied(tree: Any, value: Any, write: bool) -> None:
    request = (tree.write if write else tree.request)(path=value)
    assert GUARD.judge(request).decision == "deny"


@settings(max_examples=300, deadline=None)
@given(raw=paths)
def test_unparseable_strings_are_always_denied(tree: Any, raw: str) -> None:
    text = _expand(raw, tree)
    if _parseable(text):
        return
    assert GUARD.judge(tree.request(path=text)).decision == "deny"


def test_the_oracle_is_not_vacuous(tree: Any) -> None:
    """The property would hold trivially if the guard denied everything."""
    w = tree
    assert GUARD.judge(w.write(path="sub/new.txt")).decision == "ask"
    assert GUARD.judge(w.request(path="é/../a.txt")).decision == "allow"
    assert _oracle_inside(w, "sub/new.txt", str(w.cage))
    assert not _oracle_inside(w, "out/x", str(w.cage))
    assert not _oracle_inside(w, "keys/id_rsa", str(w.cage))
    assert Path(w.cage / "loop").is_symlink()
