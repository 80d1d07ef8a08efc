"""espeak-ng, the last resort: robotic but everywhere (Debian's ``espeak-ng``).

The text goes in on standard input (never as an argument, so no text can read as an
option) and the WAV comes back on standard output as espeak-ng writes it, so audio
starts after the first clause. A stop kills the process.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

from adjutant_hookspecs import AudioChunk, SpeechError, SpeechRequest, VoiceInfo

from ._wav import WavError, WavReader

__all__ = ["EspeakEngine"]

#: espeak-ng's own default pace, in words per minute (speed 1.0).
WORDS_PER_MINUTE = 175


class EspeakEngine:
    """The ``espeak-ng`` speech engine."""

    name = "espeak-ng"
    description = "espeak-ng (GPL-3.0, a system program): robotic, many languages"
    streams = True

    def __init__(self, program: str = "espeak-ng") -> None:
        self.program = program

    def installed(self) -> bool:
        return shutil.which(self.program) is not None

    def _argv(self, request: SpeechRequest) -> list[str]:
        path = shutil.which(self.program)
        if path is None:
            raise SpeechError("espeak-ng is not installed",
                              hint="apt-get install espeak-ng (or your system's package)")
        argv = [path, "--stdout", "-s", str(round(WORDS_PER_MINUTE * request.speed))]
        if request.voice:
            if request.voice.startswith("-"):
                raise SpeechError(f"invalid espeak-ng voice {request.voice!r}")
            argv += ["-v", request.voice]
        return argv

    async def synthesize(self, request: SpeechRequest) -> AsyncIterator[AudioChunk]:
        import contextlib
        import subprocess

        import anyio

        reader = WavReader()
        process = await anyio.open_process(self._argv(request), stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send(request.text.encode("utf-8", "replace"))
            await process.stdin.aclose()
            async for data in process.stdout:
                pcm = reader.feed(data)
                if pcm:
                    yield AudioChunk(pcm=pcm, sample_rate=reader.sample_rate,
                                     channels=reader.channels)
            await process.wait()
            if process.returncode:
                error = b""
                if process.stderr is not None:
                    with contextlib.suppress(anyio.EndOfStream):
                        error = await process.stderr.receive(4096)
                raise SpeechError(f"espeak-ng failed (exit {process.returncode}): "
                                  f"{error.decode(errors='replace').strip()}")
            reader.close()
        except WavError as exc:
            raise SpeechError(f"espeak-ng wrote no usable audio: {exc}") from None
        finally:
            if process.returncode is None:
                process.kill()
                with anyio.CancelScope(shield=True):
                    await process.wait()
            await process.aclose()

    async def voices(self) -> list[VoiceInfo]:
        import anyio

        path = shutil.which(self.program)
        if path is None:
            return []
        result = await anyio.run_process([path, "--voices"], check=False)
        found = []
        for line in result.stdout.decode(errors="replace").splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 4:
                found.append(VoiceInfo(id=fields[1], name=fields[3].replace("_", " "),
                                       language=fields[1]))
        return found

    async def aclose(self) -> None:
        return None
