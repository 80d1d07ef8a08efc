"""Speech in `adjutant chat`, on a real terminal: while an answer is being said, Space,
Esc or Ctrl-C at the prompt stop it; any other key begins the next line; `/copy` puts
what was said on the clipboard (OSC 52 here: no desktop clipboard program). The speech
plays on a real PortAudio stream (ALSA's null device)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from ttskit import ADJUTANT, env, needs_portaudio, null_device

from adjutant.testing import on_terminal

pexpect = pytest.importorskip("pexpect")
pytest.importorskip("adjutant_lmdb")  # the operator's log and mode

#: Long enough to be still speaking when a key is pressed: ALSA's null device plays as
#: fast as the voice makes audio, so the speech lasts as long as its synthesis.
ANSWER = " ".join(f"This is sentence number {i} of a long answer." for i in range(300))
LAST = "sentence number 299 of a long answer."
PROMPT = "> "


def chat(tmp_path: Path, replies: int) -> Any:
    plugins = tmp_path / "plugins" / "scripted_chat-0.dist-info"
    plugins.mkdir(parents=True)
    (plugins / "METADATA").write_text("Metadata-Version: 2.1\nName: scripted-chat\nVersion: 0\n")
    (plugins / "entry_points.txt").write_text(
        "[adjutant]\nscripted = adjutant.testing.scriptfile\n")
    profiles = tmp_path / "home" / "profiles"
    profiles.mkdir(parents=True)
    (profiles / "default.json").write_text(json.dumps(
        {"model": {"provider": "script-file", "model": "script"},
         "speech": {"max_auto_chars": len(ANSWER)}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps({"type": "response", "text": ANSWER})] * replies))
    extra = {"ADJUTANT_LOAD_PLUGINS": "tts,lmdb,scripted", "ADJUTANT_SCRIPT": str(script),
             "PYTHONPATH": str(tmp_path / "plugins"), "NO_COLOR": "1",
             "ALSA_CONFIG_PATH": null_device(tmp_path)}
    environment = {k: v for k, v in env(tmp_path, **extra).items()
                   if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    child = on_terminal(ADJUTANT, ["chat"], env=environment, cwd=str(tmp_path),
                        encoding="utf-8", timeout=90, dimensions=(40, 200))
    child.expect(PROMPT)
    return child


def answered(child: Any) -> None:
    """Ask, and wait for the answer on screen and the prompt after it."""
    child.sendline("tell me something long")
    child.expect(LAST)
    child.expect(PROMPT)


@needs_portaudio
def test_space_esc_and_ctrl_c_stop_the_speech_and_the_session_goes_on(
        tmp_path: Path) -> None:
    child = chat(tmp_path, replies=3)
    try:
        for stop in (" ", "\x1b", "\x03"):
            answered(child)
            child.send(stop)
            child.expect(r"\(stopped speaking\)")
            child.expect(PROMPT)
            child.sendline("/hush")  # nothing left to stop: the speech really ended
            child.expect("nothing is being said")
            child.expect(PROMPT)
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


@needs_portaudio
def test_typing_while_it_speaks_begins_the_line_and_copy_sends_what_was_said(
        tmp_path: Path) -> None:
    child = chat(tmp_path, replies=1)
    try:
        answered(child)
        child.send("/")  # not a stop key: the line begins with it
        child.send("copy\r")
        child.expect(r"\x1b\]52;c;([A-Za-z0-9+/=]+)\x07")
        assert base64.b64decode(child.match.group(1)).decode() == ANSWER
        child.expect(r"copied (\d+) characters to the terminal's clipboard \(OSC 52\)")
        assert int(child.match.group(1)) == len(ANSWER)
        child.sendline("/hush")  # the typed line did not stop the speech
        child.expect(r"\(stopped speaking\)|nothing is being said")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_copy_with_nothing_said_and_no_terminal_is_a_clear_line(tmp_path: Path) -> None:
    from adjutant.clipboard import ClipboardError, copy_text

    class Pipe:
        def isatty(self) -> bool:
            return False

    with pytest.raises(ClipboardError, match="no clipboard here"):
        copy_text("x", terminal=Pipe(), env={"PATH": ""})
    # a clipboard program, where the desktop has one, gets the text on its stdin
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    got = tmp_path / "got"
    xclip = bin_dir / "xclip"
    xclip.write_text(f"#!/bin/sh\ncat > {got}\n")
    xclip.chmod(0o755)
    desktop = {"PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":0"}
    where = copy_text("héllo", terminal=Pipe(), env=desktop)
    assert where == "the clipboard (xclip)" and got.read_text() == "héllo"
