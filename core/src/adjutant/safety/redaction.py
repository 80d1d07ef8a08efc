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
import json
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
    #: The regular expression, compiled on first use (`compiled`): most rules wait for
    #: a keyword, and compiling all 230 cost 0.2-0.6 s of every cold `adjutant` run.
    source: str
    keywords: tuple[str, ...]
    group: int
    entropy: float
    allow: tuple[tuple[str, str], ...]  # (target, regex)
    stopwords: tuple[str, ...]

    def compiled(self) -> tuple[re.Pattern[str], tuple[tuple[str, re.Pattern[str]], ...]] | None:
        """The rule's pattern and its allowlist's, or None for a construct Python lacks."""
        return _compile(self.source, self.allow)


@functools.cache
def _compile(source: str, allow: tuple[tuple[str, str], ...],
             ) -> tuple[re.Pattern[str], tuple[tuple[str, re.Pattern[str]], ...]] | None:
    try:
        with warnings.catch_warnings():  # "possible nested set": Go's [[ is literal
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(source), tuple((t, re.compile(p)) for t, p in allow)
    except re.error:
        return None  # counted by the benchmark, not fatal


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
        allow = tuple((a.get("regexTarget", "secret"), _python(p))
                      for a in raw.get("allowlists", []) for p in a.get("regexes", [])
                      if not a.get("paths"))
        stop = tuple(w.lower() for a in raw.get("allowlists", []) for w in a.get("stopwords", []))
        rule = _Rule(raw["id"], _python(raw["regex"]), tuple(k.lower() for k in
                     raw.get("keywords", [])), int(raw.get("secretGroup", 0)),
                     float(raw.get("entropy", 0.0)), allow, stop)
        if rule.keywords or rule.compiled() is not None:  # no keyword: checked now
            rules.append(rule)
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
_KEYED = re.compile(r"(?i)\b([a-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|sshpass|"
                    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key(?:_id)?|credentials?|"
                    r"(?<![a-z])(?:pass|pwd|psk|pat)(?![a-z]))"
                    r"(?![a-z0-9_.-]*(?:name|id|size|length|count|file|path|type|url)\b)"
                    r"[a-z0-9_.-]*)"
                    # "key": value, key=value, config['KEY'] = value, \"key\": (JSON in a string)
                    r"(\\?[\"']?\]?\s*[=:]\s*)(\\?[\"']?)"
                    r"(?!\[REDACTED|(?:[Bb]earer|Basic)\s|\d+\b|[{\[|>])"
                    # a quoted value to its closing quote (spaces and all), else one word
                    r"((?<=\")[^\"\n\\]+|(?<=')[^'\n\\]+|[^\s\"'&;,\\]+)")
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
    r"(?i)\b(?:identified\s+by|password)\s+(?P<q>['\"])(?P<s>[^'\"\n]+)(?P=q)",
    # a YAML block scalar under a secret-named key, its newlines escaped (a preview or a
    # JSON string quoting it): each line of the block up to the next key or quote
    rf"(?i)[\w.-]*{_SECRET_WORDS}[\w.-]*[\"']?[ \t]*:[ \t]*[|>][-+0-9]*[ \t]*\\n"
    r"(?P<s>(?:[ \t]+[^\\\"\n]+\\n)+)",
)
#: An AWS secret access key beside its key id (the console's accessKeys.csv), read
#: before the key id itself is masked.
_AWS_PAIR = re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}\b.*?(?<![A-Za-z0-9/+])"
                       r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")


@functools.cache
def _own_rules() -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """The command-line and configuration patterns, compiled on first use (not at
    import: `adjutant mode` imports this module)."""
    return (tuple(re.compile(p) for p in _COMMAND_LINE_PATTERNS),
            tuple(re.compile(p) for p in _CONFIG_PATTERNS))
#: Secrets that span lines, found before the text is cut into lines: a YAML block
#: scalar (``password: |``) or list (``api_keys:`` then ``- ...``) under a secret-named
#: key, a ``name: DB_PASSWORD`` / ``value: ...`` pair (Kubernetes, ECS), a PuTTY key's
#: private lines, and an AWS secret key on the line after its key id.
_MULTILINE = (
    (re.compile(rf"(?im)^([ \t]*)(?:-[ \t]+)?[\"']?[\w.-]*{_SECRET_WORDS}[\w.-]*[\"']?[ \t]*:"
                r"[ \t]*[|>][-+0-9]*[ \t]*\n(?P<block>(?:(?:\1[ \t]+\S[^\n]*|[ \t]*)(?:\n|$))+)"),
     "block"),
    (re.compile(rf"(?im)^([ \t]*)[\"']?[\w.-]*{_SECRET_WORDS}s?[\w.-]*[\"']?[ \t]*:[ \t]*\n"
                r"(?P<block>(?:\1[ \t]*-[ \t]+\S[^\n]*(?:\n|$))+)"), "block"),
    (re.compile(rf"(?im)\bname:[ \t]*[\"']?[\w.-]*{_SECRET_WORDS}[\w.-]*[\"']?[ \t]*\n"
                r"[ \t]*(?:-[ \t]+)?value:[ \t]*(?P<q>[\"']?)(?P<s>[^\n\"']+)(?P=q)"), "s"),
    (re.compile(r"(?m)^Private-Lines:[ \t]*\d+[ \t]*\n"
                r"(?P<block>(?:[A-Za-z0-9+/=]+[ \t]*(?:\n|$))+)"), "block"),
    (re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}\b[^\n]*\n[ \t]*"
                r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"), "s"),
)
#: A base64-encoded PEM block ("-----BEGIN" is ``LS0tLS1CRUdJTi``): a private key's is
#: masked (a certificate's is public).
_BASE64_PEM = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2}")
#: Percent-encoding (``postgres%3A%2F%2Fapp%3Apw%40db``): the rules read it decoded.
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")

#: A cookie header's every value (``Cookie: a=1; b=2``, ``Set-Cookie: s=...``).
_COOKIE = re.compile(r"(?i)\b(?:set-)?cookie\s*:\s*(?P<rest>.+)$")
_COOKIE_VALUE = re.compile(r"(=)(?!\[REDACTED)([^;\s]+)")

#: A JSON field whose whole value is a secret: the same names as `_KEYED`, plus
#: ``authorization``, ``cookie`` and ``session`` (a session cookie's value).
_SECRET_FIELD = re.compile(r"(?i)[a-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|"
                           r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|"
                           r"authorization|cookie|session|sshpass|"
                           r"(?<![a-z])(?:pass|pwd|psk|pat)(?![a-z]))"
                           r"(?![a-z0-9_.-]*(?:name|id|size|length|count|file|path|type|url|"
                           r"s)$)[a-z0-9_.-]*")


#: Passwords typed on command lines (shell history): each pattern's group ``s`` is the
#: secret. Tools whose password flag is short and would be ambiguous anywhere else
#: (``-p`` is a port or a parent directory for most commands) are named.
_ARG = r"""(?P<q>['"]?)(?P<s>(?!\[REDACTED)[^\s'"|;&]+)(?P=q)"""
_CMD = r"""(?:^|[\s;&|(`'"])"""
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
    # echo SECRET | sudo -S (and printf, chpasswd, --password-stdin, --with-token)
    rf"{_CMD}(?:echo|printf)\s+(?:-[a-z]+\s+)?(?:'%s(?:\\n)?'\s+)?{_ARG}\s*\|\s*"
    rf"(?:sudo\b[^|;&\n]*-S|chpasswd|passwd\b[^|;&\n]*--stdin|"
    rf"[^|;&\n]*(?:--password-stdin|--with-token))",
    # openssl -passin pass:SECRET, -passout, -password, -pass
    rf"-pass(?:in|out|word)?\s+{_ARG.replace('(?P<s>', 'pass:(?P<s>')}",
    # any --password SECRET / --passwd / --pass / --pwd with a space (`=` is _KEYED's)
    rf"(?:^|\s)--(?:[a-z]+-)?(?:password|passwd|pass|pwd|secret|token|passphrase)\s+(?!-){_ARG}",
    rf"{_CMD}(?:zip|7z|7za|unzip)\b{_REST}-P\s+{_ARG}",
    rf"{_CMD}(?:7z|7za)\b{_REST}-p{_ARG}",
    rf"{_CMD}openssl\b{_REST}-k\s+{_ARG}",
    rf"{_CMD}(?:keytool|jarsigner)\b{_REST}-(?:src|dest)?(?:store|key)pass\s+{_ARG}",
    rf"{_CMD}(?:twine|pip|poetry)\b{_REST}(?:-p|--password)\s+{_ARG}",
    rf"{_CMD}ssh-keygen\b{_REST}-[NP]\s+{_ARG}",
    rf"{_CMD}vault\s+login\s+(?:-\S+\s+)*{_ARG}",
    rf"{_CMD}gh\s+secret\s+set\b{_REST}(?:-b|--body)[= ]\s*{_ARG}",
    rf"{_CMD}aws\s+configure\s+set\s+\S*(?:secret|key|token|password)\S*\s+{_ARG}",
    rf"(?i)_auth(?:token)?\s+{_ARG}",
)

def _secret_scalar(value: Any) -> bool:
    return value not in ("", None) and isinstance(value, str | int | float) \
        and not isinstance(value, bool)


@dataclass
class Redactor:
    """Redacts text and JSON-like values, counting what it hid by rule (``found``)."""

    found: Counter[str] = field(default_factory=Counter)

    def text(self, text: str, *, _depth: int = 0) -> str:
        if _depth < 3 and (embedded := self._embedded(text, _depth)) is not None:
            return embedded
        text = _PEM.sub(self._counted("private-key-block", "[REDACTED PRIVATE KEY]"), text)
        for pattern, group in _MULTILINE:
            text = pattern.sub(self._masked_lines(group), text)
        lines = text.split("\n")
        return "\n".join(self._line(line) for line in lines)

    def _embedded(self, text: str, depth: int) -> str | None:
        """``text`` when it holds a document of its own: a JSON document (a model's raw
        reply, a config passed as a string) redacted as data, its escaped newlines and
        quotes no longer hiding a secret; a percent-encoded one read decoded. None:
        plain text."""
        stripped = text.strip()
        if stripped[:1] in ("{", "[", '"') and len(stripped) < (1 << 20):
            try:
                document = json.loads(stripped)
            except ValueError:
                document = None
            if isinstance(document, str):  # a JSON string of a document: encoded twice
                before = sum(self.found.values())
                inner = self.text(document, _depth=depth + 1)
                return json.dumps(inner, ensure_ascii=False) if sum(
                    self.found.values()) != before else None
            if isinstance(document, dict | list):
                before = sum(self.found.values())
                redacted = self._value(document, depth + 1)
                if sum(self.found.values()) != before:
                    return json.dumps(redacted, ensure_ascii=False)
                return None  # nothing by structure: the line rules read it as text
        if _PERCENT.search(text):
            from urllib.parse import unquote

            decoded = unquote(text)
            if decoded != text:
                before = sum(self.found.values())
                redacted = self.text(decoded, _depth=depth + 1)
                if sum(self.found.values()) != before:
                    return redacted  # decoded: a shared copy need not keep the encoding
        return None

    def _masked_lines(self, group: str) -> Callable[[re.Match[str]], str]:
        """A replacement masking group ``group``: each of its lines keeps its indent
        (and a list item its dash), the rest becomes the mask."""
        def replace(match: re.Match[str]) -> str:
            self.found["multi-line-secret"] += 1
            start, end = match.span(group)
            lines = []
            for line in match.group(group).split("\n"):
                kept = re.match(r"[ \t]*(?:-[ \t]+)?", line)
                head = kept.group(0) if kept else ""
                lines.append(f"{head}{MASK}" if line.strip() else line)
            whole, at = match.group(0), match.start()
            return f"{whole[:start - at]}{chr(10).join(lines)}{whole[end - at:]}"
        return replace

    def value(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` (dicts, lists, tuples) with `text` applied to
        every string, and a secret-named key's string or number masked whole
        (``{"password": "hunter2"}``; not ``password_length`` or ``token_count``), a
        secret-named key's list of strings masked item by item, the ``value`` of a
        ``{"name": "DB_PASSWORD", "value": ...}`` pair masked, and a list of words (a
        command's argv) read as the command line it is."""
        return self._value(value, 0)

    def _value(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return self.text(value, _depth=depth)
        if isinstance(value, Mapping):
            named = next((value[k] for k in ("name", "Name", "key", "Key")
                          if isinstance(value.get(k), str)), None)
            pair = isinstance(named, str) and _SECRET_FIELD.fullmatch(named) is not None
            out: dict[Any, Any] = {}
            for k, v in value.items():
                if isinstance(k, str) and (_SECRET_FIELD.fullmatch(k) or (
                        pair and k in ("value", "Value"))) and _secret_scalar(v):
                    v = MASK
                    self.found["secret-named-field"] += 1
                elif (isinstance(k, str) and (_SECRET_FIELD.fullmatch(k) or _SECRET_FIELD.fullmatch(
                        k.removesuffix("s"))) and isinstance(v, list) and v
                      and all(isinstance(i, str) for i in v)):  # "passwords": [...]
                    v = [MASK] * len(v)
                    self.found["secret-named-field"] += len(v)
                else:
                    v = self._value(v, depth)
                out[self._key(k, out, value)] = v
            return out
        if isinstance(value, list | tuple):
            if len(value) > 1 and all(isinstance(v, str) for v in value):
                return self._words(list(value), depth)
            return [self._value(v, depth) for v in value]
        return value

    def _words(self, words: list[str], depth: int) -> list[str]:
        """A list of strings, each redacted, then read together as a command line
        (``["sshpass", "-p", "pw", "ssh", "host"]``): a password a flag takes is the
        next word, which no rule sees alone."""
        import shlex

        each = [self.text(w, _depth=depth) for w in words]
        before = sum(self.found.values())
        line = shlex.join(each)
        redacted = self._line(line)
        if redacted == line:
            return each
        try:
            split = shlex.split(redacted)
        except ValueError:
            split = []
        if len(split) == len(each):
            return split
        self.found["command-line-password"] = self.found["command-line-password"] - (
            sum(self.found.values()) - before) + 1  # counted once, whatever the rules saw
        return [MASK] * len(each)  # cannot tell which word: none of them goes

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
        line = _AWS_PAIR.sub(self._counted_group("aws-secret-beside-its-id"), line)
        rules, allowed, stopwords = _ruleset()
        lowered = line.lower()
        secrets: dict[str, str] = {}
        for rule in rules:
            if rule.keywords and not any(k in lowered for k in rule.keywords):
                continue
            compiled = rule.compiled()
            if compiled is None:
                continue  # a construct Python lacks
            pattern, allow = compiled
            for match in pattern.finditer(line):
                secret = self._secret(match, rule)
                if not secret or secret in secrets or MASK in secret:
                    continue
                if rule.entropy and _entropy(secret) < rule.entropy:
                    continue
                if any(p.search(secret) for p in allowed) or any(
                        w in secret.lower() for w in (*stopwords, *rule.stopwords)):
                    continue
                targets = {"secret": secret, "match": match.group(0), "line": line}
                if any(p.search(targets.get(t, secret)) for t, p in allow):
                    continue
                secrets[secret] = rule.id
        for secret in sorted(secrets, key=len, reverse=True):  # longest first
            self.found[secrets[secret]] += line.count(secret)
            line = line.replace(secret, MASK)
        line = _BASE64_PEM.sub(self._base64_key, line)
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

    def _base64_key(self, match: re.Match[str]) -> str:
        import base64
        import binascii

        head = match.group(0)[:64]
        try:
            decoded = base64.b64decode(head[:len(head) // 4 * 4])
        except (binascii.Error, ValueError):
            return match.group(0)
        if b"PRIVATE KEY" not in decoded:
            return match.group(0)  # a certificate, a public key: no secret
        self.found["private-key-base64"] += 1
        return "[REDACTED PRIVATE KEY]"

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
