"""`groundwiki lsp` on a large wiki, driven by a real LSP client (pygls') over stdio: how long
after an edit its diagnostics arrive, and how long a definition and a completion take.

Generates the seeded synthetic wiki of lint_scale.py (10,001 pages by default), starts the
server, waits for its first compile, opens one page, then for each round: changes the buffer
(a broken link added, or removed again) and times until the page's diagnostics change; asks for
the definition of a wikilink and for a completion after `[[`. Targets (issue 29): diagnostics
within 300 ms, definition and completion within 100 ms (p95), printed, not enforced.

    .venv/bin/python bench/editor_latency.py [--pages 10000] [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import RESULTS, machine_facts, p95, write_results
from lint_scale import generate_wiki
from lsprotocol import types
from pygls.lsp.client import LanguageClient

TARGETS = {"diagnostics": 0.3, "definition": 0.1, "completion": 0.1}


async def measure(root: Path, rounds: int) -> dict[str, Any]:
    client = LanguageClient("bench", "1")
    published: dict[str, tuple[float, list[types.Diagnostic]]] = {}
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published[params.uri] = (time.perf_counter(), list(params.diagnostics))
        arrived.set()

    await client.start_io(sys.executable, "-m", "groundwiki", "lsp")
    started = time.perf_counter()
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri())
    )
    client.initialized(types.InitializedParams())
    docs = root / "wiki"
    page = next(p for p in sorted(docs.rglob("*.md")) if "[[" in p.read_text(encoding="utf-8"))
    uri = page.as_uri()
    text = page.read_text(encoding="utf-8")
    arrived.clear()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )
    while uri not in published:
        await asyncio.wait_for(arrived.wait(), 600)
        arrived.clear()
    first = time.perf_counter() - started
    print(f"first compile and the page's diagnostics: {first:.1f} s")
    where = types.TextDocumentIdentifier(uri=uri)
    lines = text.splitlines()
    line = next(i for i, t in enumerate(lines) if "[[" in t)
    link = types.Position(line=line, character=lines[line].index("[[") + 2)
    times: dict[str, list[float]] = {"diagnostics": [], "definition": [], "completion": []}
    for number in range(rounds):
        broken = number % 2 == 0
        new = text + (f"\nSee [[no-such-page-{number}]].\n" if broken else "")
        before = published[uri][0]
        began = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=number + 2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=new)],
            )
        )
        while published[uri][0] == before or (
            any(d.code == "broken-link" for d in published[uri][1]) != broken
        ):
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 60)
        times["diagnostics"].append(published[uri][0] - began)
        began = time.perf_counter()
        await client.text_document_definition_async(
            types.DefinitionParams(text_document=where, position=link)
        )
        times["definition"].append(time.perf_counter() - began)
        typed = new + "\nMore [[con"
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=number + 1000),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=typed)],
            )
        )
        end = types.Position(line=len(typed.splitlines()) - 1, character=len("More [[con"))
        began = time.perf_counter()
        await client.text_document_completion_async(
            types.CompletionParams(text_document=where, position=end)
        )
        times["completion"].append(time.perf_counter() - began)
        print(
            f"  round {number + 1}: diagnostics {times['diagnostics'][-1] * 1000:6.0f} ms, "
            f"definition {times['definition'][-1] * 1000:5.0f} ms, "
            f"completion {times['completion'][-1] * 1000:5.0f} ms"
        )
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {
        "first_s": first,
        **{
            name: {"runs": runs, "p50_s": statistics.median(runs), "p95_s": p95(runs)}
            for name, runs in times.items()
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output", type=Path, default=RESULTS / "editor_latency.json")
    args = parser.parse_args(argv)
    facts = machine_facts()
    print(f"machine: {facts['platform']}, {facts['cpu_count']} CPUs, Python {facts['python']}")
    workdir = Path(tempfile.mkdtemp(prefix="groundwiki-editor-"))
    try:
        root = workdir / "wiki-root"
        generated = generate_wiki(root, args.pages, args.seed, 0.0)
        print(f"{generated.pages} pages, {generated.sources} raw sources")
        results = asyncio.run(measure(root, args.rounds))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    verdicts = {}
    for name, target in TARGETS.items():
        got = results[name]["p95_s"]
        verdicts[name] = got <= target
        print(
            f"{'PASS' if got <= target else 'FAIL'} {name} p95 {got * 1000:.0f} ms "
            f"(target {target * 1000:.0f} ms; p50 {results[name]['p50_s'] * 1000:.0f} ms)"
        )
    write_results(
        args.output,
        {
            "benchmark": "editor_latency",
            "machine": facts,
            "params": {"pages": args.pages, "rounds": args.rounds, "seed": args.seed},
            "results": results,
            "targets_s": TARGETS,
            "pass": verdicts,
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
