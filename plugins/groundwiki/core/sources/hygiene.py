"""What a chunk's characters say about it: Shannon entropy, words, letters, encoded runs and
control characters, measured once when it is cut, and the verdict `JunkRules` gives on them.

Junk reaches the chunker when a file passes format detection without being text meant for
reading: a binary read as Latin-1 and saved as UTF-8, a base64 attachment pasted into a note,
a page of padding. Embedding it wastes the model's time and ranking it puts noise in answers;
the chunk is still cut (its lines stay citable), only not indexed.

The chunker also asks, per sentence or line, whether it is encoded or binary (`unit_junk`),
so that junk is packed apart from text: skipping a chunk of junk never takes a real paragraph
with it. That cut uses fixed thresholds, not the settings: where chunks are cut must not
depend on what is later skipped.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from groundwiki.core.config.junk_rules import JunkRules
from groundwiki.core.model.records import Chunk

# A run long enough to be a key, a hash or base64 rather than a word (a wrapped blob is one
# run: line breaks continue it). What tells them apart is how often the kind of character
# changes between letters and digits, or from a small letter to a capital (a capital then
# small letters is how words start, so that is no change): base64 at 0.42 changes per
# character, hex at 0.47, a path of words or a camelCase name at one in six or fewer.
_RUN = re.compile(r"[A-Za-z0-9+/=\n]{24,}")
_CHANGE = re.compile(r"(?<=[a-z])(?=[A-Z0-9])|(?<=[A-Z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")
_CHANGES = 0.25  # changes per character above which a run is encoded
# Characters that text meant for reading does not hold: controls (but tab, newline, form feed,
# and escape, which colours logs) and the replacement character. Bytes read as Latin-1 are
# one in four of them.
_CONTROL_CHARS = "".join(
    chr(c) for c in [*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), *range(0x7F, 0xA0)]
) + "\ufffd"  # fmt: skip
_CONTROLS = 0.1  # share of control characters above which a text is binary
_SUSPECT = re.compile(f"[A-Za-z0-9+/=]{{24}}|[{re.escape(_CONTROL_CHARS)}]")
# Text in a script is mostly letters, whatever its entropy; binary read as text is not.
_LETTERS = 0.6
# One hash on a line (64 hex digits) is part of the text around it; a line of a blob (base64
# wraps at 76) or a longer key is not.
_LONGEST_HASH = 72
# The share of visible characters in encoded runs above which a unit or chunk is encoded data
# rather than text holding a key or a hash.
_ENCODED = 0.5
_PROSE = re.compile(r"[^\W\d_]{2,} [^\W\d_]{2,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,}")

# What each kind of junk is, for findings and /status.
JUNK_KINDS = {
    "binary": "binary data",
    "near-empty": "near-empty",
    "encoded": "encoded data (base64, hex)",
}


@dataclass(frozen=True, slots=True)
class Measures:
    entropy: float  # Shannon entropy of the characters, bits per character
    words: int  # whitespace-separated words
    # The shares, None where they are not measured: a chunk of a text without a control
    # character or an encoded run longer than a hash (`may_hold_junk`) is neither binary nor
    # encoded, and is judged near-empty or not by its entropy and words alone.
    letters: float | None  # share of visible characters that are letters, any script
    encoded: float | None  # share of visible characters in encoded runs (see `_RUN`)
    controls: float | None = None  # share of visible characters that are controls
    cut_as: str = ""  # the kind of junk the chunker packed this chunk from, if any


def measure(text: str, suspect: bool = True, shares: bool = True) -> Measures:
    """The measures of a chunk's text. `suspect`: False when the text holds no
    `suspect_offsets`, which spares looking for encoded runs. `shares`: False for a chunk of a
    source that cannot hold junk (`may_hold_junk`), whose chunks are never judged: its entropy
    and words are measured, its shares of letters, encoded runs and controls left unmeasured."""
    length = len(text)
    if not length:
        return Measures(0.0, 0, None, None)
    counts = Counter(text)
    weighted = sum(map(_n_log_n, counts.values()))
    entropy = round(max(0.0, math.log2(length) - weighted / length), 4)
    words = len(text.split())
    if not shares:
        return Measures(entropy, words, None, None)
    spaces = letters = controls = 0
    for char, n in counts.items():
        kind = _KINDS.get(char)
        if kind is None:
            kind = _KINDS[char] = _kind_of(char)
        if kind == _SPACE:
            spaces += n
        elif kind == _ALPHA:
            letters += n
        elif kind == _CONTROL:
            controls += n
    visible = length - spaces or 1
    return Measures(
        entropy,
        words,
        round(letters / visible, 4),
        round(_encoded_chars(text) / visible, 4) if suspect else 0.0,
        round(controls / visible, 4),
    )


# n log2 n for the counts a chunk's characters have, looked up rather than worked out.
_N_LOG_N = [0.0] + [n * math.log2(n) for n in range(1, 4097)]


def _n_log_n(n: int) -> float:
    return _N_LOG_N[n] if n < len(_N_LOG_N) else n * math.log2(n)


_SPACE, _ALPHA, _CONTROL, _OTHER = range(4)
_KINDS: dict[str, int] = {}  # a character's kind, worked out once per character seen


def _kind_of(char: str) -> int:
    if char.isspace():
        return _SPACE
    if char.isalpha():
        return _ALPHA
    return _CONTROL if char in _CONTROL_CHARS else _OTHER


def _encoded_chars(text: str) -> int:
    """The visible characters of `text` in runs that look encoded (see `_RUN`)."""
    return sum(_encoded(run) for run in _RUN.findall(text))


def _encoded(run: str) -> int:
    """The visible characters of a `_RUN` match when it looks encoded, else 0."""
    visible = len(run) - run.count("\n")
    return visible if len(_CHANGE.findall(run)) > _CHANGES * visible else 0


# What a text must hold for a unit or chunk of it to be encoded or binary: a control character
# or an encoded run longer than a hash. For a chunk to be near-empty: a run of one character
# (padding, a ruler line) long enough to leave a chunk near-empty, or too few words in all.
# Runs are looked for as substrings, much faster than a pattern tried at every position.
_CONTROL_CHAR = re.compile(f"[{re.escape(_CONTROL_CHARS)}]")
_PADDING = tuple(char * 64 for char in " \t\n-=_*#.~+")
# By the text's hash and the rules: every compile asks again for every source.
_MAY_HOLD_SEEN: dict[tuple[str, JunkRules | None], bool] = {}
_FEW_WORDS = 5


def may_hold_junk(text: str, rules: JunkRules | None = None, content_hash: str = "") -> bool:
    """Whether any chunk of `text` can be junk (see `junk_kind`), told without cutting it: lint
    and the sidecar cut only such sources to look for junk, so lint needs no tokenizer for
    ordinary text. Without `rules`, whether it can be encoded or binary (what the chunker asks:
    a near-empty chunk needs no more than the entropy and words every chunk has)."""
    key = (content_hash, rules)
    if content_hash and key in _MAY_HOLD_SEEN:
        return _MAY_HOLD_SEEN[key]
    found = _CONTROL_CHAR.search(text) is not None or any(
        _encoded(run) > _LONGEST_HASH for run in _RUN.findall(text)
    )
    if not found and rules is not None:
        found = any(run in text for run in _PADDING) or _near_empty_whole(text, rules)
    if content_hash:
        if len(_MAY_HOLD_SEEN) > 500_000:  # a wiki of more raw sources looks again
            _MAY_HOLD_SEEN.clear()
        _MAY_HOLD_SEEN[key] = found
    return found


def _near_empty_whole(text: str, rules: JunkRules) -> bool:
    """Whether a text of fewer than five words is near-empty as a whole: only then can its one
    chunk be (a text that short is one chunk, without its outer whitespace)."""
    if len(text.split(maxsplit=_FEW_WORDS)) >= max(_FEW_WORDS, rules.words_below):
        return False
    stripped = text.strip()
    return not stripped or measure(stripped, shares=False).entropy < rules.entropy_below


def suspect_offsets(text: str) -> list[int]:
    """Where `text` holds a long run of letters and digits or a control character: the only
    places a unit of junk can be. The chunker looks only in a text that can hold junk at all
    (`may_hold_junk`: its units are judged by the same runs and controls)."""
    return [match.start() for match in _SUSPECT.finditer(text)]


def unit_junk(text: str, start: int, end: int) -> str:
    """ "binary" or "encoded" when `text[start:end]`, a sentence or line the chunker packs, is
    junk of that kind; "" when it is text."""
    piece = text[start:end]
    visible = len(piece) - sum(1 for char in piece if char.isspace()) or 1
    # A short piece is too short for its entropy to say anything; its controls do.
    if sum(1 for char in piece if char in _CONTROL_CHARS) / visible > _CONTROLS:
        return "binary"
    # One hash on a line (64 hex digits) is part of the text around it; a line of a blob
    # (base64 wraps at 76) or a longer key is not: a unit is encoded by a run longer than a hash.
    runs = [_encoded(run) for run in _RUN.findall(piece)]
    if max(runs, default=0) <= _LONGEST_HASH:
        return ""
    return "encoded" if sum(runs) / visible > _ENCODED else ""


def looks_like_text(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` holds two words as prose writes them (letters, one space,
    letters) or a few ideographs. A unit beside junk that does not is a piece of it: the short
    last line of a wrapped blob, a line of a binary cut where its bytes held a line break."""
    return _PROSE.search(text, start, end) is not None


def chunk_measures(chunk: Chunk) -> Measures:
    return Measures(
        chunk.entropy, chunk.words, chunk.letters, chunk.encoded, chunk.controls, chunk.cut_as
    )


def junk_kind(measures: Measures, rules: JunkRules) -> str | None:
    """Which kind of junk (a `JUNK_KINDS` key) a chunk with these measures is; None when it
    is text, to be indexed."""
    if not rules.enabled:
        return None
    letters, encoded, controls = measures.letters, measures.encoded, measures.controls
    if measures.cut_as == "binary" or (
        letters is not None
        and letters < _LETTERS
        and (measures.entropy > rules.entropy_above or (controls or 0) > _CONTROLS)
    ):
        return "binary"
    if measures.entropy < rules.entropy_below and measures.words < rules.words_below:
        return "near-empty"
    if measures.cut_as == "encoded" or (encoded or 0) > _ENCODED:
        return "encoded"
    return None


def junk_counts(junk: Mapping[str, Sequence[tuple[Chunk, str]]]) -> dict[str, int]:
    """How many junk chunks (`Wiki.junk_chunks`), in how many sources, of each kind."""
    found = {"total": 0, "sources": 0, **dict.fromkeys(JUNK_KINDS, 0)}
    for cut in junk.values():
        found["sources"] += 1
        found["total"] += len(cut)
        for _, kind in cut:
            found[kind] += 1
    return found
