"""A context's evaluated state kept on disk, so a new process does not evaluate the
same tokens again: the static prefix (the planner's system part, the same for every
request) and the whole chunks of a prompt's first line (the planner's context, the
same from one request to the next in one folder until something changes there).

A state holds the KV cache of exactly the tokens it names, evaluated as `_scoring.hold`
evaluates them, so a request continued from it ends with the same numbers as one
evaluated whole."""

from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path
from typing import Any

__all__ = ["load", "prune", "save"]


def load(llama: Any, file: Path, head: list[int]) -> bool:
    """Make ``file``'s state current if it holds exactly ``head``; a stale or damaged
    file is deleted (the caller evaluates again)."""
    import llama_cpp

    if not file.is_file():
        return False
    # room for the state's tokens, and a few more: a state saved with extra cells
    out = (llama_cpp.llama_token * (len(head) + 1))()
    count = ctypes.c_size_t(0)
    llama.reset()
    if llama_cpp.llama_state_load_file(llama._ctx.ctx, str(file).encode(), out,
                                       len(head) + 1, ctypes.byref(count)) \
            and count.value == len(head) and list(out)[:len(head)] == head:
        llama._ctx.kv_cache_seq_rm(-1, len(head), -1)
        llama.input_ids[:len(head)] = head
        llama.n_tokens = len(head)
        llama._requires_eval = True  # the logits are refreshed by what follows
        with contextlib.suppress(OSError):
            os.utime(file)  # recently used: kept longest (`prune`)
        return True
    llama.reset()
    file.unlink(missing_ok=True)
    return False


def save(llama: Any, file: Path, head: list[int]) -> None:
    """Keep the context's state, holding exactly ``head``, in ``file`` (written whole,
    then renamed). A cache: a failure to write loses nothing."""
    import llama_cpp

    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    partial = file.with_suffix(f".partial-{os.getpid()}")
    array = (llama_cpp.llama_token * len(head))(*head)
    try:
        if llama_cpp.llama_state_save_file(llama._ctx.ctx, str(partial).encode(), array,
                                           len(head)):
            os.replace(partial, file)
    except OSError:
        pass
    finally:
        partial.unlink(missing_ok=True)


def prune(folder: Path, keep: int) -> None:
    """Remove all but the ``keep`` most recently used states in ``folder``."""
    try:
        files = sorted(folder.glob("*.session"), key=lambda f: f.stat().st_mtime)
        for old in files[:-keep]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
