"""Test collections in BEIR format: `corpus.jsonl`, `queries.jsonl` and `qrels/<split>.tsv`.

Bad input names the file and line. A slice keeps the first documents judged for the first
queries, so a small collection still has queries with relevant documents in it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundwiki.core.config.errors import GroundwikiError


class CollectionError(GroundwikiError):
    """The collection's files are missing or malformed; the message says where and how."""


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str

    @property
    def full_text(self) -> str:
        """What every ranker indexes: the title, then the text (once, when the text already
        opens with the title, as Cranfield's abstracts do)."""
        title, text = self.title.strip(), self.text.strip()
        if not title or _words(text)[: len(_words(title))] == _words(title):
            return text or title
        return f"{title}\n\n{text}" if text else title


def _words(text: str) -> list[str]:
    return text.casefold().split()


@dataclass(frozen=True)
class Collection:
    name: str
    documents: tuple[Document, ...]
    queries: dict[str, str]  # only queries with at least one judged-relevant document
    qrels: dict[str, dict[str, int]]  # query -> document -> grade (> 0 relevant)

    def sliced(self, max_docs: int) -> Collection:
        """At most `max_docs` documents: the relevant ones of the queries in file order first,
        then the rest in corpus order; queries left with no relevant document are dropped."""
        if max_docs >= len(self.documents):
            return self
        by_id = {d.id: d for d in self.documents}
        chosen: dict[str, None] = {}
        for query_id in self.queries:
            relevant = [d for d, grade in sorted(self.qrels[query_id].items()) if grade > 0]
            if len(chosen) + len(relevant) > max_docs:
                continue
            chosen.update(dict.fromkeys(d for d in relevant if d in by_id))
        for doc in self.documents:
            if len(chosen) >= max_docs:
                break
            chosen.setdefault(doc.id, None)
        documents = tuple(d for d in self.documents if d.id in chosen)
        qrels = {
            q: kept
            for q, judged in self.qrels.items()
            if (kept := {d: g for d, g in judged.items() if d in chosen})
            and any(g > 0 for g in kept.values())
        }
        queries = {q: text for q, text in self.queries.items() if q in qrels}
        return Collection(f"{self.name}[:{max_docs}]", documents, queries, qrels)


def load_collection(folder: Path, split: str = "test", queries: Path | None = None) -> Collection:
    """`queries`: another queries file for the same documents and judgments (a variant of the
    collection, such as its questions reworded); the collection is then named after it."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CollectionError(
            f"{folder}: no such folder; give a collection in BEIR format "
            "(corpus.jsonl, queries.jsonl, qrels/test.tsv)"
        )
    corpus = folder / "corpus.jsonl"
    documents: list[Document] = []
    seen: set[str] = set()
    for line_no, record in _jsonl(corpus):
        doc_id = _field(record, "_id", corpus, line_no)
        if doc_id in seen:
            raise CollectionError(f"{corpus}:{line_no}: document '{doc_id}' appears twice")
        seen.add(doc_id)
        documents.append(
            Document(doc_id, str(record.get("title") or ""), str(record.get("text") or ""))
        )
    queries_file = Path(queries) if queries is not None else folder / "queries.jsonl"
    asked = {
        _field(r, "_id", queries_file, n): str(r.get("text") or "") for n, r in _jsonl(queries_file)
    }
    qrels = _qrels(folder / "qrels" / f"{split}.tsv", seen, set(asked))
    judged = {q: t for q, t in asked.items() if any(g > 0 for g in qrels.get(q, {}).values())}
    if not documents or not judged:
        raise CollectionError(
            f"{queries_file if queries is not None else folder}: no documents, or no query with "
            "a relevant document"
        )
    name = queries_file.stem if queries is not None else folder.name
    return Collection(name, tuple(documents), judged, {q: qrels[q] for q in judged})


def _jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise CollectionError(
            f"{path}: missing; a BEIR collection has corpus.jsonl and queries.jsonl"
        )
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CollectionError(f"{path}:{line_no}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise CollectionError(f"{path}:{line_no}: expected a JSON object per line")
            rows.append((line_no, record))
    return rows


def _field(record: dict[str, Any], name: str, path: Path, line_no: int) -> str:
    value = record.get(name)
    if value is None or str(value).strip() == "":
        raise CollectionError(f"{path}:{line_no}: no '{name}'; every line needs one")
    return str(value)


def _qrels(path: Path, documents: set[str], queries: set[str]) -> dict[str, dict[str, int]]:
    if not path.is_file():
        raise CollectionError(f"{path}: missing; judgments go in qrels/<split>.tsv")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").split("\t")
            if line_no == 1 and parts[:1] == ["query-id"]:
                continue  # the header
            if not line.strip():
                continue
            if len(parts) != 3:
                raise CollectionError(
                    f"{path}:{line_no}: expected 'query-id<TAB>corpus-id<TAB>score'"
                )
            query_id, doc_id, grade = parts
            try:
                value = int(grade)
            except ValueError:
                raise CollectionError(
                    f"{path}:{line_no}: score '{grade}' is not an integer"
                ) from None
            if query_id in queries and doc_id in documents:
                qrels.setdefault(query_id, {})[doc_id] = value
    return qrels
