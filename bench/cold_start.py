"""From nothing to every lane complete: a generated wiki (sidecar_scale.py's generator, --pages
pages and about --chunks raw-source chunks) served by a real `groundwiki serve` process with
no index yet, polled over /status until no vector is pending.

Measured, not extrapolated: seconds from the process start until the lexical and token lanes
answer, until every page vector is computed (pages alone), and until every page, passage and
chunk vector is (every lane complete); with the texts/s and ETA /status showed along the way,
so the ETA's accuracy is on record too.

Targets (issue 17, 10,000 pages and about 100,000 chunks): every lane <= 45 min, pages <= 5 min;
issue 29 asks every page vector within 10 minutes of the start (--until pages stops there).

    .venv/bin/python bench/cold_start.py [--pages 10000] [--chunks 100000] [--until pages]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from harness import RESULTS, machine_facts, write_results
from lint_scale import generate_wiki
from sidecar_scale import add_corpus

ALL_TARGET_S = 45 * 60
PAGES_TARGET_S = 5 * 60
POLL_S = 5.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def status(url: str) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"{url}/status", timeout=30) as response:
            return json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return None


def parse_value(text: str) -> Any:
    return yaml.safe_load(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--settings", nargs="*", default=[], help="sidecar settings as key=value (YAML values)"
    )
    parser.add_argument("--timeout-min", type=float, default=240.0)
    parser.add_argument(
        "--until",
        choices=["pages", "all"],
        default="all",
        help="stop once every page vector is in (issue 29's figure), or every vector",
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated wiki")
    parser.add_argument("--output", type=Path, default=RESULTS / "cold_start.json")
    args = parser.parse_args(argv)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-cold-start-"))
    root = workdir / "wiki"
    results: dict[str, Any] = {}
    process: subprocess.Popen[str] | None = None
    try:
        started = time.perf_counter()
        generate_wiki(root, args.pages, args.seed, 0.0)
        add_corpus(root, args.chunks, args.seed)
        print(f"generated in {time.perf_counter() - started:.0f} s: {root}")
        port = free_port()
        sidecar: dict[str, Any] = {"port": port}
        for pair in args.settings:
            key, _, value = pair.partition("=")
            sidecar[key] = parse_value(value)
        config_file = root / "mkdocs.yml"
        data = yaml.safe_load(config_file.read_text())
        data["plugins"] = [{"groundwiki": {"sidecar": sidecar}}]
        config_file.write_text(yaml.safe_dump(data))
        url = f"http://127.0.0.1:{port}"
        log = (workdir / "serve.log").open("w")
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        groundwiki = str(Path(sys.executable).with_name("groundwiki"))
        started = time.perf_counter()
        process = subprocess.Popen(
            [groundwiki, "-f", str(config_file), "serve"],
            stdout=log, stderr=subprocess.STDOUT, text=True, env=env,
        )  # fmt: skip
        samples: list[dict[str, Any]] = []
        ready_s = pages_s = all_s = None
        deadline = started + args.timeout_min * 60
        while time.perf_counter() < deadline:
            if process.poll() is not None:
                raise SystemExit(f"groundwiki serve exited {process.returncode}; see {log.name}")
            found = status(url)
            now = time.perf_counter() - started
            if found is None:
                time.sleep(1.0)
                continue
            lanes = found["lanes"]
            if ready_s is None and lanes["lexical"]["state"] == "ok":
                ready_s = now
                print(f"{now:7.0f} s  lexical and token lanes ready")
            sample = {
                "t": now,
                **{k: found[k] for k in ("pages", "page_vectors", "passages", "passage_vectors")},
                **{k: found[k] for k in ("chunks", "chunk_vectors", "embedding_pending")},
                "texts_per_s": found.get("embedding_texts_per_s"),
                "eta_s": found.get("embedding_eta_s"),
            }
            samples.append(sample)
            if pages_s is None and found["pages"] and found["page_vectors"] >= found["pages"]:
                pages_s = now
                print(f"{now:7.0f} s  every page vector computed ({found['pages']} pages)")
                if args.until == "pages":
                    break
            done = not found.get("warming") and found["embedding_pending"] == 0
            if ready_s is not None and done and found["generation"]:
                all_s = now
                print(f"{now:7.0f} s  every lane complete")
                break
            if len(samples) % 12 == 1:
                print(
                    f"{now:7.0f} s  pending {found['embedding_pending']}, "
                    f"{sample['texts_per_s']} texts/s, ETA {sample['eta_s']} s",
                    flush=True,
                )
            time.sleep(POLL_S)
        last = samples[-1] if samples else {}
        texts = last.get("page_vectors", 0) + last.get("passage_vectors", 0)
        texts += last.get("chunk_vectors", 0)
        results = {
            "wiki": {k: last.get(k) for k in ("pages", "passages", "chunks")},
            "settings": sidecar,
            "ready_s": ready_s,
            "pages_s": pages_s,
            "all_s": all_s,
            "vectors": texts,
            "mean_texts_per_s": texts / (all_s - (ready_s or 0)) if all_s else None,
            "samples": samples,
            "targets": {
                "all_lanes_within_45_min": all_s is not None and all_s <= ALL_TARGET_S,
                "pages_within_5_min": pages_s is not None and pages_s <= PAGES_TARGET_S,
                "pages_within_10_min": pages_s is not None and pages_s <= 600,  # issue 29
            },
        }
        print(
            f"\nready {ready_s} s, pages {pages_s} s, all {all_s} s for {texts} vectors"
            f" ({results['mean_texts_per_s']} texts/s)"
        )
        for name, ok in results["targets"].items():
            print(f"{'PASS' if ok else 'FAIL'} {name}")
    finally:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(120)
            except subprocess.TimeoutExpired:
                process.kill()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    write_results(
        args.output,
        {
            "benchmark": "cold_start",
            "machine": facts,
            "params": vars(args) | {"output": str(args.output)},
            **results,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
