"""Convert four classic SMART-era test collections (CISI, MEDLINE, CACM, TIME) to BEIR format.

    python bench/smart_collections.py NAME SOURCE_DIR OUT_DIR

NAME is one of cisi, medline, cacm, time. SOURCE_DIR holds the collection's files under their
distribution names (CISI.ALL/CISI.QRY/CISI.REL, MED.ALL/MED.QRY/MED.REL,
cacm.all/query.text/qrels.text, TIME.ALL/TIME.QUE/TIME.REL). OUT_DIR gets `corpus.jsonl`,
`queries.jsonl` and `qrels/test.tsv`, laid out like `shared/ir/cranfield`, plus
`doc_id_map.tsv` for TIME. A summary of what was read and dropped goes to stdout.

Choices, kept the same across the collections so they compare with Cranfield:
- A document is its title (`.T`) and abstract (`.W`): `text` is the title, a space, then the
  abstract, with every whitespace run collapsed to one space and the case kept. Authors,
  keywords, citations and bibliographic fields are left out: Cranfield has none of them, and
  keywords (CACM `.K`) exist only for some documents, so they would favour those.
- A document without an abstract keeps its title alone; one without a title (MEDLINE, TIME)
  has an empty `title` and its body as `text`.
- A query is its `.W` text only. CISI queries 58-112 are whole papers (`.T`, `.A`, `.W`, `.B`);
  their abstract is the request, their bibliographic fields are not.
- Judgments are binary (score 1). Only queries with at least one judgment are written.
- IDs are the source's own numbers. TIME is the exception that cannot be kept as is: its
  judgments count documents by position in a 425-document edition, while TIME.ALL has 423
  documents identified by `*TEXT` numbers; see `_time_position_to_text`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

# A field line is `.X` alone or `.X rest` (`.I 12`, and CISI's `.T ` with a trailing space);
# requiring whitespace or the end after the letter keeps text lines like ".NET" or ".5" out.
FIELD_LINE = re.compile(r"^\.([A-Z])(?:\s+(.*))?$")


@dataclass
class Record:
    id: str
    fields: dict[str, list[str]] = field(default_factory=dict)

    def text(self, name: str) -> str:
        """All occurrences of a field, joined, with whitespace runs collapsed (CISI repeats
        `.A` once per author; nothing else repeats, but joining is harmless)."""
        return " ".join(" ".join(self.fields.get(name, [])).split())


@dataclass
class Report:
    """What the conversion met in the source, so SOURCES.md can state it from the run."""

    notes: list[str] = field(default_factory=list)

    def note(self, message: str) -> None:
        self.notes.append(message)


def read_text(path: Path) -> str:
    # The files are 1970s ASCII; latin-1 never fails, so a stray byte cannot stop a run, and
    # CRLF copies read the same as LF ones.
    return path.read_bytes().decode("latin-1").replace("\r\n", "\n").replace("\r", "\n")


def parse_smart(text: str, source: str, report: Report) -> list[Record]:
    """Records of a SMART file: `.I n` starts one, every other `.X` line starts a field whose
    content is the following lines (and the rest of the marker line, if any)."""
    records: list[Record] = []
    current: Record | None = None
    lines: list[str] | None = None
    for line_no, line in enumerate(text.split("\n"), start=1):
        match = FIELD_LINE.match(line.rstrip())
        if match and match.group(1) == "I":
            current = Record((match.group(2) or "").strip())
            if not current.id.isdigit():
                raise SystemExit(f"{source}:{line_no}: '.I' without a number: {line!r}")
            records.append(current)
            lines = None
        elif match:
            if current is None:
                raise SystemExit(f"{source}:{line_no}: field before the first '.I'")
            lines = current.fields.setdefault(match.group(1), [])
            if match.group(2):
                lines.append(match.group(2))
        elif lines is not None:
            lines.append(line)
        elif line.strip() and current is not None:
            report.note(f"{source}:{line_no}: text outside any field, dropped: {line!r}")
    return records


def dedupe(records: list[Record], source: str, report: Report) -> list[Record]:
    """The first record of each number; a later one is reported, with whether it differs."""
    kept: dict[str, Record] = {}
    for record in records:
        key = str(int(record.id))
        if key in kept:
            same = kept[key].fields == record.fields
            report.note(
                f"{source}: number {key} occurs again ({'same' if same else 'different'}"
                " content); the first is kept"
            )
            continue
        record.id = key
        kept[key] = record
    return list(kept.values())


def smart_documents(path: Path, report: Report) -> list[dict[str, str]]:
    records = dedupe(parse_smart(read_text(path), path.name, report), path.name, report)
    documents = []
    no_abstract = 0
    for record in records:
        title, abstract = record.text("T"), record.text("W")
        if not abstract:
            no_abstract += 1
        if not title and not abstract:
            report.note(f"{path.name}: document {record.id} has neither title nor abstract; kept")
        body = f"{title} {abstract}".strip()
        documents.append({"_id": record.id, "title": title, "text": body})
    report.note(f"{path.name}: {len(documents)} documents, {no_abstract} without an abstract")
    return documents


def smart_queries(path: Path, report: Report) -> dict[str, str]:
    records = dedupe(parse_smart(read_text(path), path.name, report), path.name, report)
    queries = {}
    for record in records:
        text = record.text("W")
        if not text:
            # CACM's query.text ends with an empty `.I 0` in some copies: a terminator.
            report.note(f"{path.name}: query {record.id} has no .W text; dropped")
            continue
        queries[record.id] = text
    return queries


def pairs_from_columns(path: Path, query_col: int, doc_col: int) -> list[tuple[str, str]]:
    """Whitespace-separated judgment lines; numbers lose leading zeros (CACM writes `01`)."""
    pairs = []
    for line_no, line in enumerate(read_text(path).split("\n"), start=1):
        parts = line.split()
        if not parts:
            continue
        try:
            pairs.append((str(int(parts[query_col])), str(int(parts[doc_col]))))
        except (IndexError, ValueError):
            raise SystemExit(f"{path.name}:{line_no}: not a judgment line: {line!r}") from None
    return pairs


# TIME.ALL: `*TEXT 017 01/04/63 PAGE 020` heads a document; TIME.QUE: `*FIND    1` a query;
# both files end with `*STOP`.
def star_records(path: Path, marker: str) -> Iterator[tuple[str, str]]:
    number: str | None = None
    body: list[str] = []
    for line in read_text(path).split("\n"):
        if line.startswith(("*TEXT", "*FIND", "*STOP")):
            if number is not None:
                yield number, " ".join(" ".join(body).split())
            number, body = None, []
            if line.startswith(marker):
                number = str(int(line.split()[1]))
        elif number is not None:
            body.append(line)


def _time_position_to_text(position: int, text_numbers: list[str]) -> str | None:
    """TIME.REL numbers documents 1..425 in file order, but the 423-document TIME.ALL lacks two
    of them: `*TEXT 499` and `*TEXT 500`, positions 371 and 372. Judged numbers up to 370 fit
    the document at that position and those from 378 up fit the one two places earlier (their
    words overlap the query there and not at the unshifted place), and 371-377 are never
    judged. So positions past 372 move back by two."""
    if position <= 370:
        index = position - 1
    elif position <= 372:
        return None
    else:
        index = position - 3
    return text_numbers[index] if 0 <= index < len(text_numbers) else None


@dataclass(frozen=True)
class Converted:
    documents: list[dict[str, str]]
    queries: dict[str, str]
    pairs: list[tuple[str, str]]
    extra_files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SmartFiles:
    """A collection in the SMART layout: its three files, and the columns of its judgments'
    file that hold the query and the document numbers."""

    documents: str
    queries: str
    judgments: str
    query_column: int
    document_column: int

    def convert(self, source: Path, report: Report) -> Converted:
        return Converted(
            smart_documents(source / self.documents, report),
            smart_queries(source / self.queries, report),
            pairs_from_columns(source / self.judgments, self.query_column, self.document_column),
        )


SMART = {
    "cisi": SmartFiles("CISI.ALL", "CISI.QRY", "CISI.REL", 0, 1),  # `q  d  0  0.000000`
    "medline": SmartFiles("MED.ALL", "MED.QRY", "MED.REL", 0, 2),  # `q 0 d 1`
    "cacm": SmartFiles("cacm.all", "query.text", "qrels.text", 0, 1),  # `qq d 0 0`
}


def convert_time(source: Path, report: Report) -> Converted:
    documents = [
        {"_id": number, "title": "", "text": body}
        for number, body in star_records(source / "TIME.ALL", "*TEXT")
    ]
    report.note(f"TIME.ALL: {len(documents)} documents")
    queries = dict(star_records(source / "TIME.QUE", "*FIND"))
    text_numbers = [d["_id"] for d in documents]
    pairs: list[tuple[str, str]] = []
    mapping: dict[int, str] = {}
    # `q d d d ...`, one line per query.
    for line in read_text(source / "TIME.REL").split("\n"):
        parts = line.split()
        for position in map(int, parts[1:]):
            doc = _time_position_to_text(position, text_numbers)
            if doc is None:
                report.note(
                    f"TIME.REL: query {parts[0]} judges position {position}, "
                    "which has no document; dropped"
                )
                continue
            mapping[position] = doc
            pairs.append((str(int(parts[0])), doc))
    id_map = "rel-number\ttext-number\n" + "".join(
        f"{position}\t{doc}\n" for position, doc in sorted(mapping.items())
    )
    return Converted(documents, queries, pairs, {"doc_id_map.tsv": id_map})


CONVERTERS: dict[str, Callable[[Path, Report], Converted]] = {
    **{name: files.convert for name, files in SMART.items()},
    "time": convert_time,
}


def write_beir(converted: Converted, out: Path, report: Report) -> None:
    doc_ids = {d["_id"] for d in converted.documents}
    judged: dict[str, list[str]] = {}
    for query, doc in converted.pairs:
        if doc not in doc_ids:
            report.note(f"judgment ({query}, {doc}) names no document; dropped")
            continue
        if query not in converted.queries:
            report.note(f"judgment ({query}, {doc}) names no query; dropped")
            continue
        docs = judged.setdefault(query, [])
        if doc in docs:
            report.note(f"judgment ({query}, {doc}) repeated; kept once")
            continue
        docs.append(doc)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for document in converted.documents:
            handle.write(json.dumps(document, ensure_ascii=False) + "\n")
    queries = [(q, t) for q, t in converted.queries.items() if q in judged]
    with (out / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for query, text in queries:
            handle.write(json.dumps({"_id": query, "text": text}, ensure_ascii=False) + "\n")
    lines = sum(len(docs) for docs in judged.values())
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for query, _ in queries:
            for doc in judged[query]:
                handle.write(f"{query}\t{doc}\t1\n")
    for name, content in converted.extra_files.items():
        (out / name).write_text(content, encoding="utf-8")
    report.note(
        f"wrote {len(converted.documents)} documents, {len(queries)} judged queries "
        f"(of {len(converted.queries)}), {lines} qrel lines"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=sorted(CONVERTERS))
    parser.add_argument("source_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    report = Report()
    converted = CONVERTERS[args.name](args.source_dir, report)
    write_beir(converted, args.out_dir, report)
    print("\n".join(report.notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
