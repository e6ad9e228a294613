"""Who is asking: user tokens, so a request's scope is never something a caller can name.

`sidecar.tokens` says where the tokens live, never what they are: a file (`tokens.yml`, from
mkdocs.yml's folder) or `env:NAME`, an environment variable holding the same text. The
variable GROUNDWIKI_TOKENS_FILE names the file when the setting is absent. The text maps user
IDs to the SHA-256 of their tokens, one per line:

    alice: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08

A presented token is hashed and compared with every configured hash in constant time; no token
and no hash is ever logged or put in a message. `groundwiki token new USER` makes one and
`groundwiki token revoke USER` removes one.

A running sidecar re-reads the file when it changes (`TokenSource`: its stat stamp is checked
on each authenticated request, so there is no watcher to race), so a removed line is refused
from the next request on. A variable is read once, at start.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import stat
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundwiki.core.config.errors import GroundwikiError

log = logging.getLogger("groundwiki_sidecar")

TOKENS_FILE_ENV = "GROUNDWIKI_TOKENS_FILE"
DEFAULT_FILE = ".groundwiki/tokens.yml"
_HASH = re.compile(r"sha256:[0-9a-f]{64}")
USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class TokensError(GroundwikiError):
    """A tokens setting or file that cannot be used; says where and how to fix it."""

    def __init__(self, message: str, at: str = "") -> None:
        super().__init__(message)
        self.at = at  # `file:line` when one line is at fault


def bearer(header: bytes) -> bytes | None:
    """The credentials of an `Authorization: Bearer <token>` header, or None for any other
    scheme. The scheme is matched without regard to case, as RFC 7235 says schemes are."""
    scheme, space, credentials = header.partition(b" ")
    if not space or scheme.lower() != b"bearer":
        return None
    return credentials.lstrip(b" ")


def token_hash(token: str) -> str:
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Tokens:
    """User ID -> the hash of their token. Empty: no user tokens configured."""

    hashes: Mapping[str, str]

    def __bool__(self) -> bool:
        return bool(self.hashes)

    def user_for(self, presented: bytes) -> str | None:
        """The user whose token this is, or None. Every hash is compared, each in constant
        time, whether or not an earlier one matched: how long it takes says nothing of which."""
        digest = ("sha256:" + hashlib.sha256(presented).hexdigest()).encode("ascii")
        found: str | None = None
        for user, expected in self.hashes.items():
            if hmac.compare_digest(digest, expected.encode("ascii")) and found is None:
                found = user
        return found


def where_tokens_are(setting: str | None, base: Path) -> tuple[str, Path | None]:
    """(the text of the tokens, the file it came from or None for a variable); ("", None) when
    no tokens are configured."""
    named = setting or os.environ.get(TOKENS_FILE_ENV) or ""
    if not named:
        return "", None
    if named.startswith("env:"):
        variable = named.removeprefix("env:")
        if variable not in os.environ:
            raise TokensError(
                f"sidecar.tokens names the environment variable {variable}, which is not set; "
                "set it to the `user: sha256:...` lines, or point sidecar.tokens at a file"
            )
        return os.environ[variable], None
    path = Path(named).expanduser()
    path = path if path.is_absolute() else base / path
    try:
        return path.read_text(encoding="utf-8"), path
    except OSError as exc:
        raise TokensError(
            f"{path}: cannot read the tokens file ({exc.strerror}); create it with "
            "`groundwiki token new USER`, or fix sidecar.tokens in mkdocs.yml"
        ) from None


def check_setting(value: object, config_file: str = "mkdocs.yml") -> None:
    """A `sidecar.tokens` value that is the tokens themselves is refused: mkdocs.yml is
    committed, and tokens must not be."""
    if isinstance(value, Mapping) or (isinstance(value, str) and _HASH.search(value)):
        raise TokensError(
            f"{config_file}: sidecar.tokens must say where the tokens are, never hold them: put "
            "`alice: sha256:...` lines in a file outside the repository (or an environment "
            "variable) and set sidecar.tokens to its path (or env:NAME)"
        )


def parse_tokens(text: str, shown: str) -> Tokens:
    """The `user: sha256:<hex>` lines of a tokens file or variable (`shown` names it in errors);
    blank lines and `#` comments are skipped. A plain line format, not YAML: each line says one
    thing, and an error names its line."""
    hashes: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        at = f"{shown}:{number}"
        user, colon, value = (part.strip() for part in line.partition(":"))
        if not colon or not USER_ID.fullmatch(user):
            raise TokensError(
                f"{at}: write `user: sha256:<64 hex>`, the user ID being a folder name under "
                "wiki/user/ (letters, digits, '.', '_', '-')",
                at,
            )
        if not _HASH.fullmatch(value):
            raise TokensError(
                f"{at}: the value for {user} is not `sha256:` and 64 hex digits; make a token "
                "with `groundwiki token new USER` (the file keeps its hash only)",
                at,
            )
        if user in hashes:
            raise TokensError(
                f"{at}: {user} has a token on an earlier line; keep one (`groundwiki token "
                f"revoke {user}` removes both)",
                at,
            )
        hashes[user] = value
    return Tokens(hashes)


def load_tokens(setting: str | None, base: Path) -> Tokens:
    check_setting(setting)
    text, path = where_tokens_are(setting, base)
    if not text and path is None:
        return Tokens({})
    shown = str(path) if path is not None else (setting or "").removeprefix("env:")
    return parse_tokens(text, shown)


def exposed(path: Path) -> str:
    """A warning when others than the owner may read or change the tokens file, else "". Who
    can write it can give themselves a token; who can read it learns every user ID."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return ""
    if not mode & 0o077:
        return ""
    how = "change" if mode & 0o022 else "read"
    return (
        f"{path}: mode {mode:04o} lets other users of this machine {how} the tokens file; "
        f"make it private with: chmod 600 {path}"
    )


# What says a file changed: a new inode (replaced by a rename), size, or modification times.
_Stamp = tuple[int, int, int, int, int]


def _stamp(path: Path) -> _Stamp:
    info = path.stat()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


# File times tick coarsely (a few ms), so a second same-size edit in the same tick leaves the
# stamp as it was. A stamp this recent is not trusted: the file is read again next time.
_SETTLED_NS = 2_000_000_000


def _settled(stamp: _Stamp) -> _Stamp | None:
    return stamp if time.time_ns() - max(stamp[3], stamp[4]) > _SETTLED_NS else None


class TokenSource:
    """The tokens in force: those of the file as it is now. `current()` checks the file's stamp
    and re-reads it when it changed, so a removed line stops answering on the next request.

    A file that no longer parses keeps the last good tokens (logged once, and `state()` says so
    in `/status`): half an edit must not lock every user out, and it never lets anyone in. A
    file that is gone or unreadable accepts no user token until it is back. A variable
    (`env:NAME`) is read once."""

    def __init__(self, setting: str | None, base: Path) -> None:
        check_setting(setting)
        self._lock = threading.Lock()
        text, self.path = where_tokens_are(setting, base)
        self._shown = str(self.path) if self.path is not None else (setting or "")
        self._stamp: _Stamp | None = None
        if self.path is not None:
            self._stamp = _settled(_stamp(self.path))
            text = self.path.read_text(encoding="utf-8")  # as of the stamp, or newer
        self._tokens = parse_tokens(text, self._shown.removeprefix("env:"))  # the last good
        self._answer = self._tokens  # in force now: the last good, or none while the file is gone
        self.error = ""  # why the file as it is now is not in force; "" when it is
        # Once any token has been in force, requests need one: a file emptied or broken later
        # must not open the sidecar (on loopback, no tokens means no check at all).
        self.required = bool(self._tokens)
        if self.path is not None and (warning := exposed(self.path)):
            log.warning(warning)

    def current(self) -> Tokens:
        if self.path is None:
            return self._tokens
        with self._lock:
            try:
                stamp = _stamp(self.path)
            except OSError as exc:
                self._stamp = None  # back under any stamp, it is read again
                return self._fail(
                    f"{self.path}: cannot read the tokens file ({exc.strerror}); no user token "
                    "is accepted until it is back",
                    Tokens({}),
                )
            if stamp == self._stamp:
                return self._answer
            try:
                # Stamped before reading: a change during the read shows as a new stamp next time.
                tokens = parse_tokens(self.path.read_text(encoding="utf-8"), str(self.path))
            except TokensError as exc:
                self._stamp = _settled(stamp)  # read again only once it changes
                return self._fail(
                    f"{exc.at or self.path}: the tokens file changed and cannot be read; the "
                    "tokens read before stay in force until it is fixed (the log says how)",
                    self._tokens,
                    str(exc),
                )
            except (OSError, UnicodeDecodeError) as exc:
                self._stamp = None
                return self._fail(
                    f"{self.path}: cannot read the tokens file ({exc}); no user token is "
                    "accepted until it can be read",
                    Tokens({}),
                )
            if self.error:
                log.warning("%s: the tokens file is in force again", self.path)
            self._stamp, self._tokens, self._answer = _settled(stamp), tokens, tokens
            self.error = ""
            self.required = self.required or bool(tokens)
            return tokens

    def _fail(self, error: str, answer: Tokens, detail: str = "") -> Tokens:
        """Log a new problem once (not on every request); `answer` is in force until the file
        changes."""
        if error != self.error:
            log.error("%s%s", error, f": {detail}" if detail else "")
        self.error, self._answer = error, answer
        return answer

    def state(self) -> dict[str, Any]:
        """For `/status`: off (no user tokens), ok, or failing with why. Names no user."""
        if self.path is None and not self._tokens:
            return {"state": "off", "error": ""}
        self.current()
        return {"state": "failing" if self.error else "ok", "error": self.error}


def revoke(path: Path, user: str) -> int:
    """Remove every line of `user` from the tokens file at once (a temporary file renamed over
    it, with the file's mode), so a reader sees the old file or the new, never half of one.
    The number of lines removed."""
    path = path.resolve()  # a symlinked file is replaced where it is, the link kept
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if line.partition(":")[0].strip() != user]
    removed = len(lines) - len(kept)
    if not removed:
        return 0
    info = path.stat()
    fd, temporary = tempfile.mkstemp(prefix=".tokens-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(kept))
            out.flush()
            os.fchmod(out.fileno(), stat.S_IMODE(info.st_mode))
            if os.geteuid() == 0:  # root keeps the file its owner's
                os.fchown(out.fileno(), info.st_uid, info.st_gid)
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return removed
