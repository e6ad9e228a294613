"""Behaviour unchanged by a refactor (issue 28): the handbook's and the obsidian-hub vault's sites
byte-identical, and the sidecar's answers identical on 100 queries, this checkout against --base.

The base is checked out with `git worktree` into a temp folder, removed at the end; this
checkout's `plugins/` and `sidecar/` are copied when the run starts (so that edits made meanwhile
do not mix two states of the code in one run; --this-from install runs the editable install);
each side's copy goes first on PYTHONPATH. Both read the same input at the same path: the
handbook (this checkout's wiki, raw-sources, mkdocs.yml, wiki.lock, copied at the start) and the
vault (with a mkdocs.yml as bench/obsidian_vault.py writes it), copied afresh for every build and
sidecar, so no run finds another's caches or indexes. Runs go base, this, base again: what the
two base runs disagree on varies run to run and says nothing of this checkout.

  sites     a cold `python -m mkdocs build` of each corpus (SOURCE_DATE_EPOCH fixed, as for a
            reproducible build), the sites compared file by file (files one side lacks, files
            whose bytes differ, a unified diff of the first few) and by `diff -r`;
  sidecar   `python -m groundwiki serve` on each corpus, asked once every lane is ready, every
            vector computed and no sync pending: --queries drawn with a fixed seed from the page
            titles and headings (parity_queries.py), each through POST /search and POST
            /chunks/search, hybrid, lexical and semantic, with `explain`; the answers compared
            less VOLATILE (clocks and timings). Then each side serves a copy of the base's
            finished index searched exhaustively (EXHAUSTIVE): the same vectors and the same
            neighbours, so that any difference is the code's.

The vault's sidecar embeds page summaries only (embed_chunks and embed_passages off; the vault
has no raw sources), so that its 6,571 notes embed in minutes on two cores (--vault-passages
embeds its passages too). Logs, answers and the whole `diff -r` go to --out-dir.

    .venv/bin/python bench/layout_parity.py [--base 358450c] [--corpora handbook,vault]
        [--skip-sites] [--skip-sidecar] [--no-repeat] [--queries 100] [--keep]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
from pathlib import Path
from typing import Any

from harness import RESULTS, machine_facts, stop_sidecar, write_results
from obsidian_vault import DEFAULT_VAULT, call, free_port, write_config
from parity_compare import STATUS_FIELDS, VOLATILE, compare_answers, compare_sites, run_to_run
from parity_queries import make_queries

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
HANDBOOK_FILES = ("wiki", "raw-sources", "mkdocs.yml", "wiki.lock", "lint-baseline.json")
SOURCE_DATE_EPOCH = "1767225600"  # 2026-01-01: any fixed date makes the sitemap reproducible
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


# ---------------------------------------------------------------- sides and inputs


def side_env(plugins: str | None) -> dict[str, str]:
    """The environment of one side: its code first on PYTHONPATH, or no PYTHONPATH at all (the
    editable install of this checkout)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(NO_MKDOCS_2_WARNING="1", SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
    if plugins is not None:
        env["PYTHONPATH"] = plugins
    return env


def code_snapshot(work: Path) -> tuple[str, str]:
    """This checkout's code copied as it is now: (PYTHONPATH, a fingerprint of its sources)."""
    digest = hashlib.sha256()
    for folder in ("plugins", "sidecar"):
        shutil.copytree(ROOT / folder, work / "this" / folder, ignore=IGNORED)
        for path in sorted((work / "this" / folder).rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(work).as_posix().encode() + path.read_bytes())
    pythonpath = os.pathsep.join(str(work / "this" / f) for f in ("plugins", "sidecar"))
    return pythonpath, digest.hexdigest()[:16]


def provenance(env: dict[str, str]) -> dict[str, str]:
    """Which files a side's code is imported from: proof that the side runs the code it names."""
    probe = (  # the plugin as MkDocs finds it: through the installed entry point
        "import inspect, json, importlib.metadata as m, groundwiki, groundwiki.cli as c\n"
        "p = m.entry_points(group='mkdocs.plugins')['groundwiki'].load()\n"
        "print(json.dumps({'groundwiki': groundwiki.__file__, 'cli': c.__file__, "
        "'plugin': inspect.getfile(p)}))"
    )
    done = subprocess.run(
        [PYTHON, "-c", probe], env=env, cwd="/", capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def writable(folder: Path) -> None:
    """The vault's files are read-only; their copies must be deletable."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


def snapshot(work: Path, vault: Path | None) -> dict[str, Path]:
    """The inputs as they are now, from which every run's copy is made."""
    sources = work / "sources"
    handbook = sources / "handbook"
    handbook.mkdir(parents=True)
    for name in HANDBOOK_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, handbook / name, symlinks=True)
        elif (ROOT / name).is_file():
            shutil.copy2(ROOT / name, handbook / name)
    if vault is not None:
        shutil.copytree(vault, sources / "vault", symlinks=True)
        writable(sources / "vault")
    return {"handbook": handbook, "vault": sources / "vault"}


def fresh_input(work: Path, corpus: str, sources: dict[str, Path], sidecar: dict[str, Any]) -> Path:
    """A fresh copy of a corpus at the same path for every run; returns its mkdocs.yml."""
    root = work / "input" / corpus
    shutil.rmtree(root, ignore_errors=True)
    if corpus == "handbook":
        shutil.copytree(sources["handbook"], root, symlinks=True)
        return root / "mkdocs.yml"
    root.mkdir(parents=True)
    docs = root / DEFAULT_VAULT.name
    shutil.copytree(sources["vault"], docs, symlinks=True)
    options = {"groundwiki": {"sidecar": sidecar}} if sidecar else {}
    return write_config(root, "mkdocs.yml", docs, plugin=True, **options)


# ---------------------------------------------------------------- sites


def build_site(config: Path, env: dict[str, str], site: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [PYTHON, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mkdocs build exited {done.returncode}:\n{done.stderr[-3000:]}")
    return round(time.perf_counter() - started, 1)


def site_figures(
    work: Path, corpora: list[str], sources: dict[str, Path], runs: list[tuple[str, dict[str, str]]],
    out_dir: Path,
) -> dict[str, Any]:  # fmt: skip
    out: dict[str, Any] = {}
    sites = work / "sites"
    for corpus in corpora:
        seconds: dict[str, float] = {}
        for run, env in runs:
            config = fresh_input(work, corpus, sources, {})
            seconds[run] = build_site(config, env, sites / f"{corpus}-{run}")
            print(f"  {corpus}: {run} built in {seconds[run]} s", flush=True)
        out[corpus] = row = {"build_s": seconds}
        for run in list(seconds)[1:]:
            diff = out_dir / f"site-{corpus}-base-vs-{run}.diff"
            pair = (sites / f"{corpus}-base", sites / f"{corpus}-{run}")
            row[f"base_vs_{run.replace('-', '_')}"] = got = compare_sites(
                *pair, ("base", run), diff
            )
            state = "identical" if got["identical"] else f"{len(got['differing'])} files differ"
            print(f"site {corpus}, base vs {run}: {got['files']} files, {state} "
                  f"(diff -r exit {got['diff_r_exit']})", flush=True)  # fmt: skip
            for excerpt in got["diff_excerpts"]:
                print(excerpt)
    return out


# ---------------------------------------------------------------- the sidecar

MODES = {
    "search_hybrid": ("/search", None),
    "search_lexical": ("/search", ["lexical"]),
    "search_semantic": ("/search", ["semantic"]),
    "chunks_hybrid": ("/chunks/search", None),
    "chunks_lexical": ("/chunks/search", ["lexical"]),
    "chunks_semantic": ("/chunks/search", ["semantic"]),
}
INDEX_DIR = ".groundwiki"  # the sidecar's default index_dir, under the wiki root
PAIRS = (("base", "this"), ("base", "base-again"),
         ("base-exact", "this-exact"), ("base-exact", "base-again-exact"))  # fmt: skip
# Chroma's HNSW, loaded afresh by each process, finds other approximate neighbours from process
# to process (one index folder, 20 random query vectors, the handbook's 850 chunks: no top-100
# list and 15 of 20 top-10 lists alike in two processes, each the same when asked again within its
# process). With ef_search at least twice a collection's size the search is exhaustive (20 of 20
# top-100 lists equal a brute-force cosine search) and the same in every process.
EXHAUSTIVE = """
import json, sys
import chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
set_to = {}
for listed in client.list_collections():
    collection = client.get_collection(listed.name)
    set_to[listed.name] = max(1000, 2 * collection.count())
    collection.modify(configuration={"hnsw": {"ef_search": set_to[listed.name]}})
print(json.dumps(set_to))
"""


def ready(status: dict[str, Any]) -> bool:
    """Every lane answers with everything it will have: no vector pending, no sync running."""
    lanes = status.get("lanes", {})
    sync = status.get("sync", {})
    return (
        status.get("generation", 0) >= 1
        and status.get("warming") is False
        and status.get("embedding_pending") == 0
        and status.get("pending_events") == 0
        and not sync.get("running")
        and all(lanes.get(name, {}).get("state") == "ok" for name in ("lexical", "semantic"))
    )


def wait_ready(url: str, process: subprocess.Popen[Any], timeout: float) -> dict[str, Any]:
    started = time.perf_counter()
    settled, told = None, 0.0
    last: dict[str, Any] = {}
    while (waited := time.perf_counter() - started) < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"the sidecar exited {process.returncode}")
        try:
            last = call(f"{url}/status")[1]
        except (urllib.error.URLError, OSError, json.JSONDecodeError):
            time.sleep(1)
            continue
        # Ready twice in a row, two seconds apart, with nothing synced or embedded in between.
        mark = (last.get("generation"), last.get("last_sync"), last.get("texts_embedded"))
        if ready(last) and settled == mark:
            return {**last, "ready_s": round(waited, 1)}
        settled = mark if ready(last) else None
        if waited - told > 120:
            told = waited
            lanes = {k: v.get("state") for k, v in last.get("lanes", {}).items()}
            print(f"    {waited:.0f} s: {last.get('embedding_pending')} texts to embed, "
                  f"{last.get('embedding_texts_per_s')}/s, lanes {lanes}", flush=True)  # fmt: skip
        time.sleep(2)
    raise RuntimeError(f"not ready after {timeout:.0f} s; last status: {json.dumps(last)[:2000]}")


def ask_all(url: str, queries: list[dict[str, str]]) -> dict[str, list[Any]]:
    answers: dict[str, list[Any]] = {mode: [] for mode in MODES}
    for item in queries:
        for mode, (path, lanes) in MODES.items():
            body: dict[str, Any] = {"query": item["query"], "limit": 10, "explain": True}
            if lanes:
                body["lanes"] = lanes
            status, answer = call(f"{url}{path}", body)
            answers[mode].append({"http": status, **answer})
    return answers


def serve_and_ask(
    config: Path, env: dict[str, str], queries: list[dict[str, str]], log: Path, timeout: float
) -> dict[str, Any]:
    port = free_port()
    with log.open("w") as sink:
        process = subprocess.Popen(
            [PYTHON, "-m", "groundwiki", "serve", "-f", str(config), "--port", str(port)],
            cwd=config.parent,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            status = wait_ready(url, process, timeout)
            started = time.perf_counter()
            answers = ask_all(url, queries)
            asked_s = round(time.perf_counter() - started, 1)
            after = call(f"{url}/status")[1]
        finally:
            stop_sidecar(process)
    # Answers given while the indexes moved would not compare: say so rather than hide it. (A
    # safety sync every 60 s moves last_sync alone when nothing changed: not a move.)
    moved = not ready(after) or after.get("generation") != status.get("generation")
    return {"status": status, "answers": answers, "asked_s": asked_s, "index_moved": moved}


def sidecar_figures(
    work: Path,
    corpora: list[str],
    sources: dict[str, Path],
    runs: list[tuple[str, dict[str, str]]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    vault_sidecar = {"embed_chunks": False, "page_vector": "summary",
                     "embed_passages": args.vault_passages}  # fmt: skip
    # Then each side again on a copy of the base's finished index, searched exhaustively: the
    # same vectors, the same neighbours, so what differs is the code's doing.
    runs = [*runs, *((f"{run}-exact", env) for run, env in runs)]
    for corpus in corpora:
        sidecar = vault_sidecar if corpus == "vault" else {}
        config = fresh_input(work, corpus, sources, sidecar)
        docs = config.parent / ("wiki" if corpus == "handbook" else DEFAULT_VAULT.name)
        queries = make_queries(docs, args.queries, args.seed)
        results: dict[str, dict[str, Any]] = {}
        exact, ef_search = work / "index" / f"{corpus}-exact", {}
        for run, env in runs:
            config = fresh_input(work, corpus, sources, sidecar)
            if run.endswith("-exact"):
                shutil.copytree(exact, config.parent / INDEX_DIR, symlinks=True)
            log = args.out_dir / f"sidecar-{corpus}-{run}.log"
            results[run] = serve_and_ask(config, env, queries, log, args.ready_timeout)
            if run == "base":
                shutil.copytree(config.parent / INDEX_DIR, exact, symlinks=True)
                script = [PYTHON, "-c", EXHAUSTIVE, str(exact / "chroma")]
                ef_search = json.loads(
                    subprocess.run(script, capture_output=True, check=True).stdout
                )
            (args.out_dir / f"answers-{corpus}-{run}.json").write_text(
                json.dumps(results[run], indent=1) + "\n", encoding="utf-8"
            )
            status = results[run]["status"]
            print(
                f"  {corpus}: {run} ready in {status['ready_s']} s ({status['texts_embedded']} "
                f"texts embedded), {len(queries) * len(MODES)} answers in "
                f"{results[run]['asked_s']} s",
                flush=True,
            )
        row: dict[str, Any] = {
            "settings": sidecar or "the handbook's mkdocs.yml (defaults)",
            "queries": len(queries),
            "short": sum(q["kind"] == "short" for q in queries),
            "ready_s": {run: r["status"]["ready_s"] for run, r in results.items()},
            "texts_embedded": {run: r["status"]["texts_embedded"] for run, r in results.items()},
            "index_moved": {run: r["index_moved"] for run, r in results.items()},
            "counts": {k: results["base"]["status"].get(k) for k in STATUS_FIELDS[:8]},
            "query_examples": [q["query"][:160] for q in queries[:6]],
        }
        row["exact_ef_search"] = ef_search
        pairs = {f"{a}_vs_{b}".replace("-", "_"): (a, b) for a, b in PAIRS if b in results}
        for name, (a, b) in pairs.items():
            row[name] = compare_answers(results[a], results[b], queries)
        print(f"sidecar {corpus}: identical answers of {len(queries)}")
        print(f"  {'':<16}" + "".join(f"{a + ' vs ' + b:>34}" for a, b in pairs.values()))
        for mode in MODES:
            print(f"  {mode:<16}" + "".join(
                f"{row[name]['modes'][mode]['identical']:>34}" for name in pairs))  # fmt: skip
        # With the same code twice: the fields that vary run to run (from an exhaustive search,
        # only the clocks and timings VOLATILE names; from a fresh index, the semantic lane's).
        for a, b in (("base", "base-again"), ("base-exact", "base-again-exact")):
            if b in results:
                row[f"run_to_run_fields_{a}".replace("-", "_")] = run_to_run(results[a], results[b])
        out[corpus] = row
    return out


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="358450c", help="the commit before the change")
    parser.add_argument("--corpora", default="handbook,vault", help="handbook, vault or both")
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--skip-sites", action="store_true")
    parser.add_argument("--skip-sidecar", action="store_true")
    parser.add_argument("--no-repeat", action="store_true", help="run the base once, not twice")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--vault-passages", action="store_true", help="embed the vault's passages")
    parser.add_argument("--ready-timeout", type=float, default=5400, help="seconds per sidecar")
    parser.add_argument("--out-dir", type=Path, default=Path("/tmp/g"), help="logs and answers")
    parser.add_argument("--output", type=Path, default=RESULTS / "layout_parity.json")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (sites)")
    parser.add_argument("--this-from", choices=("snapshot", "install"), default="snapshot")
    args = parser.parse_args(argv)
    corpora = [c for c in args.corpora.split(",") if c]
    if "vault" in corpora and not args.vault.is_dir():
        print(f"no vault at {args.vault}: give one with --vault DIR", file=sys.stderr)
        return 2
    args.out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gw-layout-parity-"))
    base = work / "base"
    results: dict[str, Any] = {"benchmark": "layout_parity", "machine": machine_facts()}
    try:
        git = ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base]
        subprocess.run(git, check=True, capture_output=True)
        head = ["git", "-C", str(base), "rev-parse", "HEAD"]
        results["base"] = subprocess.run(head, capture_output=True, text=True).stdout.strip()
        this, results["this_fingerprint"] = code_snapshot(work)
        envs = {"base": side_env(str(base / "plugins")),
                "this": side_env(this if args.this_from == "snapshot" else None)}  # fmt: skip
        runs = [("base", envs["base"]), ("this", envs["this"])]
        runs += [] if args.no_repeat else [("base-again", envs["base"])]
        results["code"] = {side: provenance(env) for side, env in envs.items()}
        results["params"] = {k: str(v) for k, v in vars(args).items()}
        results["volatile_fields"] = sorted(VOLATILE)
        print(f"base {results['base'][:12]}; this: {results['code']['this']['groundwiki']}")
        sources = snapshot(work, args.vault.resolve() if "vault" in corpora else None)
        if not args.skip_sites:
            results["sites"] = site_figures(work, corpora, sources, runs, args.out_dir)
        if not args.skip_sidecar:
            results["sidecar"] = sidecar_figures(work, corpora, sources, runs, args)
    except BaseException as exc:
        results["error"] = repr(exc)[:3000]
        write_results(args.out_dir / "layout_parity.partial.json", results)
        raise
    finally:
        remove = ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)]
        subprocess.run(remove, check=False, capture_output=True)
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sites = results.get("sites", {}).values()
    sites_ok = all(r["base_vs_this"]["identical"] for r in sites) if sites else None
    # The verdict on the code: its answers from the base's index searched exhaustively. Else
    # the semantic lane's approximate neighbours vary from process to process, the base's too.
    exact = "base_exact_vs_this_exact"
    sidecars = results.get("sidecar", {}).values()
    answers_ok = all(r[exact]["identical"] for r in sidecars) if sidecars else None
    results["verdict"] = {"sites_identical": sites_ok, "answers_identical": answers_ok}
    write_results(args.output, results)
    print(f"sites identical: {sites_ok}; sidecar answers from one index identical: {answers_ok}")
    return 1 if False in (sites_ok, answers_ok) else 0


if __name__ == "__main__":
    sys.exit(main())
