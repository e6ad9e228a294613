"""Damage: restart a real sidecar after each kind of damage to its index folder.

Builds a small wiki (pages with unique marker words, Markdown and .txt raw sources), indexes it
with a real `groundwiki serve` until every vector is stored, and stops it. Then, for each kind
of damage, copies that pristine folder, damages the copy, starts `groundwiki serve` on it as a
subprocess and reports one of:

  recovered        it started, and search answers correctly: a page's marker word finds that
                   page first (lexical lane), a raw-source word finds its chunk, and once the
                   semantic lane is ok again, a semantic-only search finds a page by its title;
  refused clearly  it exited with one line (no traceback) naming the folder to delete;
  failed           anything else: a traceback, a hang, wrong or missing answers.

Kinds of damage: a Whoosh segment deleted, a Whoosh segment truncated, store.sqlite's header
zeroed, store.sqlite truncated to half, Chroma's HNSW files deleted, Chroma's SQLite damaged,
the compile cache replaced by garbage, a compile cache in the old pickle format whose payload
would run code (it must never run: a marker file tells), an audit file that ends in a torn line
(every record written after the restart must still parse), and a stale lock left by a killed
process.

Prints a table and writes bench/results/damage.json. Target: 0 failed (exit code 1 otherwise).

    .venv/bin/python bench/damage.py [--pages 120] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
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
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
START_TIMEOUT_S = 180.0
SEMANTIC_TIMEOUT_S = 300.0
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def marker(number: int) -> str:
    """A word found on one page only, and stemmed to itself."""
    return f"zq{WORDS[number % len(WORDS)]}{number:04d}"


def build_wiki(root: Path, pages: int) -> None:
    (root / "wiki").mkdir(parents=True)
    (root / "raw-sources").mkdir()
    for number in range(pages):
        front = {
            "title": f"Topic {number}: {WORDS[number % len(WORDS)]} flow",
            "summary": f"How {WORDS[number % len(WORDS)]} flow behaves in case {number}.",
            "tags": [WORDS[number % 5]],
        }
        body = (
            f"# Topic {number}\n\nThe {marker(number)} regime appears in case {number}. "
            "Pressure rises across the shock while the flow slows.\n\n"
            f"<!-- from: raw-sources/run-{number % 20:02}.md#L1 -->\n"
        )
        text = f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n{body}"
        (root / f"wiki/topic-{number:04}.md").write_text(text, encoding="utf-8")
    for number in range(20):
        parts = "".join(
            f"## Part {part}\n\nRun {number} part {part} measured zqsource{number:02}x{part} "
            "while the boundary layer thickened downstream.\n\n"
            for part in range(4)
        )
        (root / f"raw-sources/run-{number:02}.md").write_text(
            f"Run {number}\n\n{parts}", encoding="utf-8"
        )
    (root / "raw-sources/notes.txt").write_text(
        "Shock waves form ahead of blunt bodies.\n\nHeat transfer rises near zqstagnation.\n"
    )
    config = {
        "site_name": "damage",
        "docs_dir": "wiki",
        "plugins": [{"groundwiki": {"sidecar": {"debounce_s": 0.1, "port": 8765}}}],
    }
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")


def set_port(root: Path, port: int) -> None:
    config = yaml.safe_load((root / "mkdocs.yml").read_text())
    config["plugins"][0]["groundwiki"]["sidecar"]["port"] = port
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config))


def get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


class Server:
    """`groundwiki serve` on a free port, its output kept in a file."""

    def __init__(self, root: Path) -> None:
        self.port = free_port()
        set_port(root, self.port)
        self.log = (root / "serve.log").open("w+")
        self.process = subprocess.Popen(
            [str(BIN / "groundwiki"), "-q", "-f", str(root / "mkdocs.yml"), "serve"],
            stdout=self.log, stderr=subprocess.STDOUT, env=ENV,
        )  # fmt: skip
        self.base = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float) -> bool:
        """True once /healthz says ok; False if the process exited first or time ran out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError, ValueError):
                if get(f"{self.base}/healthz")[1].get("ok"):
                    return True
            time.sleep(0.2)
        return False

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def status(self) -> dict:
        return get(f"{self.base}/status")[1]

    def search(self, path: str, query: str, **extra: str) -> list[dict]:
        params = urllib.parse.urlencode({"q": query, "limit": 5, **extra})
        code, data = get(f"{self.base}{path}?{params}")
        if code != 200:
            raise AssertionError(f"{path}?{params} answered {code}: {data}")
        return data["hits"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# --- the kinds of damage --------------------------------------------------------------------------


def _whoosh_segments(index: Path) -> list[Path]:
    segments = sorted((index / "whoosh/pages").glob("*.seg"))
    if not segments:
        raise RuntimeError(f"no Whoosh segment file under {index / 'whoosh/pages'}")
    return segments


def segment_deleted(index: Path) -> None:
    _whoosh_segments(index)[0].unlink()


def segment_truncated(index: Path) -> None:
    segment = _whoosh_segments(index)[0]
    os.truncate(segment, segment.stat().st_size // 2)


def _store(index: Path) -> Path:
    store = index / "store.sqlite"
    for suffix in ("-wal", "-shm"):  # a clean stop checkpoints; nothing may hide the damage
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    return store


def store_header_zeroed(index: Path) -> None:
    with _store(index).open("r+b") as handle:
        handle.write(b"\0" * 100)


def store_truncated(index: Path) -> None:
    store = _store(index)
    os.truncate(store, store.stat().st_size // 2)


def chroma_hnsw_deleted(index: Path) -> None:
    files = [p for p in (index / "chroma").glob("*/*") if p.suffix in {".bin", ".pickle"}]
    if not files:
        raise RuntimeError(f"no HNSW file under {index / 'chroma'}: too few vectors to persist")
    for path in files:
        path.unlink()


def chroma_sqlite_damaged(index: Path) -> None:
    database = index / "chroma/chroma.sqlite3"
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    size = database.stat().st_size
    with database.open("r+b") as handle:
        handle.write(b"\0" * 100)
        handle.seek(size // 2)
        handle.write(os.urandom(min(65536, size // 4)))


def compile_cache_garbage(index: Path) -> None:
    (index / "compile-cache.json").write_bytes(os.urandom(4096))


class _Payload:
    """Unpickling this runs `touch <index>/../PAYLOAD-RAN`: what a crafted cache file in a
    restored CI cache or a shared runner would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, ...]]:
        return (os.system, (f"touch {self.marker}",))


def payload_marker(index: Path) -> Path:
    return index.parent / "PAYLOAD-RAN"


def pickle_cache_payload(index: Path) -> None:
    import pickle

    data = pickle.dumps(("groundwiki-0.1.0-compile-cache-4", _Payload(payload_marker(index))))
    (index / "compile-cache.pickle").write_bytes(data)


def audit_line_torn(index: Path) -> None:
    """What a full disk leaves: the last record cut in the middle, no newline after it."""
    audit = index / "audit" / "audit.jsonl"
    audit.parent.mkdir(parents=True, exist_ok=True)
    with audit.open("ab") as handle:
        handle.write(b'{"seq": 999999, "op": "search", "args": {"query": "tor')


def payload_did_not_run(index: Path) -> str:
    return "the cache's payload ran" if payload_marker(index).exists() else ""


def audit_lines_parse(index: Path) -> str:
    """'' when every line of the audit file is a record, and records were written after the
    restart (the searches of the check)."""
    lines = (index / "audit" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    broken = 0
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            broken += 1
    if broken:
        return f"{broken} audit lines do not parse: a record was glued onto the torn line"
    return "" if lines else "no audit record was written after the restart"


def stale_lock(index: Path) -> None:
    """The claim file left by a sidecar killed with kill -9: its PID is gone."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (index / "sidecar.lock").write_text(f"pid {dead.pid}\n")


DAMAGE: dict[str, Callable[[Path], None]] = {
    "whoosh segment deleted": segment_deleted,
    "whoosh segment truncated": segment_truncated,
    "store.sqlite header zeroed": store_header_zeroed,
    "store.sqlite truncated": store_truncated,
    "chroma HNSW files deleted": chroma_hnsw_deleted,
    "chroma sqlite damaged": chroma_sqlite_damaged,
    "compile cache garbage": compile_cache_garbage,
    "old pickle cache with a payload": pickle_cache_payload,
    "audit file ends in a torn line": audit_line_torn,
    "stale lock from a killed process": stale_lock,
}

# What a kind of damage must leave true beyond a correct search: '' when it does.
VERIFY: dict[str, Callable[[Path], str]] = {
    "old pickle cache with a payload": payload_did_not_run,
    "audit file ends in a torn line": audit_lines_parse,
}


# --- one restart ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    damage: str
    result: str  # recovered | refused clearly | failed
    search_correct: bool | None
    seconds_to_ready: float | None
    detail: str


def check_answers(server: Server, pages: int) -> str:
    """'' when search answers correctly, else what was wrong."""
    for number in (0, pages // 2, pages - 1):
        hits = server.search("/search", marker(number), lanes="lexical")
        if not hits or hits[0]["key"] != f"topic-{number:04}":
            return f"lexical search for {marker(number)} gave {[h['key'] for h in hits]}"
    hits = server.search("/chunks/search", "zqsource07x2", lanes="lexical")
    if not hits or hits[0]["source"] != "run-07.md":
        return f"chunk search for zqsource07x2 gave {[h['source'] for h in hits]}"
    deadline = time.monotonic() + SEMANTIC_TIMEOUT_S
    while server.status()["lanes"]["semantic"]["state"] != "ok":
        if time.monotonic() > deadline:
            return f"semantic lane not ok: {server.status()['lanes']['semantic']}"
        time.sleep(0.5)
    for number in (1, pages // 3):
        title = f"Topic {number}: {WORDS[number % len(WORDS)]} flow in case {number}"
        hits = server.search("/search", title, lanes="semantic")
        if f"topic-{number:04}" not in [h["key"] for h in hits]:
            return f"semantic search for {title!r} gave {[h['key'] for h in hits]}"
    status = server.status()
    if status["pages"] != pages or status["embedding_pending"]:
        return (
            f"status after recovery: {status['pages']} pages, {status['embedding_pending']} pending"
        )
    return ""


def refused_clearly(output: str, code: int) -> bool:
    lines = [line for line in output.splitlines() if line.strip()]
    return (
        code != 0
        and "Traceback" not in output
        and bool(lines)
        and ".groundwiki" in lines[-1]
        and "delete" in lines[-1]
    )


def restart(case: str, root: Path, pages: int) -> Outcome:
    server = Server(root)
    started = time.monotonic()
    try:
        ready = server.wait_ready(START_TIMEOUT_S)
        took = round(time.monotonic() - started, 2)
        if not ready:
            code = server.process.poll()
            output = server.output()
            last = output.strip().splitlines()[-1] if output.strip() else "(no output)"
            if code is None:
                return Outcome(case, "failed", None, None, f"not ready in {START_TIMEOUT_S} s")
            result = "refused clearly" if refused_clearly(output, code) else "failed"
            return Outcome(case, result, None, None, last[:300])
        try:
            wrong = check_answers(server, pages)
        except (AssertionError, OSError, ValueError, KeyError) as exc:
            wrong = f"{type(exc).__name__}: {exc}"[:300]
        if "Traceback" in server.output():
            wrong = wrong or "a traceback in the log: " + server.output()[-300:]
        verify = VERIFY.get(case)
        if verify is not None:
            wrong = wrong or verify(root / ".groundwiki")
        if wrong:
            return Outcome(case, "failed", False, took, wrong)
        return Outcome(case, "recovered", True, took, _warnings(server.output()))
    finally:
        server.stop()


def _warnings(output: str) -> str:
    said = [line.split(": ", 1)[-1] for line in output.splitlines() if " WARNING " in line]
    return " | ".join(said)[:300]


def prepare(base: Path, pages: int) -> None:
    build_wiki(base, pages)
    server = Server(base)
    try:
        if not server.wait_ready(START_TIMEOUT_S):
            raise SystemExit(f"the pristine sidecar did not start:\n{server.output()}")
        deadline = time.monotonic() + SEMANTIC_TIMEOUT_S * 2
        while server.status()["lanes"]["semantic"]["state"] != "ok":
            if time.monotonic() > deadline:
                raise SystemExit("the pristine sidecar never finished embedding")
            time.sleep(0.5)
        wrong = check_answers(server, pages)
        if wrong:
            raise SystemExit(f"the pristine sidecar answers wrongly: {wrong}")
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=120)
    parser.add_argument("--only", help="run only the damage kinds containing this text")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="groundwiki-damage-"))
    outcomes: list[Outcome] = []
    try:
        base = work / "pristine"
        started = time.monotonic()
        prepare(base, args.pages)
        print(f"pristine index of {args.pages} pages built in {time.monotonic() - started:.0f} s")
        for case, damage in DAMAGE.items():
            if args.only and args.only not in case:
                continue
            root = work / case.replace(" ", "-").replace(".", "-")
            shutil.copytree(base, root, symlinks=True)
            damage(root / ".groundwiki")
            outcome = restart(case, root, args.pages)
            outcomes.append(outcome)
            print(f"  {case:<34} {outcome.result:<16} {outcome.detail[:100]}", flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    print()
    print(f"{'damage':<34} {'result':<16} {'search ok':<10} {'ready (s)':<10}")
    for o in outcomes:
        ok = "-" if o.search_correct is None else ("yes" if o.search_correct else "NO")
        ready = "-" if o.seconds_to_ready is None else f"{o.seconds_to_ready:.1f}"
        print(f"{o.damage:<34} {o.result:<16} {ok:<10} {ready:<10}")
    failed = sum(1 for o in outcomes if o.result == "failed")
    print(f"\n{len(outcomes)} kinds of damage: {failed} failed (target 0)")
    out = ROOT / "bench/results/damage.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "pages": args.pages,
                "failed": failed,
                "outcomes": [asdict(o) for o in outcomes],
            },
            indent=2,
        )
        + "\n"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
