"""The embedder a `sidecar.embedding` setting names: the ONNX model (embedders.py), an
OpenAI-compatible server (remote_embedder.py) or one of Chroma's embedding functions."""

from __future__ import annotations

from typing import Any

from groundwiki_sidecar.embedding.embedders import (
    DEFAULT_SPEC,
    ChromaFunction,
    Embedder,
    EmbedderUnavailable,
    MiniLMOnnx,
)
from groundwiki_sidecar.embedding.remote_embedder import RemoteEmbedder, RemoteSettings


def make_embedder(
    spec: str, batch_size: int = 8, passage_tokens: int | None = None, **remote: Any
) -> Embedder:
    """The embedder a `sidecar.embedding` setting names; `remote` are the settings of an
    OpenAI-compatible server (remote_embedder.RemoteSettings)."""
    if spec in (DEFAULT_SPEC, "minilm-onnx-float"):
        weights = "float" if spec.endswith("-float") else "int8"
        return MiniLMOnnx(batch_size=batch_size, weights=weights, passage_tokens=passage_tokens)
    kind, _, name = spec.partition(":")
    if kind == "openai" and name:
        return RemoteEmbedder(name, RemoteSettings(**remote))
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
        f"unknown sidecar embedding '{spec}'; use {DEFAULT_SPEC}, minilm-onnx-float, "
        "openai:MODEL (with sidecar.embedding_url), chroma-default, "
        "sentence-transformers:MODEL or ollama:MODEL"
    )
