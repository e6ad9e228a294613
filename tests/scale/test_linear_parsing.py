"""Every parse step is linear in its input: doubling a pathological page at most ~doubles the
time a step takes on it (issue 27). A quadratic step takes about four times as long.

Each step is timed in CPU time (`time.process_time`, less sensitive to other work on the
machine), best of three, at the first size where it takes at least `FLOOR` seconds: below that,
fixed costs hide the growth. A quadratic step reaches the floor at a smaller size, so a
regression fails here in seconds rather than stalling the suite. The timed tests are marked
`serial`: `make test` runs them alone, after the tests that share the machine's cores.
"""

from __future__ import annotations

import functools
import gc
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from groundwiki.core import Wiki, compile_wiki, load_config
from groundwiki.core.read import comments
from groundwiki.core.read.comments import MARK, _blank, _changes_code, _Protected, blank_comments
from groundwiki.core.read.markdown import parse_body
from groundwiki.core.render.body.callouts import convert_callouts
from groundwiki.core.wiki.transclusion import first_capped
from helpers.edit_walk import VAULT
from helpers.wikis import page, write_wiki

FLOOR = 0.15  # seconds
LIMIT = 2.2  # the largest time(2n) / time(n) a linear step shows here
Input = TypeVar("Input")  # a page's text, or a wiki compiled from it


def cpu_time(step: Callable[[Input], object], text: Input, runs: int = 3) -> float:
    """The step's best CPU time. The cyclic garbage collector is paused while it runs: its
    passes are amortised linear in what is allocated, but when one falls inside a timed run is
    chance, and it moved a linear step's ratio from 2.0 to 2.1-2.3 (16,000 to 64,000 headings)."""
    best = float("inf")
    # What the test session holds (every collected module, chromadb's and playwright's included)
    # is put out of the collector's sight: a full collection over it took seconds per test.
    gc.freeze()
    for _ in range(runs):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            step(text)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    gc.unfreeze()
    return best


def growth(
    step: Callable[[Input], object],
    make: Callable[[int], Input],
    n: int = 500,
    floor: float = FLOOR,
) -> float:
    """time(2n) / time(n), at the first n (doubling from `n`) where the step takes `floor`."""
    while cpu_time(step, make(n), runs=1) < floor:
        n *= 2
    small, large = make(n), make(2 * n)
    # The two sizes alternate, so a change in the machine's load falls on both; measured again
    # up to three times, since the machine is shared, while a quadratic step stays near 4.
    ratio = float("inf")
    for _ in range(4):
        ratio = min(ratio, cpu_time(step, large, 1) / cpu_time(step, small, 1))
        ratio = min(ratio, cpu_time(step, large, 2) / cpu_time(step, small, 2))
        if ratio <= LIMIT:
            break
    return ratio


def parse(body: str) -> object:
    return parse_body(body, "wiki/a.md", 4)


@pytest.mark.serial
def test_many_identical_headings_are_parsed_in_linear_time():
    # `# same` 16,000 times (112 KB) took lint over 60 s: each heading's id counted up from 1.
    assert growth(parse, lambda n: "# same\n\n" * n) <= LIMIT


def test_headings_numbered_like_repeated_ones_keep_their_ids():
    body = "# same\n\n# same\n\n# same_1\n\n# same\n"
    assert [h.slug for h in parse_body(body, "wiki/a.md", 1).headings] == [
        "same",
        "same_1",
        "same_1_1",
        "same_2",
    ]


@pytest.mark.serial
def test_many_comments_are_blanked_in_linear_time():
    # 200,000 `%% ` (600 KB) took 31 s: the body was copied once per comment.
    assert growth(blank_comments, lambda n: "%% " * n) <= LIMIT


@pytest.mark.serial
def test_many_comments_that_change_what_is_code_are_blanked_in_linear_time():
    # A comment holding an unpaired backtick changes what is code after it: the page is read
    # again from there, which must not cost a whole page per comment.
    assert growth(blank_comments, lambda n: "text %% ` %% more\n\n" * n) <= LIMIT


@pytest.mark.parametrize(
    "body",
    [
        "a `x %% y` b %% secret %% c\n",
        "%% ` %%\n\n`code %% not a comment`\n\nsecret? no: %% hidden %%\n",
        "%% ``` %%\n\n%% hidden %%\n\n```\n%% shown %%\n```\n",
    ],
    ids=["span", "unpaired-backtick", "fence-swallowed"],
)
def test_comments_that_change_code_are_blanked_as_a_whole_reparse_would(body):
    # The reference: the page read again from the start after every such comment.
    assert blank_comments(body) == reference_blank(body)


def test_mixed_comments_and_code_are_blanked_as_a_whole_reparse_would():
    pieces = [
        "%% a ` %%",
        "`x %% y`",
        "```",
        "~~~",
        "%% ``` %%",
        "<!-- %% -->",
        "- item %% c %%",
        "> quote %% ` %%",
        "| a | `%%` |",
        "%% <!-- %%",
        "text",
        "",
        "    indented %%",
    ]
    generator = random.Random(27)
    for _ in range(300):
        body = "\n".join(generator.choice(pieces) for _ in range(generator.randint(1, 12)))
        assert blank_comments(body) == reference_blank(body), body


def test_past_its_rereading_budget_the_rest_of_a_page_is_hidden_as_by_an_unclosed_comment():
    # Each comment holds a fence line: the page is read again after each one, until the
    # reading has cost twice the page (and 256 KB); then the rest is a comment.
    body = "".join(f"%% ``` %%\n\npart {n}\n\n" for n in range(3_000))
    blanked = blank_comments(body)
    assert "part 0\n" in blanked and "part 2999" not in blanked
    assert len(blanked) == len(body) and blanked.count("\n") == body.count("\n")


def reference_blank(body: str) -> str:
    """Blanking as it was before comments were collected as ranges: the page spliced per
    comment and read again from its start after each comment that changes code."""
    text, cursor = body, 0
    protected = _Protected(text)
    while True:
        opened = protected.next_mark(cursor)
        if opened is None:
            return text
        closing = text.find(MARK, opened + len(MARK))
        end = len(text) if closing < 0 else closing + len(MARK)
        text = text[:opened] + _blank(text[opened:end]) + text[end:]
        cursor = end
        if _changes_code(body[opened:end]):
            protected = _Protected(text)


@pytest.mark.serial
def test_a_callout_with_many_lazy_continuation_lines_is_converted_in_linear_time():
    # 12,000 lazy lines under a callout took 40 s to build: the quote's lines so far were
    # scanned for code once per line.
    assert growth(convert_callouts, lambda n: "> [!note] T\n> first\n" + "lazy\n" * n) <= LIMIT


def wiki_of_page(root: Path, body: str) -> Wiki:
    write_wiki(root, {"a.md": page(body=body)})
    wiki = compile_wiki(load_config(root / "mkdocs.yml"))
    assert wiki.resolved_links is not None  # resolved once per wiki: not part of a step timed
    return wiki


@pytest.mark.serial
@pytest.mark.parametrize(
    "embed",
    ["![[a#h{n}]]\n", "![[a]]\n"],
    ids=["no-such-heading", "embeds-itself"],
)
def test_many_embeds_that_show_nothing_are_checked_for_the_transclusion_budget_in_linear_time(
    tmp_path, embed
):
    # 20,000 `![[a#hN]]` lines grew lint 3.9x from 10k: replaying the render's walk counted
    # the target's lines before finding that the embed shows nothing, once per embed (3 s at
    # 16,000). Linear, an embed costs ~5 us: a lower floor keeps the pages to compile small.
    @functools.cache  # each size compiled once: compiling costs ten times the step
    def wiki(n: int) -> Wiki:
        return wiki_of_page(tmp_path / str(n), "".join(embed.format(n=i) for i in range(n)))

    assert growth(lambda w: first_capped(w, w.pages["a"]), wiki, 8_000, floor=0.1) <= LIMIT


def test_comments_blanked_without_a_parse_equal_the_parse_on_the_whole_vault() -> None:
    """Every note of ../shared/vaults/obsidian-hub that holds a `%%`: the quick path, where it
    is taken (most notes), gives what the parse gives."""
    quick = marked = 0
    for path in sorted(VAULT.rglob("*.md")):
        body = path.read_text(encoding="utf-8")
        if comments.MARK not in body:
            continue
        marked += 1
        found = comments._blank_unparsed(body)
        if found is not None:
            quick += 1
            assert found == comments._blank_parsed(body), path
    assert marked > 6000 and quick > marked * 0.9, (marked, quick)
