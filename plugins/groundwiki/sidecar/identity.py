"""Who is asking: user tokens, so a request's scope is never something a caller can name.

`sidecar.tokens` says where the tokens live, never what they are: a file (`tokens.yml`, from
mkdocs.yml's folder) or `env:NAME`, an environment variable holding the same text. The
variable GROUNDWIKI_TOKENS_FILE names the file when the setting is absent. The text maps user
IDs to the SHA-256 of their tokens, one per line:

    alice: sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08

A presented token is hashed and compared with every configured hash in constant time; no token
and no hash is ever logged or put in a message. `groundwiki token new USER` makes one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import GroundwikiError

TOKENS_FILE_ENV = "GROUNDWIKI_TOKENS_FILE"
DEFAULT_FILE = ".groundwiki/tokens.yml"
_HASH = re.compile(r"sha256:[0-9a-f]{64}")
USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class TokensError(GroundwikiError):
    """A tokens setting or file that cannot be used; says where and how to fix it."""


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
                "wiki/user/ (letters, digits, '.', '_', '-')"
            )
        if not _HASH.fullmatch(value):
            raise TokensError(
                f"{at}: the value for {user} is not `sha256:` and 64 hex digits; make a token "
                "with `groundwiki token new USER` (the file keeps its hash only)"
            )
        if user in hashes:
            raise TokensError(f"{at}: {user} has a token on an earlier line; keep one")
        hashes[user] = value
    return Tokens(hashes)


def load_tokens(setting: str | None, base: Path) -> Tokens:
    check_setting(setting)
    text, path = where_tokens_are(setting, base)
    if not text and path is None:
        return Tokens({})
    shown = str(path) if path is not None else (setting or "").removeprefix("env:")
    return parse_tokens(text, shown)
