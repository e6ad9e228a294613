"""Deterministic chunking of raw-source text into pieces the embedding model takes whole.

Policy, in order of precedence:
1. Sections (Markdown/HTML headings, PDF pages) are hard boundaries; a section too small to stand
   alone joins the next one.
2. Inside a section the text is cut into units: sentences for prose, lines for structured formats
   (JSON, CSV, YAML). A unit longer than the budget is split at whitespace.
3. Units are packed up to `max_tokens` word pieces (counted with the model's tokenizer, [CLS] and
   [SEP] included). A chunk also ends at a paragraph end once it holds `min_tokens`, and at a
   content-chosen sentence end once it holds twice that: cut points that depend on the text, not on
   its position, so an edit disturbs only the chunks around it.
4. A chunk cut only because it was full repeats its last sentence at the start of the next one
   (overlap), when that sentence is short enough.
5. A unit that is encoded data (base64, hex) or binary read as text never shares a chunk with
   text (`hygiene.unit_is_junk`): a short paragraph beside an attachment pasted into a note
   stays a chunk of its own, so skipping junk chunks never takes a real paragraph with it.

A chunk's ID hashes the policy, the source path and the chunk's text: the same input gives the
same IDs on every machine, and chunks an edit did not touch keep theirs.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from groundwiki.core.model.records import Chunk
from groundwiki.core.sources.extract import Extracted
from groundwiki.core.sources.hygiene import (
    looks_like_text,
    may_hold_junk,
    measure,
    suspect_offsets,
    unit_junk,
)
from groundwiki.core.sources.tokens import TOKENIZER_SHA256, count_tokens, load_tokenizer

STRUCTURED = {"json", "csv", "yaml"}
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s)")
_WORD = re.compile(r"\S+")
_LINE = re.compile(r"[^\n]*\S[^\n]*")
_SPACES = re.compile(r"\s*")


@dataclass(frozen=True)
class ChunkPolicy:
    max_tokens: int = 256
    min_tokens: int = 64
    overlap_tokens: int = 48
    version: str = "1"

    @property
    def identity(self) -> str:
        return (
            f"groundwiki-chunk/{self.version}/max{self.max_tokens}/min{self.min_tokens}/"
            f"overlap{self.overlap_tokens}/tok-{TOKENIZER_SHA256[:12]}"
        )


DEFAULT_POLICY = ChunkPolicy()


@dataclass(slots=True)  # one per line of a log: hundreds of thousands
class _Unit:
    start: int  # character offsets into the extracted text
    end: int
    paragraph_end: bool
    tokens: int = 0  # word pieces without [CLS]/[SEP]
    alone: bool = False  # a piece of one overlong word: never shares a chunk
    junk: str = ""  # "encoded" or "binary" (hygiene.unit_junk): shares a chunk with its kind only


def chunk_text(
    path: str, extracted: Extracted, policy: ChunkPolicy = DEFAULT_POLICY
) -> tuple[Chunk, ...]:
    text = extracted.text
    if not text or not text.strip():
        return ()
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    sections = _sections(text, line_starts, extracted.heading_lines)
    structured = extracted.format in STRUCTURED
    section_units = [_units(text, line_starts, start, end, structured) for start, end in sections]
    flat = [unit for units in section_units for unit in units]
    limit = policy.max_tokens - 2
    _measure(text, flat, limit)
    section_units = [_split_overlong(text, units, limit) for units in section_units]
    may_hold = may_hold_junk(text)
    suspects = suspect_offsets(text) if may_hold else []
    if suspects:
        for units in section_units:
            _mark_junk(text, units, suspects)
    section_units = _merge_small_sections(section_units, policy.min_tokens)

    spans: list[tuple[int, int, int, str]] = []  # (start, end, tokens, junk)
    for units in section_units:
        spans.extend(_pack(text, units, policy))
    return _make_chunks(path, text, line_starts, spans, policy, suspects, may_hold)


# A unit longer than this is first measured on its start (see `_measure`).
_LONG_UNIT = 4096


def _measure(text: str, units: list[_Unit], limit: int) -> None:
    """Set each unit's word pieces (without [CLS]/[SEP]).

    A log, or any text without sentence ends or blank lines, is one paragraph and so one unit,
    which the tokenizer took whole: 1.3 GB for a 5 MB file. Such a unit is over the budget and
    is split at its lines, whose counts are exact; its own count is only compared with the
    budget. So a long unit is measured on its start, cut at a space, and when that alone is over
    the budget, that lower bound stands in (the tokenizer splits words at whitespace, so the
    start's word pieces are the first word pieces of the whole). Only a long unit without many
    spaces (one enormous word) is measured whole.
    """
    heads: list[_Unit] = []
    for unit in units:
        if unit.end - unit.start > _LONG_UNIT:
            window = text[unit.start : unit.start + _LONG_UNIT]
            cut = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
            if cut > 0:
                heads.append(_Unit(unit.start, unit.start + cut, False))
                continue
        heads.append(unit)
    counts = count_tokens([text[u.start : u.end] for u in heads])
    for unit, head, count in zip(units, heads, counts, strict=True):
        if head is not unit and count - 2 <= limit:
            count = count_tokens([text[unit.start : unit.end]])[0]  # no proof: measure it all
        unit.tokens = count - 2


def _sections(
    text: str, line_starts: list[int], heading_lines: frozenset[int]
) -> list[tuple[int, int]]:
    cuts = sorted({line_starts[n - 1] for n in heading_lines if 1 < n <= len(line_starts)})
    bounds = [0, *cuts, len(text)]
    return [(a, b) for a, b in pairwise(bounds) if text[a:b].strip()]


def _units(
    text: str, line_starts: list[int], start: int, end: int, structured: bool
) -> list[_Unit]:
    units: list[_Unit] = []
    first_line = bisect_right(line_starts, start) - 1
    paragraph: list[tuple[int, int]] = []  # (start, end) of non-blank lines

    def flush() -> None:
        if not paragraph:
            return
        p_start, p_end = paragraph[0][0], paragraph[-1][1]
        pieces = paragraph[:] if structured else _sentences(text, p_start, p_end)
        for i, (a, b) in enumerate(pieces):
            units.append(_Unit(a, b, paragraph_end=i == len(pieces) - 1))
        paragraph.clear()

    for index in range(first_line, len(line_starts)):
        a = max(line_starts[index], start)
        if a >= end:
            break
        b = min(line_starts[index + 1] - 1 if index + 1 < len(line_starts) else len(text), end)
        line = text[a:b]
        if line.strip():
            lead = len(line) - len(line.lstrip())
            paragraph.append((a + lead, a + len(line.rstrip())))
        else:
            flush()
    flush()
    return units


def _mark_junk(text: str, units: list[_Unit], suspects: list[int]) -> None:
    """Mark the units that are encoded or binary (only those holding a suspect offset are
    looked at), and beside them (both ways) the units that are no prose: the pieces of the
    same blob."""
    for unit in units:
        first = bisect_left(suspects, unit.start)
        if first < len(suspects) and suspects[first] < unit.end:
            unit.junk = unit_junk(text, unit.start, unit.end)
    for order in (units, units[::-1]):
        for before, unit in pairwise(order):
            if before.junk and not unit.junk and not looks_like_text(text, unit.start, unit.end):
                unit.junk = before.junk


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE_END.finditer(text, start, end):
        pieces.append((cursor, match.end()))
        # The next sentence starts after the spaces; matched in place, since slicing off the
        # rest of the paragraph per sentence made long paragraphs quadratic (`\s` is exactly
        # what `str.lstrip` strips).
        cursor = _SPACES.match(text, match.end(), end).end()  # type: ignore[union-attr]
    if cursor < end:
        pieces.append((cursor, end))
    return [(a, b) for a, b in pieces if b > a]


def _split_overlong(text: str, units: list[_Unit], limit: int) -> list[_Unit]:
    out: list[_Unit] = []
    for unit in units:
        out.extend(_fit(text, unit, limit))
    return out


def _fit(text: str, unit: _Unit, limit: int) -> list[_Unit]:
    """Split a unit over the budget at its line ends, else its spaces, else between word pieces.

    Lines come first so that text without sentence ends (logs, code, lists) still gets cut points
    that depend on its content, which keeps chunk IDs stable when lines are added elsewhere.
    """
    if unit.tokens <= limit:
        return [unit]
    lines = _spans(_LINE, text, unit.start, unit.end)
    spans = lines if len(lines) > 1 else _spans(_WORD, text, unit.start, unit.end)
    if len(spans) == 1:
        pieces = _split_word(text, unit.start, unit.end, limit)
    else:
        counts = count_tokens([text[a:b] for a, b in spans])
        pieces = [_Unit(a, b, False, n - 2) for (a, b), n in zip(spans, counts, strict=True)]
        pieces = [part for piece in pieces for part in _fit(text, piece, limit)]
    pieces[-1].paragraph_end = unit.paragraph_end
    return pieces


def _spans(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in pattern.finditer(text, start, end)]


def _split_word(text: str, start: int, end: int, limit: int) -> list[_Unit]:
    """One 'word' over the budget (a long hash, minified code): cut between its word pieces.

    One tokenizer pass gives the piece offsets; a cut inside a word can re-tokenize a little
    differently, so each piece is measured again and split further if it still does not fit.
    """
    encoding = load_tokenizer().encode(text[start:end], add_special_tokens=False)
    offsets = [(start + a, start + b) for a, b in encoding.offsets]
    step = max(1, limit - 8)
    spans = [
        (offsets[i][0], offsets[min(i + step, len(offsets)) - 1][1])
        for i in range(0, len(offsets), step)
    ] or [(start, end)]
    counts = count_tokens([text[a:b] for a, b in spans])
    pieces: list[_Unit] = []
    for (a, b), n in zip(spans, counts, strict=True):
        if n - 2 <= limit or b - a <= 1:
            pieces.append(_Unit(a, b, False, n - 2, alone=True))
        else:
            pieces.extend(_split_word(text, a, b, max(1, limit - 8)))
    return pieces


def _merge_small_sections(sections: list[list[_Unit]], min_tokens: int) -> list[list[_Unit]]:
    merged: list[list[_Unit]] = []
    carry: list[_Unit] = []
    for units in sections:
        units = carry + units
        if sum(u.tokens for u in units) < min_tokens:
            carry = units
            continue
        merged.append(units)
        carry = []
    if carry:
        if merged:
            merged[-1] = merged[-1] + carry
        else:
            merged.append(carry)
    return merged


def _is_anchor(text: str, unit: _Unit) -> bool:
    digest = hashlib.sha256(text[unit.start : unit.end].encode("utf-8")).digest()
    return digest[0] % 4 == 0


def _pack(
    text: str, units: Sequence[_Unit], policy: ChunkPolicy
) -> list[tuple[int, int, int, str]]:
    limit = policy.max_tokens - 2
    spans: list[tuple[int, int, int, str]] = []
    current: list[_Unit] = []
    tokens = 0

    def emit() -> None:
        nonlocal current, tokens
        if current:
            spans.append((current[0].start, current[-1].end, tokens, current[0].junk))
        current, tokens = [], 0

    for unit in units:
        if current and (
            unit.alone
            or current[-1].alone
            or unit.junk != current[-1].junk
            or tokens + unit.tokens > limit
        ):
            last = current[-1]
            emit()
            overlap = (
                not unit.alone
                and not last.alone
                and not last.paragraph_end
                and unit.junk == last.junk
            )
            if (
                overlap
                and last.tokens <= policy.overlap_tokens
                and last.tokens + unit.tokens <= limit
            ):
                current, tokens = [last], last.tokens
        current.append(unit)
        tokens += unit.tokens
        if (unit.paragraph_end and tokens >= policy.min_tokens) or (
            tokens >= 2 * policy.min_tokens and _is_anchor(text, unit)
        ):
            emit()
    emit()
    return spans


def _make_chunks(
    path: str,
    text: str,
    line_starts: list[int],
    spans: list[tuple[int, int, int, str]],
    policy: ChunkPolicy,
    suspects: list[int],
    may_hold: bool,
) -> tuple[Chunk, ...]:
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for start, end, tokens, junk in spans:
        body = text[start:end]
        digest = hashlib.sha256(f"{policy.identity}\0{path}\0{body}".encode()).hexdigest()
        # Identical text twice in one file: number the repeats so IDs stay unique and stable.
        repeat = seen.get(digest, 0)
        seen[digest] = repeat + 1
        if repeat:
            digest = hashlib.sha256(f"{digest}\0{repeat}".encode()).hexdigest()
        first = bisect_left(suspects, start)
        suspect = first < len(suspects) and suspects[first] < end
        measures = measure(body, suspect, shares=may_hold)
        chunks.append(
            Chunk(
                id=f"ch_{digest[:16]}",
                source=path,
                start_line=bisect_right(line_starts, start),
                end_line=bisect_right(line_starts, max(start, end - 1)),
                text=body,
                content_hash=hashlib.sha256(body.encode("utf-8")).hexdigest(),
                tokens=tokens + 2,
                entropy=measures.entropy,
                words=measures.words,
                letters=measures.letters,
                encoded=measures.encoded,
                controls=measures.controls,
                cut_as=junk,
            )
        )
    return tuple(chunks)
