"""The index seal: the sidecar opens only the Whoosh files its own user's sidecar wrote.

Whoosh unpickles its table of contents (`_MAIN_N.toc`: the schema and the segment list) and
parts of every segment file (a compound segment's directory, stored fields, inlined postings),
so a crafted file in the index folder runs code when the index is opened. That folder may come
from a less trusted place than the wiki: a CI cache restored by prefix, a shared runner, an
artifact. After each Whoosh commit and on stop, the sidecar records an HMAC-SHA256 of every file
of its Whoosh index in `seal.json`, under a per-user key kept outside the checkout; at start, an
index with a file missing from the seal or not matching it is deleted before Whoosh reads it,
and rebuilt from the files (the source of truth).

Chroma is not sealed: its HNSW `index_metadata.pickle` is read by Chroma 1.x's Rust core with a
pickle decoder that resolves no Python global, so a crafted one is refused as damage and the
store made anew (tests/sidecar/test_sidecar_index_seal.py pins this), and sealing it would race with the
Rust core's own background writes of it, costing every vector written again at a start.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

log = logging.getLogger("groundwiki_sidecar")
KEY_DIR_ENV = "GROUNDWIKI_STATE_KEY_DIR"
KEY_FILE = "index-seal.key"
KEY_BYTES = 32
SEAL_FILE = "seal.json"
SEAL_FORMAT = "groundwiki-index-seal-1"
# Folders of the index folder whose every file a library may unpickle.
SEALED = ("whoosh",)
# Opened for their lock and never read: Whoosh creates them empty at any time.
UNREAD = ("WRITELOCK",)
_CHUNK = 1 << 20

_memory_key: bytes | None = None  # when no key file can be used: this process's only
_memory_lock = threading.Lock()


def key_dir() -> Path:
    """GROUNDWIKI_STATE_KEY_DIR, else the user's cache folder (where derived models live too)."""
    chosen = os.environ.get(KEY_DIR_ENV)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groundwiki"


def seal_key() -> bytes:
    """This user's key, made on first use (0600, never replaced). If it cannot be made or
    trusted, a key for this process alone: every start then rebuilds the lexical index."""
    path = key_dir() / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        return _fallback(str(exc))
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another sidecar made it meanwhile: use that one
        try:
            return _read_key(path)
        except (OSError, ValueError) as exc:
            return _fallback(str(exc))
    except OSError as exc:
        return _fallback(f"cannot create {path}: {exc}")
    key = os.urandom(KEY_BYTES)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(key)
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        path.unlink(missing_ok=True)
        return _fallback(f"cannot write {path}: {exc}")
    return key


def _read_key(path: Path) -> bytes:
    with path.open("rb") as handle:
        found = os.fstat(handle.fileno())
        # A key others can read or write lets them seal a crafted index as this user's.
        if found.st_uid != os.getuid() or found.st_mode & 0o077:
            raise ValueError(
                f"{path} is readable or writable by other users: chmod 600 {path} (or delete "
                "it: a new key is made and the indexes are rebuilt once)"
            )
        key = handle.read(KEY_BYTES + 1)
    if len(key) != KEY_BYTES:
        raise ValueError(
            f"{path} is not a {KEY_BYTES}-byte key: delete it (a new key is made and the "
            "indexes are rebuilt once)"
        )
    return key


def _fallback(reason: str) -> bytes:
    global _memory_key
    log.warning(
        "index seal key unusable (%s): a key for this process only is used, so every start "
        "rebuilds the lexical index; or set %s to a private folder",
        reason,
        KEY_DIR_ENV,
    )
    with _memory_lock:
        if _memory_key is None:
            _memory_key = os.urandom(KEY_BYTES)
        return _memory_key


class IndexSeal:
    """The HMACs of the sealed files of one index folder, kept in its `seal.json`."""

    def __init__(self, folder: Path, key: bytes) -> None:
        self.folder = folder
        self.path = folder / SEAL_FILE
        self._key = key
        self._lock = threading.Lock()
        # A file's HMAC by its stat: Whoosh never rewrites a file in place (a commit writes new
        # segments and a new table of contents), so a sync hashes only what it wrote.
        self._known: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        self._write_failed = False

    def admit(self, part: str, what: str) -> str:
        """Delete `part` (a folder of the index folder) unless every file in it matches the
        seal; returns why it was deleted ("" if it was kept or absent)."""
        reason = self.problem(part)
        if reason:
            log.warning(
                "%s in %s was not written by this user's sidecar (a restored cache?): rebuilt (%s)",
                what,
                self.folder / part,
                reason,
            )
            shutil.rmtree(self.folder / part)
        return reason

    def problem(self, part: str) -> str:
        """Why the files of `part` are not trusted, or "" (they match, or there are none)."""
        files = self._files(part)
        if not files:
            return ""
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
            sealed = document["files"] if document.get("format") == SEAL_FORMAT else None
            if not isinstance(sealed, dict):
                return f"{self.path} is another version's"
        except FileNotFoundError:
            return f"no {SEAL_FILE}: the first start of a sealing version, or a copied folder"
        except (OSError, ValueError, AttributeError, KeyError) as exc:
            return f"{self.path} is unreadable: {exc}"
        for name, path in files.items():
            expected = sealed.get(name)
            if not isinstance(expected, str):
                return f"{name} is not in the seal"
            if not hmac.compare_digest(self._mac(name, path), expected):
                return f"{name} does not match its seal"
        return ""

    def record(self) -> None:
        """Seal every file now in the sealed folders; `seal.json` is replaced atomically. A
        failure (a full disk) costs a rebuild at the next start, so it is logged, not raised."""
        with self._lock:
            try:
                files = {n: p for part in SEALED for n, p in self._files(part).items()}
                macs = {name: self._mac(name, path) for name, path in files.items()}
                self._known = {n: v for n, v in self._known.items() if n in macs}
                _write_atomic(self.path, json.dumps({"format": SEAL_FORMAT, "files": macs}))
            except OSError as exc:
                if not self._write_failed:
                    log.warning(
                        "cannot write the index seal %s (the next start rebuilds the lexical "
                        "index): %s",
                        self.path,
                        exc,
                    )
                self._write_failed = True
                return
            self._write_failed = False

    def _files(self, part: str) -> dict[str, Path]:
        """Every file under `part` by its path relative to the index folder, lock files aside."""
        root = self.folder / part
        found: dict[str, Path] = {}
        for folder, _, names in os.walk(root):
            for name in names:
                if name.endswith(UNREAD):
                    continue
                path = Path(folder, name)
                found[path.relative_to(self.folder).as_posix()] = path
        return found

    def _mac(self, name: str, path: Path) -> str:
        """The HMAC of a file's name and content (the name is in it: a sealed file moved to
        another name is not sealed there)."""
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                return ""  # never equal to a sealed HMAC
            stamp = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            known = self._known.get(name)
            if known is not None and known[0] == stamp:
                return known[1]
            mac = hmac.new(self._key, name.encode("utf-8") + b"\0", hashlib.sha256)
            while block := handle.read(_CHUNK):
                mac.update(block)
        digest = mac.hexdigest()
        self._known[name] = (stamp, digest)
        return digest


def _write_atomic(path: Path, text: str) -> None:
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
