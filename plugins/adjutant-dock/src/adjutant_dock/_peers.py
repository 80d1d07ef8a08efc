"""What the dock reaches of the kernel and of other plugins: the bus as a subscriber,
the events declared, adjutant-mcp's bridge, adjutant-stt's hearing and consent, and
adjutant-tts's speaker. One helper each, so a change in how one is reached is made here
and nowhere else.

The optional plugins are imported where used: the dock runs without them (and says
what to install).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adjutant import Copilot
    from adjutant_hookspecs import EventSubscription, Kernel, SpeechRecognizer

__all__ = ["consent_question", "declares", "hear", "last_seq", "mcp_rows", "recognizer",
           "refuse_remote", "speech_control", "subscribe"]


def subscribe(kernel: Kernel) -> EventSubscription:
    """A new view of the bus, from the next event on."""
    return kernel.bus.subscribe()


def last_seq(kernel: Kernel) -> int:
    """The seq of the newest event published."""
    return kernel.bus.last_seq


def declares(kernel: Kernel, event: str) -> bool:
    """Whether a plugin loaded in this kernel declares ``event`` (so it is loaded)."""
    return event in kernel.events


def mcp_rows(kernel: Kernel) -> dict[str, Any]:
    """The MCP servers the profile's configuration names, as ``adjutant mcp list``
    shows them (read from adjutant-mcp's running bridge, reached through the kernel;
    nothing is started here)."""
    missing = ("MCP servers need the adjutant-mcp plugin: pip install adjutant-mcp (then "
               "restart the dock)")
    plugin = kernel.plugin("mcp")
    if plugin is None:
        return {"available": False, "servers": [], "problems": [], "missing": missing}
    from adjutant_mcp import McpServers

    if not isinstance(plugin, McpServers):
        return {"available": False, "servers": [], "problems": [], "missing": missing}
    try:
        return {"available": True, "servers": plugin.server_rows(),
                "problems": plugin.server_problems(), "missing": None}
    except RuntimeError as exc:
        return {"available": False, "servers": [], "problems": [], "missing": str(exc)}


def recognizer(kernel: Kernel) -> tuple[SpeechRecognizer, str | None] | None:
    """The recognizer the profile names and the model it would use, as adjutant-stt's
    ``hear`` picks them (None: no adjutant-stt, or an engine it does not know, which
    ``hear`` itself reports)."""
    if not declares(kernel, "stt.heard"):
        return None
    from adjutant_stt import SttError, listen_settings, pick_recognizer

    try:
        found: SpeechRecognizer = pick_recognizer(kernel)
    except SttError:
        return None
    # the model as `adjutant_stt.hear` chooses it (it asks consent for this one)
    model: str | None = listen_settings(kernel).remote_model or getattr(found, "model", None)
    return found, model


def consent_question(found: SpeechRecognizer, model: str | None) -> str:
    """adjutant-stt's consent line for sending a recording to ``found`` (with ``model``):
    what it asks, and so what a yes from the page must match."""
    from adjutant_stt import consent_question as question

    line: str = question(found, model)
    return line


async def hear(kernel: Kernel, copilot: Copilot, audio: str,
               consent: bool | Callable[[str], Awaitable[bool]]) -> tuple[str, str]:
    """adjutant-stt's ``hear`` of a finished recording: ``(status, text)``.

    :param consent: False unless the page asked and the user said yes to the very
        destination (then a callable answering adjutant-stt's question); never asked
        on the server's terminal behind the browser's back.
    """
    import adjutant_stt

    # whole: the button was released, so the recording is finished: heard entire and
    # at once, not paced and cut at a pause like a microphone
    spoken = await adjutant_stt.hear(kernel, copilot, audio=audio, edit=False,
                                     consent=consent, whole=True)
    return str(spoken.status), str(spoken.text)


async def refuse_remote(kernel: Kernel, copilot: Copilot, found: SpeechRecognizer,
                        model: str | None) -> str | None:
    """The user's no to ``found``, through adjutant-stt's consent path (which logs it
    as the frontend's); the refusal's message (None: it did not refuse)."""
    from adjutant_stt import NotSent, ask_consent

    async def no(line: str) -> bool:
        return False

    try:
        await ask_consent(kernel, copilot, found, model, no)
    except NotSent as exc:
        return str(exc)
    return None


def speech_control(kernel: Kernel, action: str) -> dict[str, bool] | None:
    """Pause, resume or stop adjutant-tts's speaker: ``{speaking, paused}`` after it
    (None: adjutant-tts is not loaded)."""
    try:
        import adjutant_tts

        speaker = adjutant_tts.speaker_for(kernel)
    except (ImportError, LookupError):
        return None
    {"pause": speaker.pause, "resume": speaker.resume, "stop": speaker.stop}[action]()
    return {"speaking": speaker.speaking, "paused": speaker.paused}
