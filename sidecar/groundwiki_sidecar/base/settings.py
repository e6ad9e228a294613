"""The sidecar's own settings, from the `sidecar` mapping inside the `groundwiki` plugin block.

The sidecar reads the same mkdocs.yml block as the site, so both agree on paths, rules and the
pointer cap; what only the sidecar needs lives under one key, every setting optional:

    plugins:
      - groundwiki:
          sidecar:
            port: 8765
            weights: {semantic: 2.5}     # the other lanes keep their default weights

Each setting is declared once below (type, default, allowed values, doc): the sidecar, the
MkDocs plugin (at build time) and `groundwiki settings` all read that declaration.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.settings_spec import (
    Block,
    Choice,
    Custom,
    Flag,
    Integer,
    Number,
    Text,
    Weights,
    parse,
    setting,
)
from groundwiki.core.config.sidecar_block import INDEX_DIR
from groundwiki.core.config.wiki_config import (
    Config,
    ConfigError,
    LineOf,
    SettingLines,
    lines_of,
    load_config,
    plugin_block,
    read_config_file,
)

from groundwiki_sidecar.lanes import FUSION_METHODS, NORMALISATIONS, Fusion, default_weights

TOKEN_ENV = "GROUNDWIKI_TOKEN"
PAGE_VECTORS = ("lead", "summary")
TOKEN_LANE_MODES = ("fallback", "fused")
MAX_CHUNKS_PER_SOURCE = 100  # the most hits a search answers (api.response_schemas.MAX_LIMIT)


# The names a browser on this machine uses for a sidecar bound to loopback. A page whose own
# host name re-resolves to 127.0.0.1 (DNS rebinding) still sends its own name, so any other
# Host header is refused.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_host(value: str) -> tuple[str, str | None] | None:
    """A Host header (or an `allowed_hosts` entry) as (lower-case name, port or None); None when
    it is no host at all. IPv6 names keep their brackets, as in a Host header."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, rest = (value[: end + 1], value[end + 1 :]) if end > 1 else ("", "")
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
    port = rest[1:]
    if not name or (rest and not (rest[0] == ":" and port.isascii() and port.isdigit())):
        return None
    if any(c in name for c in "/@?#\\ ") or not name.isprintable():
        return None
    return name, port or None


def host_name(bind: str) -> str | None:
    """The name clients use for the address the sidecar binds; None for a wildcard address."""
    try:
        address = ipaddress.ip_address(bind)
    except ValueError:
        return bind.lower()
    if address.is_unspecified:
        return None
    return f"[{address}]" if address.version == 6 else str(address)


class IndexUnusable(GroundwikiError):
    """The index folder cannot be used as it is; the message is one line that says what to do."""


class IndexBusy(IndexUnusable):
    """Another sidecar process already keeps this index folder."""


def _allowed_hosts(raw: Any, name: str, at: Block) -> tuple[str, ...]:
    entries = [raw] if isinstance(raw, str) else raw
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise at.error(
            name,
            "must be a list of host names, e.g. [wiki.example.org, 'wiki.example.org:8443']",
        )
    for entry in entries:
        if split_host(entry) is None:
            raise ConfigError(
                f"{at.where(name)}: sidecar allowed_hosts entry {entry[:100]!r} is not a host "
                "name; write name or name:port, IPv6 addresses in brackets ([fd00::1])"
            )
    return tuple(entry.strip().lower() for entry in entries)


@dataclass(frozen=True)
class SidecarSettings:
    """The `sidecar:` settings, declared once: validation, defaults and `groundwiki settings`."""

    host: str = setting(
        Text(), "address to bind; beyond loopback a token is required", default="127.0.0.1"
    )
    port: int = setting(Integer(1, 65535), "port of the HTTP API", default=8765)
    index_dir: str = setting(
        Text(), "folder of the indexes, under the wiki root; git-ignore it", default=INDEX_DIR
    )
    embedding: str = setting(
        Text(),
        "embedding model: minilm-onnx, minilm-onnx-float, openai:MODEL (an embedding server at "
        "embedding_url), chroma-default, sentence-transformers:NAME or ollama:MODEL",
        default="minilm-onnx",
    )
    # Any server with OpenAI's /v1/embeddings: text-embeddings-inference, vLLM, llama.cpp,
    # Ollama, OpenAI itself. Its key, if it wants one, comes from GROUNDWIKI_EMBEDDING_KEY only.
    embedding_url: str | None = setting(
        Text("a string", empty=True),
        "base URL of an OpenAI-compatible embedding server (http://host:port/v1), for openai:MODEL",
        default=None,
        blank_is_default=True,
    )
    remote_batch: int = setting(
        Integer(1, 4096), "texts per request to the embedding server", default=64
    )
    remote_concurrency: int = setting(
        Integer(1, 64), "requests in flight to the embedding server at once", default=2
    )
    remote_timeout_s: float = setting(
        Number(0.1, 3600, "seconds"), "how long one embedding request may take", default=60.0
    )
    remote_retries: int = setting(
        Integer(0, 100),
        "tries again after a timeout, a refused connection, 429 or 5xx (backing off)",
        default=5,
    )
    chroma_url: str | None = setting(
        Text("a string", empty=True),
        "http://host:port of a Chroma server; null keeps Chroma on disk",
        default=None,
        blank_is_default=True,
    )
    # Replicas sharing one Chroma server: one writes the vectors, the others read them. Vector
    # IDs are the item and its text's hash, so a reader takes a vector once the writer has
    # computed it for the same text (wiki/design/sidecar.md).
    vector_writer: bool = setting(
        Flag(),
        "false: a replica that only reads the shared Chroma server (chroma_url) another "
        "sidecar writes; it embeds queries, never pages or chunks",
        default=True,
    )
    # Asked of the registry when a value is checked, so a lane added there is a weight here.
    weights: Mapping[str, float] = setting(
        Weights(default_weights),
        "each lane's weight in the fused ranking (0: its hits add nothing)",
        factory=default_weights,
    )
    # Convex with z-scores by default: the only fusion of the grid that met the hybrid's targets
    # on both Cranfield (one-sentence questions) and LISA (paragraphs); RRF at its best was
    # 0.014 nDCG@10 short on LISA (wiki/design/retrieval-quality.md).
    fusion: str = setting(
        Choice(FUSION_METHODS),
        "how the lanes' answers are combined: rrf (by rank) or convex (weighted sum of each "
        "lane's normalised scores)",
        default="convex",
    )
    rrf_k: int = setting(Integer(1, 10_000), "rank constant of reciprocal rank fusion", default=60)
    fusion_normalise: str = setting(
        Choice(NORMALISATIONS),
        "convex fusion: how a lane's scores are made comparable (minmax or zscore, over its "
        "first 100)",
        default="zscore",
    )
    # On by default: fixed weights met the targets on questions worded as the pages are, and
    # fell 0.02-0.07 nDCG@10 below the semantic lane alone on the same questions reworded
    # (wiki/design/retrieval-quality.md).
    adaptive_fusion: bool = setting(
        Flag(),
        "weigh the lanes per query: the others count for more when the lexical lane's best "
        "page matches little of the question's weight, and for less when it matches much",
        default=True,
    )
    token: str | None = setting(
        Text("a string", empty=True),
        f"bearer token clients must send; the {TOKEN_ENV} variable works too",
        default=None,
        blank_is_default=True,
    )
    tokens: str | None = setting(
        Text("a path string", empty=True),
        "where user tokens are (a file, or env:NAME): `user: sha256:...` lines; each token's "
        "requests answer in that user's scope (groundwiki token new USER)",
        default=None,
        blank_is_default=True,
    )
    audit: bool = setting(
        Flag(),
        "one JSON line per answered search, hydration, drill-down and verify call in the index "
        "folder's audit/ (groundwiki audit reads them)",
        default=True,
    )
    audit_rotate_mb: float = setting(
        Number(0.01, 10_000, "MB"), "the audit file is rotated past this size", default=10.0
    )
    audit_keep: int = setting(
        Integer(1, 100_000), "audit files kept, the current one included", default=20
    )
    # 0.1 s: an editor's save (a write, or a temporary file renamed over the page) is a few
    # events within milliseconds; at 10,001 pages the quiet time was a fifth of an edit's way
    # to being searchable (the target is 1 s). A burst is still bounded by MAX_WAIT_S.
    debounce_s: float = setting(
        Number(0, 10, "seconds"), "quiet time before a batch of file events is indexed", default=0.1
    )
    # Chunk vectors make chunk search semantic; embedding 100,000 chunks takes hours on two
    # cores, so a small machine may skip them (chunk search then uses the lexical lane).
    embed_chunks: bool = setting(
        Flag(), "false: no chunk vectors (chunk search is then lexical only)", default=True
    )
    # Passages are what a page search matches deep inside a long page, and what a hit shows.
    # A page whose body is one passage its vector already reads shares that vector's text, so
    # short pages cost no second embedding; long pages cost one per passage.
    embed_passages: bool = setting(
        Flag(),
        "false: no vectors for the passages of page bodies (they are then matched lexically only)",
        default=True,
    )
    # Measured: 4 texts per call is as fast as 8 or 16 (14-16 texts/s of 256 word pieces
    # each, two cores), and an edit that comes while the model runs waits for half as long
    # (0.27 s, not 0.55 s) before the embedder yields the CPU to its sync.
    embed_batch: int = setting(Integer(1, 1024), "texts per model call", default=4)
    # 128: on Cranfield and LISA, documents read to 128 word pieces ranked as well as read to
    # 256 (semantic nDCG@10 within 0.001), at about 1.5x the texts/s on this wiki's chunks
    # (bench/embed_throughput.py, wiki/design/benchmarks.md).
    passage_tokens: int = setting(
        Integer(16, 256),
        "word pieces of a page passage or chunk the default model reads (a page's vector: 256)",
        default=128,
    )
    # Lead by default: on Cranfield it raised the semantic lane's nDCG@10 from 0.317 (summary)
    # to 0.380 (wiki/design/retrieval-quality.md).
    page_vector: str = setting(
        Choice(PAGE_VECTORS),
        "what a page vector holds: lead (with the body's opening) or summary (5x faster)",
        default="lead",
    )
    # Fallback by default: fusing the token lane always cost the hybrid 0.01-0.04 nDCG@10 on
    # Cranfield.
    token_lane: str = setting(
        Choice(TOKEN_LANE_MODES),
        "fallback: the token lane only when the lexical lane finds nothing; fused: always",
        default="fallback",
    )
    # 2: one dense source could otherwise take every place of a chunk search's answer; two of
    # a source still show the passage next to the best one (search/spread.py).
    chunks_per_source: int = setting(
        Integer(0, MAX_CHUNKS_PER_SOURCE),
        "chunk search: at most this many chunks of one raw source (or passages of one page) in "
        "an answer, the places filled from deeper hits; 0: no cap",
        default=2,
    )
    cut_duplicate_chunks: bool = setting(
        Flag(),
        "chunk search: chunks whose text is the same (the first 200 characters, whitespace "
        "aside) are answered once, the best-ranked",
        default=True,
    )
    # 0.2, measured (index/common_terms.py): no query of Cranfield (lowest mean 1.60) or LISA
    # (2.92) is gated, and a one-page wiki (idf 0.29 for its words) still ranks.
    stopword_idf: float = setting(
        Number(0, 10),
        "the lexical lane skips a query whose known terms' mean idf is under this (words "
        "common to most of the wiki, e.g. its own name) when another lane can answer; 0: never",
        default=0.2,
    )
    allowed_hosts: tuple[str, ...] = setting(
        Custom(_allowed_hosts, "list of host names or name:port"),
        "Host names served besides loopback and the bound address (public or proxy names)",
        default=(),
    )

    def fusion_rule(self) -> Fusion:
        """The fusion these settings choose, as the query engine applies it."""
        return Fusion(
            dict(self.weights),
            self.fusion,
            self.rrf_k,
            self.fusion_normalise,
            self.adaptive_fusion,
        )

    def served_hosts(self) -> tuple[str, ...]:
        """Every Host a request may carry: loopback names, the bound name, `allowed_hosts`."""
        bound = host_name(self.host)
        names = [*LOOPBACK_HOSTS, *([bound] if bound else []), *self.allowed_hosts]
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Sidecar:
    """Everything a sidecar process needs: the wiki's core config and its own settings."""

    config: Config
    settings: SidecarSettings

    @property
    def index_dir(self) -> Path:
        return self.config.root / self.settings.index_dir


def settings_from_mapping(
    raw: Any, source: str = "mkdocs.yml", line_of: LineOf | None = None
) -> SidecarSettings:
    """The `sidecar:` block checked against its declaration; `source` names it in errors."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        # The line of `sidecar:` itself, in the block around the sidecar's settings.
        outer = line_of.outside() if isinstance(line_of, SettingLines) else None
        raise Block(source, "groundwiki option", outer).error(
            "sidecar", "must be a mapping of settings"
        )
    settings = parse(SidecarSettings, raw, Block(source, "sidecar setting", line_of))
    if settings.token is None and os.environ.get(TOKEN_ENV):
        settings = replace(settings, token=os.environ[TOKEN_ENV])
    return settings


def load_sidecar(config_file: Path | None = None) -> Sidecar:
    """The wiki's config and the sidecar settings from one mkdocs.yml."""
    config = load_config(config_file)
    path = config.config_file or Path("mkdocs.yml")
    block = plugin_block(read_config_file(path))
    where = lines_of(path, "sidecar")
    return Sidecar(config, settings_from_mapping(block.get("sidecar"), path.name, where))
