"""Comments blanked without a parse (comments._blank_unparsed) equal comments blanked with one
(_blank_parsed), on random pages built from what makes the parse matter: code spans, fences in
quotes and lists, HTML comments, escapes, blank lines and comments holding any of them. And the
quick path is taken on most of those pages, or it would be no quicker."""

from __future__ import annotations

import random

from groundwiki.core.read import comments

PIECES = [
    "%%", "%% note %%", "%%\n", "`", "``", "```", "`a`", "``b``", "\\`", "~~~", "````",
    "\n", "\n\n", "\n```\n", "\n~~~\n", "\n```python\n", "\n````\n", "\n> ```\n", "\n> ",
    "\n- ", "\n  ```\n", "\n    ```\n", "\n1. ", "<!--", "-->", "<!-- c -->", "\n<div>\n",
    "text", " words ", "[[link]]", "#tag", "| a | b |\n|---|---|\n", "\n   \n", "\t",
]  # fmt: skip


def page(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))


def test_the_quick_path_equals_the_parse_on_random_pages() -> None:
    rng = random.Random(2911)
    quick = 0
    for _ in range(1500):
        body = page(rng)
        expected = comments._blank_parsed(body) if comments.MARK in body else body
        found = comments._blank_unparsed(body) if comments.MARK in body else body
        if found is not None and comments.MARK in body:
            quick += 1
            assert found == expected, repr(body)
        assert comments.blank_comments(body) == expected, repr(body)
    assert quick > 80  # of about 1,100 with a mark: pages this dense in code markers are parsed


def test_the_quick_path_on_a_vault_note() -> None:
    """The shape of most notes in ../shared/vaults/obsidian-hub: code spans, HTML comments and
    comments of the hub's templates. A fence closing before a comment is left to the parse (a
    closing fence line could open one as far as the quick look can tell)."""
    body = (
        "# Amy\n\n- GitHub: [x](https://github.com/x/) ^github\n<!-- - Discord: `@` -->\n\n"
        "%% Feel free to add a bio below this comment %%\n\nUses `obsidian-releases` and "
        "more.\n\n%% Add links to the `obsidian-releases` repo %%\n\n%% Hub footer %%\n"
    )
    blanked = comments._blank_unparsed(body)
    assert blanked is not None and blanked == comments._blank_parsed(body)
    assert "bio" not in blanked and "Hub footer" not in blanked
    fenced = "```js\nlet a = 1 %% 2;\n```\n\n%% Hub footer %%\n"
    assert comments._blank_unparsed(fenced) is None
    assert comments.blank_comments(fenced) == comments._blank_parsed(fenced)
    assert "1 %% 2" in comments.blank_comments(fenced)


def test_a_page_of_fence_lines_is_left_to_the_parse() -> None:
    body = "``````````\n" * 3000 + "```\n" * 3000 + "%% x %%\n"
    assert comments._blank_unparsed(body) is None
    assert comments.blank_comments(body) == comments._blank_parsed(body)
