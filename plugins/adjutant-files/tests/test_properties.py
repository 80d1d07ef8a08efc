"""Property: whatever relative path string a write is given, nothing outside the cage
is created or changed (the cage holds links pointing out, to tempt it)."""

import tempfile
from pathlib import Path

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from adjutant_files import FsAppend, FsWrite
from adjutant_hookspecs import ToolCall, ToolContext

from .helpers import snapshot

_PIECES = st.sampled_from(["..", ".", "", "a", "out", "link", "up", "proj-evil", "x.txt",
                           ".git", "config", "proj", "/", "//", "\\", "~", "-", "é", " "])
PATHS = st.one_of(
    st.lists(_PIECES, min_size=1, max_size=6).map("/".join),
    st.text(alphabet=st.sampled_from("./a-x~\\ é"), min_size=1, max_size=20),
)


@settings(max_examples=300, deadline=None)
@given(path=PATHS, append=st.booleans())
def test_write_never_touches_anything_outside_the_cage(path: str, append: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cage, outside = root / "proj", root / "proj-evil"
        (cage / "a").mkdir(parents=True)
        outside.mkdir()
        (outside / "x.txt").write_text("keep")
        (cage / "x.txt").write_text("inside")
        (cage / "link").symlink_to(outside)
        (cage / "a" / "up").symlink_to(root)
        (cage / "a" / "x.txt").symlink_to(outside / "x.txt")
        before = {k: v for k, v in snapshot(root).items() if not k.startswith("proj/")}
        tool = FsAppend() if append else FsWrite()
        ctx = ToolContext(cwd=str(cage / "a"), cages=(str(cage),))
        call = ToolCall(tool=tool.declaration.name, args={"path": path, "content": "PWNED"})
        result = anyio.run(tool.execute, call, ctx)
        assert result.status in ("ok", "error")
        after = {k: v for k, v in snapshot(root).items() if not k.startswith("proj/")}
        assert after == before, (path, result)
        # and every link inside the cage is still the link it was
        assert (cage / "link").readlink() == outside
