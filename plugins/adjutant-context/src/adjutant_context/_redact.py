"""Masking secrets: every string that reaches the bulletin passes through `redact_text`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MASK", "redact", "redact_text"]

MASK = "[REDACTED]"

#: (pattern, replacement), applied in order; each replacement is a fixed point of every
#: pattern, so redacting twice changes nothing.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # PEM private key blocks, also when cut off before their END line
    (re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
                r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", re.S),
     "[REDACTED PRIVATE KEY]"),
    # credentials in URLs: scheme://user:password@host
    (re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+):[^\s/@]+@"), rf"\1:{MASK}@"),
    # JSON Web Tokens (header.payload.signature, header starting with `{"`)
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), MASK),
    # OpenAI / OpenRouter / Anthropic style keys: sk-..., sk-or-v1-..., sk-proj-...
    (re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), MASK),
    # GitHub tokens
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), MASK),
    # AWS access key ids
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
    # Slack tokens
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), MASK),
    # Authorization: Bearer/Basic <token> (a token has a digit or a symbol; "Bearer
    # tokens" is prose)
    (re.compile(r"\b((?:[Bb]earer|Basic)\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}"),
     rf"\1{MASK}"),
    # password=..., token: ..., api_key="...", --password=..., export GITHUB_TOKEN=...
    (re.compile(r"(?i)\b([a-z0-9_.-]*(?:passw(?:or)?d|secret|token|api[_-]?key|apikey|"
                r"access[_-]?key|private[_-]?key|credentials?)[a-z0-9_.-]*)"
                r"(\"?\s*[=:]\s*)([\"']?)(?!\[REDACTED|(?:[Bb]earer|Basic)\s)[^\s\"'&;,]+"),
     rf"\1\2\3{MASK}"),
)


def redact_text(text: str) -> str:
    """``text`` with tokens, keys, passwords and private keys replaced by ``[REDACTED]``."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def redact(value: Any) -> Any:
    """`redact_text` applied to every string in ``value`` (dicts, lists, tuples)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value
