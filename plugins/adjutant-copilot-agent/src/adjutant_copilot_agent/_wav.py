"""16 kHz, 16-bit mono PCM WAV files written as they grow, and read back from the end.

The header is written first with the sizes of what is there so far and rewritten as
the file grows (each flush), so a reader sees a valid file at any moment; a file whose
writer was killed is repaired from its length (`repair`): every whole sample on disk
plays.
"""

from __future__ import annotations

import os
import struct
import uuid
from pathlib import Path

import msgspec

__all__ = ["BYTES_PER_SECOND", "HEADER", "SAMPLE_RATE", "Chunk", "WavWriter", "chunk_bytes",
           "data_bytes", "extract_chunk", "extract_range", "header", "repair",
           "wav_bytes"]

SAMPLE_RATE = 16_000
BYTES_PER_SECOND = SAMPLE_RATE * 2
HEADER = 44
_MAX = 0xFFFFFFFF


def header(data_size: int, rate: int = SAMPLE_RATE) -> bytes:
    """The 44-byte header of a mono 16-bit PCM WAV holding ``data_size`` bytes."""
    data_size = min(data_size, _MAX - 36)
    return (b"RIFF" + struct.pack("<I", 36 + data_size) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
            + b"data" + struct.pack("<I", data_size))


def wav_bytes(pcm: bytes, rate: int = SAMPLE_RATE) -> bytes:
    """A whole WAV file of ``pcm`` (mono 16-bit little-endian)."""
    return header(len(pcm), rate) + pcm


def chunk_bytes(cycle_interval: int, audio_overlap: int) -> int:
    """Bytes of PCM one cycle takes: ``(cycle_interval + audio_overlap) * 16000 * 2``."""
    return (cycle_interval + audio_overlap) * BYTES_PER_SECOND


def data_bytes(path: Path) -> int:
    """Whole samples of PCM on disk after the header (whatever the header says)."""
    size = path.stat().st_size - HEADER
    return max(0, size - size % 2)


class Chunk(msgspec.Struct, frozen=True, kw_only=True):
    """The last stretch of a recording, in memory (never a temporary file): ``id`` is
    unique per extraction, ``start_s`` where it begins in the recording."""

    id: str
    wav: bytes
    start_s: float
    seconds: float


def extract_chunk(path: Path, cycle_interval: int, audio_overlap: int) -> Chunk:
    """The last ``cycle_interval + audio_overlap`` seconds of the recording at ``path``
    (all of it when shorter), as WAV bytes. Raises ``OSError`` when it cannot be read."""
    total = data_bytes(path)
    size = min(chunk_bytes(cycle_interval, audio_overlap), total)
    return extract_range(path, (total - size) / BYTES_PER_SECOND, size / BYTES_PER_SECOND)


def extract_range(path: Path, start_s: float, seconds: float) -> Chunk:
    """``seconds`` of the recording at ``path`` from ``start_s`` on (less at its end), as
    WAV bytes: the oldest audio not analysed yet, when the agent is behind."""
    total = data_bytes(path)
    start = min(total, max(0, round(start_s * SAMPLE_RATE)) * 2)
    size = min(round(seconds * SAMPLE_RATE) * 2, total - start)
    with path.open("rb") as f:
        f.seek(HEADER + start)
        pcm = f.read(size)
    pcm = pcm[: len(pcm) - len(pcm) % 2]
    return Chunk(id=uuid.uuid4().hex, wav=wav_bytes(pcm), start_s=start / BYTES_PER_SECOND,
                 seconds=len(pcm) / BYTES_PER_SECOND)


def repair(path: Path) -> int:
    """Fix the header sizes of a WAV whose writer never finalised it, from the file's
    length (a torn last byte is cut off). Returns the bytes of PCM it now holds."""
    with path.open("r+b") as f:
        f.seek(0, os.SEEK_END)
        length = f.tell()
        if length < HEADER:
            f.seek(0)
            f.truncate()
            f.write(header(0))
            data = 0
        else:
            data = length - HEADER
            if data % 2:
                f.truncate(length - 1)
                data -= 1
            f.seek(0)
            f.write(header(data))
        f.flush()
        os.fsync(f.fileno())
    return data


class WavWriter:
    """Appends PCM to a WAV file, the header kept current at every `flush` (fsync'd)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = path.open("xb")
        self._file.write(header(0))
        self.data = 0
        self._odd = b""
        self.flush()

    @property
    def seconds(self) -> float:
        return self.data / BYTES_PER_SECOND

    def write(self, pcm: bytes) -> None:
        pcm = self._odd + pcm
        cut = len(pcm) - len(pcm) % 2
        self._odd = pcm[cut:]
        self._file.write(pcm[:cut])
        self.data += cut

    def flush(self) -> None:
        """Make what was written durable and the header describe it."""
        f = self._file
        f.flush()
        end = f.tell()
        f.seek(0)
        f.write(header(self.data))
        f.seek(end)
        f.flush()
        os.fsync(f.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self.flush()
            self._file.close()
