"""The token lane's index patched from the last snapshot's equals one built whole."""

from __future__ import annotations

import random
from dataclasses import replace

from groundwiki_sidecar.api.operations import Operations
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.index.documents import PageRecord
from groundwiki_sidecar.lanes.token_lane import _built, _patched, _token_index
from helpers.sidecar_helpers import small_wiki

WORDS = ["nozzle", "pump", "valve", "flow", "heat", "sensor", "gauge", "seal", "drift"]


def record(rng: random.Random, key: str) -> PageRecord:
    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    return PageRecord(
        key, words(2), words(6), tuple(rng.sample(WORDS, 2)), "", "note", "auto", None, None, ""
    )


def test_a_patched_index_equals_one_built_whole() -> None:
    rng = random.Random(3)
    pages = {f"p{n}": record(rng, f"p{n}") for n in range(200)}
    index = _built(pages)
    for _ in range(50):
        after = dict(pages)
        for _ in range(rng.randint(1, 4)):
            key = rng.choice(sorted(after))
            roll = rng.random()
            if roll < 0.5:
                after[key] = replace(record(rng, key))
            elif roll < 0.75:
                del after[key]
            else:
                new = f"p{rng.randrange(1000)}"
                after[new] = record(rng, new)
        patched = _patched(index, pages, after)
        whole = _built(after)
        assert patched.fields == whole.fields
        assert patched.postings == whole.postings
        pages, index = after, patched


class Pages:
    """What the lane reads of a snapshot: its pages (hashed by identity, as snapshots are)."""

    def __init__(self, pages: dict[str, PageRecord]) -> None:
        self.pages = pages


def test_each_snapshot_gets_the_index_of_its_own_pages() -> None:
    rng = random.Random(4)
    first = Pages({f"p{n}": record(rng, f"p{n}") for n in range(50)})
    second = Pages({**first.pages, "p3": record(rng, "p3"), "new": record(rng, "new")})
    for snapshot in (first, second, first, second):  # patched forwards and back
        index = _token_index(snapshot)  # type: ignore[arg-type]
        assert index.postings == _built(snapshot.pages).postings


def test_filters_follow_an_edit_to_a_pages_tags_and_usage(tmp_path):
    # The pages a filtered query may return are carried from one batch to the next for the
    # pages a batch did not touch (query._allowed_pages): the touched ones are judged again.
    sidecar = small_wiki(tmp_path)
    service = SidecarService(sidecar, embed=False)
    ops = Operations(service)
    try:
        service.start(watch=False)
        tagged = lambda: [hit["key"] for hit in ops.search("shocks", 5, ["aero"])["hits"]]  # noqa: E731
        assert tagged() == []  # shock.md has no tag yet
        shock = sidecar.config.docs_dir / "shock.md"
        text = shock.read_text()
        shock.write_text(text.replace("title: Shock waves", "title: Shock waves\ntags: [aero]"))
        service.sync("edit", changes=frozenset({shock}))
        assert tagged() == ["shock"]
        shock.write_text(
            text.replace(
                "title: Shock waves", "title: Shock waves\ntags: [aero]\nusage_mode: never"
            )
        )
        service.sync("edit", changes=frozenset({shock}))
        assert tagged() == []
    finally:
        ops.close()
        service.stop()
