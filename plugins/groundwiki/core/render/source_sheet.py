"""A spreadsheet's raw-source page shows its text as tables: each sheet's name line a heading
row, each row line a table row of its cells, numbered and anchored like any source line, so a
citation of rows lands on them and reads as the sheet did.

The cells are read back from the line (office.py joins them with `CELL_SEPARATOR`): a cell
whose own text holds that separator shows as two cells here, while the line, which citations
and search use, keeps the text as extracted.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from groundwiki.core.model.records import Chunk, Source
from groundwiki.core.sources.office import CELL_SEPARATOR

SHEET_FORMATS = frozenset({"xlsx", "ods"})


def numbered_sheet(
    source: Source, chunks: Sequence[Chunk], ranges: Sequence[tuple[int, int]] | None = None
) -> str:
    """The lines of `ranges` (every line by default) as numbered table rows."""
    marks_at = chunk_marks(chunks)
    lines = source.lines
    shown = [(1, len(lines))] if ranges is None else ranges
    width = 1 + max(
        (len(lines[n - 1].split(CELL_SEPARATOR)) for a, b in shown for n in range(a, b + 1)),
        default=1,
    )
    rows: list[str] = []
    after = 0
    for first, last in shown:
        if first > after + 1:
            rows.append(_gap(after + 1, first - 1, width))
        for number in range(first, last + 1):
            line = lines[number - 1]
            marks = marks_at.get(number, "")
            gutter = f'<td class="gw-ln-cell">{marks}<a class="gw-ln" href="#L{number}">{number}</a></td>'
            # A chunk's start: a rule above its first row (the anchor is in the gutter).
            kind = "gw-line gw-chunk-row" if marks else "gw-line"
            if number in source.heading_lines:
                name = escape(line.removeprefix("# "))
                cells = f'<th colspan="{width - 1}">{name}</th>'
                kind += " gw-sheet-name"
            else:
                cells = "".join(f"<td>{escape(cell)}</td>" for cell in line.split(CELL_SEPARATOR))
            rows.append(f'<tr class="{kind}" id="L{number}">{gutter}{cells}</tr>')
        after = last
    if after < len(lines):
        rows.append(_gap(after + 1, len(lines), width))
    return (
        '<div class="gw-source gw-sheets"><table class="gw-sheet"><tbody>'
        + "".join(rows)
        + "</tbody></table></div>"
    )


def chunk_marks(chunks: Sequence[Chunk]) -> dict[int, str]:
    """Line -> the anchors of the chunks that start on it (a raw-source page links to each)."""
    starts: dict[int, list[str]] = {}
    for chunk in chunks:
        starts.setdefault(chunk.start_line, []).append(chunk.id)
    return {
        line: "".join(
            f'<span class="gw-chunk-start" id="{cid}" title="chunk {cid}"></span>' for cid in ids
        )
        for line, ids in starts.items()
    }


def _gap(first: int, last: int, width: int) -> str:
    span = f"line {first:,}" if first == last else f"lines {first:,}–{last:,}"
    return (
        f'<tr class="gw-gap"><td colspan="{width}">⋯ {span} not shown: see the full text</td></tr>'
    )
