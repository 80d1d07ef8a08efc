"""Will a GGUF fit? Its file (the weights are mapped whole) plus the KV cache for the
context asked for, from the model's own metadata, against the memory available now.

green: it fits with room to spare. yellow: it fits only by taking most of what is
free ("may be slow": the system may page). red: it does not fit, and loading it would
swap the machine to a standstill or be killed, so it is refused with a smaller preset
to try.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["Fit", "available_memory", "judge", "kv_cache_bytes"]

#: Above this share of the available memory a model "may be slow".
TIGHT = 0.7
#: llama.cpp's own buffers (compute graph, scratch) beyond weights and KV cache.
OVERHEAD = 1.10


@dataclass(frozen=True)
class Fit:
    verdict: Literal["green", "yellow", "red"]
    #: Bytes the model needs with its KV cache, and bytes available.
    need: int
    available: int

    def describe(self, name: str, context: int) -> str:
        return (f"{name} with a {context:,}-token context needs about {_mb(self.need)} and "
                f"{_mb(self.available)} is available")


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def kv_cache_bytes(metadata: Mapping[str, str], context: int) -> int:
    """The KV cache of ``context`` tokens in f16 (llama.cpp's default): per layer, keys
    and values of every KV head. 0 when the metadata lacks the figures."""
    arch = metadata.get("general.architecture", "")
    try:
        layers = int(metadata[f"{arch}.block_count"])
        heads = int(metadata[f"{arch}.attention.head_count"])
        kv_heads = int(metadata.get(f"{arch}.attention.head_count_kv", heads))
        width = int(metadata[f"{arch}.embedding_length"])
    except (KeyError, ValueError):
        return 0
    key = int(metadata.get(f"{arch}.attention.key_length", width // max(heads, 1)))
    value = int(metadata.get(f"{arch}.attention.value_length", key))
    return context * layers * kv_heads * (key + value) * 2


def available_memory() -> int | None:
    """Bytes of memory available without swapping (Linux's MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def judge(file_size: int, kv_cache: int, available: int) -> Fit:
    need = int((file_size + kv_cache) * OVERHEAD)
    if need > available:
        return Fit("red", need, available)
    return Fit("yellow" if need > TIGHT * available else "green", need, available)
