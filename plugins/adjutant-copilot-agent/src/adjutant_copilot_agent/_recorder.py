"""The recorder: audio from a source written to the session's WAV as it arrives, the
header kept current every second of audio (fsync'd), so a kill at any moment leaves a
file that plays up to it (and `list_sessions` finishes the repair)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio

from ._sessions import Session, create_session, now_iso, save_session, session_dir
from ._wav import BYTES_PER_SECOND, WavWriter

__all__ = ["Recorder"]


class Recorder:
    """Records one session. ``stop()`` (or a ``stop`` file left in the session's folder by
    ``adjutant record --stop`` in another process) ends it after the current block."""

    def __init__(self, home: Path, source: str) -> None:
        self.home, self.source = home, source
        self.session: Session | None = None
        self.started = anyio.Event()
        self._stop = anyio.Event()
        self.writer: WavWriter | None = None

    def stop(self) -> None:
        self._stop.set()

    @property
    def audio(self) -> Path:
        assert self.session is not None
        return self.session.audio(self.home)

    def open(self) -> Session:
        """Create the session and its (empty, valid) WAV file."""
        self.session = create_session(self.home, self.source)
        self.writer = WavWriter(self.audio)
        self.started.set()
        return self.session

    async def record(self, blocks: AsyncIterator[bytes], *,
                     on_block: Callable[[float], None] | None = None) -> Session:
        """Write ``blocks`` until they end or the recording is stopped; returns the
        finished session (status ``stopped``)."""
        session = self.session or self.open()
        writer = self.writer
        assert writer is not None
        stop_file = session_dir(self.home, session.id) / "stop"
        unflushed = 0
        try:
            async for block in blocks:
                writer.write(block)
                unflushed += len(block)
                if unflushed >= BYTES_PER_SECOND:
                    writer.flush()
                    unflushed = 0
                if on_block is not None:
                    on_block(writer.seconds)
                if self._stop.is_set() or stop_file.exists():
                    break
        finally:
            writer.close()
            session.status, session.stopped_at = "stopped", now_iso()
            session.seconds = writer.seconds
            save_session(self.home, session)
        return session
