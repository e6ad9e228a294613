"""Text extraction from raw sources, by file type.

Line numbers in citations always refer to the extracted text. For every text format the
extracted text *is* the file (newlines normalised), and HTML keeps one output line per input
line, so `#L10-L24` means what the writer sees in an editor. PDF and the office formats have
text of their own (office.py says what a line is in each; latex.py for LaTeX). An archive
(.zip) is many sources, one per member, each read by its own format (archive.py).
"""

from __future__ import annotations

import hashlib
from html.parser import HTMLParser
from pathlib import Path

from groundwiki.core.config.excerpt import excerpt
from groundwiki.core.sources.extracted import Extracted, sha256_text
from groundwiki.core.sources.latex import extract_latex
from groundwiki.core.sources.office import extract_office

__all__ = [
    "FORMATS",
    "SUPPORTED",
    "Extracted",
    "Extractions",
    "extract",
    "extract_bytes",
    "format_of",
    "is_archive",
    "sha256_text",
]

MARKDOWN = {".md", ".markdown", ".mdown"}
TEXT = {".txt", ".text", ".log"}
RST = {".rst"}
HTML = {".html", ".htm", ".xhtml"}
JSON = {".json", ".jsonl"}
CSV = {".csv", ".tsv"}
YAML = {".yaml", ".yml"}
PDF = {".pdf"}
# Office documents (office.py): each its own format
OFFICE = {".docx", ".odt", ".ods", ".odp", ".xlsx", ".rtf", ".svg"}
LATEX = {".tex"}
ARCHIVE = {".zip"}  # read member by member (archive.py), never as one text

FORMATS: dict[str, str] = {
    **dict.fromkeys(MARKDOWN, "markdown"),
    **dict.fromkeys(TEXT, "text"),
    **dict.fromkeys(RST, "rst"),
    **dict.fromkeys(HTML, "html"),
    **dict.fromkeys(JSON, "json"),
    **dict.fromkeys(CSV, "csv"),
    **dict.fromkeys(YAML, "yaml"),
    **dict.fromkeys(PDF, "pdf"),
    **{suffix: suffix[1:] for suffix in OFFICE},
    **dict.fromkeys(LATEX, "latex"),
    **dict.fromkeys(ARCHIVE, "zip"),
}


SUPPORTED = (
    "Markdown, text, reStructuredText, HTML, JSON, CSV, YAML, PDF, Word (.docx), "
    "OpenDocument (.odt, .ods, .odp), Excel (.xlsx), RTF, SVG, LaTeX (.tex), or a .zip of them"
)


def format_of(path: Path | str) -> str | None:
    return FORMATS.get(_suffix(path))


def is_archive(path: Path | str) -> bool:
    return _suffix(path) in ARCHIVE


def _suffix(path: Path | str) -> str:
    name = path.name if isinstance(path, Path) else path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


# What files of one read held, by suffix and the hash of their bytes: a copy of a file (the
# same evidence saved under two names) is extracted once.
Extractions = dict[str, Extracted]


def extract(path: Path, seen: Extractions | None = None) -> Extracted:
    """The text of the file at `path` (an archive's members are read by archive.py)."""
    fmt = format_of(path)
    if fmt is None:
        return _unsupported(path.name)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Extracted(
            fmt,
            None,
            problem=f"cannot read the file: {exc.strerror or exc}",
            hint="check the file's permissions",
        )
    if seen is None:
        return extract_bytes(path.name, data)
    key = f"{_suffix(path.name)}:{hashlib.sha256(data).hexdigest()}"
    found = seen.get(key)
    if found is None:
        found = seen[key] = extract_bytes(path.name, data)
    return found


def _unsupported(name: str) -> Extracted:
    suffix = _suffix(name)
    kind = f"'{suffix}'" if suffix else "without an extension"
    return Extracted(
        "unsupported",
        None,
        problem=f"a file {kind} is not a supported raw-source type",
        hint=f"save the evidence as {SUPPORTED} (a config file or a log: add .txt)",
    )


def extract_bytes(name: str, data: bytes) -> Extracted:
    """The text of a file named `name` (its suffix gives the format) holding `data`: a file on
    disk, or a member of an archive."""
    fmt = format_of(name)
    if fmt is None:
        return _unsupported(name)
    if fmt == "zip":
        return Extracted(
            fmt,
            None,
            problem="an archive is read member by member, not as one text",
            hint="this is a bug in groundwiki: please report it",
        )
    if fmt == "pdf":
        return _extract_pdf(data)
    if fmt == "latex":
        return extract_latex(data)
    if _suffix(name) in OFFICE:
        return extract_office(fmt, data)
    text = _decode(data)
    if text is None:
        return Extracted(
            fmt,
            None,
            problem="not a text file (binary content or not UTF-8)",
            hint=f"save it as UTF-8 text, or convert it to {SUPPORTED}",
        )
    if fmt == "html":
        return _extract_html(text)
    if fmt == "markdown":
        return Extracted(fmt, text, frozenset(_markdown_heading_lines(text)))
    return Extracted(fmt, text)


def _decode(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _markdown_heading_lines(text: str) -> list[int]:
    """ATX headings outside fenced code; enough for section boundaries, no full parse needed."""
    found: list[int] = []
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            if fence is None:
                fence = marker
            elif marker == fence:
                fence = None
            continue
        if fence is None and stripped.startswith("#") and len(line) - len(stripped) < 4:
            hashes = len(stripped) - len(stripped.lstrip("#"))
            if hashes <= 6 and (len(stripped) == hashes or stripped[hashes] in " \t"):
                found.append(number)
    return found


class _LineKeepingHTMLText(HTMLParser):
    """Collects visible text on the input line it came from, so line numbers survive extraction."""

    SKIP = frozenset({"script", "style", "template", "noscript"})
    HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
    # Tags that separate words visually; inline tags (<em>, <code>, <a>) must not add spaces.
    BREAKS = HEADINGS | frozenset(
        [
            "p",
            "div",
            "br",
            "li",
            "ul",
            "ol",
            "dt",
            "dd",
            "td",
            "th",
            "tr",
            "table",
            "section",
            "article",
            "header",
            "footer",
            "nav",
            "aside",
            "blockquote",
            "pre",
            "hr",
            "main",
            "figure",
            "figcaption",
            "details",
            "summary",
        ]
    )

    def __init__(self, line_count: int) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[list[str]] = [[] for _ in range(line_count)]
        self.skipping = 0
        self.heading_lines: set[int] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.HEADINGS:
            self.heading_lines.add(self.getpos()[0])
        self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        self._break(tag)

    def _break(self, tag: str) -> None:
        line = self.getpos()[0] - 1
        if tag in self.BREAKS and line < len(self.lines):
            self.lines[line].append(" ")

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        line = self.getpos()[0] - 1
        for offset, piece in enumerate(data.split("\n")):
            if line + offset < len(self.lines):
                self.lines[line + offset].append(piece)


def _extract_html(text: str) -> Extracted:
    source_lines = text.split("\n")
    parser = _LineKeepingHTMLText(len(source_lines))
    parser.feed(text)
    parser.close()
    lines = [" ".join("".join(parts).split()) for parts in parser.lines]
    return Extracted("html", "\n".join(lines), frozenset(parser.heading_lines))


def _extract_pdf(data: bytes) -> Extracted:
    import io

    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            return Extracted(
                "pdf", None, problem="the PDF is encrypted", hint="add an unencrypted copy"
            )
        pages = [
            (page.extract_text() or "").replace("\r\n", "\n").strip("\n") for page in reader.pages
        ]
    except LimitReachedError as exc:
        # pypdf stops a stream that inflates past its limits (75 MB by default: a decompression
        # bomb) and objects that refer to themselves.
        return Extracted(
            "pdf",
            None,
            problem=f"the PDF goes past pypdf's safety limits: {excerpt(str(exc))}",
            hint="add the text as a .txt file, or re-export the PDF with fewer or smaller pages",
        )
    except Exception as exc:  # pypdf raises many types on damaged files; one PDF is one finding
        return Extracted(
            "pdf",
            None,
            problem=f"cannot read the PDF: {excerpt(f'{type(exc).__name__}: {exc}', 200)}",
            hint="re-export the PDF, or add its text as a .txt file",
        )
    # Each page opens a section, so no chunk straddles a page break.
    starts, line = [], 1
    for text in pages:
        starts.append(line)
        line += text.count("\n") + 2
    return Extracted("pdf", "\n\n".join(pages), frozenset(starts))
