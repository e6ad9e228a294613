"""The sidecar's HTTP face: the application, its security and the endpoints that report on the
indexes (`/healthz`, `/status`). Query endpoints are added to it as extra routes.

Binds 127.0.0.1 by default. Bound to any other address the sidecar requires a bearer token on
every endpoint but `/healthz`; the API is read-only.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .service import SidecarService
from .settings import is_loopback


def error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **extra}, status_code=status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    return error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))


async def _server_error(request: Request, exc: Exception) -> Response:
    return error(500, "internal_error", "the sidecar failed on this request; see its log")


class BearerToken:
    """Every request but /healthz carries `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.expected is None or scope["type"] != "http" or scope["path"] == "/healthz":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"authorization", b"")
        if not hmac.compare_digest(given, self.expected):
            response = error(401, "unauthorized", "send Authorization: Bearer <sidecar token>")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(service: SidecarService) -> Starlette:
    """The sidecar's application: status endpoints, the query API and the MCP endpoint at
    /mcp/. The service must be started; it is stopped on shutdown."""
    from starlette.routing import Mount

    from .api import routes
    from .mcp_tools import build_mcp, http_app
    from .operations import Operations

    settings = service.sidecar.settings
    ops = Operations(service)
    mcp_server = build_mcp(ops, settings.host)
    extra: list[Any] = [*routes(ops), Mount("/mcp", app=http_app(mcp_server, settings.host))]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with mcp_server.session_manager.run():  # mounted apps get no lifespan
                yield
        finally:
            ops.close()
            service.stop()

    async def healthz(request: Request) -> Response:
        snapshot = service.indexer.snapshot
        return JSONResponse(
            {"ok": snapshot is not None, "generation": service.indexer.store.generation}
        )

    async def status(request: Request) -> Response:
        return JSONResponse(service.status().to_json())

    token = settings.token if not is_loopback(settings.host) or settings.token else None
    all_routes: list[Any] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
        *extra,
    ]
    return Starlette(
        routes=all_routes,
        middleware=[Middleware(BearerToken, token=token)],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
        lifespan=lifespan,
    )
