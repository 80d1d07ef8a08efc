"""`cage_refusal`: the names the in-process file tools refuse below a cage.

The list used to live in adjutant-files (``_cage.PROTECTED_NAMES`` and friends); it
is core's `CAGE_RULES` now. `_former` is that plugin's check, kept verbatim as the
oracle: the rules must refuse everything it refused (nothing weakened).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adjutant.safety.protection import CAGE_RULES, cage_refusal

_NAMES = frozenset({
    ".mcp.json", ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".cshrc", ".tcshrc", ".kshrc", ".inputrc",
    ".npmrc", ".pypirc", ".netrc", ".gitconfig", ".git-credentials", "config.fish",
})
_DIRS = frozenset({".adjutant", ".ssh", ".gnupg", ".aws"})
_PAIRS = frozenset({(".cursor", "mcp.json"), (".vscode", "mcp.json"),
                    (".claude", "settings.json"), (".claude", "settings.local.json")})


def _former(parts: Sequence[str]) -> str | None:
    """adjutant-files' ``protected_reason`` before the move, unchanged."""
    lowered = [p.casefold() for p in parts]
    for i, name in enumerate(lowered):
        if name in _DIRS:
            return f"{name}/ is protected"
        if name == ".git" and i + 1 < len(lowered) and lowered[i + 1] in ("config", "hooks"):
            return f".git/{lowered[i + 1]} is protected"
    if not lowered:
        return None
    last = lowered[-1]
    if last in _NAMES or last == ".env" or last.startswith(".env."):
        return f"{last} is protected"
    if len(lowered) >= 2 and (lowered[-2], last) in _PAIRS:
        return f"{lowered[-2]}/{last} is protected"
    if last.startswith(".adjutant-") and last.endswith(".tmp"):
        return "the file tools' temporary files are protected"
    return None


REFUSED = [
    ".env", "src/.env", ".env.local", ".env.", ".ENV", "a/b/.env.example",
    ".ssh", ".ssh/id_rsa", "home/.SSH/config", ".gnupg/x", ".aws/credentials",
    ".adjutant", ".adjutant/skills/reviewer.md", ".adjutant-0123abcd.tmp", ".adjutant-.tmp",
    ".git/config", ".git/config/x", ".git/hooks", ".git/hooks/pre-commit", "s/.Git/HOOKS/x",
    ".bashrc", "copied-home/.zshrc", ".config/fish/config.fish", ".inputrc", ".profile",
    ".npmrc", "pkg/.pypirc", ".netrc", ".gitconfig", ".git-credentials",
    ".mcp.json", ".cursor/mcp.json", ".vscode/mcp.json", "x/.claude/settings.json",
    ".claude/settings.local.json", ".\u00dfh/key",  # casefolds to .ssh
]
ALLOWED = [
    "notes.txt", "src/app.py", ".envrc", "env", ".environment", ".git", ".git/HEAD",
    ".git/objects/ab/cd", ".gitignore", ".bashrc/inside", "mcp.json", ".vscode/settings.json",
    ".claude/agents.md", ".adjutant-x", "x.adjutant-1.tmp", ".sshd", "aws/credentials",
    ".config/fish/functions/f.fish",
]


@pytest.mark.parametrize("path", REFUSED)
def test_refused_below_a_cage(path: str) -> None:
    why = cage_refusal(path.split("/"))
    assert why is not None and why.startswith(f"{path} matches ")
    assert _former(path.split("/")) is not None  # the old list refused it too


@pytest.mark.parametrize("path", ALLOWED)
def test_ordinary_paths_pass(path: str) -> None:
    assert cage_refusal(path.split("/")) is None
    assert _former(path.split("/")) is None


def test_the_cage_root_itself_passes() -> None:
    assert cage_refusal(()) is None


def test_every_rule_refuses_reads_too() -> None:
    assert all(spec.reads for spec in CAGE_RULES)


_PIECES = sorted({*_NAMES, *_DIRS, *(p for pair in _PAIRS for p in pair), ".git", "config",
                  "hooks", ".env", ".env.x", ".adjutant-1.tmp", "a", "src", ".Bashrc",
                  "HOOKS", ".SSH", "\u00df", ".\u00dfh", "K", "\u212a"})
_component = st.one_of(st.sampled_from(_PIECES),
                       st.text(st.characters(blacklist_characters="/\x00"), min_size=1,
                               max_size=8).filter(lambda s: s not in (".", "..")))


@settings(max_examples=2000, deadline=None)
@given(st.lists(_component, max_size=5))
def test_refuses_everything_the_former_list_refused(parts: list[str]) -> None:
    if _former(parts) is not None:
        assert cage_refusal(parts) is not None, parts
    else:  # and nothing more: the move changed no verdict
        assert cage_refusal(parts) is None, parts
