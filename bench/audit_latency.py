"""What the audit trail costs a query: latency with it on and off, in the same run.

Generates the seeded synthetic wiki of lint_scale.py (--pages, 10,000 by default) with a small
raw-source corpus, starts the sidecar's real application in this process (Whoosh on disk,
embedding off: the audit's work is the same whatever lanes answer, and 10,000 page vectors would
take minutes to compute first), and sends the same page searches and page hydrations through the
HTTP routes, alternating rounds with the audit trail on and off (ABAB, so drift of the shared
machine falls on both). Prints p50/p95 per setting and the ratio on/off; the target is the p50
within noise (the record itself is under 1 ms).

    .venv/bin/python bench/audit_latency.py [--pages 10000] [--queries 300] [--rounds 4]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from harness import RESULTS, machine_facts, write_results
from lint_scale import generate_wiki
from query_latency import make_queries
from sidecar_scale import add_corpus


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", type=Path, default=RESULTS / "audit_latency.json")
    args = parser.parse_args(argv)

    from groundwiki_sidecar.api.app import create_app
    from groundwiki_sidecar.api.audit import AuditLog
    from groundwiki_sidecar.api.service import SidecarService
    from groundwiki_sidecar.base.settings import load_sidecar
    from starlette.testclient import TestClient

    work = Path(tempfile.mkdtemp(prefix="gw-audit-"))
    try:
        root = work / "wiki"
        generate_wiki(root, args.pages, args.seed, 0.0)
        add_corpus(root, args.pages, args.seed)
        config = root / "mkdocs.yml"
        data = yaml.safe_load(config.read_text())
        data["plugins"] = [{"groundwiki": {"sidecar": {"embed_chunks": False}}}]
        config.write_text(yaml.safe_dump(data))
        started = time.perf_counter()
        service = SidecarService(load_sidecar(config), embed=False)
        service.start(watch=False)
        print(f"{args.pages} pages indexed in {time.perf_counter() - started:.0f} s")
        audit = service.audit or AuditLog(service.sidecar.index_dir / "audit", 10_000_000, 20)
        client = TestClient(create_app(service), base_url="http://127.0.0.1")
        queries = make_queries(root, args.queries, args.seed)
        keys = [
            h["key"]
            for q in queries[:50]
            for h in client.get("/search", params={"q": q}).json()["hits"][:1]
        ]
        for query in queries:  # warm: the first round must not pay for decoding postings
            client.get("/search", params={"q": query})
        timings: dict[str, list[float]] = {"on": [], "off": []}
        for round_ in range(args.rounds * 2):
            setting = "on" if round_ % 2 == 0 else "off"
            service.audit = audit if setting == "on" else None
            for n, query in enumerate(queries):
                began = time.perf_counter()
                if n % 3 == 2 and keys:
                    client.post("/pages", json={"ids": [keys[n % len(keys)]]})
                else:
                    client.get("/search", params={"q": query})
                timings[setting].append((time.perf_counter() - began) * 1000)
        service.audit = audit
        rows: dict[str, Any] = {}
        for setting, values in timings.items():
            rows[setting] = {
                "p50_ms": statistics.median(values),
                "p95_ms": percentile(values, 0.95),
                "calls": len(values),
            }
            print(
                f"audit {setting:3}: p50 {rows[setting]['p50_ms']:6.2f} ms  "
                f"p95 {rows[setting]['p95_ms']:6.2f} ms  ({len(values)} calls)"
            )
        ratio = rows["on"]["p50_ms"] / rows["off"]["p50_ms"]
        added = rows["on"]["p50_ms"] - rows["off"]["p50_ms"]
        print(f"p50 on/off: {ratio:.3f} ({added:+.2f} ms); records written: {audit.seq}")
        service.stop()
        write_results(
            args.output,
            {
                "machine": machine_facts(),
                "pages": args.pages,
                "results": rows,
                "p50_ratio_on_off": ratio,
                "p50_added_ms": added,
            },
        )
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
