"""Secrets out of everything that leaves the machine or is meant to be shared: bug
bundles, ``adjutant log export``, and the context bulletin sent to a remote model.

Known formats come from a maintained ruleset, gitleaks' (about 200 rules, vendored as
``gitleaks.toml`` beside this file, MIT), applied as gitleaks applies them: a rule's
keywords prefilter each line, its ``secretGroup`` names the secret, its entropy floor
and its allowlists (stopwords, regexes) keep ordinary text. Rules of our own add what a
line-by-line ruleset with entropy floors leaves: a PEM private key's whole block (it
spans lines), credentials in a URL, Authorization headers, well-known token prefixes
whatever their entropy (``ghp_``, ``sk-``, ``AKIA``, ``xox``), and a low-entropy
password after a secret-named key (``db_password=hunter2``). Every redaction is
counted by rule, so a bundle can say what it hid. The rules load on first use.
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["MASK", "Redactor", "redact", "redact_text"]

MASK = "[REDACTED]"
RULES_FILE = Path(__file__).with_name("gitleaks.toml")
#: Longer lines are cut into pieces of this size for the rules (some are quadratic).
_PIECE = 4096


@dataclass(frozen=True)
class _Rule:
    id: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]
    group: int
    entropy: float
    allow: tuple[tuple[str, re.Pattern[str]], ...]  # (target, pattern)
    stopwords: tuple[str, ...]


def _python(regex: str) -> str:
    """A gitleaks (Go RE2) pattern in Python's dialect: ``\\z`` is ``\\Z``, and an inline
    ``(?i)`` after the start (Go scopes it to the rest of the group) becomes global,
    which can only widen what is redacted."""
    regex = regex.replace(r"\z", r"\Z")
    if "(?i)" in regex[1:]:
        regex = "(?i)" + regex.replace("(?i)", "")
    return regex


@functools.cache
def _ruleset() -> tuple[tuple[_Rule, ...], tuple[re.Pattern[str], ...], tuple[str, ...]]:
    config = tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))
    rules = []
    for raw in config.get("rules", []):
        if not raw.get("regex"):
            continue  # a rule on file names only
        try:
            with warnings.catch_warnings():  # "possible nested set": Go's [[ is literal
                warnings.simplefilter("ignore", FutureWarning)
                regex = re.compile(_python(raw["regex"]))
            allow = tuple((a.get("regexTarget", "secret"), re.compile(_python(p)))
                          for a in raw.get("allowlists", []) for p in a.get("regexes", [])
                          if not a.get("paths"))
        except re.error:
            continue  # a construct Python lacks: counted by the benchmark, not fatal
        stop = tuple(w.lower() for a in raw.get("allowlists", []) for w in a.get("stopwords", []))
        rules.append(_Rule(raw["id"], regex, tuple(k.lower() for k in raw.get("keywords", [])),
                           int(raw.get("secretGroup", 0)), float(raw.get("entropy", 0.0)),
                           allow, stop))
    glob = config.get("allowlist", {})
    regexes = []
    for pattern in glob.get("regexes", []):
        try:
            regexes.append(re.compile(_python(pattern)))
        except re.error:
            continue
    return tuple(rules), tuple(regexes), tuple(w.lower() for w in glob.get("stopwords", []))


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
                  r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", re.S)
_URL_CREDENTIALS = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]*):([^\s/@]+)@")
#: Token prefixes that name a secret whatever its entropy (gitleaks' rules want a
#: random-looking body; a short or patterned token is a token all the same).
_PREFIXED = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
                       r"github_pat_[A-Za-z0-9_]{20,}|(?:AKIA|ASIA)[0-9A-Z]{16}\b|"
                       r"xox[abposr]-[A-Za-z0-9-]{10,}|"
                       r"eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)")
_SCHEME = re.compile(r"\b((?:[Bb]earer|Basic)\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])"
                     r"(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,}")
#: A secret-named key (not one naming a secret's name, id, size or file) and a value
#: that is not a bare number: ``db_password=hunter2``, ``--password=...``.
_KEYED = re.compile(r"(?i)\b([a-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|"
                    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key(?:_id)?|credentials?|"
                    r"(?<![a-z])(?:pass|pwd|psk)(?![a-z]))"
                    r"(?![a-z0-9_.-]*(?:name|id|size|length|count|file|path|type|url)\b)"
                    r"[a-z0-9_.-]*)"
                    r"(\"?\s*[=:]\s*)([\"']?)(?!\[REDACTED|(?:[Bb]earer|Basic)\s|\d+\b|[{\[])"
                    r"([^\s\"'&;,]+)")
#: Everyday configuration formats a line-by-line ruleset misses; group ``s`` is the
#: secret: kubeconfig's key data, XML elements and ``<add key=... value=...>``
#: settings named for a secret, ``.pgpass`` lines, ``.netrc`` passwords, a passphrase
#: (words and spaces, to the end of the line), and signatures and tokens in URLs.
_SECRET_WORDS = (r"(?:passw(?:or)?d|passphrase|secret|token|api[_-]?key|apikey|"
                 r"private[_-]?key|connection[_-]?string|credentials?|pwd)")
_CONFIG_PATTERNS = (
    r"(?i)\bclient-key-data\s*:\s*(?P<s>[A-Za-z0-9+/=]{8,})",
    rf"(?i)<(?P<tag>(?:[\w.-]+:)?[\w.-]*{_SECRET_WORDS}[\w.-]*)(?:\s[^>]*)?>"
    r"(?P<s>[^<\s][^<]*)</(?P=tag)>",
    rf"(?i)\bkey\s*=\s*[\"'][\w.:-]*{_SECRET_WORDS}[\w.:-]*[\"']\s+value\s*=\s*"
    r"[\"'](?P<s>[^\"']+)",
    r"^[^:\s#]+:(?:\d+|\*):[^:\s]+:[^:\s]+:(?P<s>\S+)$",
    r"(?i)\blogin\s+\S+\s+password\s+(?P<s>\S+)",
    r"(?i)\b[\w.-]*passphrase[\w.-]*[\"']?\s*[=:]\s*[\"']?(?P<s>(?!\[REDACTED)[^\"'\n]*[^\"'\s])",
    r"(?i)[?&](?:x-amz-signature|x-amz-security-token|x-goog-signature|x-goog-credential|"
    r"signature|sig|access_token|id_token|refresh_token|api_key|apikey|key|code|"
    r"client_secret|token)=(?P<s>(?!\[REDACTED)[^&\s#\"'<>]{6,})",
)


@functools.cache
def _own_rules() -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """The command-line and configuration patterns, compiled on first use (not at
    import: `adjutant mode` imports this module)."""
    return (tuple(re.compile(p) for p in _COMMAND_LINE_PATTERNS),
            tuple(re.compile(p) for p in _CONFIG_PATTERNS))
#: A cookie header's every value (``Cookie: a=1; b=2``, ``Set-Cookie: s=...``).
_COOKIE = re.compile(r"(?i)\b(?:set-)?cookie\s*:\s*(?P<rest>.+)$")
_COOKIE_VALUE = re.compile(r"(=)(?!\[REDACTED)([^;\s]+)")

#: A JSON field whose whole value is a secret: the same names as `_KEYED`, plus
#: ``authorization``, ``cookie`` and ``session`` (a session cookie's value).
_SECRET_FIELD = re.compile(r"(?i)[a-z0-9_.-]*(?:passw(?:or)?d|secret|token|api[_-]?key|apikey|"
                           r"access[_-]?key|private[_-]?key|credentials?|authorization|"
                           r"cookie|session)"
                           r"(?![a-z0-9_.-]*(?:name|id|size|length|count|file|path|type|url|"
                           r"s)$)[a-z0-9_.-]*")


#: Passwords typed on command lines (shell history): each pattern's group ``s`` is the
#: secret. Tools whose password flag is short and would be ambiguous anywhere else
#: (``-p`` is a port or a parent directory for most commands) are named.
_ARG = r"""(?P<q>['"]?)(?P<s>(?!\[REDACTED)[^\s'"|;&]+)(?P=q)"""
_CMD = r"""(?:^|[\s;&|(`])"""
_REST = r"""[^\n|;&]*?\s"""
_COMMAND_LINE_PATTERNS = (
    # mysql -pSECRET (attached: `-p SECRET` prompts and names a database)
    rf"{_CMD}(?:mysql|mariadb|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck)\b"
    rf"{_REST}-p{_ARG}",
    rf"{_CMD}sshpass\s+(?:-[a-oq-zA-Z]\S*\s+)*-p\s*{_ARG}",
    rf"{_CMD}redis-cli\b{_REST}(?:-a|--pass)\s+{_ARG}",
    rf"{_CMD}ldap[a-z]*\b{_REST}-w\s+{_ARG}",
    rf"{_CMD}(?:docker|podman|buildah|skopeo|helm|oc|az|mongo|mongosh|sqlcmd|bcp|"
    rf"vpnc|openconnect|htpasswd|rclone|nmcli)\b{_REST}-[pP]\s+{_ARG}",
    rf"{_CMD}htpasswd\b{_REST}-[a-zA-Z]*b[a-zA-Z]*\s+\S+\s+\S+\s+{_ARG}",
    rf"{_CMD}smbclient\b{_REST}(?:-U\s*|--user[= ])[^\s%]+%{_ARG}",
    rf"{_CMD}nmcli\b{_REST}password\s+{_ARG}",
    rf"{_CMD}(?:curl|wget|http|httpie)\b{_REST}(?:-u|--user)[= ]\s*['\"]?[^\s:'\"]+:{_ARG}",
    # echo SECRET | sudo -S (and printf)
    rf"{_CMD}(?:echo|printf)\s+(?:-[a-z]+\s+)?(?:'%s(?:\\n)?'\s+)?{_ARG}\s*\|\s*sudo\b[^|;&\n]*-S",
    # openssl -passin pass:SECRET, -passout, -password, -pass
    rf"-pass(?:in|out|word)?\s+{_ARG.replace('(?P<s>', 'pass:(?P<s>')}",
    # any --password SECRET / --passwd / --pass / --pwd with a space (`=` is _KEYED's)
    rf"(?:^|\s)--(?:[a-z]+-)?(?:password|passwd|pass|pwd|secret|token)\s+(?!-){_ARG}",
)

@dataclass
class Redactor:
    """Redacts text and JSON-like values, counting what it hid by rule (``found``)."""

    found: Counter[str] = field(default_factory=Counter)

    def text(self, text: str) -> str:
        text = _PEM.sub(self._counted("private-key-block", "[REDACTED PRIVATE KEY]"), text)
        lines = text.split("\n")
        return "\n".join(self._line(line) for line in lines)

    def value(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` (dicts, lists, tuples) with `text` applied to
        every string, and a secret-named key's string or number masked whole
        (``{"password": "hunter2"}``; not ``password_length`` or ``token_count``)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            for k, v in value.items():
                if (isinstance(k, str) and _SECRET_FIELD.fullmatch(k) and v not in ("", None)
                        and isinstance(v, str | int | float) and not isinstance(v, bool)):
                    v = MASK
                    self.found["secret-named-field"] += 1
                else:
                    v = self.value(v)
                out[self._key(k, out, value)] = v
            return out
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def _key(self, key: Any, out: Mapping[Any, Any], original: Mapping[Any, Any]) -> Any:
        """A key with `text` applied: a secret can be a key too (a model proposing an
        argument named after a token). Two keys that redact alike stay two."""
        if not isinstance(key, str) or (hidden := self.text(key)) == key:
            return key
        unique, n = hidden, 2
        while unique in out or unique in original:
            unique, n = f"{hidden} #{n}", n + 1
        return unique

    def _counted(self, rule: str, mask: str) -> Any:
        def replace(match: re.Match[str]) -> str:
            self.found[rule] += 1
            return mask
        return replace

    def _line(self, line: str) -> str:
        if len(line) > _PIECE:
            return "".join(self._line(line[i:i + _PIECE]) for i in range(0, len(line), _PIECE))
        rules, allowed, stopwords = _ruleset()
        lowered = line.lower()
        secrets: dict[str, str] = {}
        for rule in rules:
            if rule.keywords and not any(k in lowered for k in rule.keywords):
                continue
            for match in rule.regex.finditer(line):
                secret = self._secret(match, rule)
                if not secret or secret in secrets or MASK in secret:
                    continue
                if rule.entropy and _entropy(secret) < rule.entropy:
                    continue
                if any(p.search(secret) for p in allowed) or any(
                        w in secret.lower() for w in (*stopwords, *rule.stopwords)):
                    continue
                targets = {"secret": secret, "match": match.group(0), "line": line}
                if any(p.search(targets.get(t, secret)) for t, p in rule.allow):
                    continue
                secrets[secret] = rule.id
        for secret in sorted(secrets, key=len, reverse=True):  # longest first
            self.found[secrets[secret]] += line.count(secret)
            line = line.replace(secret, MASK)
        command_line, config = _own_rules()
        for pattern in command_line:
            line = pattern.sub(self._keep_command, line)
        for pattern in config:
            line = pattern.sub(self._counted_group("configuration-secret"), line)
        line = _COOKIE.sub(self._cookie, line)
        line = _PREFIXED.sub(self._counted("token-prefix", MASK), line)
        line = _URL_CREDENTIALS.sub(self._keep_user, line)
        line = _SCHEME.sub(self._keep_scheme, line)
        return _KEYED.sub(self._keep_key, line)

    @staticmethod
    def _secret(match: re.Match[str], rule: _Rule) -> str:
        if rule.group and rule.group <= (match.re.groups or 0):
            return match.group(rule.group) or ""
        return next((g for g in match.groups() if g), match.group(0))

    def _keep_command(self, match: re.Match[str]) -> str:
        replace: Callable[[re.Match[str]], str] = self._counted_group("command-line-password")
        return replace(match)

    def _counted_group(self, rule: str) -> Callable[[re.Match[str]], str]:
        """A replacement masking only the match's group ``s``."""
        def replace(match: re.Match[str]) -> str:
            self.found[rule] += 1
            start, end = match.span("s")
            whole = match.group(0)
            return f"{whole[:start - match.start()]}{MASK}{whole[end - match.start():]}"
        return replace

    def _cookie(self, match: re.Match[str]) -> str:
        rest, count = _COOKIE_VALUE.subn(rf"\1{MASK}", match.group("rest"))
        self.found["cookie"] += count
        return match.group(0)[:match.start("rest") - match.start()] + rest

    def _keep_user(self, match: re.Match[str]) -> str:
        if match.group(2) == MASK:
            return match.group(0)
        self.found["url-credentials"] += 1
        return f"{match.group(1)}:{MASK}@"

    def _keep_scheme(self, match: re.Match[str]) -> str:
        self.found["authorization-header"] += 1
        return f"{match.group(1)}{MASK}"

    def _keep_key(self, match: re.Match[str]) -> str:
        self.found["secret-named-key"] += 1
        return f"{match.group(1)}{match.group(2)}{match.group(3)}{MASK}"


def redact_text(text: str) -> str:
    """``text`` with every secret it holds replaced by ``[REDACTED]``."""
    return Redactor().text(text)


def redact(value: Any) -> Any:
    """`redact_text` applied to every string in a JSON-like ``value``."""
    return Redactor().value(value)
