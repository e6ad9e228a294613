"""How rendering a page of section embeds scales with their number.

Generates a wiki of two pages: `Big.md` with n sections (`## S{i}`, a paragraph with a block id)
and `index.md` with n lines `![[Big#S{i}]]`, compiles it in-process and times `render_page` of
`index.md`, the part of a build transclusions cost. Linear work doubles with n; the ratio per
doubling says whether it stays so (about 2) or not (4 and up).

    .venv/bin/python bench/transclusion_scale.py [--sizes 250,500,1000,2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from groundwiki.core import compile_wiki, load_config
from groundwiki.core.model.site_paths import SiteLayout
from groundwiki.core.render.page import render_page
from harness import RESULTS, add_scale_options, machine_facts, repeat, write_results


def write_vault(root: Path, n: int) -> Path:
    docs = root / "wiki"
    docs.mkdir(parents=True)
    sections = "".join(f"## S{i}\n\ntext {i} ^b{i}\n\n" for i in range(n))
    (docs / "Big.md").write_text(f"# Big\n\n{sections}", encoding="utf-8")
    embeds = "".join(f"![[Big#S{i}]]\n\n" for i in range(n))
    (docs / "index.md").write_text(f"# Index\n\n{embeds}", encoding="utf-8")
    (root / "mkdocs.yml").write_text(
        "site_name: bench\ndocs_dir: wiki\nplugins:\n  - groundwiki\n", encoding="utf-8"
    )
    return root / "mkdocs.yml"


def measure(n: int, repeats: int, long_run: float) -> float:
    with tempfile.TemporaryDirectory() as folder:
        wiki = compile_wiki(load_config(write_vault(Path(folder), n)))
        page = next(p for p in wiki.pages.values() if p.doc_path == "index.md")
        layout = SiteLayout.for_pages(
            "raw-sources", True, [p.doc_path for p in wiki.pages.values()]
        )
        times, rendered = repeat(lambda: render_page(wiki, page, layout, {}), repeats, long_run)
        assert rendered.markdown.count("gw-block-") >= n  # every embed became a transclusion
        return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_scale_options(parser, repeats=3, long_run=20.0, unit="render")
    parser.set_defaults(sizes="250,500,1000,2000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    rows = []
    previous: float | None = None
    for n in sizes:
        seconds = measure(n, args.repeats, args.long_run)
        ratio = seconds / previous if previous else None
        shown = f"  x{ratio:.2f} per doubling" if ratio else ""
        print(f"n={n:6d}  render_page {seconds:8.3f} s{shown}", flush=True)
        rows.append({"sections": n, "render_seconds": round(seconds, 4), "ratio": ratio})
        previous = seconds
    write_results(RESULTS / "transclusion_scale.json", {"machine": machine_facts(), "runs": rows})


if __name__ == "__main__":
    main()
