"""The WAV reader takes what TTS servers and espeak-ng really send, in any pieces."""

from __future__ import annotations

import struct
import wave
from pathlib import Path

import pytest

from adjutant_tts._wav import WavError, WavReader, wav_bytes, write_wav

from .fake_ttswebui import float_wav, int16, pcm_wav, streaming_header, tone

SAMPLES = tone(0.1, 16000)


def read_all(data: bytes, piece: int) -> tuple[WavReader, bytes]:
    reader, out = WavReader(), bytearray()
    for i in range(0, len(data), piece):
        out += reader.feed(data[i:i + piece])
    reader.close()
    return reader, bytes(out)


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_pcm16_in_any_pieces_is_returned_unchanged(piece: int) -> None:
    reader, pcm = read_all(pcm_wav(SAMPLES, 16000), piece)
    assert (reader.sample_rate, reader.channels) == (16000, 1)
    assert pcm == int16(SAMPLES)


@pytest.mark.parametrize("piece", [3, 1 << 20])
def test_scipy_float32_with_a_fact_chunk_becomes_int16(piece: int) -> None:
    _, pcm = read_all(float_wav(SAMPLES, 16000), piece)
    expected = struct.unpack(f"<{len(SAMPLES)}h", int16(SAMPLES))
    got = struct.unpack(f"<{len(pcm) // 2}h", pcm)
    assert len(got) == len(expected)
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) <= 1


def test_a_streaming_header_reads_until_the_stream_ends() -> None:
    data = streaming_header(24000) + int16(SAMPLES) + int16(SAMPLES)
    reader, pcm = read_all(data, 1000)
    assert reader.sample_rate == 24000 and pcm == int16(SAMPLES) * 2


def test_a_known_data_size_stops_at_the_end_of_the_data_chunk() -> None:
    data = pcm_wav(SAMPLES, 16000) + b"LIST" + struct.pack("<I", 4) + b"INFO"
    _, pcm = read_all(data, 100)
    assert pcm == int16(SAMPLES)


def test_chunks_before_data_and_extensible_format_are_understood() -> None:
    pcm = int16(SAMPLES)
    fmt = struct.pack("<HHIIHHHHIH14s", 0xFFFE, 1, 16000, 32000, 2, 16, 22, 16, 4, 1,
                      b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71")
    body = (b"WAVE" + b"LIST" + struct.pack("<I", 5) + b"INFO\x00\x00"  # odd: padded
            + b"fmt " + struct.pack("<I", len(fmt)) + fmt
            + b"data" + struct.pack("<I", len(pcm)) + pcm)
    _, out = read_all(b"RIFF" + struct.pack("<I", len(body)) + body, 5)
    assert out == pcm


@pytest.mark.parametrize(("data", "message"), [
    (b"ID3\x04" + bytes(40), "not WAV"),
    (b"", "empty"),
    (b"RIFF\x00\x00\x00\x00WAVEdata\x00\x00\x00\x00", "no fmt chunk"),
    (wav_bytes(b"", 8000)[:12] + b"fmt " + struct.pack("<IHHIIHH", 16, 2, 1, 8000, 0, 0, 24)
     + b"data\x00\x00\x00\x00", "unsupported WAV encoding"),
])
def test_what_cannot_be_played_is_refused_clearly(data: bytes, message: str) -> None:
    with pytest.raises(WavError, match=message):
        read_all(data, 64)


def test_written_files_are_standard_wav(tmp_path: Path) -> None:
    path = write_wav(tmp_path / "out.wav", int16(SAMPLES), 16000)
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        assert w.readframes(w.getnframes()) == int16(SAMPLES)
    assert [p.name for p in tmp_path.iterdir()] == ["out.wav"]  # no temporary left
