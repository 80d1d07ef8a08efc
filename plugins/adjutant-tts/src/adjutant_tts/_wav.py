"""WAV in and out, without numpy: what engines hand over and what files hold.

`WavReader` takes a WAV byte stream piece by piece, as it arrives from a server or a
subprocess, and gives back 16-bit PCM as soon as whole frames are in. It reads what
TTS servers really send: PCM 16-bit, IEEE float 32-bit (scipy's ``wavfile.write`` of a
float array, TTS-WebUI's non-streamed answers), WAVE_FORMAT_EXTENSIBLE, extra chunks
before ``data`` (``LIST``, ``fact``), and the streaming header whose sizes are
placeholders (``0xFFFFFFFF - 36``: TTS-WebUI's chatterbox stream, espeak-ng on a pipe).
"""

from __future__ import annotations

import struct
from array import array
from pathlib import Path

__all__ = ["WavError", "WavReader", "wav_bytes", "wav_header", "write_wav"]

PCM, IEEE_FLOAT, EXTENSIBLE = 1, 3, 0xFFFE
#: Data sizes from here up (and 0) are placeholders that streaming writers put in a
#: header they cannot go back to (TTS-WebUI: 0xFFFFFFFF - 36; espeak-ng: 0x7FFFF000).
UNKNOWN_SIZE = 0x7FFF0000


class WavError(ValueError):
    """The bytes are not a WAV Adjutant can play."""


class WavReader:
    """Incremental WAV decoder: `feed` bytes, get 16-bit little-endian PCM back."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.sample_rate = 0
        self.channels = 0
        self._format = 0
        self._width = 0
        self._in_data = False
        self._remaining: int | None = None  # bytes of the data chunk still to come
        self._done = False

    @property
    def ready(self) -> bool:
        """The header is read: `sample_rate` and `channels` are known."""
        return self._in_data

    def feed(self, data: bytes) -> bytes:
        """Add the next bytes; return the PCM (int16) of every whole frame so far."""
        self._buffer += data
        if not self._in_data and not self._header():
            return b""
        if self._done:
            return b""
        block = self._width * self.channels
        usable = len(self._buffer) - len(self._buffer) % block
        if self._remaining is not None:
            usable = min(usable, self._remaining - self._remaining % block)
            self._remaining -= usable
            if self._remaining < block:
                self._done = True
        raw = bytes(self._buffer[:usable])
        del self._buffer[:usable]
        return self._to_int16(raw)

    def close(self) -> None:
        """The stream ended: fail if it never held a WAV header."""
        if not self._in_data:
            head = bytes(self._buffer[:4])
            raise WavError(f"the audio is not WAV (starts with {head!r})" if head else
                           "the audio stream was empty")

    def _header(self) -> bool:
        buf = self._buffer
        if len(buf) < 12:
            return False
        if buf[:4] != b"RIFF" or buf[8:12] != b"WAVE":
            raise WavError(f"the audio is not WAV (starts with {bytes(buf[:4])!r})")
        pos = 12
        while True:
            if len(buf) < pos + 8:
                return False
            tag, size = bytes(buf[pos:pos + 4]), struct.unpack_from("<I", buf, pos + 4)[0]
            if tag == b"data":
                if not self._format:
                    raise WavError("the WAV has no fmt chunk before its data")
                del buf[:pos + 8]
                self._in_data = True
                self._remaining = None if size == 0 or size >= UNKNOWN_SIZE else size
                return True
            if len(buf) < pos + 8 + size:
                return False
            if tag == b"fmt ":
                self._fmt(bytes(buf[pos + 8:pos + 8 + size]))
            pos += 8 + size + (size & 1)  # chunks are padded to an even length

    def _fmt(self, chunk: bytes) -> None:
        if len(chunk) < 16:
            raise WavError("the WAV fmt chunk is truncated")
        fmt, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", chunk)
        if fmt == EXTENSIBLE and len(chunk) >= 26:
            fmt = struct.unpack_from("<H", chunk, 24)[0]  # the sub-format GUID's first field
        if (fmt, bits) not in ((PCM, 16), (PCM, 8), (PCM, 32), (IEEE_FLOAT, 32)):
            raise WavError(f"unsupported WAV encoding (format {fmt}, {bits} bits)")
        if not channels or not rate:
            raise WavError("the WAV header has no channels or no sample rate")
        self._format, self.channels, self.sample_rate, self._width = fmt, channels, rate, bits // 8

    def _to_int16(self, raw: bytes) -> bytes:
        if not raw or (self._format == PCM and self._width == 2):
            return raw
        if self._format == IEEE_FLOAT:
            floats = array("f")
            floats.frombytes(raw)
            return array("h", (_clip(round(x * 32767.0)) for x in floats)).tobytes()
        if self._width == 1:  # unsigned 8-bit
            return array("h", ((b - 128) << 8 for b in raw)).tobytes()
        ints = array("i")
        ints.frombytes(raw)
        return array("h", (x >> 16 for x in ints)).tobytes()


def _clip(x: int) -> int:
    return -32768 if x < -32768 else 32767 if x > 32767 else x


def wav_header(sample_rate: int, channels: int = 1, data_bytes: int = 0) -> bytes:
    """The 44-byte header of a 16-bit PCM WAV holding ``data_bytes`` of samples."""
    return (b"RIFF" + struct.pack("<I", 36 + data_bytes) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, PCM, channels, sample_rate,
                                    sample_rate * channels * 2, channels * 2, 16)
            + b"data" + struct.pack("<I", data_bytes))


def wav_bytes(pcm: bytes, sample_rate: int, channels: int = 1) -> bytes:
    return wav_header(sample_rate, channels, len(pcm)) + pcm


def write_wav(path: str | Path, pcm: bytes, sample_rate: int, channels: int = 1) -> Path:
    """Write a 16-bit PCM WAV atomically (a reader never sees half a file)."""
    import os

    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    tmp.write_bytes(wav_bytes(pcm, sample_rate, channels))
    os.replace(tmp, path)
    return path
