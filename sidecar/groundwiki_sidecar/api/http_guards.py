"""Every HTTP request's way in: the guards each passes before any route or `/mcp/` sees it,
and the JSON their refusals and the routes' answers are written in.

Binds 127.0.0.1 by default. Bound to any other address the sidecar requires a bearer token on
every endpoint but the public ones (`/healthz`); the API is read-only.

Every route, `/healthz` and `/mcp/` included, answers only requests whose `Host` is a loopback
name, the address it binds or a name in `sidecar.allowed_hosts` (421 otherwise), and whose
`Origin`, when a browser sends one, names such a host too (403). This stops DNS rebinding: a web
page whose own name is re-pointed at 127.0.0.1 still sends that name. `/healthz` is guarded like
the rest because its generation tells a foreign page when the wiki changes, and probes on this
machine send `localhost` anyway. Request bodies are capped at `shapes.MAX_BODY_BYTES` on every
route before any handler reads them.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from groundwiki_sidecar.api.identity import TokenSource, bearer
from groundwiki_sidecar.api.response_schemas import MAX_BODY_BYTES
from groundwiki_sidecar.base.settings import Sidecar, is_loopback, split_host

_SURROGATES = re.compile("[\ud800-\udfff]")


class JSONAnswer(JSONResponse):
    """JSON as UTF-8, even when an answer echoes a lone surrogate from a request: it becomes
    U+FFFD instead of failing the response with a 500."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return _SURROGATES.sub("\ufffd", text).encode("utf-8")


RETRY_AFTER_S = 2  # a 503 is the sidecar still starting: its state moves within seconds


def error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    answer = JSONAnswer({"error": code, "message": message, **extra}, status_code=status)
    if status == 503:
        answer.headers["Retry-After"] = str(RETRY_AFTER_S)
    return answer


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    """Every value of one header: a check that read only the last of two (as a dict of the
    headers does) would pass a value other than the one the handler reads (the first)."""
    return [value for key, value in scope["headers"] if key.lower() == name]


USER_KEY = "groundwiki.user"  # the ASGI scope's entry naming the request's user (None: shared)


def request_user(scope: Scope) -> str | None:
    """The user a request was made by, as `Identity` found it (None: the shared scope)."""
    user = scope.get(USER_KEY)
    return user if isinstance(user, str) else None


class Identity:
    """Who is asking. With user tokens (`sidecar.tokens`) every request but those to the public
    paths carries `Authorization: Bearer <token>`, and its user is the token's; the team token
    (`sidecar.token`) is accepted too, for the shared scope. With only the team token, it is
    required and the scope is shared. With neither (loopback only), the scope is the user the
    sidecar was started for (`--user`), else shared. The tokens are those of the file as it is
    at each request (`TokenSource`), so a revoked token is refused from the next one."""

    def __init__(
        self,
        app: ASGIApp,
        token: str | None,
        tokens: TokenSource,
        user: str | None = None,
        public: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.expected = token.encode() if token else None
        self.tokens = tokens
        self.user = user
        self.public = frozenset(public)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.public:
            await self.app(scope, receive, send)
            return
        tokens = self.tokens.current()
        if self.expected is None and not self.tokens.required:
            scope[USER_KEY] = self.user
            await self.app(scope, receive, send)
            return
        given = header_values(scope, b"authorization")
        presented = bearer(given[0]) if len(given) == 1 else None
        team = (
            self.expected is not None
            and presented is not None
            and hmac.compare_digest(presented, self.expected)
        )
        user = None
        if tokens and presented is not None:
            user = tokens.user_for(presented)
        if not team and user is None:
            response = error(401, "unauthorized", "send Authorization: Bearer <your token>")
            await response(scope, receive, send)
            return
        scope[USER_KEY] = user
        await self.app(scope, receive, send)


class AllowedHosts:
    """Only requests addressed to a host this sidecar serves (see the module docstring)."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = tuple(hosts)
        entries = [split_host(host) for host in self.hosts]
        self.any_port = {entry[0] for entry in entries if entry and entry[1] is None}
        self.exact = {entry for entry in entries if entry and entry[1] is not None}

    def serves(self, host: str) -> bool:
        entry = split_host(host)
        return entry is not None and (entry[0] in self.any_port or entry in self.exact)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in {"http", "websocket"}:
            await self.app(scope, receive, send)
            return
        hosts = header_values(scope, b"host")
        origins = header_values(scope, b"origin")
        host = hosts[0].decode("latin-1") if len(hosts) == 1 else ""
        origin = b", ".join(origins).decode("latin-1")
        refusal = None
        if len(hosts) > 1:
            refusal = error(421, "host_not_allowed", "a request must carry one Host header")
        elif not self.serves(host):
            shown = f"Host {host[:100]!r}" if host else "a request without a Host header"
            refusal = error(
                421,
                "host_not_allowed",
                f"{shown} is not served here: the sidecar answers only to "
                f"{', '.join(self.hosts)}. To reach it under another name, add that name to "
                "sidecar.allowed_hosts in mkdocs.yml (a reverse proxy must forward it as Host).",
            )
        elif origins and (len(origins) > 1 or not self._origin_served(origin)):
            refusal = error(
                403,
                "origin_not_allowed",
                f"pages from {origin[:100]!r} may not call the sidecar; a browser page must be "
                "served from a host in sidecar.allowed_hosts in mkdocs.yml.",
            )
        if refusal is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":  # no route takes one yet; refuse the handshake
            await send({"type": "websocket.close", "code": 1008})
        else:
            await refusal(scope, receive, send)

    def _origin_served(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
        except ValueError:  # e.g. an unclosed IPv6 bracket: not an origin this serves
            return False
        return parts.scheme in {"http", "https"} and self.serves(parts.netloc)


class BodyLimit:
    """Refuse a request body over `limit` bytes with 413 as soon as it is declared or has
    arrived, chunked or not, before any handler (the query API or /mcp/) reads it."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = error(413, "body_too_large", f"request bodies are at most {self.limit} bytes")
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.limit:
            await too_large(scope, receive, send)
            return
        body = bytearray()
        later: list[Message] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                later.append(message)  # the client left; let the handler see it
                break
            body += message.get("body", b"")
            if len(body) > self.limit:
                await too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        queued: list[Message] = [{"type": "http.request", "body": bytes(body)}, *later]

        async def replay() -> Message:
            return queued.pop(0) if queued else await receive()

        await self.app(scope, replay, send)


LIVENESS_PATH = "/healthz"  # answered without a token, also while the sidecar starts


def guards(
    sidecar: Sidecar, user: str | None = None, public: Iterable[str] = (LIVENESS_PATH,)
) -> tuple[list[Middleware], TokenSource]:
    """The middleware every answer passes, outermost first: the Host check, the bearer tokens
    (`public` paths need none), the body cap; and the tokens' source, whose state /status
    shows."""
    settings = sidecar.settings
    token = settings.token if not is_loopback(settings.host) or settings.token else None
    tokens = TokenSource(settings.tokens, sidecar.config.root)
    middleware = [
        Middleware(AllowedHosts, hosts=settings.served_hosts()),
        Middleware(Identity, token=token, tokens=tokens, user=user, public=tuple(public)),
        Middleware(BodyLimit, limit=MAX_BODY_BYTES),
    ]
    return middleware, tokens
