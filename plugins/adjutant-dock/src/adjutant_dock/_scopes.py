"""The scoped allows a question offers, beside "Allow once": only what a grant can say.

- A read outside the working folders: "Allow reads in <folder>" for 15 min, 1 h or
  8 h (a ``cage:`` grant), never for ``/``, a top-level folder or the home folder
  (nor a folder holding it).
- A write the write-gate would let a standing grant answer (its packet names them,
  `adjutant.safety.standing`): this file for the session (8 h), this tool for 15 min
  or 1 h; only when nothing but the mode, the write-gate and the guard's baseline asks
  (otherwise the grant would not answer the next question, and must not be offered).

The server grants a scope only when the very question answered offered it (`Offer`
compared whole), logged in the answer's record before the grant.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adjutant import StepPacket
    from adjutant_hookspecs import Kernel

__all__ = ["home_of", "offers", "too_wide"]

MINUTES = 60
READ_SPANS = ((15 * MINUTES, "15 min"), (60 * MINUTES, "1 h"), (8 * 60 * MINUTES, "8 h"))
TOOL_SPANS = ((15 * MINUTES, "15 min"), (60 * MINUTES, "1 h"))
SESSION = 8 * 60 * MINUTES  # "for the session": a working day, then asked again
#: The reasons a standing write grant answers (policy names as `shown` prefixes them).
ANSWERED = ("mode:", "write-gate:")


def offers(kernel: Kernel, packet: StepPacket, cwd: str) -> list[dict[str, Any]]:
    """The scopes this question offers: ``{grant, seconds, label}`` each."""
    if packet.level == "read":
        return _read_scopes(kernel, packet, cwd)
    standing = packet.details.get("standing") if isinstance(packet.details, dict) else None
    if not isinstance(standing, dict) or not all(_answered(r) for r in packet.reasons):
        return []
    out = []
    if isinstance(file := standing.get("file"), str):
        name = os.path.basename(file.split(":", 1)[1])
        out.append({"grant": file, "seconds": SESSION,
                    "label": f"Allow changes to {name} for this session (8 h)"})
    if isinstance(tool := standing.get("tool"), str):
        out += [{"grant": tool, "seconds": s,
                 "label": f"Allow {packet.tool} for {span}"} for s, span in TOOL_SPANS]
    return out


def _answered(reason: str) -> bool:
    """A question a standing grant answers: the mode's, the write-gate's, or the guard's
    baseline alone ("changes things", with nothing else named)."""
    if reason.startswith(ANSWERED):
        return True
    return (reason.startswith("guard:") and "changes things (" in reason
            and "; also:" not in reason)


def _read_scopes(kernel: Kernel, packet: StepPacket, cwd: str) -> list[dict[str, Any]]:
    if not any("outside the working cages" in r for r in packet.reasons):
        return []
    folder = _folder(kernel, packet, cwd)
    if folder is None:
        return []
    return [{"grant": f"cage:{folder}", "seconds": s,
             "label": f"Allow reads in {folder} for {span}"} for s, span in READ_SPANS]


def _folder(kernel: Kernel, packet: StepPacket, cwd: str) -> str | None:
    """The one folder the step reads in (resolved), when it may be granted."""
    from adjutant_hookspecs import RoleProblem, role_values

    tool = kernel.tools.get(packet.tool)
    if tool is None:
        return None
    try:
        values = role_values(tool.declaration.args_schema, packet.args)
    except RoleProblem:
        return None
    folders = set()
    for value in values:
        if value.role != "path" or not isinstance(value.value, str) or "\x00" in value.value:
            continue
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(value.value)))
        folders.add(real if os.path.isdir(real) else os.path.dirname(real))
    if len(folders) != 1:
        return None
    folder = folders.pop()
    return folder if too_wide(folder, home_of(kernel)) is None else None


def home_of(kernel: Kernel) -> str:
    return os.path.realpath(kernel.env.get("HOME") or os.path.expanduser("~"))


def too_wide(folder: str, home: str) -> str | None:
    """Why ``folder`` (real, absolute) may not be granted as a whole, or None."""
    if os.path.dirname(folder) == folder or os.path.dirname(folder) == "/":
        return "/ or a top-level folder is far more than any request needs"
    if folder == home or home.startswith(folder.rstrip("/") + "/"):
        return "the home folder (or one holding it) holds your keys and settings"
    return None
