"""The page shows names, paths, arguments and output through `static/printable.js`,
which must escape exactly what the terminal's `printable` escapes (what the user
approves in the dock is what runs, as in the terminal). Node runs the module; Python's
rules are the reference."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from adjutant.safety.terminal import printable

STATIC = Path(__file__).resolve().parents[1] / "src" / "adjutant_dock" / "static"
#: Every code point up to U+3000, the specials above it, the tags, and some emoji.
CODES = [*range(0, 0x3000), 0xFEFF, *range(0xFFF0, 0x10000), *range(0xE0000, 0xE0081),
         0x1F600, 0x1F469, 0x10FFFF]


def test_the_page_escapes_exactly_what_the_terminal_escapes() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    texts = ["".join(chr(c) for c in CODES[i:i + 64]) for i in range(0, len(CODES), 64)]
    texts += ["photo_\u202egnp.sh", "a\r\nb\rc", "notes\u200b.txt", "\U000e0041"]
    script = f"""
        import {{ printable, printableJSON }} from "{(STATIC / 'printable.js').as_uri()}";
        import {{ readFileSync }} from "node:fs";
        const texts = JSON.parse(readFileSync(0, "utf8"));
        console.log(JSON.stringify(texts.map((t) => [printable(t),
          printable(t, {{ multiline: false }}), JSON.parse(printableJSON({{ a: t }})).a,
          printableJSON({{ a: t }})])));
    """
    done = subprocess.run([node, "--input-type=module", "-e", script], input=json.dumps(texts),
                          capture_output=True, text=True, timeout=60, check=True)
    shown = json.loads(done.stdout)
    for text, (multi, one, parsed, as_json) in zip(texts, shown, strict=True):
        assert multi == printable(text), text
        assert one == printable(text, multiline=False), text
        assert parsed == text  # the arguments editor's JSON parses back to the value
        assert printable(as_json) == as_json  # and shows no raw control
    assert shown[-4][0] == "photo_\\u202egnp.sh"
