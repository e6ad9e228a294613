"""Search queries drawn from a wiki's page titles and headings with a fixed seed, half short (a
title or heading) and half long (a heading and its paragraph, or a question joining two titles),
for benchmarks that ask two sidecars the same questions (bench/layout_parity.py)."""

from __future__ import annotations

import random
import re
from pathlib import Path

HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
MARKUP = re.compile(r"\[\[([^\]|#]*)(?:[^\]]*)\]\]|\[([^\]]*)\]\([^)]*\)|[*_`=>#|]+|<[^>]+>")


def plain(text: str) -> str:
    """Markdown markup out of a heading or line: wikilinks and links become their text."""
    return " ".join(MARKUP.sub(lambda m: m.group(1) or m.group(2) or " ", text).split())


def headings_of(text: str) -> list[tuple[str, str]]:
    """(heading, the first paragraph under it, up to 60 words) of a page, outside code fences."""
    found: list[tuple[str, str]] = []
    fenced = False
    lines = [*text.splitlines(), ""]
    for number, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            start = next((n for n in range(number + 1, len(lines)) if lines[n].strip()), number)
            stop = next(n for n in range(start, len(lines)) if not lines[n].strip())
            prose = plain(" ".join(lines[start:stop])) if start > number else ""
            prose = "" if HEADING.match(lines[start]) or FENCE.match(lines[start]) else prose
            found.append((plain(match.group(2)), " ".join(prose.split()[:60])))
    return [(h, p) for h, p in found if re.search(r"[^\W\d_]{3}", h)]


def make_queries(docs: Path, count: int, seed: int) -> list[dict[str, str]]:
    """Up to `count` distinct queries, half short and half long, drawn with `seed` from the pages
    of `docs` (a heading many pages share, such as a vault's footer, counts once)."""
    titles: set[str] = set()
    distinct: dict[str, tuple[str, str]] = {}
    for page in sorted(docs.rglob("*.md")):
        titles.add(plain(page.stem.replace("-", " ")))
        for heading, prose in headings_of(page.read_text(encoding="utf-8", errors="replace")):
            distinct.setdefault(heading.casefold(), (heading, prose))
    names, sections = sorted(t for t in titles if t), sorted(distinct.values())
    with_prose = [s for s in sections if s[1]]
    rng = random.Random(seed)
    queries: list[dict[str, str]] = []
    seen: set[str] = set()
    for _ in range(100 * count):  # bounded: a small wiki may offer fewer distinct queries
        if len(queries) == count:
            break
        if len(queries) % 2 == 0:
            text = rng.choice(names) if rng.random() < 0.4 else rng.choice(sections)[0]
            kind, text = "short", " ".join(text.split()[:8])
        elif rng.random() < 0.6:
            heading, prose = rng.choice(with_prose)
            kind, text = "long", f"{heading}: {prose}"
        else:
            one, two = rng.sample(names, 2)
            kind = "long"
            text = f"How does {one} relate to {two}, and where is it explained with an example?"
        if text.casefold() not in seen:
            seen.add(text.casefold())
            queries.append({"kind": kind, "query": text})
    return queries
