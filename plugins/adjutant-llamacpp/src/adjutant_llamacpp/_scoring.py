"""How likely the model finds each of several continuations of one prompt (the
planner's choice of a first tool: `LlamaCpp.score`).

The continuations form a token trie: a token's log-probability is needed only where
two or more continuations still share the tokens before it. `tree_scores` evaluates
every such trie node in ONE batch, each continuation a sequence of a unified KV cache
(a node's token belongs to every sequence that goes through it, so it attends to the
prompt and its own ancestors only); `walk_scores`, the fallback for a context without
room for the sequences, evaluates each branching group as its own small batch. On two
cores a decode call costs about as much as a few tokens, so one batch instead of eight
is most of the saving.

Both leave the context holding the prompt and the trie's path through its largest
groups (the planner's ``{"type":"plan","steps":[{"tool":"`` and more), so a reply that
starts the same way goes on from there instead of evaluating it again."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["CHUNK", "SEQUENCES", "common_prefix", "hold", "hold_but_tail",
           "room_for_sequences", "tree_scores", "walk_scores"]

#: Sequences a model's context can hold (one per continuation scored, plus the prompt's).
SEQUENCES = 64
#: A prompt's tokens after its static prefix are evaluated in batches of this many, at
#: fixed offsets (`hold`).
CHUNK = 32


def room_for_sequences(llama: Any) -> Any:
    """``llama`` with its context made again to hold `SEQUENCES` sequences in one
    unified KV cache (llama-cpp-python makes it with one; the cache's size is the
    same). A context that cannot be made so is left as it was."""
    from llama_cpp import _internals

    params = llama.context_params
    params.n_seq_max, params.kv_unified = SEQUENCES, True
    try:
        context = _internals.LlamaContext(model=llama._model, params=params, verbose=False)
    except (ValueError, RuntimeError):
        params.n_seq_max, params.kv_unified = 1, False
        return llama
    llama._ctx.close()
    llama._ctx = llama._stack.enter_context(contextlib.closing(context))
    return llama


def common_prefix(llama: Any, prompt: list[int]) -> int:
    """How many of the prompt's first tokens the context already holds."""
    common = 0
    for have, want in zip(llama.input_ids[: llama.n_tokens].tolist(), prompt, strict=False):
        if have != want:
            break
        common += 1
    return common


def rewind(llama: Any, tokens: int) -> None:
    """Keep only the context's first ``tokens``."""
    llama._ctx.kv_cache_seq_rm(-1, tokens, -1)
    llama.n_tokens = tokens


def hold(llama: Any, prompt: list[int], static: int, *, fresh: bool = True) -> int:
    """Make the context hold ``prompt``, its last token's logits fresh (unless not
    ``fresh``), with the same numbers whatever it held before; how many tokens it kept.

    llama.cpp rounds differently with the shape of a batch: the same prompt's last
    logits differed by up to 0.3 nats with how much of it the context held (a request
    sharing its first words with the one before), enough to flip a near choice with
    the order of requests. So what follows the ``static`` prefix (whose state is
    always evaluated alone) is evaluated in `CHUNK`-token batches at fixed offsets,
    and only whole chunks already held are kept: the context and the files listed,
    the same from one request to the next, are not evaluated again."""
    return _hold(llama, prompt, static, fresh=fresh)[0]


def hold_but_tail(llama: Any, prompt: list[int], static: int) -> tuple[int, list[int]]:
    """`hold` but for the prompt's last chunk, returned to be evaluated with the
    scoring batch (`tree_scores`' ``tail``: one decode fewer, 0.25-0.3 s here); how
    many tokens it kept, and that chunk."""
    kept, last = _hold(llama, prompt, static, fresh=True, but_last=True)
    return kept, prompt[last:]


def _hold(llama: Any, prompt: list[int], static: int, *, fresh: bool,
          but_last: bool = False) -> tuple[int, int]:
    """`hold`'s work; the tokens kept, and where its last chunk starts."""
    def aligned(count: int) -> int:
        return count if count <= static else static + (count - static) // CHUNK * CHUNK

    kept = min(aligned(common_prefix(llama, prompt)), aligned(len(prompt) - fresh))
    rewind(llama, kept)
    starts = range(kept, len(prompt), CHUNK)
    for start in starts[:-1] if but_last else starts:
        llama.eval(prompt[start:start + CHUNK])
    return kept, starts[-1] if starts else len(prompt)


def _log_probabilities(llama: Any) -> Any:
    import numpy as np

    vocab = llama.n_vocab()

    def row(index: int) -> Any:
        values = np.ctypeslib.as_array(llama._ctx.get_logits_ith(index),
                                       shape=(vocab,)).astype(np.float64)
        top = values.max()
        return values - (top + np.log(np.exp(values - top).sum()))

    return row


def _keep(llama: Any, base: int, path: list[int]) -> None:
    """The context holds the prompt and ``path`` after it in sequence 0, nothing else;
    its logits are the trie's, so they are refreshed before sampling."""
    llama._ctx.kv_cache_seq_rm(-1, base + len(path), -1)
    llama.input_ids[base:base + len(path)] = path
    llama.n_tokens = base + len(path)
    llama._requires_eval = True


def tree_scores(llama: Any, options: list[list[int]], tail: list[int] | None = None,
                ) -> list[float]:
    """Each option's log-probability after the prompt the context holds (`hold`: its
    last logits fresh) and ``tail`` (`hold_but_tail`: the prompt's last chunk, then
    evaluated in the same batch as the trie, belonging to every sequence), up to and
    with the token that tells it apart from the others (later tokens are taken as
    certain)."""
    tail = list(tail or [])
    # every prefix two or more options continue past: its logits tell them apart
    members: dict[tuple[int, ...], list[int]] = {}
    for index, option in enumerate(options):
        for length in range(1, len(option)):
            members.setdefault(tuple(option[:length]), []).append(index)
    nodes = sorted((p for p, m in members.items() if len(m) > 1), key=len)
    if (not options or len(options) + 1 > int(llama.context_params.n_seq_max)
            or len(nodes) + len(tail) > int(llama.n_batch)):
        if tail:
            llama.eval(tail)
        return walk_scores(llama, options)
    held = int(llama.n_tokens)
    base = held + len(tail)
    row = _log_probabilities(llama)
    first = None if tail else row(-1)  # the held prompt's last logits, before the batch
    if nodes or tail:
        sequences = range(1, len(options) + 1) if nodes else range(0)
        for sequence in sequences:  # each branch sees the prompt
            llama._ctx.kv_cache_seq_cp(0, sequence, -1, -1)
        batch = llama._batch.batch
        batch.n_tokens = len(tail) + len(nodes)
        for slot, token in enumerate(tail):  # the prompt's end, in every sequence
            batch.token[slot], batch.pos[slot] = token, held + slot
            batch.n_seq_id[slot] = 1 + len(sequences)
            batch.seq_id[slot][0] = 0
            for k, sequence in enumerate(sequences):
                batch.seq_id[slot][k + 1] = sequence
            batch.logits[slot] = slot == len(tail) - 1
        for slot, node in enumerate(nodes, start=len(tail)):
            batch.token[slot] = node[-1]
            batch.pos[slot] = base + len(node) - 1
            batch.n_seq_id[slot] = len(members[node])
            for k, index in enumerate(members[node]):
                batch.seq_id[slot][k] = index + 1
            batch.logits[slot] = True
        llama._ctx.decode(llama._batch)
        if tail:
            llama.input_ids[held:base] = tail
            llama.n_tokens = base
    if first is None:
        first = row(len(tail) - 1)
    at = {node: i for i, node in enumerate(nodes, start=len(tail))}
    rows: dict[tuple[int, ...], Any] = {}
    scores = []
    for option in options:
        total = float(first[option[0]])
        for length in range(1, len(option)):
            node = tuple(option[:length])
            if node not in at:
                break  # told apart
            if node not in rows:
                rows[node] = row(at[node])
            total += float(rows[node][option[length]])
        scores.append(total)
    # the path through the largest groups, moved into sequence 0; the branches dropped
    path: list[int] = []
    while True:
        children: list[tuple[int, ...]] = [
            n for n in nodes if len(n) == len(path) + 1 and list(n[:-1]) == path]
        if not children:
            break
        sizes = [len(members[child]) for child in children]
        path = list(children[sizes.index(max(sizes))])
    if path:
        llama._ctx.kv_cache_seq_cp(members[tuple(path)][0] + 1, 0, base, base + len(path))
    llama._ctx.kv_cache_seq_keep(0)
    _keep(llama, base, path)
    return scores


def walk_scores(llama: Any, options: list[list[int]]) -> list[float]:
    """`tree_scores`, one small batch per branching group of the trie."""
    base = int(llama.n_tokens)
    row = _log_probabilities(llama)
    scores = [0.0] * len(options)
    kept: list[int] = []

    def walk(members: list[int], depth: int, position: int, last: Any) -> None:
        """``members`` share their first ``depth`` tokens, evaluated up to ``position``
        with ``last`` the log-probabilities of the next token."""
        groups: dict[int, list[int]] = {}
        for index in members:
            if len(options[index]) > depth:
                groups.setdefault(options[index][depth], []).append(index)
        # the largest group last: the context ends holding the path the most options share
        for token, group in sorted(groups.items(), key=lambda g: len(g[1])):
            for index in group:
                scores[index] += float(last[token])
            if len(group) < 2:
                continue  # told apart: the rest of its tokens are taken as certain
            # the group's shared run of tokens, evaluated as one batch
            run = [token]
            while all(len(options[i]) > depth + len(run) for i in group) and len(
                    {options[i][depth + len(run)] for i in group}) == 1:
                run.append(options[group[0]][depth + len(run)])
            kept[depth:] = run  # the path evaluated last, which the context holds
            llama._ctx.kv_cache_seq_rm(-1, position, -1)
            llama._batch.set_batch(batch=run, n_past=position, logits_all=True)
            llama._ctx.decode(llama._batch)
            rows = [row(i) for i in range(len(run))]
            for step in range(1, len(run)):
                for index in group:
                    scores[index] += float(rows[step - 1][run[step]])
            walk(group, depth + len(run), position + len(run), rows[-1])

    walk(list(range(len(options))), 0, base, row(-1))
    _keep(llama, base, kept)
    return scores
