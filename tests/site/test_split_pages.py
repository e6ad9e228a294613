"""Overview pages too large for one page (`page_bytes`) are split into parts: the lint report by
top folder, the A–Z index by letter, the tags page's long listings by tag; every finding and
every page is listed on exactly one part, the parts link to each other and back, and each page's
tag chips still land on its tag's heading.

A real `mkdocs build` of a small wiki with a small `page_bytes`, so that it splits as a wiki of
thousands of pages does at the default (tests/scale/test_split_vault.py)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest
from groundwiki.core.render.generated import TAG_PREVIEW
from helpers.render_helpers import build_site
from helpers.wikis import page

PAGE_BYTES = 2000  # a part holds a handful of findings or listed pages
FOLDERS = ("alpha", "beta", "Gamma notes")
WORDS = "than a title needs, so that a letter of the A–Z index outweighs a part"


def pages() -> dict[str, str]:
    found = {"index.md": page("The way in.", "# Home\n\nSee [[alpha/a00]].\n", tags=["common"])}
    for folder in FOLDERS:
        for n in range(14):
            name = f"{folder}/{folder[0]}{n:02d}.md"
            # No summary (an info each), every fourth a broken link (an error).
            body = f"# {folder.title()} {n}\n\nText.\n" + (
                "See [[nowhere]].\n" if n % 4 == 0 else ""
            )
            title = f"{folder[0].upper()}{n:02d}, a note about {folder} in more words {WORDS}"
            tags = ["common", f"in-{folder.split()[0].lower()}"]
            found[name] = page(None, body, title=title, tags=tags)
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("split")
    return build_site(root, pages(), plugins=["search", {"groundwiki": {"page_bytes": PAGE_BYTES}}])


def html(site: Path, url: str) -> str:
    return (site / unquote(url) / "index.html").read_text(encoding="utf-8")


def article(text: str) -> str:
    start = text.index("<article")
    return text[start : text.index("</article>", start)]


def links(text: str, url: str, pattern: str) -> list[str]:
    """The site-relative URLs (directory URLs) of the links in `text` matching `pattern`, as seen
    from the page at `url`."""
    base = f"http://x/{url}"
    found = []
    for href in re.findall(r'href="([^"]+)"', text):
        target = unquote(urljoin(base, unescape(href)).removeprefix("http://x/"))
        if re.search(pattern, target):
            found.append(target.split("#")[0])
    return list(dict.fromkeys(found))


def test_the_lint_report_is_a_summary_and_a_page_per_folder_each_finding_on_one(site):
    report = json.loads((site / "groundwiki/lint.json").read_text())
    summary = article(html(site, "groundwiki/lint/"))
    assert 'class="gw-lint-parts"' in summary and "gw-severity-filter" in summary
    assert "gw-finding" not in summary  # the findings are on the parts
    parts = links(summary, "groundwiki/lint/", r"^groundwiki/lint/folder-")
    # each folder has a page, and a folder too large for one has several
    for folder in ("alpha", "beta", "gamma-notes"):
        assert f"groundwiki/lint/folder-{folder}/" in parts
        assert f"groundwiki/lint/folder-{folder}.2/" in parts
    listed: list[str] = []
    for url in parts:
        text = article(html(site, url))
        assert len(text.encode()) < 2 * PAGE_BYTES  # about the budget, never the whole report
        assert links(text, url, r"^groundwiki/lint/$")  # back to the summary
        listed += re.findall(r'<li class="gw-finding gw-\w+">.*?(wiki/[^<:]+:\d+:\d+)', text)
    expected = sorted(f"{f['path']}:{f['line']}:{f['column']}" for f in report["findings"])
    assert sorted(listed) == expected  # every finding, once


def test_a_finding_on_a_part_links_to_its_page(site):
    url = "groundwiki/lint/folder-beta/"
    text = article(html(site, url))
    targets = links(text, url, r"^beta/b\d\d/$")
    assert targets and all((site / t / "index.html").is_file() for t in targets)


def test_the_a_to_z_index_is_split_by_letter_and_lists_every_page_once(site):
    summary = article(html(site, "groundwiki/a-z/"))
    parts = links(summary, "groundwiki/a-z/", r"^groundwiki/a-z/letter-")
    assert "groundwiki/a-z/letter-a/" in parts and "groundwiki/a-z/letter-b/" in parts
    assert "groundwiki/a-z/letter-g.2/" in parts  # "Gamma notes …": more than a part's worth
    listed: list[str] = []
    for url in parts:
        text = article(html(site, url))
        listed += links(text, url, r"^(alpha|beta|Gamma notes)/|^$")
        assert links(text, url, r"^groundwiki/a-z/$")  # back to the index
    expected = [""] + [f"{f}/{f[0]}{n:02d}/" for f in FOLDERS for n in range(14)]
    assert sorted(listed) == sorted(expected)


def test_a_tag_chip_lands_on_its_heading_whose_long_listing_has_its_own_pages(site):
    url = "beta/b03/"
    chips = re.findall(r'<a class="gw-tag" href="([^"]+)">([^<]+)</a>', html(site, url))
    assert {name for _, name in chips} == {"common", "in-beta"}
    tags = article(html(site, "groundwiki/tags/"))
    for href, name in chips:
        target, _, anchor = urljoin(f"http://x/{url}", unescape(href)).partition("#")
        assert target == "http://x/groundwiki/tags/"
        assert f'id="{anchor}"' in tags, name
    # "common" tags every page: its heading lists the first few and links to all of them
    section = tags[tags.index('id="tag-common"') :]
    section = section[: section.index("<h2", 10)] if "<h2" in section[10:] else section
    assert len(re.findall(r"<li>", section)) == TAG_PREVIEW
    (more,) = links(section, "groundwiki/tags/", r"^groundwiki/tags/tag-common")
    listed: list[str] = []
    seen = {more}
    queue = [more]
    while queue:
        part = queue.pop()
        text = article(html(site, part))
        listed += links(text, part, r"^(alpha|beta|Gamma notes)/|^$")
        for other in links(text, part, r"^groundwiki/tags/tag-common"):
            if other not in seen:
                seen.add(other)
                queue.append(other)
    assert len(seen) > 1  # more than one part's worth
    assert len(listed) == 1 + 14 * len(FOLDERS) == len(set(listed))


def test_every_part_stays_near_the_budget(site):
    parts = [
        path
        for folder in ("lint", "a-z", "tags")
        for path in (site / "groundwiki" / folder).glob("*/index.html")
    ]
    assert len(parts) > 10
    heavy = [
        (path.relative_to(site).as_posix(), size)
        for path in parts
        if (size := len(article(path.read_text(encoding="utf-8")).encode())) > 3 * PAGE_BYTES
    ]
    assert heavy == []


def test_a_report_within_the_budget_is_one_page(tmp_path):
    site = build_site(tmp_path, {"index.md": page("Home.", "# Home\n\nSee [[gone]].\n")})
    text = article(html(site, "groundwiki/lint/"))
    assert 'class="gw-finding gw-error"' in text and "gw-severity-filter" in text
    assert not (site / "groundwiki/lint/folder-top").exists()
    assert not list((site / "groundwiki/a-z").glob("letter-*"))
