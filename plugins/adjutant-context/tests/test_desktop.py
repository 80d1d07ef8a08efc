"""``focus`` and ``clipboard``: unavailable without a display, and parsing the output of
fake ``xprop`` / ``xclip`` / ``xsel`` / ``wl-paste`` programs on PATH."""

import time
from pathlib import Path

import pytest

from adjutant_context import ClipboardProvider, FocusProvider
from adjutant_context._desktop import MAX_CLIPBOARD, parse_active_window, parse_window_name

from .helpers import fake_program

pytestmark = pytest.mark.anyio

XPROP = """
echo "$@" >> "$(dirname "$0")/calls"
if [ "$1" = "-root" ]; then
  echo '_NET_ACTIVE_WINDOW(WINDOW): window id # 0x3a00007'
else
  echo '_NET_WM_NAME(UTF8_STRING) = "vim \\"notes.md\\" - Terminal"'
  echo 'WM_NAME(STRING) = "old name"'
fi
"""


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An otherwise empty directory first on PATH (plus the system's for `sh`)."""
    path = tmp_path / "bin"
    path.mkdir()
    monkeypatch.setenv("PATH", f"{path}:/usr/bin:/bin")
    return path


async def test_focus_unavailable_without_a_display(tmp_path: Path) -> None:
    provider = FocusProvider()
    assert provider.available() == "no X11 display"
    assert await provider.gather(str(tmp_path)) == {}


async def test_focus_unavailable_without_xprop(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    provider = FocusProvider()
    assert provider.available() == "xprop not installed"
    assert await provider.gather(str(tmp_path)) == {}


async def test_focus_from_xprop(tmp_path: Path, bin_dir: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(bin_dir, "xprop", XPROP)
    monkeypatch.setenv("DISPLAY", ":99")
    provider = FocusProvider()
    assert provider.available() is None
    assert await provider.gather(str(tmp_path)) == {"focus": 'vim "notes.md" - Terminal'}
    assert (bin_dir / "calls").read_text().splitlines() == [
        "-root _NET_ACTIVE_WINDOW", "-id 0x3a00007 _NET_WM_NAME WM_NAME"]


async def test_focus_without_an_active_window(tmp_path: Path, bin_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(bin_dir, "xprop", "echo '_NET_ACTIVE_WINDOW(WINDOW): window id # 0x0'\n")
    monkeypatch.setenv("DISPLAY", ":99")
    assert await FocusProvider().gather(str(tmp_path)) == {}


async def test_a_hanging_xprop_costs_at_most_its_timeout(
        tmp_path: Path, bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(bin_dir, "xprop", "exec sleep 10\n")
    monkeypatch.setenv("DISPLAY", ":99")
    started = time.monotonic()
    assert await FocusProvider(timeout=0.3).gather(str(tmp_path)) == {}
    assert time.monotonic() - started < 3


def test_xprop_parsing() -> None:
    assert parse_active_window("_NET_ACTIVE_WINDOW: not found.") is None
    assert parse_active_window("_NET_ACTIVE_WINDOW(WINDOW): window id # 0x1") == "0x1"
    assert parse_window_name('WM_NAME(STRING) = "only \\\\ legacy"') == "only \\ legacy"
    assert parse_window_name("_NET_WM_NAME:  not found.\nWM_NAME:  not found.") is None


async def test_clipboard_is_off_by_default_and_unavailable_without_a_display(
        tmp_path: Path, bin_dir: Path) -> None:
    fake_program(bin_dir, "xclip", "printf 'secret plans'\n")
    provider = ClipboardProvider()
    assert provider.default_enabled is False
    assert provider.available() == "no X11 or Wayland display"
    assert await provider.gather(str(tmp_path)) == {}


async def test_clipboard_from_xclip_capped_and_redacted(
        tmp_path: Path, bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(bin_dir, "xclip", f"""
[ "$*" = "-o -selection clipboard" ] || exit 2
printf 'password=hunter2\\n'
printf '%0{MAX_CLIPBOARD * 2}d' 0
""")
    monkeypatch.setenv("DISPLAY", ":99")
    text = (await ClipboardProvider().gather(str(tmp_path)))["clipboard"]
    assert text.startswith("password=[REDACTED]\n000")
    assert len(text) == MAX_CLIPBOARD


async def test_clipboard_falls_back_to_xsel(tmp_path: Path, bin_dir: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(bin_dir, "xclip", "echo 'Error: Can't open display' >&2; exit 1\n")
    fake_program(bin_dir, "xsel", '[ "$*" = "-b -o" ] && printf "from xsel"\n')
    monkeypatch.setenv("DISPLAY", ":99")
    assert await ClipboardProvider().gather(str(tmp_path)) == {"clipboard": "from xsel"}


async def test_clipboard_from_wayland(tmp_path: Path, bin_dir: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(bin_dir, "wl-paste", 'printf "from wayland"\n')
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert await ClipboardProvider().gather(str(tmp_path)) == {"clipboard": "from wayland"}


async def test_clipboard_with_no_reader_installed(tmp_path: Path, bin_dir: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("PATH", str(bin_dir))
    provider = ClipboardProvider()
    assert provider.available() == "none of xclip, xsel, wl-paste is installed"
    assert await provider.gather(str(tmp_path)) == {}
