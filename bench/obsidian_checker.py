"""An independent checker of the links in an Obsidian vault, written from Obsidian's documented
rules (help.obsidian.md: "Internal links", "Embed files", "Link to blocks") and not from
groundwiki's code: it is the yardstick groundwiki's lint is measured against, so it shares
nothing with the resolver, the Markdown reader or the lint rules it checks.

What it reports is what Obsidian would not find:

- a file: `[[Note]]`, `![[Note]]`, `[[Folder/Note]]`, `[[./Note]]`, `[[../Folder/Note]]`,
  `![[diagram.png]]`, `[x](Folder/Note.md)`. A name is looked up anywhere in the vault,
  case-insensitively, with `.md` optional; a path may be vault-absolute, relative to the note,
  or the tail of a longer path. Attachments are every other file (dot-folders aside), plus the
  files of an optional extra folder (groundwiki's `raw-sources/`);
- a heading: `[[Note#Heading]]`, `[[#Heading]]`, `[[Note#H1#H2]]` (H2 somewhere under H1).
  Headings are ATX or setext, compared ignoring case, punctuation and symbols (`# ^ | : ? & [ ]`
  and the like, which Obsidian drops or cannot write in a link's subpath);
- a block: `[[Note#^block-id]]`, where a block ends with ` ^block-id`.

Links in code (fences, indented blocks, inline spans), in `<!-- -->` and in `%% %%` do not
count, nor does the frontmatter. A subpath on an attachment (`![[icon.svg#icon]]`) is not
checked: Obsidian passes it to the viewer.

    .venv/bin/python bench/obsidian_checker.py VAULT [--extra raw-sources] > findings.json
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import sys
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote


@dataclass(frozen=True, order=True)
class Finding:
    file: str  # vault-relative, forward slashes
    line: int  # 1-based
    link: str  # the link as written
    reason: str  # "no-file", "no-heading" or "no-block"


@dataclass
class Note:
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, text) in order
    blocks: set[str] = field(default_factory=set)  # lower-case ids


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


# ---------------------------------------------------------------- what Markdown shows as text

_FENCE = re.compile(r"^\s*(?:>\s*)*(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])(?:\s|$)")
_TICKS = re.compile(r"`+")


def _frontmatter_end(lines: list[str]) -> int:
    """How many leading lines are YAML frontmatter (0 when there is none)."""
    if lines and lines[0].rstrip() == "---":
        for number in range(1, len(lines)):
            if lines[number].rstrip() in ("---", "..."):
                return number + 1
    return 0


def _code_lines(lines: list[str], start: int) -> set[int]:
    """Line indexes inside fenced or indented code blocks (fence lines included)."""
    code: set[int] = set()
    fence = ""
    previous = ""  # the last non-blank line outside code, to tell indented code from a list
    blank_before = True
    for number in range(start, len(lines)):
        line = lines[number]
        if fence:
            code.add(number)
            match = _FENCE.match(line)
            closing = match and match[1][0] == fence[0] and len(match[1]) >= len(fence)
            if closing and not match[2].strip():
                fence = ""
            continue
        match = _FENCE.match(line)
        if match and not (match[1][0] == "`" and "`" in match[2]):
            fence = match[1]
            code.add(number)
            continue
        indented = line.startswith(("    ", "\t")) and line.strip()
        in_list = bool(_LIST_ITEM.match(previous)) or previous.startswith((" ", "\t"))
        if indented and blank_before and not in_list and not previous.lstrip().startswith(">"):
            code.add(number)
            continue
        if line.strip():
            previous = line
        blank_before = not line.strip()
    return code


def _closing_ticks(text: str, start: int, count: int) -> int:
    """Where the backtick run closing a code span opened at `start` ends, or -1; a span stays
    within its paragraph."""
    end = text.find("\n\n", start)
    window = text[start : end if end >= 0 else len(text)]
    for run in re.finditer(r"`+", window):
        if len(run[0]) == count:
            return start + run.end()
    return -1


def visible(text: str) -> list[str]:
    """The note's lines with frontmatter, code, `<!-- -->` and `%% %%` blanked (newlines kept),
    so that only what Obsidian reads as Markdown prose is left."""
    lines = text.split("\n")
    front = _frontmatter_end(lines)
    code = _code_lines(lines, front)
    kept = ["" if n < front or n in code else line for n, line in enumerate(lines)]
    flat = "\n".join(kept)
    out: list[str] = []
    i = 0
    while i < len(flat):
        char = flat[i]
        if char == "\\" and i + 1 < len(flat) and flat[i + 1] in "`%<\\":
            out.append(flat[i : i + 2])
            i += 2
            continue
        end = -1
        if char == "`":
            run = len(_TICKS.match(flat, i)[0])
            end = _closing_ticks(flat, i + run, run)
            if end < 0:
                out.append("`" * run)
                i += run
                continue
        elif flat.startswith("<!--", i):
            close = flat.find("-->", i + 4)
            end = close + 3 if close >= 0 else -1
        elif flat.startswith("%%", i):
            close = flat.find("%%", i + 2)
            end = close + 2 if close >= 0 else len(flat)  # unclosed: comments out the rest
        if end < 0:
            out.append(char)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", flat[i:end]))
        i = end
    return "".join(out).split("\n")


# ---------------------------------------------------------------- headings and blocks

_ATX = re.compile(r"^(?: {0,3}>\s?)*\s{0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_DROPPED = re.compile(r"P|Z|Sm|Sk|Sc|C")  # Unicode categories that read as a space
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)[ \t]*$")


def read_note(text: str) -> Note:
    note = Note()
    raw = text.split("\n")
    shown = visible(text)
    for number, line in enumerate(shown):
        if not line.strip():
            continue
        atx = _ATX.match(line)
        if atx:
            # Obsidian keeps the heading as written (code and all): take the raw line.
            raw_atx = _ATX.match(raw[number])
            words = (raw_atx or atx)[2] or ""
            note.headings.append((len(atx[1]), re.sub(r"(?:^|\s+)#+$", "", words).strip()))
            continue
        setext = _SETEXT.match(line)
        if setext and number > 0 and _paragraph_line(shown[number - 1]):
            level = 1 if setext[1][0] == "=" else 2
            note.headings.append((level, raw[number - 1].strip()))
            continue
        block = _BLOCK_ID.search(line)
        if block:
            note.blocks.add(block[1].lower())
    return note


def _paragraph_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not (
        _ATX.match(line)
        or _LIST_ITEM.match(line)
        or stripped.startswith((">", "|", "<"))
        or _SETEXT.match(line)
        or line.startswith(("    ", "\t"))
    )


def heading_key(text: str) -> str:
    """A heading as Obsidian compares it with a link's subpath: punctuation and symbols count as
    spaces (the vault's `[[Note#D D WOTC]]` lands on `###### D&D WOTC`, `#What is it` on
    `## What is it?`), case and runs of spaces do not count; letters, digits, `-`, `_` and
    emoji do."""
    kept = (c if c in "-_" or not _DROPPED.match(unicodedata.category(c)) else " " for c in text)
    return " ".join("".join(kept).split()).casefold()


def has_heading_chain(note: Note, parts: list[str]) -> bool:
    """Each part is a heading nested under the previous one (any depth below it)."""
    wanted = [heading_key(p) for p in parts]
    for first, (level, text) in enumerate(note.headings):
        if heading_key(text) == wanted[0] and _chain_below(note, first, level, wanted[1:]):
            return True
    return False


def _chain_below(note: Note, start: int, level: int, wanted: list[str]) -> bool:
    if not wanted:
        return True
    for index in range(start + 1, len(note.headings)):
        sub_level, text = note.headings[index]
        if sub_level <= level:
            return False  # the section ended
        if heading_key(text) == wanted[0] and _chain_below(note, index, sub_level, wanted[1:]):
            return True
    return False


# ---------------------------------------------------------------- the vault and its links


class Vault:
    def __init__(self, root: Path, extra: Path | None = None) -> None:
        self.root = root
        self.files: dict[str, str] = {}  # lower-case path -> path as written
        self.by_name: dict[str, list[str]] = {}  # lower-case file name -> paths
        self.notes: dict[str, Note] = {}
        for base, prefix in ((root, ""), (extra, "\0extra/")):
            if base is None or not base.is_dir():
                continue
            for path in sorted(base.rglob("*")):
                relative = path.relative_to(base)
                if not path.is_file() or any(p.startswith(".") for p in relative.parts):
                    continue  # Obsidian does not index dot-files or dot-folders
                name = prefix + nfc(relative.as_posix())
                self.files[name.lower()] = name
                self.files.setdefault(nfc(relative.as_posix()).lower(), name)
                self.by_name.setdefault(nfc(path.name).lower(), []).append(name)
        for name in self.files.values():
            if name.lower().endswith(".md") and not name.startswith("\0"):
                text = (root / name).read_text(encoding="utf-8", errors="replace")
                self.notes[name] = read_note(text)

    def resolve(self, linkpath: str, source: str) -> str | None:
        """The file a link path names, as Obsidian finds it; None when there is none."""
        wanted = nfc(linkpath).strip().replace("\\", "/")
        if not wanted:
            return source
        folder = posixpath.dirname(source)
        tries = [posixpath.normpath(posixpath.join(folder, wanted))]
        if not wanted.startswith(("./", "../")):
            tries.append(wanted.lstrip("/"))
        for path in tries:
            for candidate in (path, path + ".md"):
                if candidate.lower() in self.files:
                    return self.files[candidate.lower()]
        if wanted.startswith(("./", "../")):
            return None
        tail = wanted.lstrip("/").lower()
        name = tail.rsplit("/", 1)[-1]
        for candidate in (name, name + ".md"):
            for path in self.by_name.get(candidate, []):
                lower = path.lower()
                suffix = tail if candidate == name else tail + ".md"
                if "/" not in tail or lower.endswith("/" + suffix) or lower == suffix:
                    return path
        return None

    def check_subpath(self, target: str, subpath: str) -> str | None:
        """The reason a `#subpath` misses in the note `target`, or None when it lands."""
        note = self.notes.get(target)
        parts = [p.strip() for p in subpath.split("#") if p.strip()]
        if note is None or not parts:
            return None  # attachments take their subpath to the viewer
        blocks = [p for p in parts if p.startswith("^")]
        if blocks:
            return None if blocks[-1][1:].lower() in note.blocks else "no-block"
        return None if has_heading_chain(note, parts) else "no-heading"

    def check_note(self, name: str) -> list[Finding]:
        text = (self.root / name).read_text(encoding="utf-8", errors="replace")
        found: list[Finding] = []
        for number, line in enumerate(visible(text), start=1):
            for raw, linkpath, subpath in links_in(line):
                target = self.resolve(linkpath, name)
                reason = "no-file" if target is None else self.check_subpath(target, subpath)
                if reason:
                    found.append(Finding(name, number, raw, reason))
        return found

    def check(self) -> list[Finding]:
        return sorted(f for name in self.notes for f in self.check_note(name))


_WIKILINK = re.compile(r"!?\[\[([^\n]+?)\]\]")
_MD_LINK = re.compile(
    r"!?\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\(\s*(<[^>\n]*>|[^\s()]+)(?:\s+[^)\n]*)?\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def links_in(line: str) -> list[tuple[str, str, str]]:
    """(raw link, link path, subpath) for each internal link on a visible line."""
    found: list[tuple[str, str, str]] = []
    for match in _WIKILINK.finditer(line):
        inner = match[1].replace("\\|", "|")  # `[[a\|b]]` in a table cell
        target = inner.split("|", 1)[0].rstrip("\\")
        path, _, subpath = target.partition("#")
        if path.strip() or subpath.strip():
            found.append((match[0], path, subpath))
    rest = _WIKILINK.sub(lambda m: " " * len(m[0]), line)
    for match in _MD_LINK.finditer(rest):
        destination = match[1].strip("<>")
        if _SCHEME.match(destination) or destination.startswith("#"):
            continue
        path, _, subpath = destination.partition("#")
        path = unquote(path.split("?", 1)[0])
        if path.lower().endswith(".md"):
            found.append((match[0], path, unquote(subpath)))
    return found


def check_vault(vault: Path, extra: Path | None = None) -> list[Finding]:
    return Vault(vault, extra).check()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--extra", type=Path, help="a folder of more attachments (raw-sources)")
    args = parser.parse_args(argv)
    findings = check_vault(args.vault, args.extra)
    json.dump([asdict(f) for f in findings], sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
