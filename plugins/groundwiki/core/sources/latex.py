"""Text from LaTeX (.tex) sources, by pylatexenc.

A line of the extracted text is one paragraph of the source (paragraphs are separated by blank
lines, as LaTeX separates them), its whitespace collapsed; the title of a `\\part`, `\\chapter`,
`\\section`, `\\subsection` or `\\subsubsection` is a line of its own that starts a section.
Math stays as its LaTeX source (`$x^2$`), comments are dropped, and macros give their text
(`\\emph{a}` is `a`).

pylatexenc is pure Python and reads about 100 KB a second, so a source past `MAX_LATEX_BYTES`
is refused before it is parsed; nesting too deep for Python's stack is refused too. Each
refusal, like a file that is not text, is one finding on that file.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.sources.extracted import Extracted

MAX_LATEX_BYTES = 1_000_000  # about ten seconds of pylatexenc

_SECTION = re.compile(
    r"\\(?:part|chapter|section|subsection|subsubsection)\*?\s*(?:\[[^\]\n]*\]\s*)?\{"
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A line that is only a comment does not end a paragraph in LaTeX, so it goes with its newline.
_COMMENT_LINE = re.compile(r"^[ \t]*(?<!\\)%[^\n]*\n", re.MULTILINE)
_COMMENT = re.compile(r"(?<!\\)%[^\n]*")


def extract_latex(data: bytes) -> Extracted:
    if len(data) > MAX_LATEX_BYTES:
        return Extracted(
            "latex",
            None,
            problem=f"the file goes past a safety limit: {len(data):,} bytes of LaTeX "
            f"(at most {MAX_LATEX_BYTES:,})",
            hint="split it into smaller .tex files (one per chapter), or add its text as .txt",
        )
    if b"\x00" in data:
        return Extracted(
            "latex", None, problem="not a text file (binary content)", hint="save it as UTF-8"
        )
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        source = data.decode("latin-1")  # older LaTeX is often Latin-1 (inputenc)
    try:
        lines, headings = latex_lines(source)
    except RecursionError:
        return Extracted(
            "latex",
            None,
            problem="the file nests braces or environments too deeply to be read",
            hint="check it compiles; else add its text as a .txt file",
        )
    except Exception as exc:  # a damaged file is one finding, never a failed build
        return Extracted(
            "latex",
            None,
            problem=f"cannot read the LaTeX: {excerpt(f'{type(exc).__name__}: {exc}', 200)}",
            hint="check it compiles; else add its text as a .txt file",
        )
    return Extracted("latex", "\n".join(lines) + ("\n" if lines else ""), frozenset(headings))


def latex_lines(source: str) -> tuple[list[str], list[int]]:
    """The paragraphs and section titles of `source`, and the 1-based lines of the titles."""
    source = source.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    source = _COMMENT.sub("", _COMMENT_LINE.sub("", source))
    lines: list[str] = []
    headings: list[int] = []
    for paragraph in _PARAGRAPH_BREAK.split(source):
        for piece, heading in _pieces(paragraph):
            text = " ".join(_to_text(piece).split())
            if text:
                lines.append(text)
                if heading:
                    headings.append(len(lines))
    return lines, headings


def _pieces(paragraph: str) -> list[tuple[str, bool]]:
    """The paragraph cut around its sectioning commands: (LaTeX, whether it is a title)."""
    found: list[tuple[str, bool]] = []
    at = 0
    for match in _SECTION.finditer(paragraph):
        if match.start() < at:
            continue  # a sectioning command inside the previous title
        end = _closing_brace(paragraph, match.end())
        found.append((paragraph[at : match.start()], False))
        found.append((paragraph[match.end() : end], True))
        at = end + 1
    found.append((paragraph[at:], False))
    return found


def _closing_brace(text: str, start: int) -> int:
    """The index of the brace that closes the group opened just before `start` (the end of the
    text when none does: a damaged title is read to the end of its paragraph)."""
    depth = 1
    index = start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return len(text)


def _to_text(latex: str) -> str:
    return _converter().latex_to_text(latex) if latex.strip() else ""


@cache
def _converter() -> Any:
    from pylatexenc.latex2text import (
        LatexNodes2Text,
        MacroTextSpec,
        get_default_latex_context_db,
    )

    context = get_default_latex_context_db()
    # The default prints the build date for both: a source's text must not change by the day.
    context.add_context_category(
        "groundwiki",
        prepend=True,
        macros=[MacroTextSpec("maketitle", simplify_repl=""), MacroTextSpec("today", "")],
    )
    return LatexNodes2Text(latex_context=context, math_mode="verbatim", keep_comments=False)
