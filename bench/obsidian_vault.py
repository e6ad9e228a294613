"""groundwiki on a real Obsidian vault: lint against an independent checker, build time against
plain mkdocs-material, Obsidian syntax left in the HTML, and the sidecar finding every note.

The vault is read, never written: it is the `docs_dir` of mkdocs.yml files written to a temp
folder, sites and indexes go there too, and a fingerprint of the vault (paths, sizes, mtimes)
taken before and after says whether anything touched it. In one run:

  lint      `groundwiki lint --format json` and bench/obsidian_checker.py (Obsidian's rules,
            no groundwiki code): broken-link/broken-anchor counts; how many of groundwiki's
            link findings the checker also reports (true) or not (false positives, target 0%);
            the checker's findings groundwiki misses (false negatives); a seeded sample of 30
            groundwiki link findings with their source lines, written for hand-checking;
  build     `mkdocs build` with the groundwiki plugin and with plain mkdocs-material (search
            only, a one-page nav, as bench/build_scale.py does: material renders the whole nav
            into every page, so a full auto nav over thousands of notes is quadratic), timed in
            the same run, and the ratio;
  syntax    the plugin's site scanned for Obsidian syntax left as text outside code, pre,
            script and style: `[!type]`, `%%`, `![[`, `==...==`, a `^block-id` ending a
            block (target 0 each), with examples; what the writer escaped to read as text
            (`!\\[\\[x\\]\\]`) is counted apart; `%%` in the site's search index too;
  sidecar   `groundwiki serve` on the vault: seconds until it answers with the lexical lane
            ready, then every note asked for by key and by path through POST /pages (each must
            come back as that note), and a sample searched by title through the lexical lane.

    .venv/bin/python bench/obsidian_vault.py [--vault DIR] [--skip-build] [--skip-sidecar]
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import random
import re
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
from collections import Counter
from dataclasses import asdict, dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import yaml
from harness import RESULTS, machine_facts, write_results
from obsidian_checker import Finding, Vault, links_in

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "vaults" / "obsidian-hub"
BIN = Path(sys.executable).parent
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
LINK_RULES = ("broken-link", "broken-anchor")
SAMPLE = 30
EXAMPLES = 5


# ---------------------------------------------------------------- set-up


def fingerprint(vault: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for folder, _, files in os.walk(vault):
        for name in files:
            stat = os.stat(os.path.join(folder, name))
            out[os.path.join(folder, name)] = (stat.st_size, stat.st_mtime_ns)
    return out


def home_page(vault: Path) -> str:
    for name in ("index.md", "README.md", "Home.md"):
        if (vault / name).is_file():
            return name
    return sorted(p.name for p in vault.glob("*.md"))[0]


def write_config(work: Path, name: str, vault: Path, plugin: bool, **extra: Any) -> Path:
    """A mkdocs.yml in the work folder (so caches, sites and indexes land there) whose docs_dir
    is the vault."""
    config: dict[str, Any] = {
        "site_name": vault.name,
        "docs_dir": str(vault),
        "theme": {"name": "material", "font": False},
        "plugins": ["search", {"groundwiki": extra.pop("groundwiki", {})}]
        if plugin
        else ["search"],
        **extra,
    }
    path = work / name
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------- a. lint against the checker


@dataclass(frozen=True)
class Judged:
    rule: str
    file: str
    line: int
    message: str
    detail: str
    checker: str  # the checker's matching finding ("" when it reports none: a false positive)


def groundwiki_lint(config: Path) -> tuple[list[dict[str, Any]], float]:
    started = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "groundwiki"), "-q", "-f", str(config), "lint", "--format", "json"],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    elapsed = time.perf_counter() - started
    try:
        return json.loads(done.stdout)["findings"], elapsed
    except (json.JSONDecodeError, KeyError):
        raise RuntimeError(
            f"groundwiki lint exited {done.returncode}:\n{done.stderr[-2000:]}"
        ) from None


def _norm(text: str) -> str:
    return " ".join(text.replace("\\", "/").split()).casefold().removesuffix(".md")


def _wanted(finding: dict[str, Any]) -> tuple[str, str]:
    """(kind, target) a groundwiki link finding is about: ("file", link path) or
    ("anchor", subpath)."""
    detail = finding.get("detail") or ""
    if finding["rule"] == "broken-anchor":
        return "anchor", detail.partition("#")[2]
    return "file", detail.partition(":")[2].partition("#")[0]


def _offers(item: Finding) -> tuple[str, str, str]:
    """(kind, link path, subpath) of a checker finding."""
    parsed = links_in(item.link)
    path, subpath = (parsed[0][1], parsed[0][2]) if parsed else ("", "")
    return ("file" if item.reason == "no-file" else "anchor"), path, subpath


def judge(
    gw: list[dict[str, Any]], checker: list[Finding], vault: Path
) -> tuple[list[Judged], list[Finding]]:
    """Pair each groundwiki link finding with a checker finding on the same line about the same
    target (then, failing that, of the same kind); return the judged findings and the checker
    findings no groundwiki finding took (groundwiki's false negatives)."""
    free: dict[tuple[str, int], list[Finding]] = {}
    for item in checker:
        free.setdefault((item.file, item.line), []).append(item)
    judged: list[Judged] = []
    pending: list[tuple[dict[str, Any], str]] = []
    for finding in gw:
        path = Path(finding["path"])
        file = path.relative_to(vault).as_posix() if path.is_absolute() else finding["path"]
        pending.append((finding, file))
    for strict in (True, False):
        left = []
        for finding, file in pending:
            kind, target = _wanted(finding)
            match = None
            for item in free.get((file, finding["line"]), []):
                offered_kind, path, subpath = _offers(item)
                same = _norm(target) in (_norm(path), _norm(subpath)) or not target
                if offered_kind == kind and (same or not strict):
                    match = item
                    break
            if match is None:
                left.append((finding, file))
                continue
            free[(file, finding["line"])].remove(match)
            judged.append(_judged(finding, file, f"{match.reason} {match.link}"))
        pending = left
    judged += [_judged(finding, file, "") for finding, file in pending]
    missed = sorted(item for items in free.values() for item in items)
    return judged, missed


def _judged(finding: dict[str, Any], file: str, checker: str) -> Judged:
    return Judged(
        finding["rule"], file, finding["line"], finding["message"], finding["detail"], checker
    )


def other_names(vault: Path, notes: list[str]) -> set[str]:
    """Aliases and titles (frontmatter `title:`, first `# H1`) of the notes, lower-cased:
    groundwiki also resolves a link by these, Obsidian only by file name and path."""
    names: set[str] = set()
    for note in notes:
        text = (vault / note).read_text(encoding="utf-8", errors="replace")
        front: Any = {}
        if text.startswith("---\n") and "\n---" in text[4:]:
            try:
                front = yaml.safe_load(text[4 : text.index("\n---", 3)]) or {}
            except yaml.YAMLError:
                front = {}
        front = front if isinstance(front, dict) else {}
        aliases = front.get("aliases") or []
        for name in [*(aliases if isinstance(aliases, list) else [aliases]), front.get("title")]:
            if isinstance(name, str):
                names.add(name.strip().lower())
        heading = re.search(r"^# (.+)$", text, re.MULTILINE)
        if heading:
            names.add(heading[1].strip().lower())
    return names


def source_line(vault: Path, file: str, line: int) -> str:
    try:
        lines = (vault / file).read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return ""
    return lines[line - 1].strip()[:300] if 0 < line <= len(lines) else ""


def lint_figures(config: Path, vault: Path, seed: int, sample_file: Path) -> dict[str, Any]:
    findings, lint_s = groundwiki_lint(config)
    rules = Counter(f["rule"] for f in findings)
    started = time.perf_counter()
    extra = vault.parent / "raw-sources" if (vault.parent / "raw-sources").is_dir() else None
    checker = Vault(vault, extra).check()
    checker_s = time.perf_counter() - started
    link = [f for f in findings if f["rule"] in LINK_RULES]
    judged, missed = judge(link, checker, vault)
    false = [j for j in judged if not j.checker]
    names = other_names(vault, sorted(Vault(vault).notes)) if missed else set()
    by_name = [m for m in missed if (_offers(m)[1].strip().lower() in names)]
    sample = random.Random(seed).sample(judged, min(SAMPLE, len(judged)))
    rows = [
        {**asdict(j), "line_text": source_line(vault, j.file, j.line), "hand_check": ""}
        for j in sorted(sample, key=lambda j: (j.file, j.line))
    ]
    write_results(sample_file, {"seed": seed, "vault": str(vault), "sample": rows})
    figures = {
        "lint_s": lint_s,
        "checker_s": checker_s,
        "rules": dict(rules.most_common()),
        "groundwiki_link_findings": len(link),
        "broken_link": rules.get("broken-link", 0),
        "broken_anchor": rules.get("broken-anchor", 0),
        "ambiguous_link": rules.get("ambiguous-link", 0),
        "checker_findings": len(checker),
        "checker_by_reason": dict(Counter(f.reason for f in checker)),
        "true": len(judged) - len(false),
        "false_positives": len(false),
        "fp_rate": len(false) / len(judged) if judged else 0.0,
        "false_negatives": len(missed),
        "false_negatives_alias_or_title": len(by_name),
        "false_positive_examples": [asdict(j) for j in false[:EXAMPLES]],
        "false_negative_examples": [asdict(m) for m in missed if m not in by_name][:EXAMPLES],
        "sample_file": str(sample_file),
    }
    print(
        f"lint: groundwiki {lint_s:.1f} s, {figures['broken_link']} broken-link, "
        f"{figures['broken_anchor']} broken-anchor ({figures['ambiguous_link']} ambiguous-link); "
        f"checker {checker_s:.1f} s, {len(checker)} unresolved {figures['checker_by_reason']}"
    )
    print(
        f"  groundwiki's link findings the checker also reports: {figures['true']} true, "
        f"{len(false)} false positives (FP rate {figures['fp_rate']:.1%}); "
        f"checker findings groundwiki misses (false negatives): {len(missed)}, of which "
        f"{len(by_name)} name a note's alias or title (groundwiki resolves those, Obsidian not)"
    )
    for j in false[:EXAMPLES]:
        print(f"  FP {j.file}:{j.line} {j.message}")
    for m in [m for m in missed if m not in by_name][:EXAMPLES]:
        print(f"  FN {m.file}:{m.line} {m.link} ({m.reason})")
    print(f"  {len(rows)} findings sampled for hand-checking in {sample_file}")
    return figures


# ---------------------------------------------------------------- b. build times


def build(config: Path, site: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "mkdocs"), "build", "-q", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"mkdocs build -f {config.name} exited {done.returncode}:\n{tail}")
    return elapsed


def build_figures(work: Path, vault: Path) -> tuple[dict[str, Any], Path]:
    small_nav = {"nav": [home_page(vault)], "validation": {"nav": {"omitted_files": "info"}}}
    plain = write_config(work, "mkdocs-plain.yml", vault, plugin=False, **small_nav)
    plugin = write_config(work, "mkdocs-plugin.yml", vault, plugin=True)
    plain_s = build(plain, work / "site-plain")
    plugin_s = build(plugin, work / "site-plugin")
    figures = {
        "plain_s": plain_s,
        "plugin_s": plugin_s,
        "ratio": plugin_s / plain_s,
        "plain_html": sum(1 for _ in (work / "site-plain").rglob("*.html")),
        "plugin_html": sum(1 for _ in (work / "site-plugin").rglob("*.html")),
    }
    print(
        f"build: plain mkdocs-material {plain_s:.1f} s ({figures['plain_html']} HTML files), "
        f"with groundwiki {plugin_s:.1f} s ({figures['plugin_html']} HTML files): "
        f"{figures['ratio']:.2f}x"
    )
    return figures, work / "site-plugin"


# ---------------------------------------------------------------- c. syntax left in the HTML

PATTERNS = {
    "callout [!": re.compile(r"\[![A-Za-z][\w-]*\][+-]?"),
    "comment %%": re.compile(r"%%"),
    "embed ![[": re.compile(r"!\[\[[^\]\n]*(?:\]\])?"),
    "highlight ==": re.compile(r"(?<![=<>!])==(?=[^\s=])[^=\n]*?(?<=[^\s=])==(?!=)"),
    "block id ^": re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+\s*$"),
}
SKIPPED = {"code", "pre", "script", "style", "textarea", "template", "svg"}
BLOCKS = {
    "p", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "div", "blockquote",
    "dd", "dt", "summary", "details", "figcaption", "caption", "section", "article",
    "header", "footer", "nav", "main", "aside", "ul", "ol", "table", "tr", "br", "hr", "body",
}  # fmt: skip


class BlockText(HTMLParser):
    """The visible text of each block, code and scripts left out."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.buffer: list[str] = []
        self.skipping = 0

    def flush(self) -> None:
        text = "".join(self.buffer).strip()
        if text:
            self.blocks.append(text)
        self.buffer = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self.skipping += 1
            self.buffer.append(" ")
        elif tag in BLOCKS:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self.skipping = max(0, self.skipping - 1)
            self.buffer.append(" ")
        elif tag in BLOCKS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.buffer.append(data)


def escaped_literals(vault: Path) -> dict[str, set[str]]:
    """The syntax writers escaped to show it as text (`!\\[\\[transclusions\\]\\]` in a title
    reads `![[transclusions]]`, as in Obsidian): per pattern, the strings a match on the
    unescaped line gives where the match covers an escaped character."""
    found: dict[str, set[str]] = {name: set() for name in PATTERNS}
    for note in vault.rglob("*.md"):
        for line in note.read_text(encoding="utf-8", errors="replace").split("\n"):
            if "\\" not in line:
                continue
            plain, escaped = [], set()
            index = 0
            while index < len(line):
                if line[index] == "\\" and index + 1 < len(line) and line[index + 1] in "[]!%=^":
                    escaped.add(len(plain))
                    index += 1
                plain.append(line[index])
                index += 1
            text = "".join(plain)
            for name, pattern in PATTERNS.items():
                for hit in pattern.finditer(text):
                    if escaped.intersection(range(hit.start(), hit.end())):
                        found[name].add(hit[0].strip())
    return found


def visible_blocks(html: str) -> list[str]:
    parser = BlockText()
    parser.feed(html)
    parser.close()
    parser.flush()
    return parser.blocks


def scan_site(site: Path, vault: Path) -> dict[str, Any]:
    literals = escaped_literals(vault)
    escaped: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    pages: Counter[str] = Counter()
    examples: dict[str, list[str]] = {name: [] for name in PATTERNS}
    files = sorted(site.rglob("*.html"))
    for file in files:
        seen: set[str] = set()
        for text in visible_blocks(file.read_text(encoding="utf-8", errors="replace")):
            for name, pattern in PATTERNS.items():
                hits = list(pattern.finditer(text))
                written = [h for h in hits if h[0].strip() in literals[name]]
                escaped[name] += len(written)
                hits = [h for h in hits if h not in written]
                counts[name] += len(hits)
                if hits:
                    seen.add(name)
                if hits and len(examples[name]) < EXAMPLES:
                    at = hits[0].start()
                    snippet = " ".join(text[max(0, at - 60) : at + 60].split())
                    examples[name].append(f"{file.relative_to(site).as_posix()}: …{snippet}…")
        pages.update(seen)
    index = site / "search" / "search_index.json"
    in_index = None
    if index.is_file():
        docs = json.loads(index.read_text(encoding="utf-8")).get("docs", [])
        in_index = sum(
            block.count("%%") for doc in docs for block in visible_blocks(doc.get("text", ""))
        )
    figures = {
        "html_files": len(files),
        "counts": {name: counts[name] for name in PATTERNS},
        "pages": {name: pages[name] for name in PATTERNS},
        "total": sum(counts.values()),
        "escaped_by_the_writer": {name: escaped[name] for name in PATTERNS},
        "search_index_comment_marks": in_index,
        "examples": examples,
    }
    print(f"syntax left as text in {len(files)} HTML files (outside code): {figures['total']}")
    for name in PATTERNS:
        print(f"  {name:14} {counts[name]:6} on {pages[name]} pages")
        for example in examples[name][:3]:
            print(f"      {example[:160]}")
    print(f"  left aside, escaped by the writer to read as text: {dict(escaped)}")
    print(f"  '%%' in the site's search index (outside code): {in_index}")
    return figures


# ---------------------------------------------------------------- d. the sidecar


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(url: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def expected_url(doc: str) -> str:
    """The site URL MkDocs gives a doc (directory URLs)."""
    folder, name = posixpath.split(doc.removesuffix(".md"))
    if name in ("index", "README"):
        return f"{folder}/" if folder else ""
    return f"{folder}/{name}/" if folder else f"{name}/"


def expected_keys(notes: list[str]) -> dict[str, str]:
    """A note's key as the plan has it: the lower-case stem when no other note shares it, else
    the lower-case doc path without .md."""
    stems = Counter(posixpath.basename(n).removesuffix(".md").lower() for n in notes)
    keys = {}
    for note in notes:
        stem = posixpath.basename(note).removesuffix(".md").lower()
        keys[note] = stem if stems[stem] == 1 else note.removesuffix(".md").lower()
    return keys


def ask_pages(base: str, wanted: dict[str, str]) -> tuple[list[str], list[str]]:
    """Notes found as themselves, and notes not found (or found as another note)."""
    found, missing = [], []
    items = list(wanted.items())
    for start in range(0, len(items), 100):
        batch = items[start : start + 100]
        status, answer = call(f"{base}/pages", {"ids": [ask for _, ask in batch]})
        pages = {p["requested"]: p for p in answer.get("pages", [])} if status == 200 else {}
        for note, ask in batch:
            hit = pages.get(ask)
            url = urllib.parse.unquote(hit["url"]).strip("/") if hit else None
            (found if url == expected_url(note).strip("/") else missing).append(note)
    return found, missing


def sidecar_figures(work: Path, vault: Path, seed: int, searches: int) -> dict[str, Any]:
    port = free_port()
    options = {"sidecar": {"port": port, "embed_chunks": False, "page_vector": "summary"}}
    config = write_config(work, "mkdocs-sidecar.yml", vault, plugin=True, groundwiki=options)
    base = f"http://127.0.0.1:{port}"
    log = (work / "sidecar.log").open("w")
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(BIN / "groundwiki"), "-q", "-f", str(config), "serve"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=ENV,
    )
    try:
        ready_s = None
        while time.perf_counter() - started < 900:
            if process.poll() is not None:
                raise RuntimeError(f"the sidecar exited {process.returncode}: see {log.name}")
            try:
                if call(f"{base}/healthz")[1].get("ok"):
                    lanes = call(f"{base}/status")[1].get("lanes", {})
                    if lanes.get("lexical", {}).get("state") == "ok":
                        ready_s = time.perf_counter() - started
                        break
            except (urllib.error.URLError, OSError, json.JSONDecodeError):
                pass
            time.sleep(0.2)
        if ready_s is None:
            raise RuntimeError("the sidecar was not ready after 900 s")
        status = call(f"{base}/status")[1]
        notes = sorted(n for n in Vault(vault).notes)
        keys = expected_keys(notes)
        by_key, key_missing = ask_pages(base, keys)
        by_path, path_missing = ask_pages(base, {n: n.removesuffix(".md") for n in notes})
        sample = random.Random(seed).sample(notes, min(searches, len(notes)))
        searched = 0
        for note in sample:
            title = posixpath.basename(note).removesuffix(".md")[:200]
            query = urllib.parse.urlencode({"q": title, "lanes": "lexical", "limit": 10})
            hits = call(f"{base}/search?{query}")[1].get("hits", [])
            urls = {urllib.parse.unquote(h["url"]).strip("/") for h in hits}
            searched += expected_url(note).strip("/") in urls
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
    figures = {
        "ready_s": ready_s,
        "pages_indexed": status.get("pages"),
        "notes": len(notes),
        "by_key_found": len(by_key),
        "by_key_missing": len(key_missing),
        "by_path_found": len(by_path),
        "by_path_missing": len(path_missing),
        "search_sample": len(sample),
        "search_found_top10": searched,
        "by_key_missing_examples": key_missing[:EXAMPLES],
        "by_path_missing_examples": path_missing[:EXAMPLES],
    }
    print(
        f"sidecar: lexical lane ready in {ready_s:.1f} s, {status.get('pages')} pages indexed "
        f"of {len(notes)} notes; by key {len(by_key)} found, {len(key_missing)} missing; "
        f"by path {len(by_path)} found, {len(path_missing)} missing; title search (lexical, "
        f"top 10) {searched}/{len(sample)}"
    )
    for note in key_missing[:3]:
        print(f"  not found by key '{keys[note]}': {note}")
    for note in path_missing[:3]:
        print(f"  not found by path: {note}")
    return figures


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--skip-lint", action="store_true")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--skip-sidecar", action="store_true")
    parser.add_argument("--site", type=Path, help="scan this built site instead of building")
    parser.add_argument("--searches", type=int, default=300, help="notes searched by title")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--keep", action="store_true", help="keep the temp folder")
    parser.add_argument("--output", type=Path, default=RESULTS / "obsidian_vault.json")
    parser.add_argument(
        "--sample-output", type=Path, default=RESULTS / "obsidian_vault_sample.json"
    )
    args = parser.parse_args(argv)
    vault = args.vault.resolve()
    if not vault.is_dir():
        # `make bench` on a machine without the dev vault skips this benchmark, not the rest.
        print(f"no vault at {vault}: give one with --vault DIR", file=sys.stderr)
        return 0 if args.vault == DEFAULT_VAULT else 2
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    print(f"vault: {vault}")
    before = fingerprint(vault)
    work = Path(tempfile.mkdtemp(prefix="groundwiki-obsidian-"))
    results: dict[str, Any] = {}
    try:
        if not args.skip_lint:
            config = write_config(work, "mkdocs-lint.yml", vault, plugin=True)
            results["lint"] = lint_figures(config, vault, args.seed, args.sample_output)
        site = args.site
        if not args.skip_build:
            results["build"], site = build_figures(work, vault)
        if site is not None:
            results["syntax"] = scan_site(site, vault)
        if not args.skip_sidecar:
            results["sidecar"] = sidecar_figures(work, vault, args.seed, args.searches)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    untouched = fingerprint(vault) == before
    results["vault_untouched"] = untouched
    print(f"vault untouched: {untouched}")
    write_results(
        args.output,
        {
            "benchmark": "obsidian_vault",
            "machine": facts,
            "params": {k: str(v) for k, v in vars(args).items()},
            **results,
        },
    )
    return 0 if untouched else 1


if __name__ == "__main__":
    raise SystemExit(main())
