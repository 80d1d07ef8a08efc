"""Greedy decoding in our own loop: the same tokens as llama-cpp-python's, sooner.

Savings, each keeping the text. The greedy choice under a grammar (`_Chooser`)
shows the grammar the highest logits first instead of the whole vocabulary (what
makes it faster here: 0.66-0.71x the seconds per token, `bench/speculation.py`). A
reply whose grammar allows nothing but its end ends without a decode to choose the
end token (`_Chooser.only_end`).
And, with ``lookahead`` > 0, speculative decoding:

At temperature 0 the next token is the grammar-allowed token of highest logit. A cheap
drafter (`draft`: prompt lookup) guesses the next few tokens; the model evaluates the
pending token and the guesses in ONE batch, with logits for every row; the guesses
that match the model's own greedy choice are kept, the first that does not is
replaced by the model's token and the KV cache after it is removed. Where reading
the weights is the cost (idle cores, a GPU) a decode of five tokens costs little
more than one, so every accepted guess is most of a token's time saved. Not so on
two shared cores with one thread: a batch of 2 or 3 costs as many single decodes, one of 4
about 2.9, so guesses go only in full batches, and the replays below cost more than
the accepted guesses save (1.17-1.32x there).

The numbers: llama.cpp's CPU kernels round differently with the shape of a batch (a
row of a 2-token batch differed from the same token decoded alone by up to 0.5 in
logit here; `_scoring.hold` met the same with prompts). So a row's choice is only
taken from a batch when it leads every other grammar-allowed token by more than
`MARGIN`; on a nearer call the context is rewound to the last position evaluated one
token at a time (the way `Llama.generate` does) and the tokens since are evaluated
again that way, so the close choice is made on exactly the numbers the plain path
has. The text is then the plain path's as long as a batch's rounding moves no logit by
half the margin (0.5 seen against 1.0 allowed).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MARGIN", "Counts", "draft", "greedy_tokens"]

#: A choice read from a batch's row is kept only when it leads the next allowed token
#: by more than this (logits); see the module's docstring.
MARGIN = 2.0
#: The longest n-gram the drafter looks up.
LONGEST = 4
#: How many of the highest logits the grammar judges first (`_Chooser.choose`).
_FIRST = 64


@dataclass
class Counts:
    """What one reply's speculation did (`LlamaCpp.timings`)."""

    drafted: int = 0  # tokens proposed by the drafter and evaluated
    accepted: int = 0  # of those, the ones the model chose itself
    steps: int = 0  # decode calls after the prompt's (batches and single tokens)
    replayed: int = 0  # tokens evaluated again one at a time for a close choice


def draft(context: Sequence[int] | Any, count: int, longest: int = LONGEST) -> list[int]:
    """Up to ``count`` tokens that followed the LATEST earlier occurrence of the
    context's last n tokens (n from ``longest`` down to 1, the longest that occurs);
    ``[]`` when none occurs. The latest, not the earliest: the request's own words (a
    file name, quoted text, the value just written) come after the worked examples."""
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    if count <= 0:
        return []
    tokens = np.asarray(context, dtype=np.int64)
    size = len(tokens)
    for n in range(min(longest, size - 1), 0, -1):
        # windows ending before the last token, so each has at least one token after it
        windows = sliding_window_view(tokens[:-1], n)
        hits = np.flatnonzero((windows == tokens[-n:]).all(axis=1))
        if hits.size:
            start = int(hits[-1]) + n
            return [int(t) for t in tokens[start:start + count]]
    return []


class _Chooser:
    """The grammar-allowed token of highest logit in one row of the last batch (what
    llama.cpp's grammar then greedy samplers choose: the first of equal maxima), and
    whether another allowed token comes within `MARGIN` of it."""

    def __init__(self, llama: Any, grammar: Any) -> None:
        import llama_cpp
        import numpy as np
        from llama_cpp._internals import LlamaSampler

        self._llama, self._lib = llama, llama_cpp
        self.vocab = int(llama.n_vocab())
        self._sampler: Any = None
        if grammar is not None:
            self._sampler = LlamaSampler()  # type: ignore[no-untyped-call]
            self._sampler.add_grammar(llama._model, grammar)
        self._data = (llama_cpp.llama_token_data * self.vocab)()
        self._view = np.ctypeslib.as_array(self._data)
        self._array = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._data, llama_cpp.llama_token_data_p),
            size=self.vocab, selected=-1, sorted=False)

    def choose(self, row: int) -> tuple[int, bool]:
        """The token row ``row`` of the last decode chooses, and whether the choice is
        close (another allowed token within `MARGIN`). Not yet accepted.

        The grammar judges each token on its own, so it need not see all 151k: the
        highest logits are shown to it first (`_FIRST`, then more), and once an allowed
        token is found and nothing left unseen comes within `MARGIN` of it (nor ties
        it), the rest cannot change the choice. Otherwise the whole vocabulary."""
        import numpy as np

        logits = np.ctypeslib.as_array(self._llama._ctx.get_logits_ith(row),
                                       shape=(self.vocab,))
        if self._sampler is None:
            return self._pick(logits)
        for count in (_FIRST, 8 * _FIRST):
            top = np.argpartition(logits, -count)[-count:]
            order = top[np.argsort(-logits[top], kind="stable")]
            allowed = self._allowed(order, logits[order])
            if np.isfinite(allowed).any():
                best = float(allowed.max())
                floor = float(logits[order[-1]])
                if floor < best - MARGIN:  # nothing unseen comes near it or ties it
                    found = order[allowed == best]
                    token = int(found.min())  # the first of equal maxima, as greedy
                    close = int(np.count_nonzero(allowed > best - MARGIN)) > 1
                    return token, close
        return self._pick(self._allowed(None, logits))

    def _allowed(self, ids: Any, logits: Any) -> Any:
        """``logits`` (of ``ids``, or of the whole vocabulary when None) with the
        tokens the grammar rejects here at -inf."""
        import numpy as np

        size = self.vocab if ids is None else len(ids)
        view = self._view[:size]
        view["id"] = np.arange(self.vocab, dtype=np.int32) if ids is None else ids
        view["logit"] = logits
        self._array.size, self._array.selected, self._array.sorted = size, -1, False
        self._lib.llama_sampler_apply(self._sampler.sampler, ctypes.byref(self._array))
        return view["logit"].copy()

    @staticmethod
    def _pick(allowed: Any) -> tuple[int, bool]:
        import numpy as np

        token = int(np.argmax(allowed))
        return token, int(np.count_nonzero(allowed > allowed[token] - MARGIN)) > 1

    def only_end(self) -> int | None:
        """An end-of-generation token when the grammar, as accepted so far, allows
        nothing else (a reply whose JSON has closed): the reply is whole, and its last
        token needs no decode to choose how it ends (one decode saved per reply). None
        otherwise, or without a grammar. The end token alone is judged first
        (microseconds); the whole vocabulary (12-20 ms) only where it is allowed."""
        import numpy as np

        if self._sampler is None:
            return None
        end = int(self._llama.token_eos())
        if not np.isfinite(self._allowed(np.array([end], dtype=np.int32),
                                         np.zeros(1, dtype=np.float32))).any():
            return None
        allowed = np.flatnonzero(np.isfinite(self._allowed(
            None, np.zeros(self.vocab, dtype=np.float32))))
        vocab = self._llama._model.vocab
        return end if all(self._lib.llama_vocab_is_eog(vocab, int(t)) for t in allowed) \
            else None

    def accept(self, token: int) -> None:
        if self._sampler is not None:
            self._sampler.accept(token)

    def close(self) -> None:
        if self._sampler is not None:
            self._sampler.close()


def _start(llama: Any, tokens: list[int]) -> list[int]:
    """`Llama.generate`'s prefix match, verbatim in effect: what of ``tokens`` is left
    to evaluate, the context rewound to what it keeps (so the first choice is made on
    the plain path's numbers)."""
    reset = True
    if llama.n_tokens > 0:
        longest = 0
        for a, b in zip(llama._input_ids, tokens, strict=False):
            if a != b:
                break
            longest += 1
        consumed = longest == len(tokens)
        if consumed and llama.n_tokens == len(tokens) and not llama._requires_eval:
            return []
        reuse = longest - 1 if consumed else longest
        if reuse > 0 and llama._ctx.kv_cache_seq_rm(-1, reuse, -1):
            reset = False
            tokens = tokens[reuse:]
            llama.n_tokens = reuse
            llama._requires_eval = True
    if reset:
        llama.reset()
    return tokens


def greedy_tokens(llama: Any, tokens: Sequence[int], grammar: Any, *, lookahead: int,
                  stop: threading.Event, max_tokens: int, counts: Counts) -> Iterator[int]:
    """The tokens greedy decoding under ``grammar`` generates after ``tokens`` (a
    stand-in for `Llama.generate` at temperature 0), up to ``lookahead`` drafted
    tokens checked per decode. Ends when ``stop`` is set (checked before every
    decode) or when the consumer stops reading. Whenever it yields, the context holds
    exactly ``llama.input_ids[:llama.n_tokens]`` (a rejected guess already removed)."""
    import numpy as np

    chooser = _Chooser(llama, grammar)
    try:
        llama.eval(_start(llama, list(tokens)))
        exact = int(llama.n_tokens)  # evaluated as the plain path does, up to here
        pending, _ = chooser.choose(-1)
        chooser.accept(pending)
        produced = 0
        while True:
            yield pending
            produced += 1
            if stop.is_set():
                return
            if (end := chooser.only_end()) is not None:
                yield end  # the grammar allows nothing else: no decode to learn it
                return
            base = int(llama.n_tokens)
            room = min(lookahead, llama.n_ctx() - base - 1, max_tokens - produced - 1)
            guesses = draft(np.append(llama.input_ids[:base], pending), room) if room > 0 else []
            if len(guesses) < lookahead:
                # llama.cpp's CPU kernels take rows four at a time and the rest one by
                # one, so a shorter batch costs as much as its tokens decoded alone
                guesses = []
            batch = [pending, *guesses]
            llama._batch.set_batch(batch=batch, n_past=base, logits_all=True)
            llama._ctx.decode(llama._batch)
            llama.input_ids[base:base + len(batch)] = batch
            llama.n_tokens = base + len(batch)
            counts.steps += 1
            counts.drafted += len(guesses)
            if len(batch) == 1 and exact == base:
                exact = base + 1  # one token decoded alone: the plain path's numbers
            chosen: list[int] = []
            for row in range(len(batch)):
                token, close = chooser.choose(row)
                if close and exact < base + row + 1:
                    again = _replay(llama, chooser, exact, base + row + 1, stop, counts)
                    if again is None:
                        return
                    token = again
                    exact = base + row + 1  # the rows after it are gone with the rewind
                chooser.accept(token)
                chosen.append(token)
                if row >= len(guesses) or guesses[row] != token or exact > base:
                    break
            counts.accepted += len(chosen) - 1
            keep = base + len(chosen)
            if llama.n_tokens > keep:
                llama._ctx.kv_cache_seq_rm(-1, keep, -1)
                llama.n_tokens = keep
            exact = min(exact, keep)
            for token in chosen[:-1]:
                yield token
                produced += 1
            pending = chosen[-1]
    finally:
        chooser.close()


def _replay(llama: Any, chooser: _Chooser, exact: int, end: int, stop: threading.Event,
            counts: Counts) -> int | None:
    """Rewind the context to ``exact`` and evaluate its tokens up to ``end`` one at a
    time, as the plain path did; the token then chosen (None when stopped)."""
    again = [int(t) for t in llama.input_ids[exact:end]]
    llama._ctx.kv_cache_seq_rm(-1, exact, -1)
    llama.n_tokens = exact
    for token in again:
        if stop.is_set():
            return None
        llama.eval([token])
        counts.steps += 1
        counts.replayed += 1
    token, _ = chooser.choose(-1)
    return token
