"""Soak: a real sidecar under eight concurrent clients while an editor keeps changing the wiki.

Generates the seeded synthetic wiki of lint_scale.py (--pages, 300 by default: wikilinks, tags,
provenance citations into about 60 Markdown raw sources) plus a dozen .txt raw sources, gives
every page a unique marker word, and starts `groundwiki serve` on a free 127.0.0.1 port with the
default settings: embeddings on, so the semantic lane may be warming during the run, as a user's
would be. Then, for --seconds (300 by default):

  clients  8 processes looping over GET /search, GET /chunks/search, POST /pages (hydration,
           with and without bodies) and POST /verify; queries are the marker words, keys and
           chunk IDs come from the client's own earlier hits, as an agent's would. Processes,
           not threads: eight clients in one process would queue behind its GIL for JSON
           decoding and timing, and that queueing would pass for server latency;
  editor   every 0.3 s, in turn: edit a page (remove one unique word, add another), create a
           page, rename a page's file, delete a page, append a line with a unique word to a raw
           source; and once, at half time, swap the wiki folder (copy it, edit the copy,
           rm -rf the folder, move the copy in), as some editors and `git checkout` do.

The editor keeps the ground truth: which keys exist, which unique words are on which page since
when, which raw-source lines exist. Every answer is checked against it afterwards: an answer that
contradicts a truth older than the grace window (5 s) is stale, e.g. a removed word that still
finds its page, a deleted key still served, a page or an appended line not found.

After the last edit the clients keep going while the script polls every 0.25 s until every page
is found by each of its words (lexical lane), every removed word and every deleted key is gone,
every appended line is found by chunk search, hydration agrees, and /status counts equal what
compiling the final folder gives. Vectors are waited for separately (embedding takes longer on
two cores), and Chroma's collections are compared with the files once the sidecar has stopped.

Targets (exit code 0 when all hold, so the script can serve as a check): no answer with a 5xx
status, no stale answer sent after the edits stopped (plus the grace window), and the lexical
lanes, hydration and counts converged within 5 s of the last edit. Latencies are reported, not
asserted: the machine is shared.

    .venv/bin/python bench/soak.py [--seconds 300] [--pages 300] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import itertools
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import RESULTS, machine_facts, stop_sidecar, write_results

CLIENTS = 8
EDIT_EVERY_S = 0.3
GRACE_S = 5.0
CONVERGE_TARGET_S = 5.0
POLL_S = 0.25
TXT_SOURCES = 12
BATCH_WORDS = 80  # marker words per convergence query: 11 characters each, queries take 1,000
BATCH_IDS = 100  # the API's cap on IDs per request
OPS = ("search", "chunk_search", "pages", "verify")
ACTIONS = ("edit", "create", "rename", "delete", "append")
# Unique words: letters, six digits and a final x, so no stemmer changes them and no generated
# word (syllables only) can equal one.
PAGE_MARKER, EDIT_WORD, LINE_MARKER = "pgm", "edw", "rsm"
MARKER = re.compile(r"\b(?:pgm|edw|rsm)\d{6}x\b")
SOAK_LINE = re.compile(r"^Soak words: .*$", re.MULTILINE)
SYNC_LINE = re.compile(r"^(\S+ \S+) INFO groundwiki\.sidecar: generation \d+ .* in ([0-9.]+) s$")


def word(prefix: str, number: int) -> str:
    return f"{prefix}{number:06d}x"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


# --- Ground truth ---------------------------------------------------------------------------


class Timeline:
    """When each (thing, holder) pair held: a word on a page, a key existing (holder ""), a
    marker line in a raw source. Times are time.monotonic(), one clock for every process."""

    def __init__(self) -> None:
        self.spans: dict[tuple[str, str], list[list[float | None]]] = defaultdict(list)
        self.holders: dict[str, set[str]] = defaultdict(set)
        self.held: dict[str, set[str]] = defaultdict(set)  # holder -> things it ever held

    def begin(self, thing: str, holder: str, at: float) -> None:
        self.spans[(thing, holder)].append([at, None])
        self.holders[thing].add(holder)
        self.held[holder].add(thing)

    def end(self, thing: str, holder: str, at: float) -> None:
        spans = self.spans.get((thing, holder))
        if spans and spans[-1][1] is None:
            spans[-1][1] = at

    def must(self, thing: str, holder: str, sent: float, received: float) -> bool:
        """Held without a break from `sent - GRACE_S` until `received`: an answer must show it."""
        return any(
            start <= sent - GRACE_S and (end is None or end >= received)
            for start, end in self.spans.get((thing, holder), ())
            if start is not None
        )

    def may(self, thing: str, holder: str, sent: float, received: float) -> bool:
        """Held at some time from `sent - GRACE_S` to `received`: an answer may show it."""
        return any(
            start <= received and (end is None or end >= sent - GRACE_S)
            for start, end in self.spans.get((thing, holder), ())
            if start is not None
        )

    def now(self, thing: str, holder: str) -> bool:
        spans = self.spans.get((thing, holder))
        return bool(spans) and spans[-1][1] is None


@dataclass
class PageState:
    path: Path  # relative to the wiki folder
    marker: str
    words: list[str]

    @property
    def all_words(self) -> list[str]:
        return [self.marker, *self.words]


@dataclass
class Truth:
    pages: dict[str, PageState] = field(default_factory=dict)
    words: Timeline = field(default_factory=Timeline)  # (word, key)
    keys: Timeline = field(default_factory=Timeline)  # (key, "")
    lines: Timeline = field(default_factory=Timeline)  # (marker, raw-source path)
    raw_files: list[str] = field(default_factory=list)  # relative to the raw-sources folder
    actions: Counter[str] = field(default_factory=Counter)

    def add(self, key: str, state: PageState, at: float) -> None:
        self.pages[key] = state
        self.keys.begin(key, "", at)
        for item in state.all_words:
            self.words.begin(item, key, at)

    def drop(self, key: str, at: float) -> PageState:
        state = self.pages.pop(key)
        self.keys.end(key, "", at)
        for item in state.all_words:
            self.words.end(item, key, at)
        return state


# --- The wiki and the editor ----------------------------------------------------------------


def soak_line(state: PageState) -> str:
    return "Soak words: " + " ".join(state.all_words) + "."


@dataclass
class Counters:
    """How many of each unique word were handed out; shared with the clients, which draw their
    queries from them."""

    pages: Any
    edits: Any
    lines: Any

    def take(self, which: str) -> int:
        value = getattr(self, which)
        with value.get_lock():
            value.value += 1
            return value.value - 1


def prepare_wiki(root: Path, pages: int, seed: int, counters: Counters) -> Truth:
    from lint_scale import Words, generate_wiki, source_lines

    generate_wiki(root, pages, seed, 0.0)
    rng = random.Random(seed + 7)
    words = Words(rng)
    raw = root / "raw-sources"
    for number in range(TXT_SOURCES):
        path = raw / "notes" / f"note-{number:03d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(source_lines(words, rng, 1000 + number)), encoding="utf-8")
    truth = Truth()
    truth.raw_files = sorted(p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file())
    docs = root / "wiki"
    at = time.monotonic()
    for path in sorted(docs.rglob("*.md")):
        if path.name == "index.md":
            continue
        state = PageState(
            path.relative_to(docs),
            word(PAGE_MARKER, counters.take("pages")),
            [word(EDIT_WORD, counters.take("edits"))],
        )
        text = path.read_text(encoding="utf-8").rstrip("\n")
        path.write_text(f"{text}\n\n{soak_line(state)}\n", encoding="utf-8")
        truth.add(path.stem.lower(), state, at)
    return truth


class Editor:
    """Changes the wiki every EDIT_EVERY_S seconds and records each change in the truth the
    moment the write has returned."""

    def __init__(self, root: Path, truth: Truth, counters: Counters, seed: int) -> None:
        from lint_scale import Words

        self.root, self.docs, self.truth, self.counters = root, root / "wiki", truth, counters
        self.rng = random.Random(seed + 11)
        self.words = Words(self.rng)
        self.created = 0
        self.renamed = 0
        self.write_count = 0
        self.times: dict[str, list[float]] = defaultdict(list)
        self.swapped_at: float | None = None

    def act(self, action: str) -> None:
        started = time.perf_counter()
        getattr(self, action)()
        self.times[action].append(time.perf_counter() - started)
        self.truth.actions[action] += 1

    def _pick(self) -> str:
        return self.rng.choice(sorted(self.truth.pages))

    def _write(self, path: Path, text: str) -> None:
        # Half in place, half as editors that save through a temporary file and a rename.
        self.write_count += 1
        if self.write_count % 2:
            path.write_text(text, encoding="utf-8")
        else:
            temporary = path.with_name(f".{path.name}.soak-tmp")
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, path)

    def _change_words(self, docs: Path, key: str) -> tuple[str | None, str]:
        """Remove the page's oldest unique word and add a new one, in the copy under `docs`."""
        state = self.truth.pages[key]
        removed = state.words.pop(0) if state.words else None
        added = word(EDIT_WORD, self.counters.take("edits"))
        state.words.append(added)
        path = docs / state.path
        text = SOAK_LINE.sub(soak_line(state), path.read_text(encoding="utf-8"), count=1)
        self._write(path, text)
        return removed, added

    def edit(self) -> None:
        key = self._pick()
        removed, added = self._change_words(self.docs, key)
        at = time.monotonic()
        if removed:
            self.truth.words.end(removed, key, at)
        self.truth.words.begin(added, key, at)

    def create(self) -> None:
        number = self.created
        self.created += 1
        key = f"soak-new-{number}"
        folder = self.rng.choice(sorted({s.path.parent for s in self.truth.pages.values()}))
        state = PageState(
            folder / f"{key}.md",
            word(PAGE_MARKER, self.counters.take("pages")),
            [word(EDIT_WORD, self.counters.take("edits"))],
        )
        source = self.rng.choice([f for f in self.truth.raw_files if f.endswith(".md")])
        text = (
            f"---\ntitle: Soak new {number}\nsummary: {self.words.sentence(5, 10)}\n"
            f"tags: [soak, {self.words.word()}]\n---\n# Soak new {number}\n\n"
            f"{self.words.sentence()} See [[{self._pick()}]]. "
            f"<!-- from: raw-sources/{source}#L3-L4 -->\n\n{soak_line(state)}\n"
        )
        self._write(self.docs / state.path, text)
        self.truth.add(key, state, time.monotonic())

    def rename(self) -> None:
        key = self._pick()
        self.renamed += 1
        new_key = f"{re.sub(r'-r[0-9]+$', '', key)}-r{self.renamed}"
        state = self.truth.pages[key]
        new_path = state.path.with_name(f"{new_key}.md")
        os.rename(self.docs / state.path, self.docs / new_path)
        at = time.monotonic()
        self.truth.drop(key, at)
        self.truth.add(new_key, PageState(new_path, state.marker, state.words), at)

    def delete(self) -> None:
        key = self._pick()
        (self.docs / self.truth.pages[key].path).unlink()
        self.truth.drop(key, time.monotonic())

    def append(self) -> None:
        name = self.rng.choice(self.truth.raw_files)
        marker = word(LINE_MARKER, self.counters.take("lines"))
        with (self.root / "raw-sources" / name).open("a", encoding="utf-8") as handle:
            handle.write(f"\nSoak line {marker} {self.words.sentence(4, 8)}\n")
        self.truth.lines.begin(marker, name, time.monotonic())

    def swap(self) -> None:
        """cp -r wiki wiki.new; edit a page in wiki.new; rm -rf wiki; mv wiki.new wiki."""
        started = time.perf_counter()
        fresh = self.root / "wiki.new"
        shutil.copytree(self.docs, fresh)
        key = self._pick()
        removed, _ = self._change_words(fresh, key)
        shutil.rmtree(self.docs)
        gone_at = time.monotonic()
        states = dict(self.truth.pages)
        for each in states:
            self.truth.drop(each, gone_at)
        if removed:  # pages come back with the edit; the removed word does not
            self.truth.words.end(removed, key, gone_at)
        os.rename(fresh, self.docs)
        back_at = time.monotonic()
        for each, state in states.items():
            self.truth.add(each, state, back_at)
        self.swapped_at = back_at
        self.times["swap"].append(time.perf_counter() - started)
        self.truth.actions["swap"] += 1


# --- Clients --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientSpec:
    number: int
    port: int
    seed: int
    keys: tuple[str, ...]  # the keys at the start: some will be renamed or deleted
    out: str
    think_s: float


def _pick_word(rng: random.Random, prefix: str, count: int) -> str | None:
    if count <= 0:
        return None
    # Half from the last 30 handed out: the words whose truth changed most recently.
    low = max(0, count - 30) if rng.random() < 0.5 else 0
    return word(prefix, rng.randrange(low, count))


def _freshness(answer: Any) -> Any:
    """The `freshness` of an answer, if the sidecar gives one: its state, or the whole value."""
    if not isinstance(answer, dict) or "freshness" not in answer:
        return None
    value = answer["freshness"]
    if isinstance(value, dict):
        for name in ("state", "sync", "status"):
            if isinstance(value.get(name), str):
                return value[name]
    return value if isinstance(value, str | int | float | bool) else json.dumps(value)[:80]


class Client:
    def __init__(self, spec: ClientSpec, counters: Counters) -> None:
        self.spec, self.counters = spec, counters
        self.rng = random.Random(spec.seed * 100 + spec.number)
        self.connection: http.client.HTTPConnection | None = None
        self.recent_keys: list[str] = []
        self.recent_chunks: list[tuple[str, str]] = []

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any, str]:
        """(status, JSON answer or None, error text); status 0 when no answer came."""
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    "127.0.0.1", self.spec.port, timeout=30
                )
            try:
                self.connection.request(method, path, body=payload, headers=headers)
                response = self.connection.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException) as exc:
                self.connection.close()
                self.connection = None
                # A keep-alive connection the server closed between requests: retried once.
                if attempt == 1 and isinstance(exc, http.client.RemoteDisconnected):
                    continue
                return 0, None, f"{type(exc).__name__}: {exc}"[:300]
            try:
                return response.status, json.loads(raw), ""
            except ValueError:
                return response.status, None, raw.decode(errors="replace")[:300]
        return 0, None, "unreachable"

    def one(self) -> dict[str, Any]:
        op = self.rng.choice(OPS)
        if op == "verify" and not self.recent_chunks:
            op = "chunk_search"
        if op == "pages" and not self.recent_keys:
            op = "search"
        record: dict[str, Any] = {"op": op}
        lanes = self.rng.choice(("lexical", None))
        if op == "search":
            prefix, count = (
                (PAGE_MARKER, self.counters.pages.value)
                if self.rng.random() < 0.4
                else (EDIT_WORD, self.counters.edits.value)
            )
            query = _pick_word(self.rng, prefix, count) or "soak"
            params = {"q": query, "limit": 10} | ({"lanes": lanes} if lanes else {})
            record |= {"q": query, "lanes": lanes or "all"}
            record["t0"] = time.monotonic()
            status, answer, error = self.request("GET", "/search?" + urllib.parse.urlencode(params))
            if status == 200:
                record["hits"] = [[h["key"], h["lanes"]] for h in answer["hits"]]
                self.recent_keys = ([h["key"] for h in answer["hits"][:3]] + self.recent_keys)[:20]
        elif op == "chunk_search":
            query = _pick_word(self.rng, LINE_MARKER, self.counters.lines.value) or "soak"
            params = {"q": query, "limit": 10} | ({"lanes": lanes} if lanes else {})
            record |= {"q": query, "lanes": lanes or "all"}
            record["t0"] = time.monotonic()
            status, answer, error = self.request(
                "GET", "/chunks/search?" + urllib.parse.urlencode(params)
            )
            if status == 200:
                record["hits"] = [
                    [h["source"], sorted(set(MARKER.findall(h["text"])))] for h in answer["hits"]
                ]
                fresh = [(h["id"], h["text"]) for h in answer["hits"][:2]]
                self.recent_chunks = (fresh + self.recent_chunks)[:20]
        elif op == "pages":
            ids = self.rng.sample(self.recent_keys, min(3, len(self.recent_keys)))
            ids.append(self.rng.choice(self.spec.keys))
            ids = list(dict.fromkeys(ids))
            body = self.rng.random() < 0.5
            record |= {"ids": ids, "body": body}
            record["t0"] = time.monotonic()
            status, answer, error = self.request(
                "POST", "/pages", {"ids": ids, "include_body": body}
            )
            if status in (200, 404) and answer is not None:
                record["found"] = [
                    [p["requested"], p["key"], p["via"], MARKER.findall(p.get("body", ""))]
                    for p in answer.get("pages", [])
                ]
                record["missing"] = [m["id"] for m in answer.get("missing", [])]
        else:
            chunk_id, text = self.rng.choice(self.recent_chunks)
            keys = self.rng.sample(self.recent_keys, min(2, len(self.recent_keys)))
            answer_text = "As the sources say: " + " ".join(text.split()[:14])
            record |= {"chunk": chunk_id, "ids": keys}
            record["t0"] = time.monotonic()
            status, answer, error = self.request(
                "POST", "/verify", {"answer": answer_text, "chunks": [chunk_id], "pages": keys}
            )
            if status == 200:
                record["missing"] = [m["id"] for m in answer.get("missing", [])]
        record["t1"] = time.monotonic()
        record["status"] = status
        if error or status >= 400:
            record["error"] = error or json.dumps(answer)[:300]
        if isinstance(answer, dict):
            if isinstance(answer.get("lanes"), list):
                record["lane_states"] = {
                    lane.get("name"): lane.get("state") for lane in answer["lanes"]
                }
                broken = {
                    lane.get("name"): lane.get("reason", "")[:200]
                    for lane in answer["lanes"]
                    if lane.get("state") in ("failed", "timeout")
                }
                if broken:
                    record["lane_failures"] = broken
            fresh_state = _freshness(answer)
            if fresh_state is not None:
                record["freshness"] = fresh_state
        return record


def client_main(spec: ClientSpec, counters: Counters, stop: Any) -> None:
    client = Client(spec, counters)
    with open(spec.out, "w", encoding="utf-8") as out:
        while not stop.is_set():
            out.write(json.dumps(client.one()) + "\n")
            if spec.think_s:
                time.sleep(spec.think_s)


# --- Judging answers against the truth ------------------------------------------------------


@dataclass
class Verdicts:
    """Stale answers by kind, split at the moment the edits stopped (plus the grace window)."""

    cutoff: float
    during: Counter[str] = field(default_factory=Counter)
    after: Counter[str] = field(default_factory=Counter)
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    # Not staleness: a hybrid answer's top ten without the one page whose words the query
    # is, because ten semantic neighbours outrank a lexical-only first place after fusion.
    hybrid_misses: Counter[str] = field(default_factory=Counter)
    judged: int = 0

    def stale(self, kind: str, record: dict[str, Any], **detail: Any) -> None:
        bucket = self.after if record["t0"] >= self.cutoff else self.during
        bucket[kind] += 1
        if len(self.samples[kind]) < 5:
            self.samples[kind].append(
                {"op": record["op"], "sent_s": round(record["t0"] - self.cutoff, 2), **detail}
            )


def _lexical_ok(record: dict[str, Any]) -> bool:
    return record.get("lane_states", {}).get("lexical") == "ok"


def _missed(verdicts: Verdicts, kind: str, record: dict[str, Any], **detail: Any) -> None:
    """A lexical-only answer must hold what the truth holds; a hybrid one may rank it out."""
    if record["lanes"] == "lexical":
        verdicts.stale(kind, record, **detail)
    else:
        verdicts.hybrid_misses[record["op"]] += 1


def judge(record: dict[str, Any], truth: Truth, verdicts: Verdicts) -> None:
    if record["status"] not in (200, 404) or "t0" not in record:
        return
    sent, received, op = record["t0"], record["t1"], record["op"]
    verdicts.judged += 1
    if op == "search" and "hits" in record:
        query = record["q"]
        found = set()
        for key, lanes in record["hits"]:
            # A semantic neighbour is no claim that the page holds the word.
            if {"lexical", "token"} & set(lanes):
                found.add(key)
                if not truth.words.may(query, key, sent, received):
                    verdicts.stale(
                        "search found a removed word or a gone page", record, q=query, key=key
                    )
        if _lexical_ok(record):
            for key in truth.words.holders.get(query, ()):
                if truth.words.must(query, key, sent, received) and key not in found:
                    _missed(verdicts, "search missed a word on its page", record, q=query, key=key)
    elif op == "chunk_search" and "hits" in record:
        query = record["q"]
        sources = {source for source, markers in record["hits"] if query in markers}
        for name in truth.lines.holders.get(query, ()):
            if (
                truth.lines.must(query, name, sent, received)
                and _lexical_ok(record)
                and not any(s.endswith(name) for s in sources)
            ):
                _missed(
                    verdicts, "chunk search missed an appended line", record, q=query, source=name
                )
    elif op == "pages" and "found" in record:
        for _requested, key, via, markers in record["found"]:
            if not truth.keys.may(key, "", sent, received):
                verdicts.stale("hydration served a gone page", record, key=key, via=via)
                continue
            if record["body"]:
                for item in markers:
                    if not truth.words.may(item, key, sent, received):
                        verdicts.stale(
                            "hydrated body holds a removed word", record, key=key, word=item
                        )
                for item in truth.words.held.get(key, ()):
                    if truth.words.must(item, key, sent, received) and item not in markers:
                        verdicts.stale(
                            "hydrated body lacks a current word", record, key=key, word=item
                        )
        for requested in record["missing"]:
            if truth.keys.must(requested, "", sent, received):
                verdicts.stale("hydration called an existing page missing", record, key=requested)
    elif op == "verify" and "missing" in record:
        for requested in record["ids"]:
            if requested in record["missing"] and truth.keys.must(requested, "", sent, received):
                verdicts.stale("verify called an existing page missing", record, key=requested)


def summarise_requests(records: list[dict[str, Any]]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for op in (*OPS, "overall"):
        mine = [r for r in records if op == "overall" or r["op"] == op]
        latencies = [1000 * (r["t1"] - r["t0"]) for r in mine if r["status"]]
        server_errors = [r for r in mine if r["status"] >= 500]
        # 404 is /pages' answer when every requested key is missing: an answer, not a failure.
        other = [
            r
            for r in mine
            if r["status"] == 0
            or (400 <= r["status"] < 500 and not (r["op"] == "pages" and r["status"] == 404))
        ]
        rows[op] = {
            "requests": len(mine),
            "errors_5xx": len(server_errors),
            "other_failures": len(other),
            "p50_ms": percentile(latencies, 0.50),
            "p99_ms": percentile(latencies, 0.99),
            "max_ms": max(latencies, default=None),
        }
        messages = Counter(_error_line(r) for r in server_errors + other)
        rows[op]["error_messages"] = dict(messages.most_common(5))
    return rows


def _error_line(record: dict[str, Any]) -> str:
    return f"{record['status']} {record.get('error', '')}"[:160]


# --- Convergence ----------------------------------------------------------------------------


class Api:
    """The convergence checker's own connection to the sidecar."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        payload = json.dumps(body).encode() if body is not None else None
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.connection.request(
                    method, path, body=payload, headers={"Content-Type": "application/json"}
                )
                response = self.connection.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = None
                if attempt == 2:
                    return 0, None
                continue
            try:
                return response.status, json.loads(raw)
            except ValueError:
                return response.status, None
        return 0, None

    def get(self, path: str, **params: Any) -> tuple[int, Any]:
        return self.call("GET", f"{path}?{urllib.parse.urlencode(params)}" if params else path)


def _batches(items: list[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _spread(words: dict[str, str]) -> list[list[str]]:
    """Batches of present words with at most one word per page each, so a page found by one
    word cannot hide another word of it that is missing."""
    by_key: dict[str, list[str]] = defaultdict(list)
    for item, key in sorted(words.items()):
        by_key[key].append(item)
    rounds: list[list[str]] = []
    depth = 0
    while True:
        layer = [items[depth] for items in by_key.values() if len(items) > depth]
        if not layer:
            return rounds
        rounds += list(_batches(layer, BATCH_WORDS))
        depth += 1


@dataclass
class Expected:
    """What the sidecar must answer once it has caught up, from the editor's truth."""

    present: dict[str, str]  # word -> the page it is on
    absent: list[str]  # removed words and markers of gone pages
    lines: dict[str, str]  # marker -> raw source
    keys: list[str]
    gone: list[str]


def expected_from(truth: Truth) -> Expected:
    present = {item: key for key, state in truth.pages.items() for item in state.all_words}
    return Expected(
        present,
        sorted(set(truth.words.holders) - set(present)),
        {marker: source for (marker, source) in truth.lines.spans},
        sorted(truth.pages),
        sorted({key for key, _ in truth.keys.spans} - set(truth.pages)),
    )


def compiled(config_file: str) -> tuple[dict[str, int], list[str]]:
    """What compiling the final folder gives: page and chunk counts, and the page keys. Run in
    a process of its own, so the seconds it takes do not delay the polling."""
    from groundwiki.core import compile_wiki
    from groundwiki_sidecar.base.settings import load_sidecar
    from groundwiki_sidecar.index.documents import records

    pages, chunks = records(compile_wiki(load_sidecar(Path(config_file)).config))
    return {"pages": len(pages), "chunks": len(chunks)}, sorted(pages)


Problems = dict[str, str]  # the item a check found wrong (a word, a key) -> what was wrong
Call = tuple[str, str, Any]  # method, path, JSON body


class Fanout:
    """The queries of one check run at once, each thread on its own connection: a check's
    full run then takes about its slowest query, not their sum (the server is shared with
    eight busy clients, so a sequential run took seconds)."""

    def __init__(self, port: int, workers: int = 4) -> None:
        self.port = port
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.local = threading.local()

    def _one(self, call: Call) -> tuple[int, Any, float]:
        if not hasattr(self.local, "api"):
            self.local.api = Api(self.port)
        status, answer = self.local.api.call(*call)
        return status, answer, time.monotonic()

    def run(self, calls: list[Call]) -> list[tuple[int, Any, float]]:
        return list(self.pool.map(self._one, calls))


def _search(path: str, batch: list[str]) -> Call:
    query = urllib.parse.urlencode({"q": " ".join(batch), "lanes": "lexical", "limit": 100})
    return ("GET", f"{path}?{query}", None)


def check_present(
    api: Fanout, expected: Expected, only: set[str] | None, seen: dict[str, float]
) -> Problems:
    wanted = {w: k for w, k in expected.present.items() if only is None or w in only}
    problems: Problems = {}
    batches = _spread(wanted)
    answers = api.run([_search("/search", batch) for batch in batches])
    for batch, (status, answer, at) in zip(batches, answers, strict=True):
        seen |= dict.fromkeys(batch, at)
        if status != 200:
            problems |= {item: f"/search answered {status}" for item in batch}
            continue
        found = {hit["key"] for hit in answer["hits"]}
        for item in batch:
            if wanted[item] not in found:
                problems[item] = f"'{item}' does not find {wanted[item]}"
        extra = found - {wanted[i] for i in batch}
        if extra:  # one of the batch's words still finds a page it left: ask them all again
            for item in batch:
                problems.setdefault(item, f"a batch of current words finds {sorted(extra)[:3]}")
    return problems


def check_absent(
    api: Fanout, expected: Expected, only: set[str] | None, seen: dict[str, float]
) -> Problems:
    problems: Problems = {}
    batches = list(_batches([w for w in expected.absent if only is None or w in only], BATCH_WORDS))
    answers = api.run([_search("/search", batch) for batch in batches])
    for batch, (status, answer, at) in zip(batches, answers, strict=True):
        seen |= dict.fromkeys(batch, at)
        if status != 200:
            problems |= {item: f"/search answered {status}" for item in batch}
        elif answer["hits"]:
            keys = sorted(hit["key"] for hit in answer["hits"])[:3]
            problems |= {item: f"a removed word still finds {keys}" for item in batch}
    return problems


def check_chunks(
    api: Fanout, expected: Expected, only: set[str] | None, seen: dict[str, float]
) -> Problems:
    problems: Problems = {}
    wanted = sorted(w for w in expected.lines if only is None or w in only)
    batches = list(_batches(wanted, BATCH_WORDS))
    answers = api.run([_search("/chunks/search", batch) for batch in batches])
    for batch, (status, answer, at) in zip(batches, answers, strict=True):
        seen |= dict.fromkeys(batch, at)
        if status != 200:
            problems |= {item: f"/chunks/search answered {status}" for item in batch}
            continue
        found: dict[str, set[str]] = defaultdict(set)
        for hit in answer["hits"]:
            for item in MARKER.findall(hit["text"]):
                found[item].add(hit["source"])
        for item in batch:
            if not any(s.endswith(expected.lines[item]) for s in found.get(item, ())):
                problems[item] = f"appended line '{item}' of {expected.lines[item]} not found"
    return problems


def check_pages(
    api: Fanout, expected: Expected, only: set[str] | None, seen: dict[str, float]
) -> Problems:
    problems: Problems = {}
    existing = list(_batches([k for k in expected.keys if only is None or k in only], BATCH_IDS))
    gone = list(_batches([k for k in expected.gone if only is None or k in only], BATCH_IDS))
    answers = api.run([("POST", "/pages", {"ids": batch}) for batch in existing + gone])
    for number, (batch, (status, answer, at)) in enumerate(
        zip(existing + gone, answers, strict=True)
    ):
        seen |= dict.fromkeys(batch, at)
        if number < len(existing):
            if status == 404:  # every key of the batch missing
                problems |= {key: f"existing page {key} is missing" for key in batch}
            elif status != 200:
                problems |= {key: f"/pages answered {status} for existing keys" for key in batch}
            else:
                problems |= {
                    m["id"]: f"existing page {m['id']} is missing" for m in answer["missing"]
                }
        elif status not in (200, 404):
            problems |= {key: f"/pages answered {status} for gone keys" for key in batch}
        elif status == 200:
            problems |= {
                p[
                    "requested"
                ]: f"gone page {p['requested']} is served (as {p['key']} via {p['via']})"
                for p in answer["pages"]
                if p["via"] == "key" or p["key"] not in expected.keys
            }
    return problems


def check_status(
    api: Fanout, expected: Expected, only: set[str] | None, seen: dict[str, float]
) -> Any:
    ((status, answer, _),) = api.run([("GET", "/status", None)])
    return answer if status == 200 else None


def count_problems(answer: Any, counts: dict[str, int]) -> list[str]:
    if not isinstance(answer, dict):
        return ["/status did not answer"]
    lexical = answer.get("lexical_docs") or {}
    problems = []
    for name, got in (
        ("pages", answer.get("pages")),
        ("chunks", answer.get("chunks")),
        ("lexical pages", lexical.get("pages")),
        ("lexical chunks", lexical.get("chunks")),
    ):
        target = counts["chunks" if "chunks" in name else "pages"]
        if got != target:
            problems.append(f"/status {name} {got}, the files give {target}")
    return problems


def vector_problems(answer: dict[str, Any], counts: dict[str, int]) -> list[str]:
    problems = []
    if answer.get("page_vectors") != counts["pages"]:
        problems.append(f"page vectors {answer.get('page_vectors')} of {counts['pages']}")
    if answer.get("chunk_vectors") != counts["chunks"]:
        problems.append(f"chunk vectors {answer.get('chunk_vectors')} of {counts['chunks']}")
    if answer.get("embedding_pending"):
        problems.append(f"{answer['embedding_pending']} texts still to embed")
    return problems


Check = Callable[[Fanout, Expected, set[str] | None, dict[str, float]], Any]
CHECKS: dict[str, Check] = {
    "lexical: every word finds its page": check_present,
    "lexical: removed words find nothing": check_absent,
    "chunks: every appended line found": check_chunks,
    "pages: existing served, gone missing": check_pages,
    "counts": check_status,
}


@dataclass(frozen=True)
class Run:
    started: float
    ended: float
    outcome: Any  # the problems found, or the /status answer for "counts"
    full: bool  # every item checked, not only the ones that failed the run before


class Poller(threading.Thread):
    """Runs one check again and again on its own connection, every POLL_S seconds. After a
    failing run only the items that failed are asked again, so a run takes one query and the
    moment they pass is seen within a fraction of a second; once none fail, a full run
    confirms. The checks run side by side, so a slow one does not delay the others."""

    def __init__(self, check: Check, port: int, expected: Expected):
        super().__init__(daemon=True)
        self.check, self.api, self.expected = check, Fanout(port), expected
        self.runs: list[Run] = []
        # Per item: (when its query answered, whether it was right), in order.
        self.seen: dict[str, list[tuple[float, bool]]] = defaultdict(list)
        self.stopped = threading.Event()

    def run(self) -> None:
        only: set[str] | None = None
        while not self.stopped.is_set():
            started = time.monotonic()
            seen: dict[str, float] = {}
            outcome = self.check(self.api, self.expected, only, seen)
            self.runs.append(Run(started, time.monotonic(), outcome, only is None))
            for item, at in seen.items():
                self.seen[item].append((at, item not in outcome))
            if self.check is not check_status:
                only = set(outcome) or None
            self.stopped.wait(POLL_S)

    def settled(self) -> float | None:
        """When the last item became right for good: each item counts from the answer that
        first showed it right after its last wrong one (one query's time, not a whole run's)."""
        latest = 0.0
        for history in list(self.seen.values()):
            at = None
            for when, right in history:
                at = (at or when) if right else None
            if at is None:
                return None
            latest = max(latest, at)
        return latest if self.seen else None


def settled(runs: list[Run], problems: Callable[[Run], Any]) -> float | None:
    """The end of the first passing run after which every run passed; None while failing."""
    at = None
    for run in runs:
        if problems(run):
            at = None
        elif at is None:
            at = run.ended
    return at


def converge(
    port: int,
    expected: Expected,
    start_counting: Callable[[], Future[Any]],
    last_edit: float,
    timeout: float,
) -> tuple[dict[str, Any], Future[Any]]:
    """Poll every check until each passes and keeps passing, confirmed by a passing full run
    of each that started after the last of them settled. A check settles when the answer that
    showed its last wrong item right came back: an upper bound, by at most one query.

    /status is polled from the start, but the counts it must equal are compiled only once the
    query checks have settled (compiling takes a core for seconds, which the sidecar's own
    sync would otherwise share); its history is judged afterwards."""
    pollers = {name: Poller(check, port, expected) for name, check in CHECKS.items()}
    for poller in pollers.values():
        poller.start()
    counts: Future[Any] | None = None

    def problems_of(name: str) -> Callable[[Run], Any]:
        if name != "counts":
            return lambda run: run.outcome
        want = counts.result()[0] if counts is not None and counts.done() else None
        return lambda run: count_problems(run.outcome, want) if want else ["still compiling"]

    runs: dict[str, list[Run]] = {}
    times: dict[str, float | None] = {}
    while True:
        time.sleep(POLL_S)
        runs = {name: list(poller.runs) for name, poller in pollers.items()}
        times = {
            name: settled(runs[name], problems_of(name))
            if name == "counts"
            else poller.settled()
            if runs[name] and not runs[name][-1].outcome
            else None
            for name, poller in pollers.items()
        }
        if counts is None and all(t is not None for n, t in times.items() if n != "counts"):
            counts = start_counting()
        if all(t is not None for t in times.values()):
            last = max(t for t in times.values() if t is not None)
            if all(
                any(r.full and r.started > last and not problems_of(name)(r) for r in runs[name])
                for name in pollers
            ):
                break
        if time.monotonic() - last_edit > timeout:
            break
    for poller in pollers.values():
        poller.stopped.set()
    if counts is None:
        counts = start_counting()
    converged = all(t is not None for t in times.values())
    found: dict[str, Any] = {
        name: problems_of(name)(rs[-1]) if rs else ["no run"] for name, rs in runs.items()
    }
    last_failure = {}
    for name, rs in runs.items():
        failed = [r for r in rs if problems_of(name)(r)]
        if failed:
            seen = problems_of(name)(failed[-1])
            last_failure[name] = {
                "ended_s": round(failed[-1].ended - last_edit, 2),
                "problems": len(seen),
                "examples": list(seen.values() if isinstance(seen, dict) else seen)[:3],
            }
    end = max((t for t in times.values() if t is not None), default=time.monotonic())
    # When the sidecar's syncs finished (wall clock), as /status said until convergence.
    last_syncs = [
        r.outcome["last_sync"]
        for r in runs.get("counts", [])
        if r.ended <= end and isinstance(r.outcome, dict) and r.outcome.get("last_sync")
    ]
    result = {
        "last_syncs": last_syncs,
        "converged": converged,
        "seconds": end - last_edit if converged else None,
        "settled_s": {n: (t - last_edit if t is not None else None) for n, t in times.items()},
        "run_s_median": {
            name: percentile([r.ended - r.started for r in rs], 0.5) for name, rs in runs.items()
        },
        "full_run_s_median": {
            name: percentile([r.ended - r.started for r in rs if r.full], 0.5)
            for name, rs in runs.items()
        },
        "runs": {name: len(rs) for name, rs in runs.items()},
        "last_failure": last_failure,
        "remaining": {
            name: list(v.values() if isinstance(v, dict) else v)[:10]
            for name, v in found.items()
            if v
        },
        "remaining_counts": {name: len(v) for name, v in found.items() if v},
    }
    return result, counts


def wait_vectors(
    api: Api, counts: dict[str, int], last_edit: float, timeout: float
) -> dict[str, Any]:
    problems: list[str] = ["no answer"]
    answer: dict[str, Any] = {}
    while True:  # at least one look, even when the convergence wait used up the time
        status, got = api.get("/status")
        if status == 200:
            answer = got
            problems = vector_problems(answer, counts)
            if not problems:
                return {"converged": True, "seconds": time.monotonic() - last_edit}
        if time.monotonic() - last_edit >= timeout:
            break
        time.sleep(1.0)
    return {
        "converged": False,
        "seconds": None,
        "remaining": problems,
        "lanes": answer.get("lanes"),
    }


def chroma_check(index_dir: Path, root: Path) -> dict[str, Any]:
    """After the sidecar stopped: Chroma's items against the files (orphans, missing, copies)."""
    try:
        import chromadb
        from chromadb.config import Settings
        from groundwiki.core import compile_wiki
        from groundwiki_sidecar.base.settings import load_sidecar
        from groundwiki_sidecar.index.documents import records

        pages, chunks = records(compile_wiki(load_sidecar(root / "mkdocs.yml").config))
        client = chromadb.PersistentClient(
            path=str(index_dir / "chroma"), settings=Settings(anonymized_telemetry=False)
        )
        result: dict[str, Any] = {}
        for collection in client.list_collections():
            name = collection if isinstance(collection, str) else collection.name
            ids = client.get_collection(name).get(include=[])["ids"]
            # IDs are "<item>#<embed hash>" (or the bare item in older layouts).
            items = Counter(i.rpartition("#")[0] or i for i in ids)
            want = set(pages) if "page" in name else set(chunks)
            result[name] = {
                "vectors": len(ids),
                "items": len(items),
                "expected": len(want),
                "orphans": len(set(items) - want),
                "missing": len(want - set(items)),
                "duplicates": sum(1 for n in items.values() if n > 1),
            }
        return result
    except Exception as exc:  # best effort: the store's layout may change under other work
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


# --- The sidecar process --------------------------------------------------------------------


class StatusWatch(threading.Thread):
    """Polls /status once a second during the run: watcher, sync and lane states seen."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.api = Api(port)
        self.stopped = threading.Event()
        self.seen: dict[str, Counter[str]] = defaultdict(Counter)
        self.sync_samples: list[Any] = []
        self.max_pending_events = 0
        self.samples = 0
        self.failures = 0

    def run(self) -> None:
        while not self.stopped.wait(1.0):
            status, answer = self.api.get("/status")
            if status != 200 or not isinstance(answer, dict):
                self.failures += 1
                continue
            self.samples += 1
            self.seen["watcher"][str(answer.get("watcher"))] += 1
            for name, lane in (answer.get("lanes") or {}).items():
                self.seen[f"lane {name}"][str(lane.get("state"))] += 1
            self.max_pending_events = max(
                self.max_pending_events, answer.get("pending_events") or 0
            )
            # `sync` and `embedding`: {state: ok|failing, error, since} where the sidecar has them.
            for name in ("sync", "embedding"):
                if name not in answer:
                    continue
                value = answer[name]
                state = value.get("state") if isinstance(value, dict) else value
                self.seen[name][str(state)] += 1
                if state != "ok" and len(self.sync_samples) < 5:
                    self.sync_samples.append({name: value})

    def report(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "failed_polls": self.failures,
            "states_seen": {name: dict(counts) for name, counts in self.seen.items()},
            "sync_field_present": "sync" in self.seen,
            "sync_not_ok_samples": self.sync_samples,
            "max_pending_events": self.max_pending_events,
        }


def start_sidecar(root: Path, port: int, log_path: Path) -> subprocess.Popen[bytes]:
    groundwiki = Path(sys.executable).with_name("groundwiki")
    # The log goes to a file: a pipe nobody reads would block the sidecar once it filled.
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [str(groundwiki), "-q", "-f", str(root / "mkdocs.yml"), "serve", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def wait_ready(server: subprocess.Popen[bytes], api: Api, pages: int, log: Path) -> float:
    started = time.monotonic()
    while time.monotonic() - started < 600:
        if server.poll() is not None:
            raise RuntimeError(
                f"the sidecar exited ({server.returncode}):\n{log.read_text()[-3000:]}"
            )
        status, answer = api.get("/status")
        if status == 200 and answer.get("pages") == pages:
            return time.monotonic() - started
        time.sleep(0.5)
    raise TimeoutError("the sidecar was not ready within 600 s")


def log_findings(log: Path) -> dict[str, Any]:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    lines = text.splitlines()
    exceptions: Counter[str] = Counter()
    for at, line in enumerate(lines):
        if line.startswith("Traceback"):
            # The first unindented line after a traceback names the exception.
            name = next((x for x in lines[at + 1 :] if x and not x.startswith(" ")), "")
            exceptions[name.strip()[:160]] += 1
    # "generation 12 (7 file events): 1 added, 0 updated, 0 deleted in 0.07 s": how long each
    # sync took and the longest quiet spell between two, which explain stale answers in a run.
    syncs = [
        (dt.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").timestamp(), float(m[2]))
        for m in (SYNC_LINE.match(line) for line in lines)
        if m
    ]
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(syncs[1:])]
    return {
        "syncs": len(syncs),
        "sync_s_max": max((d for _, d in syncs[1:]), default=None),
        "sync_s_p50": percentile([d for _, d in syncs[1:]], 0.5),
        "longest_gap_between_syncs_s": max(gaps, default=None),
        "tracebacks": sum(1 for line in lines if line.startswith("Traceback")),
        "error_lines": sum(1 for line in lines if " ERROR " in line),
        "warning_lines": sum(1 for line in lines if " WARNING " in line),
        "exceptions": dict(exceptions.most_common(8)),
    }


# --- The run --------------------------------------------------------------------------------


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    root = workdir / "wiki-soak"
    ctx = mp.get_context("spawn")
    counters = Counters(ctx.Value("i", 0), ctx.Value("i", 0), ctx.Value("i", 0))
    truth = prepare_wiki(root, args.pages, args.seed, counters)
    port = free_port()
    log = workdir / "sidecar.log"
    api = Api(port)
    started = time.monotonic()
    server = start_sidecar(root, port, log)
    result: dict[str, Any] = {
        "wiki": {"pages": len(truth.pages) + 1, "raw_sources": len(truth.raw_files)}
    }
    stop = ctx.Event()
    clients: list[Any] = []
    try:
        ready_s = wait_ready(server, api, len(truth.pages) + 1, log)
        result["ready_s"] = ready_s
        print(
            f"sidecar on 127.0.0.1:{port}: {len(truth.pages) + 1} pages, "
            f"{len(truth.raw_files)} raw sources, lexical lane ready in {ready_s:.0f} s"
        )
        watch = StatusWatch(port)
        watch.start()
        for number in range(CLIENTS):
            spec = ClientSpec(
                number,
                port,
                args.seed,
                tuple(sorted(truth.pages)),
                str(workdir / f"client-{number}.jsonl"),
                args.think,
            )
            process = ctx.Process(target=client_main, args=(spec, counters, stop), daemon=True)
            process.start()
            clients.append(process)
        editor = Editor(root, truth, counters, args.seed)
        print(f"{CLIENTS} clients and the editor running for {args.seconds:.0f} s ...")
        run_started = time.monotonic()
        swap_tick = int(args.seconds / EDIT_EVERY_S) // 2
        tick = 0
        action = 0
        last_edit, last_edit_wall = run_started, time.time()
        while time.monotonic() - run_started < args.seconds:
            due = run_started + tick * EDIT_EVERY_S
            time.sleep(max(0.0, due - time.monotonic()))
            if tick == swap_tick:
                editor.swap()
            else:
                editor.act(ACTIONS[action % len(ACTIONS)])
                action += 1
            last_edit, last_edit_wall = time.monotonic(), time.time()
            tick += 1
            if server.poll() is not None:
                raise RuntimeError(f"the sidecar exited during the run ({server.returncode})")
        print(f"edits stopped after {tick} actions; checking convergence ...")
        expected = expected_from(truth)
        with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
            convergence, counting = converge(
                port,
                expected,
                lambda: pool.submit(compiled, str(root / "mkdocs.yml")),
                last_edit,
                args.converge_timeout,
            )
            counts, compiled_keys = counting.result()
        # The truth and the compiler must agree on the pages, or the script has a bug.
        convergence["truth_vs_compiled_keys"] = sorted(
            set(expected.keys) ^ (set(compiled_keys) - {"index"})
        )[:10]
        convergence["last_sync_after_last_edit_s"] = (
            max(convergence.pop("last_syncs"), default=last_edit_wall) - last_edit_wall
        )
        # Clients keep asking for a while after the edits stop: those answers must all be fresh.
        time.sleep(max(0.0, last_edit + GRACE_S + args.after - time.monotonic()))
        stop.set()
        for process in clients:
            process.join(timeout=30)
        watch.stopped.set()
        vectors = wait_vectors(api, counts, last_edit, args.vector_timeout)
        records = []
        for number in range(CLIENTS):
            path = workdir / f"client-{number}.jsonl"
            if path.exists():
                for line in path.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        # A line cut short when a client was stopped is skipped.
                        with contextlib.suppress(ValueError):
                            records.append(json.loads(line))
        verdicts = Verdicts(cutoff=last_edit + GRACE_S)
        for record in records:
            judge(record, truth, verdicts)
        lane_states: dict[str, Counter[str]] = defaultdict(Counter)
        lane_failures: Counter[str] = Counter()
        freshness: Counter[str] = Counter()
        for record in records:
            for lane, state in record.get("lane_states", {}).items():
                lane_states[f"{record['op']} {lane}"][str(state)] += 1
            for lane, reason in record.get("lane_failures", {}).items():
                lane_failures[f"{record['op']} {lane}: {reason}"] += 1
            if "freshness" in record:
                freshness[str(record["freshness"])] += 1
        result |= {
            "run_s": last_edit - run_started,
            "editor": {
                "actions": dict(truth.actions),
                "action_ms_p50": {
                    name: 1000 * (percentile(times, 0.5) or 0)
                    for name, times in editor.times.items()
                },
                "final_pages": len(truth.pages) + 1,
                "appended_lines": len(truth.lines.spans),
            },
            "requests": summarise_requests(records),
            "answers_after_stop": sum(1 for r in records if r.get("t0", 0) >= verdicts.cutoff),
            "stale": {
                "judged_answers": verdicts.judged,
                "during_run": dict(verdicts.during),
                "after_stop": dict(verdicts.after),
                "samples": dict(verdicts.samples),
                "hybrid_top10_misses_not_stale": dict(verdicts.hybrid_misses),
            },
            "lane_states_in_answers": {k: dict(v) for k, v in sorted(lane_states.items())},
            "lane_failures_in_answers": dict(lane_failures.most_common(10)),
            "freshness_in_answers": dict(freshness) or None,
            "status_during_run": watch.report(),
            "expected_counts": counts,
            "convergence": convergence,
            "vectors": vectors,
        }
        status, final = api.get("/status")
        result["final_status"] = final if status == 200 else None
    finally:
        stop.set()
        for process in clients:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
        result["sidecar_exit"] = stop_sidecar(server)
        result["total_s"] = time.monotonic() - started
    if "convergence" in result:
        result["chroma"] = chroma_check(root / ".groundwiki", root)
    result["sidecar_log"] = log_findings(log)
    return result


def targets(result: dict[str, Any]) -> dict[str, bool]:
    convergence = result.get("convergence", {})
    return {
        "no_5xx": result.get("requests", {}).get("overall", {}).get("errors_5xx", 1) == 0,
        "no_stale_after_stop": not result.get("stale", {}).get("after_stop", {"missing": 1}),
        "converged_within_5s": bool(convergence.get("converged"))
        and convergence["seconds"] <= CONVERGE_TARGET_S,
    }


def _ms(value: float | None) -> str:
    return f"{value:8.1f}" if value is not None else "       -"


def print_report(result: dict[str, Any], passed: dict[str, bool]) -> None:
    print(f"\n{'operation':14} {'requests':>8} {'5xx':>6} {'other':>6} {'p50 ms':>8} {'p99 ms':>8}")
    for op, row in result["requests"].items():
        print(
            f"{op:14} {row['requests']:8} {row['errors_5xx']:6} {row['other_failures']:6} "
            f"{_ms(row['p50_ms'])} {_ms(row['p99_ms'])}"
        )
    for op, row in result["requests"].items():
        for message, count in row["error_messages"].items():
            if op != "overall":
                print(f"  {op}: {count} x {message}")
    stale = result["stale"]
    print(f"\nstale answers ({stale['judged_answers']} judged, grace {GRACE_S:.0f} s):")
    for phase, label in (("during_run", "during the run"), ("after_stop", "after edits stopped")):
        kinds = stale[phase]
        print(f"  {label}: {sum(kinds.values())}")
        for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1]):
            print(f"    {count:6} {kind}")
    print(
        "  not counted as stale: hybrid answers whose top 10 lacked the page or line holding the "
        f"query word (semantic neighbours outranked it): {stale['hybrid_top10_misses_not_stale']}"
    )
    convergence = result["convergence"]
    seconds = convergence["seconds"]
    print(
        "\nconvergence after the last edit: "
        + (f"{seconds:.2f} s" if seconds is not None else "NOT converged")
        + " (each check polled on its own; it settles when the answer showing its last wrong item right came back)"
    )
    print(f"  {'check':40} {'settled s':>9} {'full run s':>10} {'runs':>5}")
    for name, at in convergence["settled_s"].items():
        print(
            f"  {name:40} {at if at is not None else float('nan'):9.2f} "
            f"{convergence['full_run_s_median'][name] or float('nan'):10.2f} "
            f"{convergence['runs'][name]:5}"
        )
    for name, seen in convergence["last_failure"].items():
        print(
            f"  last failing run of '{name}' ended at {seen['ended_s']} s: "
            f"{seen['problems']} problems, e.g. {seen['examples']}"
        )
    for name, found in convergence["remaining"].items():
        print(f"  still failing: {name}: {convergence['remaining_counts'][name]}, e.g. {found[:3]}")
    print(
        "  the sidecar's last sync before convergence finished "
        f"{convergence['last_sync_after_last_edit_s']:.2f} s after the last edit (/status last_sync)"
    )
    if convergence["truth_vs_compiled_keys"]:
        print(
            f"  BUG in the soak: truth and compiler disagree on {convergence['truth_vs_compiled_keys']}"
        )
    vectors = result["vectors"]
    print(
        "vectors: "
        + (
            f"converged {vectors['seconds']:.0f} s after the last edit"
            if vectors["converged"]
            else f"NOT converged: {vectors.get('remaining')}"
        )
    )
    print(f"chroma after stop: {result.get('chroma')}")
    watch = result["status_during_run"]
    print(f"/status during the run: {watch['states_seen']}")
    if not watch["sync_field_present"]:
        print("  (no `sync` field in /status)")
    print(f"freshness in answers: {result['freshness_in_answers'] or 'absent'}")
    print(f"lane states in answers: {result['lane_states_in_answers']}")
    if result["lane_failures_in_answers"]:
        print(f"lane failures in answers: {result['lane_failures_in_answers']}")
    print(f"sidecar log: {result['sidecar_log']}")
    print("\ntargets:")
    for name, ok in passed.items():
        print(f"{'PASS' if ok else 'FAIL'} {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long the editor edits")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--think", type=float, default=0.0, help="seconds a client waits between requests"
    )
    parser.add_argument(
        "--after",
        type=float,
        default=10.0,
        help="seconds the clients keep asking once the grace window after the last edit is over",
    )
    parser.add_argument("--converge-timeout", type=float, default=60.0)
    parser.add_argument("--vector-timeout", type=float, default=300.0)
    parser.add_argument(
        "--keep", action="store_true", help="keep the wiki, client logs and sidecar log"
    )
    parser.add_argument("--output", type=Path, default=RESULTS / "soak.json")
    args = parser.parse_args(argv)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-soak-"))
    try:
        result = run(args, workdir)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    passed = targets(result)
    print_report(result, passed)
    write_results(
        args.output,
        {
            "benchmark": "soak",
            "machine": facts,
            "params": {k: v for k, v in vars(args).items() if k != "output"}
            | {"clients": CLIENTS, "edit_every_s": EDIT_EVERY_S, "grace_s": GRACE_S},
            **result,
            "targets": passed,
        },
    )
    return 0 if all(passed.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
