from pathlib import Path

from groundwiki.core import compile_wiki, load_config, run_lint

ROOT = Path(__file__).resolve().parents[1]


def test_bundled_wiki_has_no_errors() -> None:
    wiki = compile_wiki(load_config(ROOT / "mkdocs.yml"))
    assert wiki.pages
    assert run_lint(wiki).counts["error"] == 0
