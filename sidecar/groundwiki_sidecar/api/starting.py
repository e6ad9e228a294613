"""A sidecar whose port is open within a second or two of its start, on any wiki.

`groundwiki serve` binds at once to `StartingApp`. Behind it, a thread imports the search
libraries, loads the model, makes the service and the application (`app.create_app`), and runs
the first sync; the service is then served as it fills (pages first: `Indexer._first_sync`).
Until the application exists, the same guards as the application's (hosts, tokens, body size)
stand in front of three answers: `/healthz` (`ok` false, `warming` true, the stage), `/status`
(the same, shaped like the full status, every lane `warming`), and `503 not_ready` for the rest,
each saying what the start is doing.

`groundwiki mcp` does the same over stdio with `StartingOperations`: the MCP session answers
`initialize` and lists its tools at once; a tool called before the service runs says so.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
from groundwiki.core.sources.hygiene import junk_counts
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from groundwiki_sidecar.api.http_guards import JSONAnswer, error, guards
from groundwiki_sidecar.api.parameters import OperationError
from groundwiki_sidecar.base.claim import IndexClaim
from groundwiki_sidecar.base.settings import Sidecar
from groundwiki_sidecar.base.startup import Startup

if TYPE_CHECKING:
    from groundwiki_sidecar.api.operations import Operations
    from groundwiki_sidecar.api.service import SidecarService

log = logging.getLogger("groundwiki_sidecar")
WAIT_S = 20.0  # how long an MCP tool call made during the start waits for it


def not_ready_message(startup: Startup) -> str:
    state = startup.to_json()
    return f"the sidecar is starting: {state['doing']} ({state['percent']:.0f}%); ask again soon"


def start_service(sidecar: Sidecar, startup: Startup, claim: IndexClaim | None) -> SidecarService:
    """The service, made and started (its first sync runs on in the background): the part of
    a start that takes the libraries' import, the model's load and the wiki's size."""
    from groundwiki_sidecar.api.service import SidecarService

    service = SidecarService(sidecar, claim=claim)
    service.start_in_background(startup)
    return service


class StartingApp:
    """The ASGI application `serve` runs: the warming answers until the real one is made."""

    def __init__(
        self,
        sidecar: Sidecar,
        startup: Startup,
        claim: IndexClaim | None,
        user: str | None = None,
        on_failure: Callable[[], None] = lambda: None,
    ) -> None:
        self.sidecar = sidecar
        self.startup = startup
        self.claim = claim
        self.user = user
        self.on_failure = on_failure
        self.app: Starlette | None = None
        self.warming = warming_app(sidecar, startup, user)
        self._stopping: anyio.Event | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        await (self.app or self.warming)(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup: answered at once, the port then opens
        self._stopping = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._run)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            self._stopping.set()
        await send({"type": "lifespan.shutdown.complete"})

    async def _run(self) -> None:
        """Make the application in a thread, then serve it until shutdown under its lifespan
        (which stops the service)."""
        assert self._stopping is not None
        made: dict[str, Any] = {}
        done = anyio.Event()
        token = anyio.lowlevel.current_token()

        def make() -> None:
            # A thread of its own, not the event loop's pool: a shutdown does not wait for it.
            try:
                from groundwiki_sidecar.api.app import create_app

                service = start_service(self.sidecar, self.startup, self.claim)
                made["app"] = create_app(service, user=self.user)
            except BaseException as exc:  # reported, then the server stops
                made["error"] = exc
            anyio.from_thread.run_sync(done.set, token=token)

        threading.Thread(target=make, name="groundwiki-start", daemon=True).start()
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as waits:

                async def stop_early() -> None:
                    assert self._stopping is not None
                    await self._stopping.wait()
                    scope.cancel()

                waits.start_soon(stop_early)
                await done.wait()
                waits.cancel_scope.cancel()
        if scope.cancelled_caught:
            return  # stopped while starting: the process ends with the start's thread
        if "error" in made:
            error = made["error"]
            self.startup.fail(str(error))
            if isinstance(error, Exception) and not _is_users(error):
                log.error("the sidecar could not start", exc_info=error)
            else:
                log.error("the sidecar could not start: %s", error)
            self.on_failure()
            return
        app: Starlette = made["app"]
        async with app.router.lifespan_context(app):
            self.app = app
            await self._stopping.wait()


def _is_users(error: BaseException) -> bool:
    """An error the user can fix (a bad setting, a folder in use): one line, no traceback."""
    from groundwiki.core.config.errors import GroundwikiError

    return isinstance(error, GroundwikiError)


def warming_app(sidecar: Sidecar, startup: Startup, user: str | None) -> Starlette:
    """The answers while the application is being made, behind the application's guards."""

    async def healthz(request: Request) -> Response:
        return JSONAnswer(warming_health(startup))

    async def status(request: Request) -> Response:
        return JSONAnswer(warming_status(startup))

    async def other(request: Request) -> Response:
        return _not_ready(startup)

    every = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
        Route("/{path:path}", other, methods=every),
    ]
    middleware, _ = guards(sidecar, user)
    return Starlette(routes=routes, middleware=middleware)


def _not_ready(startup: Startup) -> Response:
    return error(
        503,
        "not_ready",
        not_ready_message(startup),
        warming=True,
        starting=startup.to_json(),
    )


def warming_health(startup: Startup) -> dict[str, Any]:
    return {
        "ok": False,
        "generation": 0,
        "sync": "failing" if startup.failed else "ok",
        "warming": True,
        "starting": startup.to_json(),
    }


def warming_status(startup: Startup) -> dict[str, Any]:
    """`/status` before the service exists: nothing indexed, every lane warming."""
    from groundwiki_sidecar import lanes

    reason = not_ready_message(startup)
    warm = {"state": "warming", "reason": reason}
    idle = {"state": "ok", "error": "", "since": None, "last_ok": None}
    return {
        "generation": 0,
        "pages": 0,
        "chunks": 0,
        "page_vectors": 0,
        "chunk_vectors": 0,
        "passages": 0,
        "passage_vectors": 0,
        "lexical_docs": {"pages": 0, "passages": 0, "chunks": 0},
        "skipped_chunks": junk_counts({}),
        "embedding_pending": 0,
        "texts_embedded": 0,
        "embedding_texts_per_s": None,
        "embedding_eta_s": None,
        "model": "",
        "last_sync": None,
        "last_sync_seconds": None,
        "pending_events": 0,
        "watcher": "starting",
        "watcher_rearmed": 0,
        "lanes": {
            lane.name: {**warm, "kinds": {kind: warm for kind in lane.kinds}}
            for lane in lanes.LANES
        },
        "sync": {**idle, "running": True, "running_since": startup.started, "pages": None,
                 "following": None},
        "embedding": idle,
        "audit": {"state": "starting", "error": "", "records": None, "lost": None},
        "tokens": {"state": "starting", "error": ""},
        "scope": "global",
        "warming": True,
        "starting": startup.to_json(),
    }  # fmt: skip


class StartingOperations:
    """The operations for MCP over stdio while the service starts. A tool called then waits
    for the first sync (until WAIT_S after the start: on a small wiki a client sees no
    difference from a sidecar started long ago), then answers from what is indexed (a lane not ready says so),
    or, before even the pages are in, is refused with what the start is doing (`503
    not_ready`, a tool error over MCP): a client that gave up on `initialize` would never
    have connected."""

    def __init__(self, startup: Startup, user: str | None) -> None:
        self.startup = startup
        self.user = user
        self.ready: Operations | None = None
        self._settled = False

    def viewing(self, user: str | None) -> Any:
        self._wait()
        if self.ready is not None:
            return self.ready.viewing(user)
        return self

    def _wait(self) -> None:
        # WAIT_S from the start, not from each call: on a large wiki, a call made after it
        # answers at once from what is indexed. A client that retries every few seconds for
        # the lexical lane (the vault's pages are in at about 30 s) waited 20 s a try.
        deadline = self.startup.started + WAIT_S
        while not self._settled and time.time() < deadline:
            if self.startup.failed or self.startup.ready:
                self._settled = True
                return
            time.sleep(0.05)

    def __getattr__(self, name: str) -> Any:
        ready = self.__dict__.get("ready")
        if ready is not None:
            return getattr(ready, name)
        if name == "service":  # what the calls read of it (its audit trail) is not there yet
            self._refuse()

        def refused(*args: Any, **kwargs: Any) -> Any:
            self._refuse()

        return refused

    def _refuse(self) -> None:
        raise OperationError(503, "not_ready", not_ready_message(self.startup))
