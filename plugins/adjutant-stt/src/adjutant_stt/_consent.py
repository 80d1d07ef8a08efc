"""The consent line: before a recording goes to a remote recognizer, the user says yes
to exactly where it goes (engine, host, model), every time.

* on a terminal: one line ending in ``[y/N]``; ``y`` or ``yes`` sends, anything else
  (Enter, EOF, Ctrl-C) does not;
* without one (a pipe, a script, ``--non-interactive``): refused, saying how to
  consent explicitly (``--allow-remote``); the profile alone never sends audio;
* ``consent=True``: given in advance (``--allow-remote``, or a frontend that asked in
  its own way); ``consent=`` an async callable: ask that way (a dock's dialog);
* in ``off`` nothing is sent, whatever the answer would be.

Given or refused, the decision is in the action log (``speech_consent``: engine, host,
model, given, by whom) and on the bus (``stt.remote_consent``); the audio never is. A
decision that cannot be logged sends nothing."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ._errors import SttError
from ._events import RemoteConsent
from ._records import SpeechConsentRecord

if TYPE_CHECKING:
    from adjutant import Copilot
    from adjutant_hookspecs import Kernel, SpeechRecognizer

__all__ = ["Consent", "NotSent", "ask_on_terminal", "consent", "question"]

#: True: given in advance; None: ask on the terminal; False: nobody may be asked;
#: a callable: ask that way (it gets the question, answers True to send).
Consent = bool | Callable[[str], Awaitable[bool]] | None
LOCAL = "--engine whisper transcribes on this machine"
HOW_TO = ("to send it, answer y on a terminal, or consent in advance with --allow-remote; "
          + LOCAL)


class NotSent(SttError):
    """A remote recognizer was not given the recording (refused, no terminal, or
    ``off`` is True: the operator is off)."""

    def __init__(self, message: str, hint: str = "", *, off: bool = False) -> None:
        super().__init__(message, hint)
        self.off = off


def question(recognizer: SpeechRecognizer, model: str | None) -> str:
    where = f"{recognizer.destination}" + (f", model {model}" if model else "")
    return (f"send this recording to {recognizer.name} ({where})? It leaves this "
            "machine. [y/N] ")


def ask_on_terminal(text: str) -> bool:
    """The question on stderr, the answer from stdin (typed-ahead input discarded).
    Blocking: run it in a worker thread."""
    import termios

    from adjutant.safety.terminal import printable

    with contextlib.suppress(Exception):
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)
    sys.stderr.write(printable(text, multiline=False))
    sys.stderr.flush()
    try:
        answer = input()
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\n")
        return False
    return answer.strip().lower() in ("y", "yes")


async def consent(kernel: Kernel, copilot: Copilot, recognizer: SpeechRecognizer,
                  model: str | None, given: Consent = None) -> None:
    """Return when the user consented to sending a recording to ``recognizer`` (with
    ``model``); raise `NotSent` otherwise. Local recognizers need no consent."""
    import anyio

    if not recognizer.remote:
        return
    line = question(recognizer, model)
    if await copilot.mode() == "off":
        yes, by, why = False, "mode off", ("the operator is off: no audio goes to a remote "
                                           "engine (`adjutant mode propose-only` turns it on)")
    elif given is True:
        yes, by, why = True, "in advance (--allow-remote or the frontend)", ""
    elif given is None and sys.stdin.isatty():
        yes = await anyio.to_thread.run_sync(ask_on_terminal, line, abandon_on_cancel=True)
        by, why = "terminal", "not sent: you said no (only y or yes sends)"
    elif callable(given):
        yes, by, why = bool(await given(line)), "frontend", "not sent: consent was refused"
    else:
        yes, by = False, "nobody (no terminal)" if given is None else "nobody (non-interactive)"
        why = (f"not sent: {recognizer.name} would send the recording off this machine to "
               f"{recognizer.destination}, and there is no terminal to ask on")
    kernel.bus.publish(RemoteConsent(engine=recognizer.name, host=recognizer.destination,
                                     model=model or "", given=yes))
    try:
        with anyio.CancelScope(shield=True):
            await copilot.log.record(SpeechConsentRecord(
                engine=recognizer.name, host=recognizer.destination, model=model, given=yes,
                by=by))
    except Exception as exc:
        raise NotSent(f"not sent: the consent could not be written to the action log ({exc})",
                      hint="fix the action log (adjutant doctor), or use --engine whisper "
                           "(on this machine)") from exc
    if not yes:
        raise NotSent(why, hint={"mode off": "", "terminal": LOCAL}.get(by, HOW_TO),
                      off=by == "mode off")
