"""A page's summary: the writer's (`summary`, `tldr`, Obsidian Publish's `description`), or one
derived from the body, the first sentence of its first paragraph of prose.

Most notes in a real vault say what they are in their first sentence and have no summary field;
a derived summary gives readers and agents that sentence instead of nothing. Only prose counts:
headings, lists, tables, quotes and callouts, code, HTML, comments, embeds and blocks of
`Key: value` lines (a plugin note's facts, Dataview's `key:: value`) are passed over.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Mapping
from typing import Any

# The writer's fields, in the order they win.
SUMMARY_FIELDS = ("summary", "tldr", "description")
# A derived summary longer than this is cut at a word: it stands in for one line.
OPENING = 2000  # characters of a paragraph searched for its first sentence
MAX_DERIVED = 300

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_CONTAINER = re.compile(
    r"^\s{0,3}(?:>"  # quote or callout
    r"|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)"  # list item
    r"|\|)"  # table row
)
_STRUCTURE = re.compile(
    r"^\s{0,3}(?:#{1,6}(?:\s|$)"  # heading
    r"|<"  # HTML block
    r"|\$\$"  # math block
    r"|\[\^?[^\]]+\]:\s"  # link reference or footnote definition
    r"|(?:[-*_]\s*){3,}$)"  # thematic break
)
_SETEXT = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")
_TABLE_DELIMITER = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?\s*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_KEY_VALUE = re.compile(r"^\s*[\w][\w ()/.'-]{0,40}?::?\s+\S")
_DATAVIEW = re.compile(r"^\s*[\w][\w -]{0,40}::")
_ONLY_TAGS = re.compile(r"^\s*(?:#[^\s#]+\s*)+$")
_EMBED_OR_IMAGE = re.compile(r"!\[\[[^\]\n]*\]\]|!\[[^\]\n]*\]\([^)\n]*\)")
_WIKILINK = re.compile(r"\[\[([^\[\]\n|]*?)(?:\|([^\[\]\n]*))?\]\]")
_LINK = re.compile(r"\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)")
_REF_LINK = re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]")
_FOOTNOTE = re.compile(r"\[\^[^\]\n]+\]")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_HTML = re.compile(r"<!--.*?-->|</?[A-Za-z][^>\n]*>", re.DOTALL)
_CODE = re.compile(r"(`+)(.+?)\1")
# Underscores only outside words: `snake_case_name` keeps them, as in CommonMark.
_EMPHASIS = re.compile(r"(\*\*|\*|~~|==|(?<!\w)__|(?<!\w)_)(?=\S)(.+?)(?<=\S)\1(?!\w)")
_BLOCK_ID = re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+\s*$")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_WORD = re.compile(r"[^\W_]")
# A sentence ends at `.`, `!` or `?` (closing quotes or brackets may follow) before a space,
# unless the word ending there is an abbreviation or an initial.
_SENTENCE_END = re.compile(r"[.!?][\"')\]’”]*(?=\s)")
_ABBREVIATIONS = frozenset(
    ("e.g", "i.e", "etc", "vs", "cf", "al", "approx", "ca", "dr", "mr", "mrs", "ms", "st", "fig")
)


def written_summary(data: Mapping[str, Any]) -> str | None:
    """The writer's summary: the first of `summary`, `tldr`, `description` that says something,
    on one line (a folded or multi-line `description` is joined)."""
    for name in SUMMARY_FIELDS:
        value = data.get(name)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return None


def derive_summary(body: str) -> str | None:
    """The first sentence of the body's first paragraph of prose, as plain text; None when the
    body has no prose. The body is a page's as read: its `%% comments %%` already blanked."""
    for paragraph in _paragraphs(body):
        # Only the paragraph's opening can hold the first sentence: cleaning a pasted 60 KB
        # paragraph whole took minutes (emphasis patterns backtrack).
        text = plain_text(" ".join(line.strip() for line in paragraph)[:OPENING])
        # `Colors:` introduces a list, and `* * *` left between badges says nothing.
        if _WORD.search(text) and not text.endswith(":"):
            return _shorten(first_sentence(text))
    return None


def _paragraphs(body: str) -> Iterator[list[str]]:
    """Paragraphs of prose, in order: runs of lines outside code, comments, lists, quotes and
    tables, that are not structure of their own."""
    body = _HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), body)
    paragraph: list[str] = []
    fence: str | None = None
    container = False  # in a list, quote or table: its lines and lazy continuations are not prose
    after_blank = False
    for line in body.split("\n"):
        if fence is not None:
            opened = _FENCE.match(line)
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        blank = not line.strip()
        if container and not blank and (line[:1] in " \t" or not after_blank):
            after_blank = False
            continue  # an indented or lazy continuation of the list item, quote or table
        container = container and blank
        after_blank = blank
        if paragraph and (_SETEXT.match(line) or _TABLE_DELIMITER.match(line)):
            paragraph = []  # the lines above were a heading, or a table's header row
            container = bool(_TABLE_DELIMITER.match(line))
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
        elif _CONTAINER.match(line):
            container = True
        prose = not blank and not (
            opened
            or container
            or _STRUCTURE.match(line)
            or _ONLY_TAGS.match(line)
            or (not paragraph and line[:4].isspace())  # indented code
            or not _EMBED_OR_IMAGE.sub("", line).strip()
        )
        if prose:
            paragraph.append(line)
            continue
        if paragraph and not _metadata(paragraph):
            yield paragraph
        paragraph = []
    if paragraph and not _metadata(paragraph):
        yield paragraph


def _metadata(paragraph: list[str]) -> bool:
    """`Key: value` lines (two or more), or Dataview's `key:: value`: facts, not a sentence."""
    if all(_DATAVIEW.match(line) for line in paragraph):
        return True
    return len(paragraph) > 1 and all(_KEY_VALUE.match(line) for line in paragraph)


def plain_text(markdown: str) -> str:
    """Inline Markdown as a reader sees it: links as their label (a wikilink's label, or its
    target as Obsidian shows it, `Note > Heading`), no emphasis marks, code spans as text,
    images, embeds, HTML, footnote marks and block ids dropped."""
    text = _EMBED_OR_IMAGE.sub("", markdown)
    text = _WIKILINK.sub(_wikilink_text, text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _FOOTNOTE.sub("", text)
    text = _AUTOLINK.sub(r"\1", text)
    # Code first: `<canvas>` in a code span is text, not a tag to drop.
    code: list[str] = []

    def keep(match: re.Match[str]) -> str:
        code.append(match.group(2).strip())
        return f"\x00{len(code) - 1}\x00"

    text = _CODE.sub(keep, text)
    text = _HTML.sub("", text)
    for _ in range(3):  # nested emphasis: `**bold _and italic_**`
        text = _EMPHASIS.sub(r"\2", text)
    text = _BLOCK_ID.sub("", text)
    text = _ESCAPE.sub(r"\1", text)
    text = html.unescape(text)  # `&lt;` and `&amp;` as the reader sees them
    text = re.sub("\x00(\\d+)\x00", lambda m: code[int(m.group(1))], text)
    return " ".join(text.split())


def _wikilink_text(match: re.Match[str]) -> str:
    target, label = match.group(1), match.group(2)
    if label and label.strip():
        return label.strip()
    page, _, anchor = target.partition("#")
    return link_text(page, anchor)


def link_text(target: str, anchor: str | None) -> str:
    """A wikilink without a label as Obsidian shows it: its target as written, not the page's
    title (`[[blacksmithgu]]` reads `blacksmithgu`), then each heading of its anchor after
    ` > ` (`Note > Part`), a block id without its caret; '' for an empty link."""
    parts = [part.strip() for part in (target, *(anchor or "").split("#")) if part.strip()]
    return " > ".join(part.lstrip("^") for part in parts)


def first_sentence(text: str) -> str:
    for match in _SENTENCE_END.finditer(text):
        words = text[: match.start()].split()
        word = words[-1].lower() if words else ""
        if word.rstrip(".") in _ABBREVIATIONS or re.fullmatch(r"\(?[a-z]", word):
            continue  # `e.g.`, `Dr.`, an initial `J.`
        if match.group(0)[0] == "." and re.search(r"\d$", text[: match.start()]):
            rest = text[match.end() :].lstrip()
            if rest[:1].isdigit():
                continue  # `version 1. 2` is rare; `1.5` never matches (no space)
        return text[: match.end()]
    return text


def _shorten(sentence: str) -> str:
    if len(sentence) <= MAX_DERIVED:
        return sentence
    cut = sentence[:MAX_DERIVED].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut}…"
