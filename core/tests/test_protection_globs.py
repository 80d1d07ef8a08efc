"""The glob matcher: `**` crosses directories, `*` never does."""

import pytest

from adjutant.safety.protection import Glob


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        # `*` and `?` stay inside one component (fnmatch would let them cross "/").
        ("/a/*/c", "/a/b/c", True),
        ("/a/*/c", "/a/b/x/c", False),
        ("/a/*", "/a/b/c", False),
        ("/a/?", "/a/b", True),
        ("/a/?", "/a/bc", False),
        ("/a/?c", "/a//c", False),
        ("/a/*.txt", "/a/.hidden.txt", True),  # dot files included: over-matching denies
        # `**` is zero or more whole components.
        ("/a/**/c", "/a/c", True),
        ("/a/**/c", "/a/b/c", True),
        ("/a/**/c", "/a/b/x/y/c", True),
        ("/a/**/c", "/a/b/cc", False),
        ("/a/**/c", "/ab/c", False),
        ("/**/.env", "/.env", True),
        ("/**/.env", "/w/p/.env", True),
        ("/**/.env", "/w/p/x.env", False),
        ("/**/.git/hooks/**", "/w/p/.git/hooks", True),
        ("/**/.git/hooks/**", "/w/p/.git/hooks/pre-commit", True),
        ("/**/.git/hooks/**", "/w/p/.git/hooksx/a", False),
        # A trailing `/**` covers the directory itself (replacing it is as bad).
        ("/etc/**", "/etc", True),
        ("/etc/**", "/etc/passwd", True),
        ("/etc/**", "/etc/ssh/sshd_config", True),
        ("/etc/**", "/etcetera", False),
        ("/etc/**", "/", False),
        ("/**", "/", True),
        ("/**", "/anything/at/all", True),
        # `**` inside a component is a plain `*`.
        ("/a/b**", "/a/bcd", True),
        ("/a/b**", "/a/b/c", False),
        # Classes never match "/", negated or not; "!" and "^" negate.
        ("/a/[bc]", "/a/c", True),
        ("/a/[!bc]", "/a/d", True),
        ("/a/[!bc]", "/a/b", False),
        ("/a[!x]b", "/a/b", False),
        ("/proc/[0-9]*/**", "/proc/123/root", True),
        ("/proc/[0-9]*/**", "/proc/self", False),
        ("/a/[]]", "/a/]", True),
        ("/a/[x", "/a/[x", True),  # an unclosed class is literal
        # Regex metacharacters are literal.
        ("/a/x+y(1).txt", "/a/x+y(1).txt", True),
        ("/a/x+y(1).txt", "/a/xxy1.txt", False),
        ("/a/b.c", "/a/bxc", False),
        # Case-insensitive on purpose (case-insensitive file systems exist).
        ("/**/.git/**", "/w/.GIT/config", True),
        ("/h/.ssh/**", "/h/.SSH/id_rsa", True),
        # Newlines are ordinary characters in file names.
        ("/a/*", "/a/x\ny", True),
        ("/a/**/z", "/a/x\ny/z", True),
        # Unicode components.
        ("/a/*/z", "/a/日本語/z", True),
        ("/a/é", "/a/É", True),
        # Duplicate and trailing slashes in the pattern are ignored.
        ("//a//b/", "/a/b", True),
    ],
)
def test_glob(pattern: str, path: str, hit: bool) -> None:
    assert Glob(pattern).match(path) is hit


def test_relative_glob_is_refused() -> None:
    with pytest.raises(ValueError, match="absolute"):
        Glob("a/b")
