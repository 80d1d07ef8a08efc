"""Recording sessions in the data directory: ``<home>/recordings/<id>/`` holds the
recording (``audio.wav``), ``session.json`` (who records, since when, its status) and,
while an agent runs on it, ``agent.json`` (the agent's process) and the requests other
processes leave for that agent (``requests/``).

A session whose recorder died is found by its process id and repaired the next time
sessions are read: the WAV header fixed from the file's length, the status
``interrupted``. Nothing recorded is lost.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
from pathlib import Path

import msgspec

from ._wav import BYTES_PER_SECOND, repair

__all__ = ["AgentInfo", "Session", "active_agent", "active_recording", "agent_file",
           "create_session", "list_sessions", "pid_alive", "recordings_dir", "save_session",
           "session_dir"]


class Session(msgspec.Struct, kw_only=True):
    id: str
    started_at: str
    source: str
    pid: int
    #: ``recording``, ``stopped`` or ``interrupted`` (its recorder died: repaired).
    status: str = "recording"
    stopped_at: str = ""
    seconds: float = 0.0

    def audio(self, home: Path) -> Path:
        return session_dir(home, self.id) / "audio.wav"


class AgentInfo(msgspec.Struct, kw_only=True):
    pid: int
    started_at: str
    log: str = ""


def recordings_dir(home: Path) -> Path:
    return home / "recordings"


def session_dir(home: Path, session_id: str) -> Path:
    if not session_id or "/" in session_id or session_id.startswith("."):
        raise ValueError(f"not a session id: {session_id!r}")
    return recordings_dir(home) / session_id


def agent_file(home: Path, session_id: str) -> Path:
    return session_dir(home, session_id) / "agent.json"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (killed, not yet reaped by its parent) records nothing
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        return True


def save_session(home: Path, session: Session) -> None:
    folder = session_dir(home, session.id)
    tmp = folder / f".session.{os.getpid()}.tmp"
    tmp.write_bytes(msgspec.json.encode(session))
    os.replace(tmp, folder / "session.json")


def create_session(home: Path, source: str) -> Session:
    stamp = dt.datetime.now().strftime("%Y%m%d_%H%M%S")
    session = Session(id=f"{stamp}-{secrets.token_hex(3)}", started_at=now_iso(),
                      source=source, pid=os.getpid())
    folder = session_dir(home, session.id)
    folder.mkdir(parents=True, mode=0o700)
    save_session(home, session)
    return session


def _load(folder: Path) -> Session | None:
    try:
        return msgspec.json.decode((folder / "session.json").read_bytes(), type=Session)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def list_sessions(home: Path) -> list[Session]:
    """Every session, oldest first; those whose recorder died are repaired and marked
    ``interrupted`` on the way."""
    root = recordings_dir(home)
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        session = _load(folder)
        if session is None:
            continue
        if session.status == "recording" and not pid_alive(session.pid):
            audio = folder / "audio.wav"
            data = repair(audio) if audio.exists() else 0
            session.status, session.seconds = "interrupted", data / BYTES_PER_SECOND
            session.stopped_at = now_iso()
            save_session(home, session)
        out.append(session)
    return out


def active_recording(home: Path) -> Session | None:
    """The recording in progress (the latest, if several), or None."""
    live = [s for s in list_sessions(home) if s.status == "recording"]
    return live[-1] if live else None


def active_agent(home: Path, session_id: str) -> AgentInfo | None:
    """The agent running on ``session_id`` (in any process), or None."""
    path = agent_file(home, session_id)
    try:
        info = msgspec.json.decode(path.read_bytes(), type=AgentInfo)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return info if pid_alive(info.pid) else None
