"""Masking secrets: every string that reaches the bulletin passes through `redact_text`,
core's one redactor (`adjutant.safety.redaction`: gitleaks' rules and Adjutant's own),
so the bulletin a remote model receives hides what a bug bundle hides."""

from __future__ import annotations

from adjutant.safety.redaction import MASK, redact, redact_text

__all__ = ["MASK", "redact", "redact_text"]
