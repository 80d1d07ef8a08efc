"""The deny patterns: what no tool call may touch, in any mode, cage or not.

Two kinds of rule:

- *secrets* (``reads=True``): credentials and Adjutant's own files. Reading them is
  refused too, because what a tool reads goes to the model, and the model may be a
  remote service.
- *protected* (``reads=False``): files that make something run code later (git
  hooks and config, MCP server lists, shell start-up files) and system files.
  Reading them is judged like any other read; writing, creating, replacing or
  deleting them is refused, even inside a cage and even when they do not exist yet.

Patterns are written with two placeholders: ``~/`` (the user's home, from the request
and from the process, each as given and as resolved) and ``$DATA/`` (Adjutant's data
directory). A pattern without a leading ``/`` matches at any depth (``**/.env``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ._globs import FLAGS, Glob

__all__ = ["CAGE_RULES", "DEFAULT_RULES", "Protection", "Rule", "RuleSpec", "allowed_globs",
           "cage_protection", "protection"]


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """Patterns sharing a label (shown to the user) and a read/write scope."""

    label: str
    patterns: tuple[str, ...]
    #: True: reads are refused as well as writes.
    reads: bool
    #: File names exempt from the rule (``.env.example`` holds no secret).
    unless: tuple[str, ...] = ()


_ENV_SAMPLES = ("**/.env.example", "**/.env.sample", "**/.env.template", "**/.env.dist")

DEFAULT_RULES: tuple[RuleSpec, ...] = (
    RuleSpec(
        "Adjutant's own configuration, data and logs",
        (
            "$DATA/**",
            "~/.config/adjutant/**",
            "~/.local/share/adjutant/**",
            "~/.local/state/adjutant/**",
            "~/.cache/adjutant/**",
        ),
        reads=True,
    ),
    RuleSpec("SSH keys and configuration", ("~/.ssh/**",), reads=True),
    RuleSpec(
        "an SSH private key",
        tuple(f"**/id_{k}{s}" for k in ("rsa", "dsa", "ecdsa", "ed25519") for s in ("", "_sk")),
        reads=True,
    ),
    RuleSpec(
        "credentials",
        (
            "~/.gnupg/**",
            "~/.aws/**",
            "~/.azure/**",
            "~/.config/gcloud/**",
            "~/.kube/**",
            "~/.docker/config.json",
            "~/.netrc",
            "~/.git-credentials",
            "~/.config/git/credentials",
            "~/.config/gh/**",
            "~/.pgpass",
            "~/.my.cnf",
            "~/.npmrc",
            "~/.pypirc",
            "~/.cargo/credentials",
            "~/.cargo/credentials.toml",
            "~/.gem/credentials",
            "~/.vault-token",
            "~/.terraform.d/credentials.tfrc.json",
            "~/.password-store/**",
            "~/.local/share/keyrings/**",
            "~/.mozilla/**",
            "~/.config/google-chrome/**",
            "~/.config/chromium/**",
        ),
        reads=True,
    ),
    RuleSpec(
        "a private key or key store (by its name)",
        ("**/*.key", "**/*.p12", "**/*.pfx", "**/*.pkcs12", "**/*.p8", "**/*.jks",
         "**/*.keystore", "**/*.ppk", "**/*.kdbx", "**/key.pem", "**/*-key.pem",
         "**/*_key.pem", "**/privkey*.pem", "**/private*.pem", "**/*private*.key*",
         "**/id_rsa*", "**/id_dsa*", "**/id_ecdsa*", "**/id_ed25519*", "**/deploy_key*",
         "**/ssh_host_*_key", "**/secring.*", "**/*.tfstate", "**/*.tfstate.backup",
         "**/wallet.dat", "**/.dockercfg", "**/kubeconfig", "**/.kube/config"),
        reads=True,
        unless=("**/*.pub",),
    ),
    RuleSpec(
        "an environment file (it usually holds API keys)",
        ("**/.env", "**/.env.*"),
        reads=True,
        unless=_ENV_SAMPLES,
    ),
    RuleSpec(
        "system secrets",
        (
            "/etc/shadow",
            "/etc/shadow-",
            "/etc/gshadow",
            "/etc/gshadow-",
            "/etc/sudoers",
            "/etc/sudoers.d/**",
            "/etc/ssh/ssh_host_*_key",
            "/etc/ssl/private/**",
        ),
        reads=True,
    ),
    RuleSpec(
        "git's own files (its config and hooks run code)",
        ("**/.git", "**/.git/**", "~/.gitconfig", "~/.config/git/**"),
        reads=False,
    ),
    RuleSpec(
        "MCP server configuration (it starts programs)",
        (
            "**/.mcp.json",
            "**/claude_desktop_config.json",
            "~/.config/claude/**",
            "~/.claude.json",
            "~/.claude/**",
            "**/.claude/settings.json",
            "**/.claude/settings.local.json",
            "**/.cursor/mcp.json",
            "**/.vscode/mcp.json",
            "**/.gemini/settings.json",
            "~/.codeium/windsurf/mcp_config.json",
            "~/.config/Code/User/mcp.json",
        ),
        reads=False,
    ),
    RuleSpec(
        "a shell or session start-up file (it runs code at login)",
        (
            "~/.bashrc",
            "~/.bash_profile",
            "~/.bash_login",
            "~/.bash_logout",
            "~/.bash_aliases",
            "~/.profile",
            "~/.zshrc",
            "~/.zshenv",
            "~/.zprofile",
            "~/.zlogin",
            "~/.zlogout",
            "~/.config/zsh/**",
            "~/.oh-my-zsh/**",
            "~/.config/fish/**",
            "~/.config/nushell/**",
            "~/.inputrc",
            "~/.cshrc",
            "~/.tcshrc",
            "~/.kshrc",
            "~/.mkshrc",
            "~/.pam_environment",
            "~/.config/environment.d/**",
            "~/.xprofile",
            "~/.xinitrc",
            "~/.xsession",
            "~/.xsessionrc",
            "~/.config/autostart/**",
            "~/.config/autostart-scripts/**",
            "~/.config/plasma-workspace/env/**",
            "~/.config/plasma-workspace/shutdown/**",
            "~/.config/systemd/**",
            "~/.local/share/systemd/**",
            # a launcher under a known name (firefox.desktop) runs whatever it says
            "~/.local/share/applications/**",
            "**/.envrc",
        ),
        reads=False,
    ),
    RuleSpec(
        "system files",
        (
            "/etc/**",
            "/usr/**",
            "/bin/**",
            "/sbin/**",
            "/lib*/**",
            "/boot/**",
            "/sys/**",
            "/proc/**",
            "/dev/**",
            "/var/spool/cron/**",
        ),
        reads=False,
    ),
)


#: Refused below a cage by the tools that enforce the cage in-process (``fs.read``,
#: ``fs.write``, ``editor.patch``, ``compress.zip``... of adjutant-files), for reads
#: and writes alike and whether the file exists or not: what a project, or a home
#: copied into one, holds at *any depth* that runs code or holds a credential.
#: Matched on the path relative to the cage (`adjutant.safety.protection.cage_refusal`), so
#: a cage at ``/w/proj`` judges ``/w/proj/a/.bashrc`` as ``/a/.bashrc``. Stricter than
#: `DEFAULT_RULES` on purpose (no ``.env.example`` exemption, reads refused too): these
#: tools hand what they read to the model, and none of these names is a project file.
CAGE_RULES: tuple[RuleSpec, ...] = (
    RuleSpec("Adjutant's own files", ("**/.adjutant/**", "**/.adjutant-*.tmp"), reads=True),
    RuleSpec(
        "credentials",
        (
            "**/.ssh/**",
            "**/.gnupg/**",
            "**/.aws/**",
            "**/.netrc",
            "**/.git-credentials",
            "**/.npmrc",
            "**/.pypirc",
        ),
        reads=True,
    ),
    RuleSpec("an environment file (it usually holds API keys)", ("**/.env", "**/.env.*"),
             reads=True),
    RuleSpec(
        "git's configuration and hooks (they run code)",
        ("**/.git/config/**", "**/.git/hooks/**", "**/.gitconfig"),
        reads=True,
    ),
    RuleSpec(
        "MCP or editor configuration (it starts programs)",
        (
            "**/.mcp.json",
            "**/.cursor/mcp.json",
            "**/.vscode/mcp.json",
            "**/.claude/settings.json",
            "**/.claude/settings.local.json",
        ),
        reads=True,
    ),
    RuleSpec(
        "a shell start-up file (it runs code at login)",
        (
            "**/.bashrc",
            "**/.bash_profile",
            "**/.bash_login",
            "**/.profile",
            "**/.zshrc",
            "**/.zshenv",
            "**/.zprofile",
            "**/.zlogin",
            "**/.cshrc",
            "**/.tcshrc",
            "**/.kshrc",
            "**/.inputrc",
            "**/config.fish",
        ),
        reads=True,
    ),
)


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled pattern and the rule it belongs to."""

    glob: Glob
    label: str
    reads: bool
    #: The pattern as written (``~/.ssh/**``), for reasons.
    source: str
    unless: tuple[Glob, ...] = ()

    def matches(self, path: str) -> bool:
        return self.glob.match(path) and not any(g.match(path) for g in self.unless)


class Protection:
    """Compiled rules; `match` finds the first rule (in declaration order) that fires."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        # One alternation per access kind rejects the usual unprotected path in a
        # single regex call; only a hit walks the rules to find which one.
        self._any = {
            write: _union(r.glob for r in self.rules if write or r.reads) for write in (True, False)
        }
        # Fixed locations (no wildcard): a write to a directory above one of them
        # (moving or deleting ~/.config, the home, "/") reaches it too.
        self.anchors = tuple(
            (anchor.casefold(), rule)
            for rule in self.rules
            for anchor in (rule.glob.pattern.removesuffix("/**"),)
            if not _WILD.intersection(anchor)
        )

    def match(self, names: Iterable[str], *, write: bool) -> tuple[Rule, str] | None:
        """The first rule that protects any of ``names`` against this access."""
        quick = self._any[write]
        names = tuple(n for n in names if quick.fullmatch(n))
        for rule in self.rules:
            if write or rule.reads:
                for name in names:
                    if rule.matches(name):
                        return rule, name
        return None

    def below(self, directory: str) -> tuple[Rule, str] | None:
        """A protected fixed location strictly inside ``directory``, and its rule."""
        prefix = directory.casefold().rstrip("/") + "/"
        for anchor, rule in self.anchors:
            if anchor.startswith(prefix):
                return rule, rule.glob.pattern.removesuffix("/**")
        return None


_WILD = frozenset("*?[")


def _union(globs: Iterable[Glob]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{g.regex})" for g in globs) or "(?!)", FLAGS)


def _expand(pattern: str, homes: tuple[str, ...], data_homes: tuple[str, ...]) -> list[str]:
    if not isinstance(pattern, str) or not pattern or "\x00" in pattern:
        raise ValueError(f"unusable path pattern {pattern!r}")
    if pattern == "~" or pattern.startswith("~/"):
        return [home.rstrip("/") + pattern[1:] for home in homes]
    if pattern.startswith("$DATA/"):
        return [data.rstrip("/") + pattern[5:] for data in data_homes]
    if pattern.startswith("/"):
        return [pattern]
    if pattern.startswith("~"):
        raise ValueError(f"path pattern {pattern!r}: only ~/ is understood")
    return ["/**/" + pattern]


@functools.lru_cache(maxsize=64)
def protection(
    homes: tuple[str, ...],
    data_homes: tuple[str, ...],
    forbid: tuple[str, ...] = (),
    tool: str = "the tool",
) -> Protection:
    """The default rules plus a tool's ``forbid_patterns`` (reads and writes refused).

    Cached: the same homes and patterns compile once. Raises ValueError on a
    pattern that cannot be used (the caller refuses the call).
    """
    rules: list[Rule] = []
    for spec in DEFAULT_RULES:
        unless = tuple(Glob(u) for p in spec.unless for u in _expand(p, homes, data_homes))
        for pattern in spec.patterns:
            for expanded in _expand(pattern, homes, data_homes):
                rules.append(Rule(Glob(expanded), spec.label, spec.reads, pattern, unless))
    for pattern in forbid:
        for expanded in _expand(pattern, homes, data_homes):
            rules.append(Rule(Glob(expanded), f"a path {tool} forbids", True, pattern))
    return Protection(rules)


@functools.lru_cache(maxsize=64)
def allowed_globs(
    patterns: tuple[str, ...], homes: tuple[str, ...], cages: tuple[str, ...]
) -> tuple[Glob, ...]:
    """A tool's ``allowed_paths``; a relative pattern is taken inside each cage."""
    globs: list[Glob] = []
    for pattern in patterns:
        if isinstance(pattern, str) and pattern and not pattern.startswith(("/", "~")):
            globs.extend(Glob(f"{cage.rstrip('/')}/{pattern}") for cage in cages)
        else:
            globs.extend(Glob(p) for p in _expand(pattern, homes, ()))
    return tuple(globs)


@functools.lru_cache(maxsize=1)
def cage_protection() -> Protection:
    """`CAGE_RULES`, compiled: matched against ``"/" + path relative to the cage``."""
    return Protection([Rule(Glob(expanded), spec.label, spec.reads, pattern)
                       for spec in CAGE_RULES for pattern in spec.patterns
                       for expanded in _expand(pattern, (), ())])
