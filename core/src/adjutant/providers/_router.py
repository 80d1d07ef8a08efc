"""The router: which of the profile's presets a request goes to, and why.

Rule-based and pure (no model call, no I/O): a request stays on the profile's own
``model`` (the preset named ``default``) unless it is long, carries files, or offers
many tools, *and* the user set up a stronger preset in ``router.escalate_to``. Nothing
here can pick a preset the profile does not name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..kernel._settings import ModelPreset, Profile

__all__ = ["Route", "estimate_tokens", "route"]


@dataclass(frozen=True)
class Route:
    """Where one request goes: the preset's name and settings, in plain words why, and
    whether the router moved it off the default preset."""

    name: str
    preset: ModelPreset
    reason: str
    escalated: bool = False

    @property
    def label(self) -> str:
        """``strong (openrouter:openai/gpt-4o-mini)``: what the user is told."""
        return f"{self.name} ({self.preset.provider}:{self.preset.model})"


def estimate_tokens(*texts: str) -> int:
    """Tokens in ``texts`` at four characters a token (the usual rule of thumb for
    English and code; used only to route and to check budgets before a call)."""
    return sum(len(text) for text in texts) // 4 + 1


def route(profile: Profile, *, tokens: int, attachments: int = 0, tools: int = 0) -> Route:
    """The preset for a request of about ``tokens`` tokens (prompt and context), with
    ``attachments`` files in its context and ``tools`` tools offered."""
    rules = profile.router
    heavy = []
    if tokens > rules.long_tokens:
        heavy.append(f"long: ~{tokens:,} tokens (over {rules.long_tokens:,})")
    if attachments >= rules.attachments:
        heavy.append(f"{attachments} file{'s' if attachments != 1 else ''} attached")
    if tools >= rules.many_tools:
        heavy.append(f"{tools} tools offered (from {rules.many_tools})")
    target = rules.escalate_to
    if not heavy:
        return Route("default", profile.model, "short, nothing attached")
    if target is None or target == "default":
        return Route("default", profile.model, "; ".join(heavy) + " (no stronger preset "
                     "set up: router.escalate_to in the profile)")
    return Route(target, profile.preset(target), "; ".join(heavy), escalated=True)
