"""Vectors from an embedding server that speaks OpenAI's `POST /v1/embeddings`.

text-embeddings-inference, vLLM, llama.cpp's server, Ollama and OpenAI itself all serve it, so
a team with a GPU box points `sidecar.embedding: openai:MODEL` and `sidecar.embedding_url` at
it and the sidecar's own CPUs only tokenize and search.

- Batching: `remote_batch` texts per request, `remote_concurrency` requests in flight; the
  answers are put back in the texts' order whatever order they arrive in.
- Back-pressure: 429 and 503 wait for the server's Retry-After (capped), other 5xx, timeouts and
  refused connections back off exponentially; after `remote_retries` tries the call fails and
  the sidecar's embedding state says why (`/status`), retrying later. Vectors already written
  stay written, and the manifest keeps the rest pending, so a restart resumes where it stopped.
- A 4xx other than 408/429 is the server refusing the request itself (a wrong model name, an
  input too long): it is not retried, and the server's own message is shown.

The key, for servers that want one, comes from GROUNDWIKI_EMBEDDING_KEY: never from mkdocs.yml,
which is committed, and never logged.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from groundwiki_sidecar.embedding.embedders import Batch, EmbedderUnavailable

log = logging.getLogger("groundwiki_sidecar")

KEY_ENV = "GROUNDWIKI_EMBEDDING_KEY"
RETRY_AFTER_CAP_S = 60.0
BACKOFF_FIRST_S = 0.5
BACKOFF_CAP_S = 30.0
QUERY_TIMEOUT_S = 5.0  # a query has the engine's few seconds, not a batch's minute


@dataclass(frozen=True)
class RemoteSettings:
    url: str | None = None
    batch: int = 64
    concurrency: int = 2
    timeout_s: float = 60.0
    retries: int = 5


class RemoteUnavailable(EmbedderUnavailable):
    """The server did not answer usefully after every try."""


class RemoteRefused(EmbedderUnavailable):
    """The server answered that the request itself is wrong: trying again would not help."""


class RemoteEmbedder:
    """An OpenAI-compatible embedding endpoint as the sidecar's embedder."""

    def __init__(self, model: str, settings: RemoteSettings) -> None:
        if not settings.url:
            raise EmbedderUnavailable(
                f"embedding openai:{model} needs sidecar.embedding_url, the server's base URL "
                "(for example http://127.0.0.1:8080/v1)"
            )
        base = settings.url.rstrip("/")
        self.endpoint = base if base.endswith("/embeddings") else f"{base}/embeddings"
        if not self.endpoint.startswith(("http://", "https://")):
            raise EmbedderUnavailable(
                f"sidecar.embedding_url must be an http:// or https:// URL, not {settings.url!r}"
            )
        self.model = model
        self.settings = settings
        self.batch_size = settings.batch
        # The model's name: two servers serving the same model give the same space. Serve another
        # model under the same name and the vectors mix: change the name to embed all again.
        self.identity = f"openai/{model}"
        self.calls = 0
        self.requests = 0
        self.retried = 0
        self.dimensions: int | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """One short request, so a wrong URL, model or key shows at start."""
        self._request(["groundwiki"], self.settings.retries, self.settings.timeout_s)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out: np.ndarray | None = None
        for indices, vectors in self.embed_iter(texts):
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[indices] = vectors
        return out if out is not None else np.zeros((0, self.dimensions or 0), np.float32)

    def embed_iter(self, texts: Sequence[str], passages: bool = False) -> Iterator[Batch]:
        """`concurrency` requests in flight; each batch's vectors in the texts' order."""
        size = self.settings.batch
        spans = [list(range(s, min(s + size, len(texts)))) for s in range(0, len(texts), size)]
        if not spans:
            return
        with ThreadPoolExecutor(self.settings.concurrency, "groundwiki-remote") as pool:
            waiting: list[tuple[list[int], Future[np.ndarray]]] = []
            following = iter(spans)
            for span in following:
                waiting.append((span, pool.submit(self._embed_span, texts, span)))
                if len(waiting) >= self.settings.concurrency:
                    break
            try:
                while waiting:
                    span, future = waiting.pop(0)
                    vectors = future.result()
                    nxt = next(following, None)
                    if nxt is not None:
                        waiting.append((nxt, pool.submit(self._embed_span, texts, nxt)))
                    yield span, vectors
            finally:
                # The caller stopped early (a sync is waiting) or a batch failed: what is in
                # flight is finished by the pool, not waited for here.
                for _, future in waiting:
                    future.cancel()

    def _embed_span(self, texts: Sequence[str], span: list[int]) -> np.ndarray:
        vectors = self._request(
            [texts[i] for i in span], self.settings.retries, self.settings.timeout_s
        )
        with self._lock:
            self.calls += len(span)
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_query_bounded(text)[0]

    def embed_query_bounded(self, text: str) -> tuple[np.ndarray, str]:
        # The server cuts a long text as its model does, without saying: nothing to report.
        timeout = min(self.settings.timeout_s, QUERY_TIMEOUT_S)
        return self._request([text], min(self.settings.retries, 1), timeout)[0], ""

    def _request(self, texts: list[str], retries: int, timeout: float) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key := os.environ.get(KEY_ENV):
            headers["Authorization"] = f"Bearer {key}"
        problem = ""
        for attempt in range(retries + 1):
            if attempt:
                with self._lock:
                    self.retried += 1
            request = urllib.request.Request(self.endpoint, body, headers, method="POST")
            wait = min(BACKOFF_CAP_S, BACKOFF_FIRST_S * 2**attempt)
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    data = response.read()
                with self._lock:
                    self.requests += 1
                return self._vectors(data, len(texts))
            except urllib.error.HTTPError as exc:
                message = _server_message(exc)
                if exc.code in (429, 503):
                    wait = _retry_after(exc.headers.get("Retry-After"), wait)
                elif exc.code == 408 or exc.code >= 500:
                    pass
                else:
                    raise RemoteRefused(
                        f"the embedding server at {self.endpoint} refused the request: HTTP "
                        f"{exc.code} {message}"
                    ) from None
                problem = f"HTTP {exc.code} {message}".strip()
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                problem = f"{type(reason).__name__}: {reason}"
            if attempt < retries:
                log.warning(
                    "embedding server %s: %s; trying again in %.1f s (%d of %d)",
                    self.endpoint,
                    problem,
                    wait,
                    attempt + 1,
                    retries,
                )
                time.sleep(wait)
        raise RemoteUnavailable(
            f"the embedding server at {self.endpoint} did not answer after {retries + 1} "
            f"tries: {problem}"
        )

    def _vectors(self, data: bytes, expected: int) -> np.ndarray:
        try:
            answer = json.loads(data)
            rows = sorted(answer["data"], key=lambda row: int(row["index"]))
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise RemoteUnavailable(
                f"the embedding server at {self.endpoint} answered something that is not an "
                f"OpenAI embeddings response ({type(exc).__name__}: {exc})"
            ) from None
        if vectors.ndim != 2 or len(vectors) != expected:
            raise RemoteUnavailable(
                f"the embedding server at {self.endpoint} answered {len(vectors)} vectors for "
                f"{expected} texts"
            )
        if self.dimensions is None:
            self.dimensions = int(vectors.shape[1])
        elif vectors.shape[1] != self.dimensions:
            raise RemoteUnavailable(
                f"the embedding server at {self.endpoint} changed its vectors from "
                f"{self.dimensions} to {vectors.shape[1]} dimensions"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.clip(norms, 1e-12, None)


def _retry_after(header: str | None, fallback: float) -> float:
    try:
        return min(RETRY_AFTER_CAP_S, max(0.0, float(header))) if header else fallback
    except ValueError:
        return fallback  # an HTTP date: rare from embedding servers; back off as usual


def _server_message(exc: urllib.error.HTTPError) -> str:
    try:
        raw = exc.read(2000).decode("utf-8", "replace")
    except OSError:
        return ""
    try:
        data: Any = json.loads(raw)
        error = data.get("error", data) if isinstance(data, dict) else data
        message = error.get("message", error) if isinstance(error, dict) else error
        return str(message)[:300]
    except ValueError:
        return raw.strip()[:300]
