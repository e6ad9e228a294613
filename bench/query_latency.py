"""Query latency and throughput of a real sidecar over HTTP, per lane and fused.

Generates the seeded synthetic wiki of lint_scale.py (--pages, 2,000 and 10,000 by default)
with a raw-source corpus of about ten chunks per page, starts `groundwiki serve` on a free
127.0.0.1 port with chunk vectors off (page search does not use them; embedding them would take
hours and keep both cores busy), waits until every page has its vector and the first sync has
indexed every chunk and passage, then sends the same queries, in the same run, as:

  hybrid    every lane, fused (what agents get);
  lexical   Whoosh only (`lanes=lexical`);
  semantic  Chroma only (`lanes=semantic`, the query embedded first);

with one client, and with eight concurrent clients on keep-alive connections. Queries are 2-4
words drawn from page titles and summaries. Prints p50/p95/p99 latency and queries per second.
The hybrid is first measured on queries the server has never seen (no decoded postings cached
for their terms), then every mode on the same queries again.

Agents also send whole questions: the hybrid is then measured, one client, on questions of
about 300 and 2,000 characters (`--long`), made of sentences from the pages' bodies and
summaries (seeded), sent by POST so no URL limit applies.

Targets at 10,000 pages: hybrid p50 under 25 ms and p99 under 100 ms (one client); the hybrid
costs at most the slowest single lane plus 20% (p50); 2,000-character questions p50 under
80 ms.

    .venv/bin/python bench/query_latency.py [--pages 2000,10000] [--queries 300] [--keep DIR]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import yaml
from harness import RESULTS, machine_facts, write_results
from lint_scale import generate_wiki
from sidecar_scale import add_corpus

MODES = {"hybrid": None, "lexical": "lexical", "semantic": "semantic"}
CLIENTS = (1, 8)
LONG = (300, 2000)  # characters of a whole question
LONG_TARGET_MS = 80  # p50 at 2,000 characters


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get_json(port: int, path: str) -> Any:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()


def make_queries(root: Path, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for path in sorted((root / "wiki").rglob("*.md")):
        head = path.read_text(encoding="utf-8").split("---\n")
        data = yaml.safe_load(head[1]) if len(head) > 2 else {}
        texts.append(f"{data.get('title', '')} {data.get('summary', '')}".split())
    queries = []
    for _ in range(count):
        words = rng.choice(texts)
        size = min(len(words), rng.randint(2, 4))
        start = rng.randrange(0, max(1, len(words) - size))
        queries.append(" ".join(words[start : start + size]).strip(".").lower())
    return queries


def make_questions(root: Path, count: int, chars: int, seed: int) -> list[str]:
    """Questions of about `chars` characters: a page's summary, then sentences of its body and
    of other pages' bodies until the length is reached (what an agent pastes)."""
    rng = random.Random(seed + chars)
    pages = []
    for path in sorted((root / "wiki").rglob("*.md")):
        parts = path.read_text(encoding="utf-8").split("---\n", 2)
        body = parts[2] if len(parts) > 2 else parts[-1]
        data = yaml.safe_load(parts[1]) if len(parts) > 2 else {}
        prose = re.sub(r"\[\[[^\]]*\]\]|<!--.*?-->|`[^`]*`", " ", body)
        sentences = [
            s.strip() + "."
            for line in prose.splitlines()
            if line.strip() and not line.lstrip().startswith(("#", "<!--", "[", "-", "|"))
            for s in line.split(". ")
            if len(s.split()) > 3
        ]
        pages.append((str(data.get("summary", "")), sentences))
    questions = []
    for _ in range(count):
        summary, sentences = rng.choice(pages)
        parts = [summary]
        while sum(len(p) + 1 for p in parts) < chars:
            pool = sentences or rng.choice(pages)[1] or [summary]
            parts.append(rng.choice(pool))
            if rng.random() < 0.3:
                sentences = rng.choice(pages)[1]
        questions.append(" ".join(parts)[:chars])
    return questions


def run_clients(port: int, queries: list[str], lane: str | None, clients: int) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    shares = [queries[i::clients] for i in range(clients)]

    def client(share: list[str]) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        for query in share:
            params: dict[str, Any] = {"q": query, "limit": 10} | ({"lanes": lane} if lane else {})
            started = time.perf_counter()
            if len(query) > 200:  # the body names the question `query`, as the MCP tools do
                fields = {"query" if k == "q" else k: v for k, v in params.items()}
                body = json.dumps(fields).encode("utf-8")
                headers = {"Content-Type": "application/json"}
                connection.request("POST", "/search", body, headers)
            else:
                connection.request("GET", "/search?" + urllib.parse.urlencode(params))
            response = connection.getresponse()
            body = response.read()
            mine.append(time.perf_counter() - started)
            if response.status != 200:
                with lock:
                    errors.append(body.decode()[:200])
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(share,)) for share in shares]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)

    def pct(share: float) -> float:
        return 1000 * ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]

    return {
        "queries": len(latencies),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "mean_ms": 1000 * statistics.mean(latencies),
        "qps": len(latencies) / elapsed,
    }


def measure_size(
    pages: int, queries: int, seed: int, workdir: Path, long: int = 100, keep: bool = False
) -> dict[str, Any]:
    root = workdir / f"wiki-{pages}"
    if keep and (root / "mkdocs.yml").exists():
        print(f"reusing {root} and its indexes (--keep)")
    else:
        shutil.rmtree(root, ignore_errors=True)
        generate_wiki(root, pages, seed, 0.0)
        add_corpus(root, pages * 10, seed)
    port = free_port()
    config = root / "mkdocs.yml"
    data = yaml.safe_load(config.read_text())
    # Chunk vectors are off: page search does not use them, and embedding 100,000 chunks in the
    # background would take hours and compete with the queries for both cores.
    # Page vectors from title, summary and tags only: query latency does not depend on the
    # text a vector was made from, and `lead` texts take five times longer to embed.
    # Passage vectors are off for the same reason (three passages a page, each embedded from
    # 200 words): page search then ranks passages by the lexical lane only, and the semantic lane
    # by page vectors. Passage search in Chroma is one more nearest-neighbour query.
    sidecar = {
        "port": port,
        "embed_chunks": False,
        "embed_passages": False,
        "page_vector": "summary",
    }
    data["plugins"] = [{"groundwiki": {"sidecar": sidecar}}]
    config.write_text(yaml.safe_dump(data))
    groundwiki = Path(sys.executable).with_name("groundwiki")
    started = time.perf_counter()
    server = subprocess.Popen(
        [str(groundwiki), "-q", "-f", str(config), "serve"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while True:
            if server.poll() is not None:
                raise RuntimeError(server.stderr.read())
            try:
                status = get_json(port, "/status")
                # Every page vector, and the first sync done to the last chunk and passage: a
                # sync still indexing them would compete with the queries for both cores.
                synced = not status["sync"]["running"] and status["lexical_docs"]["passages"]
                if status["page_vectors"] == status["pages"] and status["pages"] and synced:
                    break
            except OSError:
                pass
            time.sleep(1)
        ready_s = time.perf_counter() - started
        print(
            f"\n== {status['pages']} pages, {status['lexical_docs']['chunks']} chunks: ready "
            f"(page vectors, first sync done) in {ready_s:.0f} s =="
        )
        sample = make_queries(root, queries, seed)
        rows: dict[str, Any] = {}
        # First sight: the sidecar has decoded no postings for these terms yet (the lexical
        # lane keeps decoded postings per segment), so this is the latency of new queries.
        first = run_clients(port, sample, None, 1)
        rows["hybrid-first/1"] = first
        print(
            f"hybrid, queries seen for the first time: p50 {first['p50_ms']:7.1f} ms  "
            f"p95 {first['p95_ms']:7.1f} ms  p99 {first['p99_ms']:7.1f} ms"
        )
        for clients in CLIENTS:
            for mode, lane in MODES.items():
                row = run_clients(port, sample * (2 if clients > 1 else 1), lane, clients)
                rows[f"{mode}/{clients}"] = row
                print(
                    f"{mode:9} {clients} client{'s' if clients > 1 else ' '}: p50 "
                    f"{row['p50_ms']:7.1f} ms  p95 {row['p95_ms']:7.1f} ms  p99 "
                    f"{row['p99_ms']:7.1f} ms  {row['qps']:6.1f} q/s  ({row['errors']} errors)"
                )
        for chars in LONG if long else ():
            questions = make_questions(root, long, chars, seed)
            row = run_clients(port, questions, None, 1)
            rows[f"hybrid-{chars}chars/1"] = row
            print(
                f"hybrid, {chars}-character questions: p50 {row['p50_ms']:7.1f} ms  p95 "
                f"{row['p95_ms']:7.1f} ms  p99 {row['p99_ms']:7.1f} ms  ({row['errors']} errors)"
            )
        slowest = max(rows["lexical/1"]["p50_ms"], rows["semantic/1"]["p50_ms"])
        return {
            "pages": status["pages"],
            "chunks": status["lexical_docs"]["chunks"],
            "ready_s": ready_s,
            "results": rows,
            "hybrid_over_slowest_lane_p50": rows["hybrid/1"]["p50_ms"] / slowest,
        }
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default="2000,10000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--long", type=int, default=100, help="whole questions per length (0: none)"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep the generated wikis and their indexes in this folder and reuse them on the "
        "next run (a 10,000-page wiki then starts in seconds instead of embedding again)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS / "query_latency.json")
    args = parser.parse_args(argv)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    keep = args.keep is not None
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="groundwiki-query-latency-"))
    workdir.mkdir(parents=True, exist_ok=True)
    sizes = []
    try:
        for pages in (int(p) for p in args.pages.split(",")):
            sizes.append(measure_size(pages, args.queries, args.seed, workdir, args.long, keep))
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print("\ntargets:")
    targets: dict[str, Any] = {}
    for size in sizes:
        hybrid = size["results"]["hybrid/1"]
        ok_latency = hybrid["p50_ms"] < 25 and hybrid["p99_ms"] < 100 and not hybrid["errors"]
        ok_cost = size["hybrid_over_slowest_lane_p50"] <= 1.2
        targets[str(size["pages"])] = {"latency": ok_latency, "hybrid_cost": ok_cost}
        long_row = size["results"].get(f"hybrid-{LONG[-1]}chars/1")
        if long_row:
            ok_long = long_row["p50_ms"] < LONG_TARGET_MS and long_row["errors"] == 0
            targets[str(size["pages"])]["long_questions"] = ok_long
            print(
                f"{'PASS' if ok_long else 'FAIL'} {size['pages']} pages: {LONG[-1]}-character "
                f"questions p50 {long_row['p50_ms']:.1f} ms (< {LONG_TARGET_MS})"
            )
        print(
            f"{'PASS' if ok_latency else 'FAIL'} {size['pages']} pages: hybrid p50 "
            f"{hybrid['p50_ms']:.1f} ms (< 25), p99 {hybrid['p99_ms']:.1f} ms (< 100)"
        )
        print(
            f"{'PASS' if ok_cost else 'FAIL'} {size['pages']} pages: hybrid p50 is "
            f"{size['hybrid_over_slowest_lane_p50']:.2f}x the slowest lane's (<= 1.20)"
        )
    write_results(
        args.output,
        {
            "benchmark": "query_latency",
            "machine": facts,
            "params": {
                "pages": args.pages,
                "queries": args.queries,
                "seed": args.seed,
                "long": args.long,
            },
            "sizes": sizes,
            "targets": targets,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
