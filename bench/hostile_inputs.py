"""Hostile inputs that are cheap to write and were expensive to process: how their cost scales.

1. Chunking a text without blank lines (one paragraph of many sentences) at 1, 2, 4, 8 and
   20 MB. Linear chunking takes about twice as long per doubling; the old per-sentence slicing
   took four times as long.
2. `groundwiki lint` on a wiki holding a 500-byte YAML alias bomb, and on one holding a PDF
   decompression bomb (100 MB of zeros in a 100 KB file), each in a child process limited to
   1 GiB of address space: the time, and whether it ended with the one expected finding.
3. `mkdocs build` of 100 small pages plus one page with 10,000, 50,000 and 100,000 `[[key]]`
   wikilinks, with the plugin and without it (where the links stay text), and the ratio.
4. Writers through symlinks (issue 27): `cite --page`, `rename` and `new` on a page symlinked
   out of the wiki and into a folder symlinked out of it, and `rename` across scopes: each must
   exit 2 within the timeout and leave every file, inside and outside the wiki, as it was.
5. Private pages and files on the published site (issue 27): a scoped wiki with a user's page,
   a page directly under `user/` and a user's attachment embedded by a shared page, built with
   `scopes: global`; every file of the site is searched for the user's words and paths.
7. A big raw source (issue 27): `mkdocs build` of a wiki citing a 50 MB log at two ranges, under
   `/usr/bin/time -v`: peak RSS as a multiple of the file (was 233x), the raw-source page's size
   (was 125 MB), and whether the full text is linked and lint warns `large-source`.
8. Pages that stalled a build (issue 27): 16,000 and 32,000 identical headings, 200,000 and
   400,000 `%% `, a callout with 12,000 and 24,000 lazy lines (each `mkdocs build`, time per
   doubling: 2 is linear, 4 quadratic); seven pages each embedding the next ten times (the
   page's size, was 26 MB); a list nested 500 levels deep (was a RecursionError).
6. A dictionary test against another user's pages (issue 27): Alice sends 64 shared words plus
   one candidate, for 20 words only Bob's pages hold and 20 words in no page, through the lexical
   and token lanes of a real in-process sidecar; the candidates a `bounded` or `query_truncated`
   tells apart are what leaks (target 0).

    .venv/bin/python bench/hostile_inputs.py [--chunk-mb 1,2,4,8,20] [--links 10000,50000,100000]

The machine is shared: compare ratios from the same run rather than absolute times.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import RESULTS, machine_facts, write_results

# The PDF bomb is the one the tests use, so the benchmark times the same input.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_resource_bombs import zeros_pdf

BIN = Path(sys.executable).parent
MEMORY_LIMIT = 1 << 30
PROSE = (
    "the evidence shows that a wiki page cites raw sources which are cut into chunks an "
    "embedding model reads whole so every claim points at the lines it rests on"
)


def per_doubling(size: float, seconds: float, next_size: float, next_seconds: float) -> float:
    """How much longer a run took per doubling of its input: 2 is linear, 4 quadratic."""
    return (next_seconds / seconds) ** (1 / math.log2(next_size / size))


# --- 1. chunking -------------------------------------------------------------------------------


def prose_without_blank_lines(size: int, seed: int = 1) -> str:
    """Sentences of 5-20 words, a line break after about one in five: one long paragraph."""
    rng = random.Random(seed)
    words = PROSE.split()
    parts: list[str] = []
    length = 0
    while length < size:
        chosen = " ".join(rng.choice(words) for _ in range(rng.randint(5, 20)))
        sentence = chosen.capitalize() + rng.choice(".!?") + (" " if rng.random() < 0.8 else "\n")
        parts.append(sentence)
        length += len(sentence)
    return "".join(parts)


def bench_chunking(sizes_mb: list[float]) -> list[dict[str, Any]]:
    from groundwiki.core.sources.chunking import chunk_text
    from groundwiki.core.sources.extract import Extracted
    from groundwiki.core.sources.tokens import count_tokens

    count_tokens(["warm the tokenizer up"])
    rows: list[dict[str, Any]] = []
    print("\nchunking text without blank lines")
    print(f"{'MB':>6} {'chunks':>8} {'seconds':>9} {'x/doubling':>11}")
    for mb in sizes_mb:
        text = prose_without_blank_lines(int(mb * (1 << 20)))
        start = time.perf_counter()
        chunks = chunk_text("raw.txt", Extracted("text", text))
        seconds = time.perf_counter() - start
        ratio = per_doubling(rows[-1]["mb"], rows[-1]["seconds"], mb, seconds) if rows else None
        rows.append({"mb": mb, "chunks": len(chunks), "seconds": round(seconds, 3)})
        if ratio is not None:
            rows[-1]["time_ratio_per_doubling"] = round(ratio, 2)
        shown = f"{ratio:11.2f}" if ratio is not None else ""
        print(f"{mb:6g} {len(chunks):8d} {seconds:9.2f} {shown}", flush=True)
    return rows


# --- 2. bombs under lint -----------------------------------------------------------------------


def alias_bomb_page(levels: int = 9) -> str:
    lines = ["  - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"  - &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]")
    return "---\nsummary: A page.\ntags:\n" + "\n".join(lines) + "\n---\nBody.\n"


def write_site(root: Path, pages: dict[str, str], plugin: bool = True) -> None:
    (root / "wiki").mkdir(parents=True)
    (root / "raw-sources").mkdir()
    plugins = "[groundwiki]" if plugin else "[]"
    (root / "mkdocs.yml").write_text(f"site_name: bench\ndocs_dir: wiki\nplugins: {plugins}\n")
    for name, text in pages.items():
        (root / "wiki" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "wiki" / name).write_text(text, encoding="utf-8")


def limited_run(command: list[str], cwd: Path, timeout: float) -> tuple[float, str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    start = time.perf_counter()
    try:
        result = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
            preexec_fn=limit, env=env,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, f"timed out after {timeout:g} s"
    seconds = time.perf_counter() - start
    if result.returncode not in {0, 1}:
        return seconds, f"exit {result.returncode}: {result.stderr.strip()[-300:]}"
    return seconds, result.stdout


def bench_bombs(work: Path, timeout: float) -> list[dict[str, Any]]:
    ok_page = "---\nsummary: A page.\n---\n[[bomb]]\n"
    cases = {
        "yaml-alias-bomb": ({"bomb.md": alias_bomb_page(), "ok.md": ok_page}, None),
        "pdf-decompression-bomb": ({"ok.md": "---\nsummary: A page.\n---\n"}, zeros_pdf(100 << 20)),
    }
    expected = {
        "yaml-alias-bomb": r"wiki/bomb\.md:\d+:\d+: error invalid-frontmatter: .*aliases",
        "pdf-decompression-bomb": r"raw-sources/bomb\.pdf:1:1: warning unreadable-source: .*limits",
    }
    rows: list[dict[str, Any]] = []
    print("\ngroundwiki lint on a bomb (1 GiB address-space limit)")
    for name, (pages, pdf) in cases.items():
        root = work / name
        write_site(root, pages)
        if pdf is not None:
            (root / "raw-sources" / "bomb.pdf").write_bytes(pdf)
        seconds, output = limited_run([str(BIN / "groundwiki"), "lint"], root, timeout)
        errors = re.findall(r"^\S+: error .*$|^\S+: warning unreadable-source: .*$", output, re.M)
        clear = len(errors) == 1 and re.search(expected[name], errors[0])
        outcome = "one clear finding" if clear else f"not as expected: {errors or output[-300:]}"
        rows.append({"case": name, "seconds": round(seconds, 2), "outcome": outcome})
        print(f"  {name:24} {seconds:7.2f} s  {outcome}", flush=True)
    return rows


# --- 3. many links on one page -----------------------------------------------------------------


def link_pages(links: int, seed: int = 1) -> dict[str, str]:
    rng = random.Random(seed)
    pages = {f"p{i}.md": f"---\nsummary: Page {i}.\n---\n# Page {i}\n\nText.\n" for i in range(100)}
    lines = [
        " ".join(f"[[p{rng.randrange(100)}]]" for _ in range(min(10, links - first))) + "\n"
        for first in range(0, links, 10)
    ]
    pages["hub.md"] = "---\nsummary: The hub.\n---\n# Hub\n\n" + "".join(lines)
    return pages


def bench_links(work: Path, counts: list[int], timeout: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    print("\nmkdocs build, one page with N wikilinks to 100 pages")
    print(f"{'links':>8} {'plugin s':>9} {'none s':>8} {'ratio':>6} {'x/doubling':>11}")
    for count in counts:
        row: dict[str, Any] = {"links": count}
        for plugin in (True, False):
            root = work / f"links-{count}-{'plugin' if plugin else 'none'}"
            write_site(root, link_pages(count), plugin)
            command = [str(BIN / "mkdocs"), "build", "-q", "-d", str(root / "site")]
            seconds, output = limited_run(command, root, timeout)
            failed = not (root / "site" / "hub" / "index.html").is_file()
            row["plugin_seconds" if plugin else "none_seconds"] = round(seconds, 2)
            if failed:
                row["failed" if plugin else "none_failed"] = output.strip()[-300:]
        row["ratio"] = round(row["plugin_seconds"] / row["none_seconds"], 1)
        previous = rows[-1] if rows else None
        if previous:
            row["plugin_time_ratio_per_doubling"] = round(
                per_doubling(
                    previous["links"], previous["plugin_seconds"], count, row["plugin_seconds"]
                ),
                2,
            )
        rows.append(row)
        growth = f"{row['plugin_time_ratio_per_doubling']:11.2f}" if previous else ""
        print(
            f"{count:8d} {row['plugin_seconds']:9.2f} {row['none_seconds']:8.2f} "
            f"{row['ratio']:6.1f} {growth}",
            flush=True,
        )
    return rows


# --- 4. writers through symlinks and across scopes -----------------------------------------------

SECRET = "TOKEN=hunter2\n"
SCOPED = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "scoped"


def snapshot(*folders: Path) -> dict[str, tuple[str, bytes | str, int]]:
    """Every entry under the folders, symlinks not followed: equal before and after means
    nothing was changed."""
    found: dict[str, tuple[str, bytes | str, int]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink():
                found[str(path)] = ("link", os.readlink(path), 0)
            elif path.is_file():
                found[str(path)] = ("file", path.read_bytes(), path.lstat().st_mode & 0o777)
    return found


def bench_writers(work: Path, timeout: float) -> list[dict[str, Any]]:
    page = "---\nsummary: {}\n---\n{}\n"
    rows: list[dict[str, Any]] = []
    print("\nwriter tools that must refuse (exit 2, nothing changed)")
    linked_commands = {
        "cite --page on a page symlinked out": ["cite", "raw-sources/a.md", "line one", "--page", "secret"],
        "rename a page symlinked out": ["rename", "secret", "z"],
        "new page in a folder symlinked out": ["new", "ops/x"],
        "rename into a folder symlinked out": ["rename", "other", "ops/y"],
    }  # fmt: skip
    cases: list[tuple[str, Path, list[str], list[Path]]] = []
    for number, (name, args) in enumerate(linked_commands.items()):
        root = work / f"writers-{number}"
        outside = work / f"outside-{number}"
        (outside / "ops").mkdir(parents=True)
        (outside / "secret.txt").write_text(SECRET, encoding="utf-8")
        write_site(root, {"index.md": page.format("Home.", "See [[other]]."),
                          "other.md": page.format("Other.", "Text.")})  # fmt: skip
        (root / "raw-sources" / "a.md").write_text("line one of the source\n", encoding="utf-8")
        (root / "wiki" / "secret.md").symlink_to(outside / "secret.txt")
        (root / "wiki" / "ops").symlink_to(outside / "ops", target_is_directory=True)
        cases.append((name, root, args, [root, outside]))
    for number, args in enumerate(
        (["rename", "global/oncall", "user/bob/oncall"],
         ["rename", "user/alice/scratch", "global/scratch"])
    ):  # fmt: skip
        root = work / f"scoped-rename-{number}"
        shutil.copytree(SCOPED, root)
        cases.append((f"rename {args[1]} -> {args[2]}", root, args, [root]))
    for name, root, args, folders in cases:
        before = snapshot(*folders)
        start = time.perf_counter()
        try:
            result = subprocess.run(
                [str(BIN / "groundwiki"), "-q", *args], cwd=root, capture_output=True,
                text=True, timeout=timeout,
            )  # fmt: skip
            code: int | str = result.returncode
        except subprocess.TimeoutExpired:
            code = f"timed out after {timeout:g} s"
        seconds = time.perf_counter() - start
        unchanged = snapshot(*folders) == before
        outcome = (
            "refused, nothing changed"
            if code == 2 and unchanged
            else (f"exit {code}, {'nothing' if unchanged else 'files'} changed")
        )
        rows.append({"case": name, "seconds": round(seconds, 2), "exit": code, "outcome": outcome})
        print(f"  {name:40} {seconds:6.2f} s  {outcome}", flush=True)
    return rows


# --- 5. private pages and files on the published site ------------------------------------------


def bench_site_privacy(work: Path, timeout: float) -> dict[str, Any]:
    root = work / "privacy"
    shutil.copytree(SCOPED, root)
    (root / "mkdocs.yml").write_text(
        "site_name: privacy\ndocs_dir: wiki\ntheme:\n  name: material\n"
        "plugins:\n  - search\n  - groundwiki\n"
    )
    (root / "wiki/user/carol.md").write_text("---\nsummary: Carol's zqcarolword.\n---\nText.\n")
    (root / "wiki/user/bob/zqbobfile.png").write_bytes(b"\x89PNG zqbobpixels")
    deploy = root / "wiki/global/deploy.md"
    deploy.write_text(deploy.read_text() + "\n![[zqbobfile.png]]\n")
    (root / "wiki/user/bob/ledger.md").write_text(
        "---\ntitle: Zqbobtitle ledger\nsummary: Bob's zqbobsummary.\ntags: [zqbobtag]\n"
        "aliases: [zqbobalias]\n---\nThe zqbobbody lives here.\n"
    )
    seconds, output = limited_run([str(BIN / "mkdocs"), "build", "-q"], root, timeout)
    # The shared page names the attachment itself (`![[zqbobfile.png]]`), so the file's name is
    # shared text; its path and its bytes are not.
    words = ["zqcarolword", "zqbobpixels", "zqbobtitle", "zqbobsummary", "zqbobtag", "zqbobalias",
             "zqbobbody", "user/bob", "user/carol", "rollback.md"]  # fmt: skip
    found: dict[str, list[str]] = {}
    site = root / "site"
    for path in sorted(site.rglob("*")) if site.is_dir() else []:
        if path.is_file():
            data = path.read_bytes().decode("utf-8", "replace").lower()
            for word in words:
                if word.lower() in data:
                    found.setdefault(word, []).append(path.relative_to(site).as_posix())
    if (site / "user").exists():
        found.setdefault("site/user/", []).append("user/")
    if (site / "user").exists():
        found.setdefault("site/user/", []).append("user/")
    built = (site / "index.html").is_file()
    outcome = (
        "nothing private on the site"
        if built and not found
        else (f"leaks: {found}" if built else f"build failed: {output[-300:]}")
    )
    print(f"\nthe published site of a scoped wiki: {seconds:.2f} s, {outcome}", flush=True)
    return {"seconds": round(seconds, 2), "leaks": found, "built": built, "outcome": outcome}


# --- 6. another user's vocabulary through answer statistics --------------------------------------


def bench_scope_statistics(work: Path) -> dict[str, Any]:
    from groundwiki_sidecar.api.operations import Operations
    from groundwiki_sidecar.api.service import SidecarService
    from groundwiki_sidecar.base.settings import load_sidecar

    shared = [f"glossa{n:02d}" for n in range(64)]
    bobs = [f"zqbob{n:02d}" for n in range(20)]
    nowhere = [f"zqnone{n:02d}" for n in range(20)]
    root = work / "statistics"
    pages = {
        "index.md": "---\nsummary: Start here.\nkind: overview\n---\n# Team\n",
        "global/glossary.md": "---\nsummary: {0}\n---\n{0}\n".format(" ".join(shared)),
        "user/alice/notes.md": "---\nsummary: Alice's notes.\n---\nNotes.\n",
        "user/bob/words.md": "---\ntitle: {0}\nsummary: {0}\n---\n{0}\n".format(" ".join(bobs)),
    }
    write_site(root, pages)
    service = SidecarService(load_sidecar(root / "mkdocs.yml"), embed=False)
    service.start(watch=False)
    alice = Operations(service).viewing("alice")
    told: dict[str, int] = {}
    try:
        for lane in ("lexical", "token"):

            def says(word: str, lane: str = lane) -> str:
                answer = alice.search(" ".join([*shared, word]), 10, lanes=[lane])
                return json.dumps([answer.get("bounded"), answer.get("query_truncated")])

            baseline = {says(word) for word in nowhere}
            told[lane] = sum(says(word) not in baseline for word in bobs)
    finally:
        service.stop()
    leaked = sum(told.values())
    print(
        f"\nBob's words Alice can tell from words in no page: {told} "
        f"({'none' if not leaked else 'LEAK'}; target 0 of {len(bobs)} per lane)",
        flush=True,
    )
    return {"candidates": len(bobs), "told_apart": told}


# --- 7. a big raw source ----------------------------------------------------------------------------


def bench_big_source(work: Path, megabytes: float, timeout: float) -> dict[str, Any]:
    root = work / "big-source"
    line = "2024-05-01T12:00:00Z INFO worker-{0} request id={1:08d} path=/api/v1/items/{0} status=200 took={2}ms <b>&amp;</b>\n"
    with_lines: list[str] = []
    size = 0
    number = 0
    while size < megabytes * 1_000_000:
        text = line.format(number % 97, number, number % 1000)
        with_lines.append(text)
        size += len(text)
        number += 1
    late = int(number * 0.85)
    index = f"---\nsummary: A log.\n---\nStart.\n<!-- from: raw-sources/app.log#L1-L3 -->\n\nLate.\n<!-- from: raw-sources/app.log#L{late}-L{late + 4} -->\n"
    write_site(root, {"index.md": index})
    source = root / "raw-sources" / "app.log"
    source.write_text("".join(with_lines), encoding="utf-8")
    del with_lines
    timed = ["/usr/bin/time", "-v", str(BIN / "mkdocs"), "build", "-q"]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    start = time.perf_counter()
    try:
        result = subprocess.run(
            timed, cwd=root, capture_output=True, text=True, timeout=timeout, env=env
        )
        report = result.stderr
    except subprocess.TimeoutExpired:
        report = ""
    seconds = time.perf_counter() - start
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    page = root / "site" / "raw-sources" / "app.log" / "index.html"
    full = root / "site" / "raw-sources" / "app.log" / "app.log.txt"
    lint = root / "site" / "groundwiki" / "lint.json"
    findings = json.loads(lint.read_text())["findings"] if lint.is_file() else []
    row = {
        "megabytes": round(source.stat().st_size / 1e6, 1),
        "seconds": round(seconds, 1),
        "peak_rss_mb": round(int(peak.group(1)) / 1024) if peak else None,
        "peak_rss_per_file": round(int(peak.group(1)) * 1024 / source.stat().st_size, 1)
        if peak
        else None,
        "page_mb": round(page.stat().st_size / 1e6, 2) if page.is_file() else None,
        "full_text_linked": full.is_file() and full.read_bytes() == source.read_bytes(),
        "large_source_findings": sum(f.get("rule") == "large-source" for f in findings),
    }
    print(f"\nmkdocs build with a {row['megabytes']} MB raw source: {row}", flush=True)
    return row


# --- 8. pages that stalled a build -------------------------------------------------------------------


def stall_pages(case: str, size: int) -> dict[str, str]:
    head = "---\nsummary: A page.\n---\n"
    if case == "identical headings":
        return {"index.md": head + "# same\n\n" * size}
    if case == "comment markers":
        return {"index.md": head + "%% " * size}
    if case == "callout lazy lines":
        return {"index.md": head + "> [!note] T\n> first\n" + "lazy\n" * size}
    raise ValueError(case)


def build_time(root: Path, pages: dict[str, str], timeout: float) -> tuple[float, str]:
    write_site(root, pages)
    command = [str(BIN / "mkdocs"), "build", "-q", "-d", str(root / "site")]
    return limited_run(command, root, timeout)


def bench_stalls(work: Path, timeout: float) -> dict[str, Any]:
    results: dict[str, Any] = {}
    print("\nmkdocs build of a page that stalled it: seconds at n and 2n, growth per doubling")
    sizes = {"identical headings": 16_000, "comment markers": 200_000, "callout lazy lines": 12_000}
    for case, size in sizes.items():
        timings = []
        for n in (size, 2 * size):
            seconds, output = build_time(
                work / f"stall-{case}-{n}".replace(" ", "-"), stall_pages(case, n), timeout
            )
            timings.append(round(seconds, 2))
        growth = per_doubling(size, timings[0], 2 * size, timings[1])
        results[case] = {
            "sizes": [size, 2 * size],
            "seconds": timings,
            "per_doubling": round(growth, 2),
        }
        print(f"  {case:22} {timings[0]:7.2f} s {timings[1]:7.2f} s  x{growth:.2f}", flush=True)
    fan = {f"p{n}.md": "---\nsummary: Page.\n---\n" + f"![[p{n + 1}]]\n\n" * 10 for n in range(6)}
    fan["p6.md"] = "---\nsummary: The last page.\n---\nThe end of the chain.\n"
    fan["index.md"] = "---\nsummary: Home.\n---\n[[p0]]\n"
    seconds, _ = build_time(work / "fan-out", fan, timeout)
    page = work / "fan-out" / "site" / "p0" / "index.html"
    results["transclusion fan-out"] = {
        "seconds": round(seconds, 2),
        "page_mb": round(page.stat().st_size / 1e6, 2) if page.is_file() else None,
    }
    print(f"  transclusion fan-out   {results['transclusion fan-out']}", flush=True)
    deep = "---\nsummary: Deep.\n---\n" + "".join("    " * i + f"- level {i}\n" for i in range(500))
    seconds, output = build_time(work / "deep-list", {"index.md": deep}, timeout)
    built = (work / "deep-list" / "site" / "index.html").is_file()
    results["list 500 levels deep"] = {"seconds": round(seconds, 2), "built": built}
    print(
        f"  list 500 levels deep   {seconds:.2f} s, {'built' if built else output[-200:]}",
        flush=True,
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunk-mb", default="1,2,4,8,20", help="text sizes, comma-separated")
    parser.add_argument("--links", default="10000,50000,100000", help="links on the one page")
    parser.add_argument("--big-source-mb", type=float, default=50, help="the big raw source")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per child process")
    parser.add_argument(
        "--skip",
        default="",
        help="parts to skip: chunking,bombs,links,writers,privacy,statistics,big-source,stalls",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "hostile_inputs.json")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    results: dict[str, Any] = {"machine": machine_facts()}
    if "chunking" not in skip:
        results["chunking"] = bench_chunking([float(x) for x in args.chunk_mb.split(",")])
    with tempfile.TemporaryDirectory(prefix="gw-hostile-") as tmp:
        if "bombs" not in skip:
            results["bombs"] = bench_bombs(Path(tmp), args.timeout)
        if "links" not in skip:
            counts = [int(x) for x in args.links.split(",")]
            results["links"] = bench_links(Path(tmp), counts, args.timeout)
        if "writers" not in skip:
            results["writers"] = bench_writers(Path(tmp), min(args.timeout, 120))
        if "privacy" not in skip:
            results["site_privacy"] = bench_site_privacy(Path(tmp), args.timeout)
        if "statistics" not in skip:
            results["scope_statistics"] = bench_scope_statistics(Path(tmp))
        if "big-source" not in skip:
            results["big_source"] = bench_big_source(Path(tmp), args.big_source_mb, args.timeout)
        if "stalls" not in skip:
            results["stalls"] = bench_stalls(Path(tmp), args.timeout)
    write_results(args.out, results)


if __name__ == "__main__":
    main()
