"""The embedded provider: llama-cpp-python in one model thread, cancellable per token.

Prompts: an instruct model (one whose GGUF carries ``tokenizer.chat_template``) gets
the request's ``system`` and ``prompt`` as a system and a user message through that
template; a base model gets them as one plain completion. Either way the system part
comes first and is the static part of the planner's prompt, so its evaluated state is
kept: in memory for the next request of the process (llama.cpp's prefix match), and on
disk for the next process (a llama.cpp session file keyed by the model's SHA-256 and
the prefix's tokens), so a request pays only for its own tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
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

from . import _states as states
from ._cores import IdleCores
from ._fit import available_memory, judge, kv_cache_bytes
from ._jump import forced_start
from ._models import DEFAULT_MODEL, PRESETS, cache_dir, preset_path
from ._scoring import (
    CHUNK,
    common_prefix,
    hold,
    hold_but_tail,
    room_for_sequences,
    tree_scores,
)
from ._speculate import Counts, greedy_tokens
from ._thread import ModelThread

__all__ = ["DEFAULT_MODEL", "LlamaCpp", "default_model_path"]

_DONE = object()
#: A static prefix shorter than this is not worth a file.
_MIN_PREFIX_TOKENS = 64
#: Scores kept on disk (see `LlamaCpp.score`); the oldest go beyond this many.
_KEPT_SCORES = 256
#: Static prefixes and contexts kept on disk (`LlamaCpp._static`; about 30 MB each
#: with the 0.5B model), the least recently used removed beyond these.
_KEPT_PREFIXES = 8
_KEPT_CONTEXTS = 8


def default_model_path() -> Path:
    """The default preset's model file (assembled on first use, SHA-256 checked)."""
    return preset_path(DEFAULT_MODEL)


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

    Threads: ``threads`` when given; otherwise prompts (the scoring pass, the forced
    tokens) and sampled tokens get the cores no other process is using at the
    request's start (`_cores.IdleCores`): ggml's threads spin while they wait for
    each other, so a thread on a busy core costs far more than it brings, while on an
    idle 2-core machine a second thread takes a sampled token from about 99 ms to 56.
    The count never changes the numbers (the same batches give the same logits), so
    it never changes a plan.

    All model work runs in one long-lived thread (`_thread.ModelThread`: OpenMP
    gives each thread that runs a model its own helpers, which then compete); the
    event loop only receives tokens. Leaving
    the stream (cancel, break) sets a flag the worker checks between tokens, so the
    model is free again within one token; requests are served one at a time. Models
    load once and stay loaded (``aclose`` frees them).

    ``raw``: prompt every model as plain completion, even one with a chat template
    (how the earlier planner drove it; kept for the benchmark)."""

    name = "llama-cpp"

    def __init__(self, model_path: str | None = None, *, context_size: int = 4096,
                 threads: int | None = None, seed: int = 0, raw: bool = False,
                 prefix_cache: bool = True, jump_forward: bool = True,
                 speculate: int | None = 0, keep_scores: bool = True,
                 memory: Callable[[], int | None] | None = None) -> None:
        self.model_path = model_path or os.environ.get("ADJUTANT_LLAMACPP_MODEL") or None
        self.context_size, self.threads, self.seed = context_size, threads, seed
        self.raw, self.prefix_cache = raw, prefix_cache
        #: Keep scores on disk for the next process (`score`); a benchmark that asks the
        #: same requests again turns it off, so it measures the scoring.
        self.keep_scores = keep_scores
        #: Evaluate the text a grammar forces with the prompt, in one batch (`forced_start`).
        self.jump_forward = jump_forward
        #: At temperature 0, generate with our own greedy loop (`_speculate`: the same
        #: text) checking this many drafted tokens per decode; 0: no drafts, one token
        #: per decode, the grammar judging the likeliest tokens first; None: llama-cpp-
        #: python's own loop.
        self.speculate = speculate
        #: Where the last request's time went: its own prompt tokens (beyond what was
        #: kept evaluated), the forced tokens, seconds to the first sampled token,
        #: sampled tokens and seconds per sampled token, the decode steps after the
        #: prompt's, and the drafted, accepted and replayed tokens (`_speculate`);
        #: ``score_s`` for the last score.
        self.timings: dict[str, float] = {}
        self.capabilities = ProviderCapabilities(grammar=True, list_models=True,
                                                 load_models=True, context_size=context_size)
        self._models: dict[str, Any] = {}
        self._identity: dict[str, str] = {}
        self._formats: dict[int, Any] = {}
        self._grammars: dict[str, Any] = {}
        self._busy = threading.Lock()  # one generation at a time per process
        self._load = threading.Lock()
        #: Bytes of memory available now (the fit check before a load); None: unknown.
        self.memory = memory or available_memory
        self._fit_warnings: list[str] = []  # said with the next answer, once
        self._cores = IdleCores()
        self._ahead = 0
        #: The last prompt whose scores came from disk, with its options: a reply to it
        #: evaluates the scoring batch first, as after a scoring pass, so that it is
        #: sampled from the same numbers whether or not the scores were kept.
        self._unscored: tuple[list[int], list[list[int]]] | None = None
        self._thread = ModelThread()

    def _set_threads(self, llama: Any) -> None:
        """The threads of this request (see the class's docstring)."""
        threads = self.threads or self._cores.threads()
        if (threads, threads) != (llama.n_threads, llama.n_threads_batch):
            llama.n_threads = llama.context_params.n_threads = threads
            llama.n_threads_batch = llama.context_params.n_threads_batch = threads
            llama._ctx.set_n_threads(threads, threads)
        self.timings["threads"] = threads

    # -- models ---------------------------------------------------------------------------

    def _path(self, model: str | None) -> str:
        if not model or model == DEFAULT_MODEL:
            if self.model_path and not os.path.isfile(self.model_path):
                # ADJUTANT_LLAMACPP_MODEL naming nothing had failed as a bare
                # FileNotFoundError
                raise ProviderError(f"no GGUF model file at {self.model_path!r} (the "
                                    f"provider's model: ADJUTANT_LLAMACPP_MODEL)",
                                    hint="point ADJUTANT_LLAMACPP_MODEL at an existing "
                                         ".gguf file, or unset it for the default model")
            return self.model_path or str(preset_path(DEFAULT_MODEL))
        if model in PRESETS:
            return str(preset_path(model))
        if not os.path.isfile(model):
            raise ProviderError(f"no GGUF model file at {model!r}",
                                hint=f"name an existing .gguf file or a preset: "
                                     f"{', '.join(PRESETS)}")
        return model

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
                self._check_fit(path, Llama)
                try:
                    self._models[path] = room_for_sequences(Llama(
                        model_path=path, n_ctx=self.context_size,
                        n_threads=self.threads or self._cores.last,
                        n_threads_batch=self.threads or self._cores.last,
                        seed=self.seed, verbose=False))
                except (ValueError, RuntimeError) as exc:
                    raise ProviderError(f"llama.cpp could not load {path}: {exc}",
                                        hint="check that the file is a GGUF model") from exc
                self._identity[path] = _identity(path)
            return self._models[path]

    def _check_fit(self, path: str, llama: Any) -> None:
        """Refuse a model that does not fit in the memory available (red); note one that
        takes most of it (yellow, "may be slow"). The KV cache comes from the GGUF's own
        metadata, read without loading the weights."""
        available = self.memory()
        if available is None:
            return
        metadata = _fit_metadata(path, llama)
        fit = judge(os.path.getsize(path), kv_cache_bytes(metadata, self.context_size),
                    available)
        said = fit.describe(os.path.basename(path), self.context_size)
        if fit.verdict == "red":
            smaller = sorted(PRESETS.values(), key=lambda p: p.size)[0]
            raise ProviderError(f"{said}: it does not fit", hint=(
                f"free memory, lower the preset's context_size, or choose a smaller model "
                f"(the smallest shipped one is {smaller.name}, "
                f"{smaller.size / 2**20:,.0f} MB)"))
        if fit.verdict == "yellow":
            self._fit_warnings.append(f"{said}: it may be slow (the system may page)")

    async def load_model(self, name: str) -> None:
        """Load (and keep) a model now, so the next request starts at once."""
        await self._thread.run(lambda: self._llama(name))
        self.model_path = None if name == DEFAULT_MODEL else name

    async def prepare(self, model: str | None) -> None:
        """Load ``model`` (and keep it) for a request that is coming, without making it
        the default: the operator calls this while it gathers the request's context,
        so a cold start loads the model (0.8 s here) beside that, not after it."""
        await self._thread.run(lambda: self._llama(model))

    async def list_models(self) -> list[ModelInfo]:
        names = list(PRESETS) + ([self.model_path] if self.model_path else [])
        loaded = {os.path.basename(path) for path in self._models}
        files = {n: PRESETS[n].filename if n in PRESETS else os.path.basename(n)
                 for n in names}
        return [ModelInfo(name=n, loaded=files[n] in loaded, context_size=self.context_size)
                for n in names]

    # -- prompts --------------------------------------------------------------------------

    def _tokens(self, llama: Any, request: CompletionRequest) -> tuple[list[int], int]:
        """The prompt's tokens, and how many of them are the static prefix (the system
        part; 0 when there is none)."""
        template = None if self.raw else llama.metadata.get("tokenizer.chat_template")
        if template:
            head, tail = self._chat(llama, template, request.system, request.prompt)
        else:
            head = f"{request.system}\n\n" if request.system else ""
            tail = request.prompt
        first = llama.tokenize(head.encode(), add_bos=True, special=True) if head else []
        rest = llama.tokenize(tail.encode(), add_bos=not first, special=bool(template))
        return first + rest, len(first) if request.system else 0

    def _chat(self, llama: Any, template: str, system: str, prompt: str) -> tuple[str, str]:
        """The chat template's rendering of a system and a user message, cut where the
        user's words begin (so the first part is the same for every request)."""
        key = id(llama)
        if key not in self._formats:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            def token(which: str) -> str:
                ident = int(llama.metadata.get(f"tokenizer.ggml.{which}_token_id", -1))
                return llama._model.token_get_text(ident) if ident >= 0 else ""

            self._formats[key] = Jinja2ChatFormatter(template, eos_token=token("eos"),
                                                     bos_token=token("bos"))
        marker = "\x00ADJUTANT-REQUEST\x00"
        messages: list[Any] = [{"role": "user", "content": marker}]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        text = self._formats[key](messages=messages).prompt
        head, _, tail = text.partition(marker)
        return head, prompt + tail

    def _static(self, llama: Any, path: str, prompt: list[int], prefix: int,
                line: str = "") -> int:
        """The static prefix's length, its state made current (0 when it is not kept):
        where `_scoring.hold` starts its fixed chunks, so the same prompt always ends
        with the same numbers. In `complete`, the context holding exactly this prompt,
        scored, and the trie's path after it is kept as it is.

        The whole chunks of the prompt's first ``line`` (the planner's context) are
        kept on disk as well (`_states`): a cold `adjutant run` in a folder asked
        before need not evaluate them again."""
        self._ahead = 0  # the context's tokens evaluated here (for `timings`)
        if not (self.prefix_cache and prefix >= _MIN_PREFIX_TOKENS):
            return 0
        stable = prefix + self._first_line(llama, prompt, prefix, line)
        if stable > prefix:
            head = prompt[:stable]
            if common_prefix(llama, head) == stable:
                return prefix  # the last request's context: llama.cpp reuses it
            file = self._state_file(llama, path, head, "contexts")
            if states.load(llama, file, head):
                return prefix
            self._reuse_prefix(llama, path, prompt, prefix)
            self._ahead = stable - hold(llama, head, prefix, fresh=False)  # as `hold` would
            states.save(llama, file, head)
            states.prune(file.parent, _KEPT_CONTEXTS)
            return prefix
        self._reuse_prefix(llama, path, prompt, prefix)
        return prefix

    @staticmethod
    def _first_line(llama: Any, prompt: list[int], prefix: int, line: str) -> int:
        """How many tokens after the static prefix are whole chunks of ``line``."""
        count = (len(prompt) - prefix - 1) // CHUNK * CHUNK
        while count > 0:
            try:
                text = llama.detokenize(prompt[prefix:prefix + count]).decode()
            except UnicodeDecodeError:
                text = ""
            if text and line.startswith(text):
                return count
            count -= CHUNK
        return 0

    def _state_file(self, llama: Any, path: str, head: list[int], kind: str) -> Path:
        digest = hashlib.sha256(self._identity[path].encode())
        # not the thread count: it does not change the numbers (`_cores`)
        digest.update(f"{self.context_size}:{llama.context_params.n_seq_max}:".encode()
                      + repr(head).encode())
        return cache_dir() / kind / f"{digest.hexdigest()[:32]}.session"

    def _reuse_prefix(self, llama: Any, path: str, tokens: list[int], prefix: int) -> None:
        """Make the static prefix's state current: kept from the last request, read from
        the disk cache, or evaluated now and written there."""
        head = tokens[:prefix]
        if llama.n_tokens >= prefix and list(llama.input_ids[:prefix]) == head:
            return  # the last request's state starts with it: llama.cpp reuses it
        file = self._state_file(llama, path, head, "prefixes")
        if states.load(llama, file, head):
            return
        llama.reset()
        llama.eval(head)
        states.save(llama, file, head)
        states.prune(file.parent, _KEPT_PREFIXES)

    def _scores_file(self, llama: Any, path: str, prompt: list[int],
                     options: list[list[int]]) -> Path | None:
        """Where the scores of exactly this model, prompt and options are kept: a pure
        function of them, so a new process need not score the same thing again (the
        planner's content-free calibration prompt, scored once per menu, is the
        common case: a cold `adjutant run` saves a scoring pass)."""
        if not (self.prefix_cache and self.keep_scores):
            return None
        digest = hashlib.sha256(self._identity[path].encode())
        digest.update(f"{self.context_size}:{llama.context_params.n_seq_max}:tree:".encode()
                      + repr((prompt, options)).encode())
        return cache_dir() / "scores" / f"{digest.hexdigest()[:32]}.json"

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

    @staticmethod
    def _heal(llama: Any, forced: str) -> list[int]:
        """The tokens of the forced text to evaluate with the prompt: all but the last
        (which the model writes itself, under the grammar, so a token that would have
        spanned the forced text and the model's own is still open to it)."""
        ids = llama.tokenize(forced.encode(), add_bos=False, special=False)[:-1]
        try:
            kept = llama.detokenize(ids).decode()
        except UnicodeDecodeError:
            return []
        return ids if ids and forced.startswith(kept) else []

    def check_grammar(self, text: str, model: str | None = None) -> None:
        """Raise `ProviderError` unless llama.cpp accepts the GBNF ``text``."""
        self._grammar(self._llama(model), text)

    # -- scoring --------------------------------------------------------------------------

    async def score(self, request: CompletionRequest,
                    continuations: Sequence[str]) -> list[float]:
        """How likely the model finds each continuation right after the request's
        prompt: the sum of its tokens' log-probabilities up to the token that tells it
        apart from the others (later tokens are taken as certain).

        One pass: the prompt is evaluated once (its static prefix kept, as for
        `complete`), its last chunk in one batch with the continuations as a token
        trie, each a sequence of the unified KV cache (`_scoring`)."""
        llama = await self._thread.run(lambda: self._llama(request.model))
        path = self._path(request.model)

        def work() -> list[float]:
            with self._busy:
                started = time.perf_counter()
                self._set_threads(llama)
                prompt, prefix = self._tokens(llama, request)
                options = [llama.tokenize(c.encode(), add_bos=False, special=False)
                           for c in continuations]
                memo = self._scores_file(llama, path, prompt, options)
                if memo is not None and (kept := _read_scores(memo, len(options))):
                    self.timings["score_s"] = time.perf_counter() - started
                    self.timings["score_prompt_tokens"] = 0
                    self._unscored = (prompt, options)
                    return kept
                self._unscored = None
                cached, tail = hold_but_tail(llama, prompt, self._static(
                    llama, path, prompt, prefix, _line(request)))
                scores = tree_scores(llama, options, tail)
                if memo is not None:
                    _write_scores(memo, scores)
                self.timings["score_s"] = time.perf_counter() - started
                self.timings["score_prompt_tokens"] = len(prompt) - cached + self._ahead
                return scores

        try:
            return await self._thread.run(work)
        except (RuntimeError, ValueError) as exc:
            raise ProviderError(f"llama.cpp could not score: {exc}",
                                hint="see the message; the model stays loaded") from exc

    # -- generation -----------------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> AsyncIterator[CompletionChunk]:
        import anyio

        llama = await self._thread.run(lambda: self._llama(request.model))
        path = self._path(request.model)
        if self._fit_warnings:
            warnings, self._fit_warnings = tuple(self._fit_warnings), []
            yield CompletionChunk(warnings=warnings)
        head: list[int] = []
        rest = request.grammar or ""
        if request.grammar and self.jump_forward:
            forced, rest = forced_start(request.grammar)
            head = self._heal(llama, forced) if forced else []
            if head:  # the model writes what the kept tokens leave of the forced text
                tail = forced[len(llama.detokenize(head).decode()):]
                root, _, others = rest.partition("\n")
                rest = f"root ::= {json.dumps(tail)} {root.split('::=', 1)[1].strip()}\n{others}"
            else:
                rest = request.grammar
        grammar = self._grammar(llama, rest) if rest else None
        tokens: queue.SimpleQueue[Any] = queue.SimpleQueue()
        stop = threading.Event()
        counted: dict[str, int] = {}

        def work() -> None:
            with self._busy:
                try:
                    if stop.is_set():  # left before its turn came: nothing to generate
                        return
                    started = time.perf_counter()
                    self._set_threads(llama)
                    prompt, prefix = self._tokens(llama, request)
                    counted["prompt"] = len(prompt)
                    if len(prompt) + len(head) >= self.context_size:
                        raise ValueError(f"the prompt is {len(prompt)} tokens, more than "
                                         f"the context of {self.context_size}")
                    static = self._static(llama, path, prompt, prefix, _line(request))
                    if self._unscored is not None and self._unscored[0] == prompt:
                        # scores kept on disk: the batch they came from, evaluated now
                        # (a reply after a plain evaluation differs in the last digits,
                        # and the values sampled from it differed from run to run)
                        tree_scores(llama, self._unscored[1],
                                    hold_but_tail(llama, prompt, static)[1])
                    self._unscored = None
                    cached = common_prefix(llama, prompt)
                    if cached < len(prompt) or llama.n_tokens == len(prompt):
                        cached = hold(llama, prompt, static)  # not right after its scoring
                    # the forced text's start may still be there from the scoring pass
                    kept = max(0, common_prefix(llama, prompt + head) - len(prompt))
                    if head:  # the text the grammar forces: shown, evaluated with the prompt
                        tokens.put({"choices": [{"text": llama.detokenize(head).decode(),
                                                 "forced": len(head)}]})
                    counts = Counts()
                    speculating = self.speculate is not None and request.temperature == 0
                    if speculating:
                        # llama-cpp-python's own completion (stop strings, UTF-8, chunks)
                        # around our greedy loop instead of its `generate`
                        lookahead = self.speculate or 0
                        llama.generate = lambda tokens, **options: greedy_tokens(
                            llama, tokens, options.get("grammar"), lookahead=lookahead,
                            stop=stop, max_tokens=request.max_tokens, counts=counts)
                    pieces = llama.create_completion(
                        prompt + head, max_tokens=request.max_tokens,
                        temperature=request.temperature,
                        stop=list(request.stop) or None, grammar=grammar, stream=True,
                        seed=self.seed)
                    first = None
                    count = 0
                    try:
                        for piece in pieces:
                            if first is None:
                                first = time.perf_counter()
                            count += 1
                            tokens.put(piece)
                            if stop.is_set():
                                break
                    finally:
                        pieces.close()  # our loop ends (and tidies the cache) first
                        llama.__dict__.pop("generate", None)
                    end = time.perf_counter()
                    if not speculating:
                        counts.steps = max(count - 1, 0)  # one decode per token after the first
                    self.timings |= {
                        "prompt_tokens": len(prompt) - max(cached, prefix if
                                                           self.prefix_cache else 0)
                        + self._ahead,
                        "forced_tokens": len(head), "forced_kept": kept,
                        "first_token_s": (first or end) - started,
                        "generated_tokens": count,
                        "per_token_s": (end - (first or end)) / max(count - 1, 1),
                        "drafted_tokens": counts.drafted, "accepted_tokens": counts.accepted,
                        "decode_steps": counts.steps, "replayed_tokens": counts.replayed}
                except Exception as exc:
                    tokens.put(exc)
                finally:
                    tokens.put(_DONE)

        self._thread.submit(work)
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
                                              usage=Usage(
                                                  prompt_tokens=counted.get("prompt"),
                                                  completion_tokens=produced))
                        return
                    if isinstance(entry, Exception):
                        raise ProviderError(f"llama.cpp failed: {entry}",
                                            hint="see the message; the model stays loaded")
                    choice = entry["choices"][0]
                    produced += choice.get("forced", 1)
                    finish = {"length": "length"}.get(choice.get("finish_reason") or "",
                                                      finish)
                    if choice.get("text"):
                        yield CompletionChunk(text=choice["text"])
        finally:
            stop.set()  # the worker ends within one token; the lock frees the model

    async def aclose(self) -> None:
        """Free the loaded models (a later request loads again)."""

        def free() -> None:
            with self._busy, self._load:
                for model in self._models.values():
                    close = getattr(model, "close", None)
                    if close is not None:
                        close()
                self._models.clear()
                self._formats.clear()
                self._grammars.clear()

        await self._thread.run(free)


def _line(request: CompletionRequest) -> str:
    """The prompt's first line when more follows it (a one-line prompt is the request
    itself, never the same twice)."""
    line, newline, _ = request.prompt.partition("\n")
    return line if newline else ""


def _identity(path: str) -> str:
    """What names a model file's contents: its preset's SHA-256, else its path, size and
    modification time (hashing an arbitrary GGUF on every start would cost seconds)."""
    for preset in PRESETS.values():
        if os.path.basename(path) == preset.filename:
            return preset.sha256
    info = os.stat(path)
    return f"{os.path.realpath(path)}:{info.st_size}:{info.st_mtime_ns}"


def _fit_metadata(path: str, llama: Any) -> dict[str, str]:
    """The GGUF metadata the fit check needs (architecture and shape), kept on disk per
    model file: reading it means loading the whole vocabulary (`vocab_only`), 0.3-0.6 s
    of every cold start for a 151k-token vocabulary."""
    file = cache_dir() / "fit" / f"{hashlib.sha256(_identity(path).encode()).hexdigest()[:32]}.json"
    try:
        kept = json.loads(file.read_text(encoding="utf-8"))
        if isinstance(kept, dict) and all(isinstance(v, str) for v in kept.values()):
            return kept
    except (OSError, ValueError):
        pass  # absent or damaged: read the model's own
    try:
        metadata = llama(model_path=path, vocab_only=True, verbose=False).metadata
    except (ValueError, RuntimeError):
        return {}  # the full load says what is wrong with the file
    arch = metadata.get("general.architecture", "")
    wanted = {k: str(v) for k, v in metadata.items()
              if k == "general.architecture" or (arch and k.startswith(f"{arch}."))}
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_suffix(f".partial-{os.getpid()}")
        partial.write_text(json.dumps(wanted), encoding="utf-8")
        os.replace(partial, file)
    except OSError:
        pass  # a read-only cache: read it again next time
    return wanted


def _read_scores(file: Path, count: int) -> list[float] | None:
    """The scores kept in ``file``, or None when absent, damaged or of another shape."""
    try:
        kept = json.loads(file.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(kept, list) and len(kept) == count and all(
            isinstance(v, float) for v in kept):
        return kept
    return None


def _write_scores(file: Path, scores: list[float]) -> None:
    """Keep ``scores`` in ``file`` (written whole, then renamed), the oldest of more
    than `_KEPT_SCORES` removed. A cache: a failure to write loses nothing."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        partial = file.with_suffix(f".partial-{os.getpid()}")
        partial.write_text(json.dumps(scores))
        os.replace(partial, file)
        kept = sorted(file.parent.glob("*.json"), key=lambda f: f.stat().st_mtime)
        for old in kept[:-_KEPT_SCORES]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
