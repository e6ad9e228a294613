"""The independent Obsidian link checker (bench/obsidian_checker.py) on tiny vaults: the
yardstick groundwiki's lint is measured with must itself follow Obsidian's rules."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from obsidian_checker import check_vault, heading_key


def vault(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root


def broken(root: Path, extra: Path | None = None) -> set[tuple[str, int, str, str]]:
    return {(f.file, f.line, f.link, f.reason) for f in check_vault(root, extra)}


def test_a_name_resolves_anywhere_ignoring_case_and_the_md_suffix(tmp_path):
    vault(
        tmp_path,
        {"deep/down/Target Note.md": "x\n", "a.md": "[[target note]] [[Target Note.md]]\n"},
    )
    assert broken(tmp_path) == set()


def test_a_missing_note_is_reported_with_its_line(tmp_path):
    vault(tmp_path, {"a.md": "one\n\nsee [[Nowhere|label]]\n"})
    assert broken(tmp_path) == {("a.md", 3, "[[Nowhere|label]]", "no-file")}


@pytest.mark.parametrize(
    "link",
    ["[[Folder/Note]]", "[[Top/Folder/Note]]", "[[./Sibling]]", "[[../Top/Folder/Note]]"],
)
def test_paths_resolve_vault_absolute_relative_and_by_their_tail(tmp_path, link):
    vault(
        tmp_path,
        {"Top/Folder/Note.md": "x\n", "Src/Sibling.md": "x\n", "Src/a.md": f"{link}\n"},
    )
    assert broken(tmp_path) == set()


def test_a_path_tail_must_match_whole_folder_names(tmp_path):
    vault(tmp_path, {"Top/BigFolder/Note.md": "x\n", "a.md": "[[Folder/Note]]\n"})
    assert broken(tmp_path) == {("a.md", 1, "[[Folder/Note]]", "no-file")}


def test_attachments_resolve_by_name_and_their_subpath_is_not_checked(tmp_path):
    vault(
        tmp_path,
        {
            "assets/diagram.png": b"\x89PNG",
            "icons/icon.svg": "<svg/>",
            "a.md": "![[diagram.png|400]] ![[icon.svg#icon]] ![[assets/diagram.png]]\n",
        },
    )
    assert broken(tmp_path) == set()


def test_an_extra_folder_holds_attachments_too(tmp_path):
    root = vault(tmp_path / "wiki", {"a.md": "![[paper.pdf]]\n"})
    extra = vault(tmp_path / "raw-sources", {"papers/paper.pdf": b"%PDF"})
    assert broken(root) == {("a.md", 1, "![[paper.pdf]]", "no-file")}
    assert broken(root, extra) == set()


def test_headings_match_ignoring_case_and_punctuation(tmp_path):
    vault(
        tmp_path,
        {
            "Note.md": "# Title\n\n## What is it?\n\nSetext heading\n---\n\n###### D&D WOTC\n",
            "a.md": "[[Note#what is it]] [[Note#Setext heading]] [[Note#D D WOTC]] [[Note#Gone]]\n",
        },
    )
    assert broken(tmp_path) == {("a.md", 1, "[[Note#Gone]]", "no-heading")}


def test_a_heading_chain_needs_each_heading_under_the_previous(tmp_path):
    vault(
        tmp_path,
        {
            "Note.md": "# One\n\n## Two\n\n### Three\n\n# Other\n\n## Four\n",
            "a.md": "[[Note#One#Three]]\n[[Note#One#Four]]\n",
        },
    )
    assert broken(tmp_path) == {("a.md", 2, "[[Note#One#Four]]", "no-heading")}


def test_block_ids_end_a_block(tmp_path):
    vault(
        tmp_path,
        {
            "Note.md": "A paragraph. ^para-1\n\n- item\n\n^list-2\n\nNot^glued\n",
            "a.md": "[[Note#^para-1]] [[Note#^LIST-2]] [[Note#^glued]]\n",
        },
    )
    assert broken(tmp_path) == {("a.md", 1, "[[Note#^glued]]", "no-block")}


def test_same_note_anchors(tmp_path):
    vault(tmp_path, {"a.md": "# Here\n\n[[#Here]] [[#There]]\n"})
    assert broken(tmp_path) == {("a.md", 3, "[[#There]]", "no-heading")}


def test_links_in_code_and_comments_do_not_count(tmp_path):
    text = """\
        ---
        related: "[[fm]]"
        ---
        `[[span]]` and ``[[double `tick` span]]``

        ```
        [[fenced]]
        ```

        <!-- [[html comment]] -->
        %% [[inline comment]] %% text
        %%
        [[block comment]]
        %%

            [[indented code]]
        """
    vault(tmp_path, {"a.md": text})
    assert broken(tmp_path) == set()


def test_headings_in_code_or_comments_are_not_headings(tmp_path):
    vault(
        tmp_path,
        {"Note.md": "```\n# Fenced\n```\n%%\n# Hidden\n%%\n", "a.md": "[[Note#Fenced]]\n"},
    )
    assert broken(tmp_path) == {("a.md", 1, "[[Note#Fenced]]", "no-heading")}


def test_an_unclosed_comment_hides_the_rest_of_the_note(tmp_path):
    vault(tmp_path, {"a.md": "[[Gone]]\n%% private\n[[Also gone]]\n"})
    assert broken(tmp_path) == {("a.md", 1, "[[Gone]]", "no-file")}


def test_an_escaped_pipe_in_a_table_splits_target_and_label(tmp_path):
    vault(tmp_path, {"Note.md": "x\n", "a.md": "| a | b |\n|---|---|\n| [[Note\\|label]] | x |\n"})
    assert broken(tmp_path) == set()


def test_a_list_item_indented_after_a_blank_line_is_not_code(tmp_path):
    vault(tmp_path, {"a.md": "- item\n\n    - [[Gone]]\n"})
    assert broken(tmp_path) == {("a.md", 3, "[[Gone]]", "no-file")}


def test_markdown_links_to_notes_are_checked_and_urls_are_not(tmp_path):
    vault(
        tmp_path,
        {
            "Folder/My Note.md": "# Part One\n",
            "a.md": (
                "[ok](Folder/My%20Note.md) [anchor](<Folder/My Note.md#Part One>) "
                "[web](https://example.org/x.md) [bad](Folder/None.md)\n"
            ),
        },
    )
    assert broken(tmp_path) == {("a.md", 1, "[bad](Folder/None.md)", "no-file")}


def test_dot_folders_are_not_part_of_the_vault(tmp_path):
    vault(tmp_path, {".obsidian/hidden.md": "x\n", "a.md": "[[hidden]]\n"})
    assert broken(tmp_path) == {("a.md", 1, "[[hidden]]", "no-file")}


def test_heading_key_keeps_letters_digits_dashes_and_emoji():
    assert heading_key("  Step 1: set-up_now?  ") == "step 1 set-up_now"
    assert heading_key("🗂️ Hub") == heading_key("🗂️   hub")
