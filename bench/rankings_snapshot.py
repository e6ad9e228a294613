"""Rankings of every Cranfield query from a real sidecar over HTTP, to prove that a change of
the code leaves the answers unchanged (issue 12: the refactor must give identical rankings).

Builds the collection's wiki the way `groundwiki eval` does (`load_collection` +
`write_corpus_wiki`, one page per document, chunk vectors off), adds the documents once more as
raw sources (Markdown files of 25 documents, one heading each) so the chunk lexical lane has
something to rank, starts `python -m groundwiki serve` on a free 127.0.0.1 port, waits until
/status shows every page vector embedded, then sends every judged query as:

  hybrid          GET /search?q=..&limit=100&explain=true   (every lane fused, with explain)
  lane:<name>     GET /search?q=..&limit=100&lanes=<name>   (each page lane alone)
  chunks:lexical  GET /chunks/search?q=..&limit=20&lanes=lexical&explain=true

Every lane of every answer must be `ok` or `standby`; a query with a lane that timed out (or a
503) is sent again (the machine is shared and noisy). Writes the ranked keys and each hit's
score (and explain) per query to --output, with the facts of the run under `meta`.

The code measured is whichever `groundwiki` the interpreter imports: PYTHONPATH selects it, for
this process and the sidecar it starts (`python -m groundwiki`, same environment), e.g.

    PYTHONPATH=/tmp/base/plugins .venv/bin/python bench/rankings_snapshot.py \\
        -o /tmp/bench12/base-rankings.json
    .venv/bin/python bench/rankings_snapshot.py -o /tmp/bench12/new-rankings.json
    .venv/bin/python bench/rankings_snapshot.py --compare /tmp/bench12/base-rankings.json \\
        /tmp/bench12/new-rankings.json

--compare prints, per section, how many queries rank differently, how many rank the same but
score differently, and the first differences; it exits 1 when anything differs.
--compare-eval A.json B.json does the same for two `groundwiki eval -o` files (figures, exactly).
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

from harness import stop_sidecar

REPO = Path(__file__).resolve().parent.parent
DEFAULT_COLLECTION = REPO.parent / "shared" / "ir" / "cranfield"
PAGE_LIMIT = 100
CHUNK_LIMIT = 20
MAX_QUERY_CHARS = 1000  # the API's limit; longer queries are skipped and counted
PAGE_LANES = ("lexical", "semantic", "token")
GOOD_STATES = {"ok", "standby", "skipped"}  # skipped: the lane declined the query, and said why
RETRY_STATES = {"timeout"}
RETRIES = 8
DOCS_PER_SOURCE = 25
EXACT_EF_SEARCH = 5000  # above the page count: Chroma's HNSW search is then exhaustive
INDEX_DIR = ".groundwiki"  # sidecar.index_dir's default, which write_corpus_wiki keeps


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Client:
    """One keep-alive connection to the sidecar."""

    def __init__(self, port: int, timeout: float = 120.0) -> None:
        self.port, self.timeout = port, timeout
        self.connection: http.client.HTTPConnection | None = None

    def get(self, path: str) -> tuple[int, Any]:
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=self.timeout
                )
            try:
                self.connection.request("GET", path)
                response = self.connection.getresponse()
                body = response.read()
                return response.status, json.loads(body) if body else None
            except (http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


def serve_with_ef_search(ef_search: int, argv: list[str]) -> int:
    """`groundwiki <argv>` with every Chroma collection searched with this HNSW ef_search.

    Chroma builds its HNSW graph nondeterministically (threaded inserts; the log replayed into
    the graph when a persisted index is opened), so with its default ef_search (100, raised to
    n_results) the deep ranks of the semantic lane differ from one build, or one restart, to
    the next. With ef_search above the number of vectors the search visits every vector it can
    reach: the exact nearest neighbours, the same every time. Nothing else changes."""
    import chromadb.api.client as chroma_client

    cls = chroma_client.Client
    create, get = cls.create_collection, cls.get_collection

    def create_collection(self: Any, *args: Any, **kwargs: Any) -> Any:
        configuration = dict(kwargs.get("configuration") or {})
        configuration["hnsw"] = {**configuration.get("hnsw", {}), "ef_search": ef_search}
        kwargs["configuration"] = configuration
        print(f"bench: Chroma collection created with ef_search={ef_search}", file=sys.stderr)
        return create(self, *args, **kwargs)

    def get_collection(self: Any, *args: Any, **kwargs: Any) -> Any:
        collection = get(self, *args, **kwargs)
        collection.modify(configuration={"hnsw": {"ef_search": ef_search}})
        print(f"bench: Chroma collection opened with ef_search={ef_search}", file=sys.stderr)
        return collection

    cls.create_collection = create_collection  # type: ignore[method-assign]
    cls.get_collection = get_collection  # type: ignore[method-assign]
    from groundwiki.cli import main as groundwiki_main

    return groundwiki_main(argv)


def code_location(env: dict[str, str]) -> str:
    """Where `groundwiki` comes from for a child process with this environment."""
    return subprocess.run(
        [sys.executable, "-c", "import groundwiki; print(groundwiki.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def write_raw_sources(documents: Any, root: Path) -> int:
    """The documents again as raw sources: Markdown files of DOCS_PER_SOURCE documents, one
    `##` heading per document, so chunking splits them and the chunk lane has text to rank.
    Written here (not by the code measured), so base and new code index the same files."""
    folder = root / "raw-sources" / "cranfield"
    folder.mkdir(parents=True, exist_ok=True)
    files = 0
    for start in range(0, len(documents), DOCS_PER_SOURCE):
        part = documents[start : start + DOCS_PER_SOURCE]
        lines = [f"# Cranfield documents {start + 1}-{start + len(part)}", ""]
        for doc in part:
            title = " ".join(doc.title.split()) or doc.id
            lines += [f"## Document {doc.id}: {title}", "", " ".join(doc.text.split()), ""]
        (folder / f"part-{start // DOCS_PER_SOURCE + 1:03d}.md").write_text(
            "\n".join(lines), encoding="utf-8"
        )
        files += 1
    return files


def tree_digest(root: Path, folders: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                digest.update(str(path.relative_to(root)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def wait_ready(
    server: subprocess.Popen[bytes], client: Client, pages: int, chunks: bool, limit_s: float
) -> dict[str, Any]:
    started = time.perf_counter()
    last = ""
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"the sidecar exited with {server.returncode}; see its log")
        if time.perf_counter() - started > limit_s:
            raise RuntimeError(f"not ready after {limit_s:.0f} s; last status: {last}")
        try:
            status, data = client.get("/status")
        except OSError:
            status, data = 0, None
        if status == 200 and isinstance(data, dict):
            lanes = data.get("lanes", {})
            last = (
                f"pages {data.get('pages')} page_vectors {data.get('page_vectors')} "
                f"chunks {data.get('chunks')} lanes "
                + ",".join(f"{n}={v.get('state')}" for n, v in lanes.items())
            )
            if (
                data.get("pages") == pages
                and data.get("page_vectors") == pages
                and (data.get("chunks") or 0) >= (1 if chunks else 0)
                and all(v.get("state") == "ok" for v in lanes.values())
            ):
                return data
        time.sleep(2)


def ask(client: Client, path: str, stats: dict[str, int]) -> dict[str, Any]:
    """The answer to one query; sent again while a lane timed out or the sidecar says 503."""
    problem = ""
    for attempt in range(RETRIES + 1):
        if attempt:
            stats["retries"] += 1
            time.sleep(min(30.0, 0.5 * 2**attempt))
        status, data = client.get(path)
        if status == 503:
            problem = f"503 {data}"
            continue
        if status != 200:
            raise RuntimeError(f"{path}: HTTP {status}: {data}")
        states = {lane["name"]: lane for lane in data["lanes"]}
        if any(lane["state"] in RETRY_STATES for lane in states.values()):
            problem = f"lanes {states}"
            continue
        bad = {n: lane for n, lane in states.items() if lane["state"] not in GOOD_STATES}
        if bad:
            raise RuntimeError(f"{path}: lanes not ok or standby: {bad}")
        return data
    raise RuntimeError(f"{path}: still failing after {RETRIES} retries: {problem}")


def hits_of(data: dict[str, Any], id_field: str) -> dict[str, Any]:
    hits = data["hits"]
    return {
        "ids": [hit[id_field] for hit in hits],
        "scores": [hit["score"] for hit in hits],
        "explain": [hit.get("explain") for hit in hits] if hits and "explain" in hits[0] else None,
        "lanes": {lane["name"]: lane["state"] for lane in data["lanes"]},
    }


def snapshot(args: argparse.Namespace) -> int:
    import groundwiki
    from groundwiki_sidecar.evaluation.collection import load_collection
    from groundwiki_sidecar.evaluation.corpus_wiki import write_corpus_wiki

    env = dict(os.environ)
    child_code = code_location(env)
    if Path(child_code).resolve() != Path(groundwiki.__file__).resolve():
        raise RuntimeError(f"this process runs {groundwiki.__file__}, the sidecar {child_code}")
    print(f"code: {groundwiki.__file__}", file=sys.stderr)
    collection = load_collection(args.collection)
    if args.docs:
        collection = collection.sliced(args.docs)  # a smoke test on a slice
    workdir = Path(tempfile.mkdtemp(prefix="rankings-snapshot-", dir=args.workdir))
    root = workdir / "wiki"
    key_to_doc = write_corpus_wiki(collection, root, {"embed_chunks": False})
    sources = write_raw_sources(collection.documents, root) if args.raw_sources else 0
    config = root / "mkdocs.yml"
    index_dir = root / INDEX_DIR
    if args.index_from:
        shutil.copytree(args.index_from, index_dir)
    port = free_port()
    log_path = args.log or args.output.with_suffix(".sidecar.log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {
        "code": groundwiki.__file__,
        "collection": str(args.collection),
        "documents": len(collection.documents),
        "queries": len(collection.queries),
        "raw_source_files": sources,
        "wiki_sha256": tree_digest(root, ("wiki",)),
        "raw_sources_sha256": tree_digest(root, ("raw-sources",)),
        "mkdocs_yml": config.read_text(encoding="utf-8"),
        "workdir": str(root),
        "index_from": str(args.index_from) if args.index_from else None,
    }
    try:
        from groundwiki_sidecar.base.settings import load_sidecar

        settings = load_sidecar(config).settings
        meta["settings"] = {
            "weights": dict(settings.weights),
            "rrf_k": settings.rrf_k,
            "page_vector": settings.page_vector,
            "token_lane": settings.token_lane,
            "embedding": settings.embedding,
            "embed_chunks": settings.embed_chunks,
        }
    except Exception as exc:  # only a record; the sidecar reads its own settings
        meta["settings"] = f"unreadable: {exc!r}"
    serve = ["-q", "-f", str(config), "serve", "--host", "127.0.0.1", "--port", str(port)]
    if args.ef_search:  # the real CLI, with Chroma's HNSW search made exact (see above)
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--serve-ef-search",
            str(args.ef_search),
            *serve,
        ]
    else:
        command = [sys.executable, "-m", "groundwiki", *serve]
    meta["ef_search"] = args.ef_search or "chroma default"
    meta["command"] = command
    print(f"sidecar: {' '.join(command)} (log {log_path})", file=sys.stderr)
    started = time.perf_counter()
    with log_path.open("wb") as log:
        server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        client = Client(port)
        try:
            status = wait_ready(
                server, client, len(collection.documents), bool(sources), args.ready_timeout
            )
            meta["ready_s"] = round(time.perf_counter() - started, 1)
            meta["status"] = {
                k: status.get(k) for k in ("pages", "chunks", "page_vectors", "chunk_vectors",
                                           "lexical_docs", "model", "lanes", "texts_embedded")
            }  # fmt: skip
            print(
                f"ready in {meta['ready_s']:.0f} s: {status['pages']} pages, "
                f"{status['chunks']} chunks, {status['page_vectors']} page vectors, "
                f"{status.get('texts_embedded')} texts embedded by this sidecar",
                file=sys.stderr,
            )
            if args.index_from and status.get("texts_embedded"):
                print(
                    "WARNING: the sidecar embedded texts although the index was given: it "
                    "rebuilt (part of) the vectors, so HNSW noise is back in the comparison",
                    file=sys.stderr,
                )
            result = run_queries(client, collection.queries, meta)
        finally:
            client.close()
            stop_sidecar(server)
    meta["pages_mapped_to_documents"] = len(key_to_doc)
    if args.save_index:
        shutil.rmtree(args.save_index, ignore_errors=True)
        shutil.copytree(
            index_dir,
            args.save_index,
            ignore=shutil.ignore_patterns("*.lock", "compile-cache*", "listening*"),
        )
        print(f"index saved to {args.save_index}", file=sys.stderr)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"meta": meta, **result}, indent=1) + "\n", "utf-8")
    print(
        f"{meta['queries_sent']} queries ({meta['skipped_too_long']} skipped for length), "
        f"{meta['requests']} requests, {meta['retries']} retries; ready {meta['ready_s']:.0f} s, "
        f"queries {meta['query_s']:.1f} s; wrote {args.output}"
    )
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def run_queries(client: Client, queries: dict[str, str], meta: dict[str, Any]) -> dict[str, Any]:
    sections: dict[str, dict[str, Any]] = {"hybrid": {}}
    sections.update({f"lane:{name}": {} for name in PAGE_LANES})
    sections["chunks:lexical"] = {}
    stats = {"retries": 0, "requests": 0}
    skipped = []
    started = time.perf_counter()
    for done, (query_id, text) in enumerate(queries.items(), start=1):
        if len(text) > MAX_QUERY_CHARS:
            skipped.append(query_id)
            continue
        q = urllib.parse.quote(text, safe="")
        paths = {"hybrid": f"/search?q={q}&limit={PAGE_LIMIT}&explain=true"}
        for name in PAGE_LANES:
            paths[f"lane:{name}"] = f"/search?q={q}&limit={PAGE_LIMIT}&lanes={name}"
        paths["chunks:lexical"] = (
            f"/chunks/search?q={q}&limit={CHUNK_LIMIT}&lanes=lexical&explain=true"
        )
        for section, path in paths.items():
            data = ask(client, path, stats)
            stats["requests"] += 1
            sections[section][query_id] = hits_of(data, "id" if "chunks" in section else "key")
        if done % 25 == 0:
            print(f"  {done}/{len(queries)} queries", file=sys.stderr)
    meta["query_s"] = round(time.perf_counter() - started, 2)
    meta["queries_sent"] = len(queries) - len(skipped)
    meta["skipped_too_long"] = len(skipped)
    meta["skipped_ids"] = skipped
    meta.update(stats)
    return {
        # {query_id: [keys...]}: the fused page ranking, the headline of the snapshot
        "rankings": {q: hit["ids"] for q, hit in sections["hybrid"].items()},
        "sections": sections,
    }


# --- compare ---------------------------------------------------------------------------------


def compare(path_a: Path, path_b: Path, shown: int) -> int:
    a = json.loads(path_a.read_text(encoding="utf-8"))
    b = json.loads(path_b.read_text(encoding="utf-8"))
    print(f"A: {path_a}  ({a['meta']['code']})\nB: {path_b}  ({b['meta']['code']})")
    for fact in ("documents", "queries", "queries_sent", "skipped_too_long", "raw_source_files",
                 "wiki_sha256", "raw_sources_sha256", "settings", "ef_search"):  # fmt: skip
        va, vb = a["meta"].get(fact), b["meta"].get(fact)
        mark = "same" if va == vb else f"DIFFERS: {va!r} vs {vb!r}"
        print(f"  meta {fact}: {mark}")
    for fact in ("pages", "chunks", "page_vectors"):
        va, vb = a["meta"]["status"].get(fact), b["meta"]["status"].get(fact)
        print(f"  status {fact}: {va} vs {vb}" + ("" if va == vb else "  DIFFERS"))
    differing = other = 0
    for section in a["sections"]:
        sa, sb = a["sections"][section], b["sections"].get(section, {})
        ids = sorted(set(sa) | set(sb), key=_numeric)
        order, scores, explain, states, missing = [], [], [], [], []
        for q in ids:
            ha, hb = sa.get(q), sb.get(q)
            if ha is None or hb is None:
                missing.append(q)
            elif ha["ids"] != hb["ids"]:
                order.append(q)
            elif ha["scores"] != hb["scores"]:
                scores.append(q)
            elif ha.get("explain") != hb.get("explain"):
                explain.append(q)
            if ha and hb and ha["lanes"] != hb["lanes"]:
                states.append(q)
        differing += len(order) + len(missing)
        other += len(scores) + len(explain) + len(states)
        hits = sum(len(h["ids"]) for h in sa.values())
        print(
            f"{section:15} {len(ids)} queries, {hits} hits in A: {len(order)} rank differently, "
            f"{len(scores)} same order but other scores, {len(explain)} other explain, "
            f"{len(states)} other lane states, {len(missing)} missing on one side"
        )
        for q in order[:shown]:
            ra, rb = sa[q]["ids"], sb[q]["ids"]
            at = next((i for i, (x, y) in enumerate(zip(ra, rb, strict=False)) if x != y),
                      min(len(ra), len(rb)))  # fmt: skip
            overlap = len(set(ra) & set(rb))
            print(
                f"    q{q}: first difference at rank {at + 1}: A {ra[at : at + 3]} vs "
                f"B {rb[at : at + 3]} ({len(ra)} vs {len(rb)} hits, {overlap} shared)"
            )
        for q in scores[:shown]:
            at = next(i for i, (x, y) in enumerate(zip(sa[q]["scores"], sb[q]["scores"],
                                                        strict=False)) if x != y)  # fmt: skip
            print(
                f"    q{q}: score at rank {at + 1} ({sa[q]['ids'][at]}): "
                f"{sa[q]['scores'][at]} vs {sb[q]['scores'][at]}"
            )
        for q in states[:shown]:
            print(f"    q{q}: lanes {sa[q]['lanes']} vs {sb[q]['lanes']}")
    if not differing and not other:
        print("IDENTICAL: rankings, scores, explain and lane states")
        return 0
    print(f"{differing} query rankings differ; {other} other differences (scores, explain, states)")
    return 1


def compare_eval(path_a: Path, path_b: Path) -> int:
    """Two `groundwiki eval -o` files: every system's figures, compared exactly."""
    a = json.loads(path_a.read_text(encoding="utf-8"))
    b = json.loads(path_b.read_text(encoding="utf-8"))
    differing = 0
    for fact in ("collection", "documents", "queries", "measures", "fusion"):
        if a.get(fact) != b.get(fact):
            differing += 1
            print(f"{fact}: {a.get(fact)!r} vs {b.get(fact)!r}  DIFFERS")
    for system in sorted(set(a["systems"]) | set(b["systems"])):
        fa, fb = a["systems"].get(system), b["systems"].get(system)
        same = fa == fb
        differing += not same
        shown = "  ".join(
            f"{m} {fa.get(m, float('nan')) if fa else float('nan'):.4f}"
            + ("" if fa and fb and fa.get(m) == fb.get(m) else f" vs {(fb or {}).get(m)}")
            for m in (fa or fb or {})
        )
        print(f"{system:20} {'identical' if same else 'DIFFERS'}  {shown}")
    print("IDENTICAL figures" if not differing else f"{differing} differences")
    return 0 if not differing else 1


def _numeric(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 62, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", type=Path, default=DEFAULT_COLLECTION)
    parser.add_argument("-o", "--output", type=Path, help="the snapshot JSON to write")
    parser.add_argument(
        "--log", type=Path, help="the sidecar's log (default: <output>.sidecar.log)"
    )
    parser.add_argument("--workdir", type=Path, help="make the temporary wiki under this folder")
    parser.add_argument("--keep", action="store_true", help="keep the temporary wiki")
    parser.add_argument(
        "--no-raw-sources", dest="raw_sources", action="store_false",
        help="no raw sources (the chunk lane then has nothing to rank)",
    )  # fmt: skip
    parser.add_argument(
        "--save-index", type=Path, metavar="DIR",
        help="after the run, copy the sidecar's index folder (vectors included) here",
    )  # fmt: skip
    parser.add_argument(
        "--index-from", type=Path, metavar="DIR",
        help="start the sidecar on a copy of this saved index folder (no re-embedding)",
    )  # fmt: skip
    parser.add_argument(
        "--ef-search", type=int, default=EXACT_EF_SEARCH,
        help="Chroma HNSW ef_search for the sidecar (default %(default)s: exact for Cranfield's "
        "1,400 pages, so the rankings are reproducible); 0: Chroma's default, as shipped",
    )  # fmt: skip
    parser.add_argument("--docs", type=int, help="a slice of N documents (smoke test)")
    parser.add_argument("--ready-timeout", type=float, default=3600.0, help="seconds")
    parser.add_argument("--serve-ef-search", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"))
    parser.add_argument(
        "--compare-eval", nargs=2, type=Path, metavar=("A.json", "B.json"),
        help="compare two `groundwiki eval -o` files' figures exactly",
    )  # fmt: skip
    parser.add_argument("--show", type=int, default=5, help="differences shown per section")
    if sys.argv[1:2] == ["--serve-ef-search"]:  # the sidecar process (see snapshot)
        return serve_with_ef_search(int(sys.argv[2]), sys.argv[3:])
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare, args.show)
    if args.compare_eval:
        return compare_eval(*args.compare_eval)
    if not args.output:
        parser.error("give --output (or --compare A.json B.json)")
    started = time.perf_counter()
    code = snapshot(args)
    print(f"total {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
