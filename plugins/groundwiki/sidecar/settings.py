"""The sidecar's own settings, from the `sidecar` mapping inside the `groundwiki` plugin block.

The sidecar reads the same mkdocs.yml block as the site, so both agree on paths, rules and the
pointer cap; what only the sidecar needs lives under one key with defaults:

    plugins:
      - groundwiki:
          sidecar:
            host: 127.0.0.1
            port: 8765
            index_dir: .groundwiki
            embedding: minilm-onnx        # or chroma-default, sentence-transformers:NAME, ollama:MODEL
            chroma_url: null              # http://host:port of a Chroma server; null = on disk
            weights: {lexical: 1.5, semantic: 2.0, token: 0.75}
            rrf_k: 60
            allowed_hosts: []             # Host names served besides loopback (see app.py)
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.config import Config, ConfigError, load_config, plugin_block, read_config_file

DEFAULT_WEIGHTS = {"lexical": 1.5, "semantic": 2.0, "token": 0.75}
TOKEN_ENV = "GROUNDWIKI_TOKEN"


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


PAGE_VECTORS = ("lead", "summary")
TOKEN_LANE_MODES = ("fallback", "fused")


class IndexUnusable(RuntimeError):
    """The index folder cannot be used as it is; the message is one line that says what to do."""


class IndexBusy(IndexUnusable):
    """Another sidecar process already keeps this index folder."""


@dataclass(frozen=True)
class SidecarSettings:
    host: str = "127.0.0.1"
    port: int = 8765
    index_dir: str = ".groundwiki"
    embedding: str = "minilm-onnx"
    chroma_url: str | None = None
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    rrf_k: int = 60
    token: str | None = None  # bearer token; required when binding beyond 127.0.0.1
    debounce_s: float = 0.2
    # Chunk vectors make chunk search semantic; embedding 100,000 chunks takes hours on two
    # cores, so a small machine may skip them (chunk search then uses the lexical lane).
    embed_chunks: bool = True
    embed_batch: int = 8  # measured: 8 texts per call is as fast as 32, and yields sooner
    # What a page's vector is made from: `lead` (title, summary, tags and the opening of the
    # body) or `summary` (without the body: 5x faster to embed). On Cranfield, `lead` raised the
    # semantic lane's nDCG@10 from 0.317 to 0.380 (wiki/design/retrieval-quality.md).
    page_vector: str = "lead"
    # `fallback`: the token lane is fused only when the lexical lane finds nothing; `fused`: it
    # is always fused. Fusing it always cost the hybrid 0.01-0.04 nDCG@10 on Cranfield.
    token_lane: str = "fallback"
    # Host names (optionally name:port) the sidecar answers to besides loopback and the address
    # it binds: the public name when bound beyond 127.0.0.1, or the name a reverse proxy forwards.
    allowed_hosts: tuple[str, ...] = ()

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


def settings_from_mapping(raw: Any, source: str = "mkdocs.yml") -> SidecarSettings:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: groundwiki option 'sidecar' must be a mapping of settings")
    known = set(SidecarSettings.__dataclass_fields__)
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(
            f"{source}: unknown sidecar setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    values: dict[str, Any] = {}
    for name, kind in (("host", str), ("index_dir", str), ("embedding", str)):
        if name in raw:
            if not isinstance(raw[name], kind) or not raw[name]:
                raise ConfigError(f"{source}: sidecar setting '{name}' must be a non-empty string")
            values[name] = raw[name]
    for name, low, high in (("port", 1, 65535), ("rrf_k", 1, 10_000), ("embed_batch", 1, 1024)):
        if name in raw:
            value = raw[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigError(
                    f"{source}: sidecar setting '{name}' must be an integer from {low} to {high}, "
                    f"got {value!r}"
                )
            values[name] = value
    if "debounce_s" in raw:
        value = raw["debounce_s"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 10:
            raise ConfigError(f"{source}: sidecar setting 'debounce_s' must be 0 to 10 seconds")
        values["debounce_s"] = float(value)
    for name, allowed in (("page_vector", PAGE_VECTORS), ("token_lane", TOKEN_LANE_MODES)):
        if name in raw:
            if raw[name] not in allowed:
                raise ConfigError(
                    f"{source}: sidecar setting '{name}' must be one of "
                    f"{', '.join(allowed)}, got {raw[name]!r}"
                )
            values[name] = raw[name]
    if "embed_chunks" in raw:
        if not isinstance(raw["embed_chunks"], bool):
            raise ConfigError(f"{source}: sidecar setting 'embed_chunks' must be true or false")
        values["embed_chunks"] = raw["embed_chunks"]
    for name in ("chroma_url", "token"):
        if raw.get(name) is not None:
            if not isinstance(raw[name], str):
                raise ConfigError(f"{source}: sidecar setting '{name}' must be a string")
            values[name] = raw[name]
    if "weights" in raw:
        values["weights"] = _weights(raw["weights"], source)
    if "allowed_hosts" in raw:
        values["allowed_hosts"] = _allowed_hosts(raw["allowed_hosts"], source)
    if "token" not in values and os.environ.get(TOKEN_ENV):
        values["token"] = os.environ[TOKEN_ENV]
    return SidecarSettings(**values)


def _weights(raw: Any, source: str) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: sidecar setting 'weights' must map lanes to numbers")
    weights = dict(DEFAULT_WEIGHTS)
    for lane, value in raw.items():
        if lane not in DEFAULT_WEIGHTS:
            raise ConfigError(
                f"{source}: sidecar weight for unknown lane '{lane}'; lanes: "
                f"{', '.join(DEFAULT_WEIGHTS)}"
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(f"{source}: sidecar weight '{lane}' must be a number >= 0")
        weights[lane] = float(value)
    return weights


def _allowed_hosts(raw: Any, source: str) -> tuple[str, ...]:
    entries = [raw] if isinstance(raw, str) else raw
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ConfigError(
            f"{source}: sidecar setting 'allowed_hosts' must be a list of host names, "
            "e.g. [wiki.example.org, 'wiki.example.org:8443']"
        )
    for entry in entries:
        if split_host(entry) is None:
            raise ConfigError(
                f"{source}: sidecar allowed_hosts entry {entry[:100]!r} is not a host name; "
                "write name or name:port, IPv6 addresses in brackets ([fd00::1])"
            )
    return tuple(entry.strip().lower() for entry in entries)


def load_sidecar(config_file: Path | None = None) -> Sidecar:
    """The wiki's config and the sidecar settings from one mkdocs.yml."""
    config = load_config(config_file)
    path = config.config_file or Path("mkdocs.yml")
    block = plugin_block(read_config_file(path))
    return Sidecar(config, settings_from_mapping(block.get("sidecar"), path.name))
