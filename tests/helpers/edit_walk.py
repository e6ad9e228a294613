"""Random walks of writers' edits over a real vault, for the incremental compile's property
tests: each step changes files as a writer would (an edit with a new link, an embed or a
citation, a rename without fixing links, a deletion, a new page, a new alias, a new title or
heading, a raw source edited, added or deleted, the lock written), then the compile kept across
steps (it recomputes only what the change makes stale) must equal a compile from scratch.

The from-scratch compile shares the parsed page files (a page file parses the same whatever
else changed): what it does not share is every result across pages (where links land, citation
states, findings, the graph), which it computes anew.
"""

from __future__ import annotations

import os
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from groundwiki.core.config.wiki_config import load_config
from groundwiki.core.evidence.lock import write_lock
from groundwiki.core.lint.runner import collect_findings
from groundwiki.core.wiki.compiled import Wiki
from groundwiki.core.wiki.compiler import CompileCache, compile_wiki
from groundwiki.core.wiki.graph import build_graph

from helpers.wikis import ROOT

VAULT = ROOT.parent / "shared" / "vaults" / "obsidian-hub"
# 230 notes of the vault, linked to each other in every style (the fast lane's walk).
VAULT_PARTS = (
    "00 - Contribute to the Obsidian Hub",
    "03 - Showcases & Templates",
    "04 - Guides, Workflows, & Courses",
    "05 - Concepts",
    "06 - Inbox",
)
SOURCE_COUNT = 12
# Aliases and titles the walk gives pages, and links name before or after they are given.
NAMES = tuple(f"Shared name {n}" for n in range(6))
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "evidence",
    "claim",
    "vault",
    "plugin",
    "note",
    "graph",
    "index",
    "search",
]


def copy_vault(root: Path, parts: tuple[str, ...] | None = None) -> Path:
    """The vault (or some of its top folders) under root/vault, with raw sources and a
    mkdocs.yml; returns the mkdocs.yml."""
    docs = root / "vault"
    if parts is None:
        shutil.copytree(VAULT, docs, ignore=shutil.ignore_patterns(".git", ".obsidian"))
    else:
        docs.mkdir(parents=True)
        for part in parts:
            shutil.copytree(VAULT / part, docs / part)
    raw = root / "raw-sources"
    raw.mkdir()
    rng = random.Random(7)
    for number in range(SOURCE_COUNT):
        lines = [
            f"Line {i} of source {number}: {' '.join(rng.sample(WORDS, 4))}." for i in range(40)
        ]
        (raw / f"source-{number}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = {"site_name": "walk", "docs_dir": "vault", "plugins": [{"groundwiki": {}}]}
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root / "mkdocs.yml"


def compile_state(wiki: Wiki) -> dict[str, Any]:
    """Everything a compile gives per page and across pages, comparable by value."""
    links = [(i.page.doc_path, i.link, i.resolution, i.attachment) for i in wiki.resolved_links]
    states = [
        (
            s.page.doc_path,
            s.citation,
            s.name,
            s.status,
            s.current,
            s.first_line,
            s.record,
            s.moved_to,
        )
        for s in wiki.citation_states
    ]
    graph = build_graph(wiki)
    return {
        "links": links,
        "citation states": states,
        "findings": collect_findings(wiki),
        "graph": graph.to_json(),
        "backlinks": graph.backlinks(),
    }


def differences(kept: dict[str, Any], full: dict[str, Any]) -> list[str]:
    """What differs between two states, shortly (the first item that differs of each part)."""
    found: list[str] = []
    for name in full:
        if kept[name] == full[name]:
            continue
        a, b = kept[name], full[name]
        if isinstance(a, list) and isinstance(b, list):
            extra = [x for x in a if x not in b][:2]
            missing = [x for x in b if x not in a][:2]
            found.append(f"{name}: incremental has {extra}, full has {missing}")
        else:
            found.append(f"{name} differs")
    return found


@dataclass
class EditWalk:
    """A seeded walk of edits over the wiki of `config_file`."""

    config_file: Path
    seed: int
    # Tell each compile which paths changed, as the sidecar's file watcher does, instead of
    # letting it walk the folders and compare every file.
    told: bool = False
    steps_done: int = 0
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.config = load_config(self.config_file)
        self.docs = self.config.docs_dir
        self.raw = self.config.raw_dir
        self.cache = CompileCache()
        self.clock = 1_700_000_000 * 10**9  # each write gets a later time than the last
        self.pages = sorted(p.relative_to(self.docs).as_posix() for p in self.docs.rglob("*.md"))
        self.hubs: set[str] = set()  # pages given embeds during the walk
        self.touched: set[Path] = set()  # paths changed since the last compile

    def compile(self) -> Wiki:
        """The compile kept across steps."""
        changed, self.touched = frozenset(self.touched), set()
        return compile_wiki(self.config, files=self.cache, changed=changed if self.told else None)

    def _made_folder(self, folder: Path) -> None:
        """Create `folder` if it is not there; a watcher reports a new folder too."""
        if not folder.is_dir():
            folder.mkdir(parents=True)
            self.touched.add(folder)

    def compile_from_scratch(self) -> Wiki:
        cache = self.cache
        fresh = CompileCache(pages=cache.pages, sources=cache.sources, chunks=cache.chunks)
        return compile_wiki(self.config, files=fresh)

    def step(self) -> str:
        operations = (
            (self.add_link, 5),
            (self.add_embed, 2),
            (self.add_citation, 3),
            (self.rename, 2),
            (self.delete, 1),
            (self.new_page, 2),
            (self.add_alias, 2),
            (self.retitle, 1),
            (self.edit_heading, 1),
            (self.archive, 1),
            (self.edit_source, 2),
            (self.add_or_delete_source, 1),
            (self.write_lock, 1),
        )
        if self.steps_done < len(operations):  # every kind of change once, then at random
            chosen = operations[self.steps_done][0]
        else:
            chosen = self.rng.choices([op for op, _ in operations], [w for _, w in operations])[0]
        what = chosen()
        self.steps_done += 1
        self.log.append(what)
        return what

    # --- files -------------------------------------------------------------------------------

    def _write(self, path: Path, text: str) -> None:
        self._made_folder(path.parent)
        path.write_text(text, encoding="utf-8")
        self.touched.add(path)
        self.clock += 10**9
        os.utime(path, ns=(self.clock, self.clock))

    def _pick(self) -> str:
        return self.rng.choice(self.pages)

    def _text(self, doc: str) -> str:
        return (self.docs / doc).read_text(encoding="utf-8", errors="replace")

    def _name_of(self, doc: str) -> str:
        """How a writer would name the page in a link: its file name, its path, or a name that
        fits nothing."""
        stem = doc.rsplit("/", 1)[-1].removesuffix(".md")
        named = self.rng.choice(NAMES)
        return self.rng.choice(
            [stem, stem, stem.lower(), doc.removesuffix(".md"), f"{stem} missing", doc, named]
        )

    def _append(self, doc: str, text: str) -> None:
        self._write(self.docs / doc, self._text(doc).rstrip("\n") + "\n\n" + text + "\n")

    # --- operations --------------------------------------------------------------------------

    def add_link(self) -> str:
        doc, target = self._pick(), self._pick()
        name = self._name_of(target)
        anchor = ""
        headings = [
            line.lstrip("#").strip()
            for line in self._text(target).splitlines()
            if line.startswith("#")
        ]
        if headings and self.rng.random() < 0.4:
            anchor = "#" + self.rng.choice([*headings, "No such heading"])
        style = self.rng.random()
        link = f"[[{name}{anchor}]]" if style < 0.7 else f"[see]({target.replace(' ', '%20')})"
        self._append(doc, f"See also {link}.")
        return f"link {doc} -> {link}"

    def add_embed(self) -> str:
        """One embed, or a fan of them, mostly of pages that embed others already: chains
        grow over the walk until some page transcludes more than it may show."""
        doc = self._pick()
        count = self.rng.choice([1, 16, 20])
        links = []
        for _ in range(count):
            hubs = sorted(self.hubs - {doc})
            target = self.rng.choice(hubs) if hubs and self.rng.random() < 0.8 else self._pick()
            links.append(f"![[{target.removesuffix('.md')}]]")
        self._append(doc, "\n".join(links))
        self.hubs.add(doc)
        return f"embed {doc} -> {len(links)} pages"

    def add_citation(self) -> str:
        doc = self._pick()
        number = self.rng.randrange(SOURCE_COUNT + 2)  # two that may not exist
        start = self.rng.randrange(1, 45)
        spec = f"source-{number}.md#L{start}-L{start + self.rng.randrange(3)}"
        self._append(doc, f"A claim. <!-- from: raw-sources/{spec} -->")
        return f"cite {doc} -> {spec}"

    def rename(self) -> str:
        doc = self._pick()
        folder = doc.rsplit("/", 1)[0] if "/" in doc and self.rng.random() < 0.6 else "Moved"
        new = f"{folder}/Renamed {self.steps_done} {doc.rsplit('/', 1)[-1]}"
        self._made_folder((self.docs / new).parent)
        (self.docs / doc).rename(self.docs / new)
        self.touched |= {self.docs / doc, self.docs / new}
        self.clock += 10**9
        os.utime(self.docs / new, ns=(self.clock, self.clock))
        self.pages.remove(doc)
        self.pages.append(new)
        if doc in self.hubs:
            self.hubs.discard(doc)
            self.hubs.add(new)
        return f"rename {doc} -> {new}"

    def delete(self) -> str:
        doc = self._pick()
        (self.docs / doc).unlink()
        self.touched.add(self.docs / doc)
        self.pages.remove(doc)
        self.hubs.discard(doc)
        return f"delete {doc}"

    def new_page(self) -> str:
        # Sometimes the name of a page elsewhere (a name two folders share), or in another case.
        other = self._pick()
        name = other.rsplit("/", 1)[-1]
        if self.rng.random() < 0.5:
            name = f"New {self.steps_done}.md"
        elif self.rng.random() < 0.3:
            name = name.upper().removesuffix(".MD") + ".md"
        folder = self.rng.choice(
            ["Inbox", *(d.rsplit("/", 1)[0] for d in self.pages if "/" in d)][:20]
        )
        doc = f"{folder}/{name}"
        if doc in self.pages or (self.docs / doc).exists():
            return self.add_link()
        target = self._name_of(self._pick())
        self._write(
            self.docs / doc,
            f"# A new note {self.steps_done}\n\nIt links to [[{target}]].\n\n## Section\n\nText.\n",
        )
        self.pages.append(doc)
        return f"new {doc}"

    def _set_field(self, doc: str, key: str, value: str) -> None:
        text = self._text(doc)
        if text.startswith("---\n") and "\n---" in text[4:]:
            end = text.index("\n---", 4)
            lines = [line for line in text[4:end].splitlines() if not line.startswith(f"{key}:")]
            front = "\n".join([*lines, f"{key}: {value}"])
            self._write(self.docs / doc, f"---\n{front}{text[end:]}")
        else:
            self._write(self.docs / doc, f"---\n{key}: {value}\n---\n{text}")

    def add_alias(self) -> str:
        doc = self._pick()
        # Now and then another page's name, or an alias some page has already.
        alias = self.rng.choice([*NAMES, self._pick().rsplit("/", 1)[-1].removesuffix(".md")])
        self._set_field(doc, "aliases", f'["{alias}"]')

        return f"alias {doc} += {alias}"

    def retitle(self) -> str:
        doc = self._pick()
        title = self.rng.choice(NAMES)
        self._set_field(doc, "title", f'"{title}"')

        return f"title {doc} = {title}"

    def edit_heading(self) -> str:
        doc = self._pick()
        lines = self._text(doc).splitlines()
        headings = [i for i, line in enumerate(lines) if line.startswith("## ")]
        if headings:
            lines[self.rng.choice(headings)] = f"## Heading {self.steps_done}"
        else:
            lines.append(f"\n## Heading {self.steps_done}")
        self._write(self.docs / doc, "\n".join(lines) + "\n")
        return f"heading {doc}"

    def archive(self) -> str:
        doc = self._pick()
        self._set_field(doc, "archived_since", "2026-01-01")
        return f"archive {doc}"

    def edit_source(self) -> str:
        path = self.rng.choice(sorted(self.raw.glob("*.md")))
        lines = path.read_text(encoding="utf-8").splitlines()
        if self.rng.random() < 0.5:  # text moves down
            lines.insert(0, f"Inserted line {self.steps_done}.")
        else:  # text changes
            at = self.rng.randrange(len(lines))
            lines[at] = f"Changed line {self.steps_done}."
        self._write(path, "\n".join(lines) + "\n")
        return f"source {path.name}"

    def add_or_delete_source(self) -> str:
        number = self.rng.randrange(SOURCE_COUNT + 2)
        path = self.raw / f"source-{number}.md"
        if path.exists() and self.rng.random() < 0.5:
            path.unlink()
            self.touched.add(path)
            return f"delete source {path.name}"
        self._write(path, "".join(f"New line {i}.\n" for i in range(30)))
        return f"write source {path.name}"

    def write_lock(self) -> str:
        wiki = self.compile()
        write_lock(self.config.lock_path, wiki.lock_entries())
        self.touched.add(self.config.lock_path)
        self.clock += 10**9
        os.utime(self.config.lock_path, ns=(self.clock, self.clock))
        return "lock"
