"""A text's index terms as Whoosh's stemming analyzer gives them, computed in one pass.

Whoosh analyses a document through a chain of generators (tokenizer, lowercase, stop words,
stemmer), each handing on one token object at a time. On the 6,571-note vault that chain took
6.5 of the first sync's 22 CPU seconds of lexical writing; the same terms from one regular
expression pass, a set lookup and a dictionary of stems take 1.3. Whoosh indexes a list of
strings as given (`formats.tokens`), so the documents carry these lists and the index holds
exactly what the analyzer would have put there: `tests/sidecar/test_terms.py` compares both on
texts that try every step, and the query side still analyses through the schema's own analyzer.

The steps are read off the analyzer itself (its pattern, stop list, sizes and stemming function),
so a Whoosh release that changes them changes both sides alike. An analyzer of another shape is
run as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from whoosh.analysis import (
    CompositeAnalyzer,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StopFilter,
)

# Stems kept between documents: a wiki's vocabulary repeats. Cleared when it grows past this
# (about 10 MB of short strings), as Whoosh's own stem cache is bounded.
STEM_CACHE = 200_000


_STEMS: dict[Callable[[str], str], dict[str, str]] = {}  # per stemming function


class Terms:
    """`terms(text)`: the text's terms, in order, as `analyzer` indexes them."""

    def __init__(self, analyzer: Any) -> None:
        self.analyzer = analyzer
        self._steps = _steps_of(analyzer)
        self._stems = _STEMS.setdefault(self._steps[-1], {}) if self._steps else {}

    def __call__(self, text: str) -> list[str]:
        if self._steps is None:
            return [token.text for token in self.analyzer(text)]
        words, stops, smallest, largest, stem = self._steps
        stems = self._stems
        if len(stems) > STEM_CACHE:
            stems.clear()  # in place: every Terms of this stemmer shares it
        found: list[str] = []
        for match in words.finditer(text):
            word = match.group(0).lower()
            size = len(word)
            if size < smallest or (largest is not None and size > largest) or word in stops:
                continue
            stemmed = stems.get(word)
            if stemmed is None:
                stemmed = stems[word] = stem(word)
            found.append(stemmed)
        return found


Steps = tuple[re.Pattern[str], frozenset[str], int, int | None, Callable[[str], str]]


def _steps_of(analyzer: Any) -> Steps | None:
    """The stemming analyzer's parts, or None when it is not tokenizer, lowercase, stop words,
    stemmer, in that order and with nothing this pass leaves out."""
    if not isinstance(analyzer, CompositeAnalyzer):
        return None
    items = list(analyzer.items)
    kinds = (RegexTokenizer, LowercaseFilter, StopFilter, StemFilter)
    if len(items) != len(kinds) or any(type(i) is not k for i, k in zip(items, kinds, strict=True)):
        return None
    tokenizer, _, stop, stemmer = items
    if tokenizer.gaps or not stop.renumber or stemmer.ignore:
        return None
    return tokenizer.expression, frozenset(stop.stops), stop.min, stop.max, stemmer.stemfn


def analysed(schema: Any, docs: list[dict[str, Any]], fields: tuple[str, ...]) -> None:
    """Each doc's text `fields` replaced, in place, by their terms under `schema`."""
    terms = {field: Terms(schema[field].analyzer) for field in fields}
    for doc in docs:
        for field, of in terms.items():
            value = doc.get(field)
            if isinstance(value, str):
                doc[field] = of(value)
