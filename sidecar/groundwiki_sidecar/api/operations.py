"""The sidecar's operations, shared by the HTTP API and the MCP tools: each takes plain
arguments, returns the JSON-ready answer, and raises `OperationError` for what a caller got
wrong (an unknown page, every chunk ID unknown, the index not built yet). `catalog.py` declares
how each is called."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Sequence
from typing import Any

from groundwiki.core.evidence.cite import Place, comment, locate
from groundwiki.core.model.scopes import user_scope

from groundwiki_sidecar.api.context_pack import pack
from groundwiki_sidecar.api.parameters import OperationError
from groundwiki_sidecar.api.service import SidecarService
from groundwiki_sidecar.base.health import freshness
from groundwiki_sidecar.index.views import Shown, Snapshot, View
from groundwiki_sidecar.lanes import status as lane_states
from groundwiki_sidecar.search import answers
from groundwiki_sidecar.search.query import Filters, Fused, NotReady, QueryEngine, Ranking

__all__ = ["OperationError", "Operations"]


class Operations:
    def __init__(self, service: SidecarService) -> None:
        settings = service.sidecar.settings
        self.service = service
        self.engine = QueryEngine(
            service.indexer, settings.weights, settings.rrf_k, settings.token_lane
        )
        service.close_on_stop(self.engine)
        # Whose view every answer is from: a user ID, or None for the shared (global) pages.
        self.user: str | None = None

    def viewing(self, user: str | None) -> Operations:
        """These operations answering in one user's view (None: the global scope). Cheap: the
        engine and caches are shared; only the viewer differs."""
        if user == self.user:
            return self
        clone = copy.copy(self)
        clone.user = user
        return clone

    def close(self) -> None:
        self.engine.close()

    def _fresh(self, answer: dict[str, Any], snapshot: Snapshot | View) -> dict[str, Any]:
        """Every answer says the state of the files it comes from, and whether newer edits are
        failing to reach the indexes (then the answer may be out of date)."""
        sync = self.service.indexer.sync_health
        view = snapshot if isinstance(snapshot, View) else snapshot.view(self.user)
        shown = self._shown(view)
        # The users whose files the error must not name: asked only when there is one.
        others = view.others() if sync.failing else frozenset()
        fresh = freshness(shown.generation, shown.synced_at, sync, others)
        return {**answer, "freshness": {**fresh, "vectors": self._vector_shares()}}

    def _shown(self, current: Snapshot | View) -> Shown:
        """The generation and sync time this viewer is shown: in a scoped wiki those of the
        last change to their view, so that another user's edits do not move them."""
        view = current if isinstance(current, View) else current.view(self.user)
        return self.engine.generations.of(view)

    def _vector_shares(self) -> dict[str, float]:
        """The share of pages, passages and chunks whose vectors are computed: below 1 while
        the semantic lane is warming, which ranks only what has vectors. In a scoped wiki,
        of what this viewer sees."""
        indexer = self.service.indexer
        store = indexer.store
        counts = {kind: list(pair) for kind, pair in store.vector_counts().items()}
        snapshot = indexer.snapshot
        if snapshot is not None and snapshot.wiki.scoped:
            seen = store.counts_of(snapshot.view(self.user).item_ids)
            for kind in ("page", "passage"):
                counts[kind] = [seen[kind], seen[f"{kind}_vectors"]]
        if indexer.vectors is None or indexer.embedder is None:
            counts = {kind: [total, 0] for kind, (total, _) in counts.items()}
        return {
            f"{kind}s": round(done / total, 4) if total else 1.0
            for kind, (total, done) in sorted(counts.items())
        }

    def snapshot(self) -> Snapshot:
        self.service.indexer.yield_to_sync()
        current = self.service.indexer.snapshot
        if current is None:
            raise OperationError(503, "not_ready", "the sidecar is still building its first index")
        return current

    def _chunks_indexed(self) -> None:
        """Reading chunks before the first sync has indexed them would call real IDs (a
        search hit's pointers) unknown: the answer says to ask again instead."""
        indexer = self.service.indexer
        if indexer.snapshot is not None and "chunk" not in indexer.ready_kinds:
            raise OperationError(
                503, "not_ready", "the sidecar is starting: raw-source chunks are being indexed"
            )

    def view(self) -> View:
        """The current snapshot as this viewer sees it."""
        return self.snapshot().view(self.user)

    def search(
        self,
        text: str,
        limit: int,
        tags: Sequence[str] = (),
        kind: str | None = None,
        explain: bool = False,
        lanes: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """`lanes`: only these (to compare them); None: every lane that ranks pages."""
        try:
            ranking = self.engine.search_pages(
                text, limit, Filters(tuple(tags), kind), lanes, self.user
            )
        except NotReady as exc:
            raise OperationError(503, "not_ready", str(exc)) from None
        answer = _search_answer(text, ranking, answers.page_hit, explain)
        return self._fresh(answer, ranking.view)

    def context(
        self,
        text: str,
        budget: int,
        limit: int,
        style: str,
        tags: Sequence[str] = (),
        kind: str | None = None,
    ) -> dict[str, Any]:
        """A prompt-ready block for `text` within `budget` tokens (context_pack.py): the
        overview, then the best of `limit` page hits."""
        found = self.search(text, limit, tags, kind)
        overview = self.overview()["pages"]
        packed = pack(text, overview, found["hits"], budget, style)
        answer = {
            "query": text,
            "style": style,
            "budget": budget,
            "tokens": packed.tokens,
            "block": packed.block,
            "overview": packed.overview,
            "hits": packed.hits,
            "left_out": packed.left_out,
            "generation": found["generation"],
            "freshness": found["freshness"],
        }
        return answer

    def search_chunks(
        self,
        text: str,
        limit: int,
        explain: bool = False,
        lanes: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        try:
            ranking = self.engine.search_chunks(text, limit, lanes, self.user)
        except NotReady as exc:
            raise OperationError(503, "not_ready", str(exc)) from None
        answer = _search_answer(text, ranking, answers.chunk_hit, explain)
        return self._fresh(answer, ranking.view)

    def pages(self, ids: Sequence[str], include_body: bool = False) -> dict[str, Any]:
        current = self.view()
        found = answers.hydrate_pages(current, ids, include_body)
        if not found.found:
            raise OperationError(
                404, "unknown_pages", _unknown(found.missing, "page"), missing=found.missing
            )
        answer = {
            "pages": found.found,
            "missing": found.missing,
            "generation": self._shown(current).generation,
        }
        return self._fresh(answer, current)

    def chunks(self, ids: Sequence[str]) -> dict[str, Any]:
        self._chunks_indexed()
        current = self.view()
        found = answers.hydrate_chunks(current, ids)
        if not found.found:
            # Every ID unknown: most likely invented. Say so loudly, with the nearest real ones.
            raise OperationError(
                404, "unknown_chunks", _unknown(found.missing, "chunk"), missing=found.missing
            )
        answer = {
            "chunks": found.found,
            "missing": found.missing,
            "generation": self._shown(current).generation,
        }
        return self._fresh(answer, current)

    def links(self, name: str) -> dict[str, Any]:
        current = self.view()
        resolution = current.wiki.resolver.resolve_name(name)
        if resolution is None:
            near = answers.closest(name.lower(), sorted(current.wiki.pages))
            missing = [{"id": name, "closest": near}]
            raise OperationError(404, "unknown_page", _unknown(missing, "page"), missing=missing)
        page = current.wiki.pages[resolution.key]
        found = answers.links_of(current, page, current.backlinks.get(page.key, ()))
        return self._fresh(found, current)

    def overview(self) -> dict[str, Any]:
        current = self.view()
        listed = [
            page
            for page in current.wiki.pages.values()
            if page.usage_mode != "never"
            and (page.kind == "overview" or page.usage_mode == "always")
        ]
        listed.sort(key=lambda p: (p.kind != "overview", p.key))
        answer = {
            "pages": [
                {
                    "key": p.key,
                    "title": p.title,
                    "summary": p.summary or "",
                    "summary_derived": p.summary_derived,
                    "url": current.wiki.layout.url(p.doc_path),
                    "kind": p.kind,
                    "usage_mode": p.usage_mode,
                }
                for p in listed
            ],
            "generation": self._shown(current).generation,
        }
        return self._fresh(answer, current)

    def health(self) -> dict[str, Any]:
        """Liveness. Alive and answering even while syncing fails (answers then come from the
        last good batch), so `ok` stays true; `sync` tells a monitor that edits are not
        arriving."""
        indexer = self.service.indexer
        snapshot = indexer.snapshot
        # Public and without a viewer: the shared scope's generation, which users' own edits
        # do not move, and the sync's state without its error. Nothing else is said here: the
        # state is everyone's (one sync serves every view) and a monitor needs it.
        shared = self.engine.generations.of(snapshot.view(None)) if snapshot else None
        warming = indexer.warming
        return {
            # As before searches answered during the start: every kind is in.
            "ok": snapshot is not None and not warming,
            "generation": shared.generation if shared else indexer.store.generation,
            "sync": indexer.sync_health.state,
            "warming": warming,
            "starting": self.service.starting(),
        }

    def status(self) -> dict[str, Any]:
        found = {**self.service.status().to_json(), "scope": self.scope}
        snapshot = self.service.indexer.snapshot
        if snapshot is None or not snapshot.wiki.scoped:
            return found
        # A scoped wiki: every count is of what this viewer sees, never another user's pages.
        view = snapshot.view(self.user)
        counts = self.service.indexer.store.counts_of(view.item_ids)
        found["pages"] = counts["page"]
        found["passages"] = counts["passage"]
        found["page_vectors"] = counts["page_vectors"]
        found["passage_vectors"] = counts["passage_vectors"]
        store = self.service.indexer.store
        pending = counts["page_pending"] + store.pending_count_of("chunk")
        if self.service.sidecar.settings.embed_passages:
            pending += counts["passage_pending"]
        found["embedding_pending"] = pending
        eta = self.service.indexer.meter.eta_s(pending)
        found["embedding_eta_s"] = None if eta is None else round(eta, 1)
        found["lexical_docs"] = {
            "pages": counts["page"],
            "chunks": found["lexical_docs"].get("chunks", 0),
            "passages": counts["passage"],
        }
        # Nor does anything else move with another user's edits. The generation and sync time
        # are those of the last change to this view. Whose texts the model embedded, and how
        # long a sync took, would say when other users' files changed: the embedded count is
        # of this view's vectors, the pace is shown only while this view has texts waiting
        # (it is then the model's pace, whoever's texts share the batch), and a sync's length
        # is not shown. File events waiting are not yet tied to a scope: none are shown.
        # The lanes' states are this view's (the semantic lane warms up for its vectors only),
        # and an error's text that names another user's file is replaced by a neutral sentence
        # (the shared scope is told of no user's file; a user of their own only). The audit
        # trail's sequence number and lost records count every viewer's requests: not shown
        # (null); `groundwiki audit` reads them from the index folder.
        # Global and harmless: `chunks` and their vectors (raw sources are shared), `model`,
        # the watcher's state and re-arms (the wiki folder replaced whole), the states of the
        # sync, the embedding, the audit trail and the tokens file (one of each serves every
        # view: a failure there holds back every viewer's edits, which each must be told), and
        # the tokens' error, which names no user.
        indexer = self.service.indexer
        failing = indexer.sync_health.failing or indexer.embed_health.failing
        others = view.others() if failing else frozenset()
        found["lanes"] = lane_states(indexer, view)
        # A sync running is everyone's state too; how many pages it found would count
        # another user's edits.
        found["sync"] = {
            **indexer.sync_health.to_json(others),
            **indexer.sync_progress(),
            "pages": None,
            "following": None,
        }
        found["embedding"] = indexer.embed_health.to_json(others)
        found["audit"] = {**found["audit"], "records": None, "lost": None}
        shown = self._shown(view)
        found["generation"] = shown.generation
        found["last_sync"] = shown.synced_at
        found["last_sync_seconds"] = None
        found["pending_events"] = 0
        found["texts_embedded"] = (
            counts["page_vectors"] + counts["passage_vectors"] + found["chunk_vectors"]
        )
        if not pending:
            found["embedding_texts_per_s"] = None
        return found

    @property
    def scope(self) -> str:
        """The viewer's scope as the core names it: `global`, or `user:<id>`."""
        return user_scope(self.user)

    def verify(
        self, answer: str, chunks: Sequence[str] = (), pages: Sequence[str] = ()
    ) -> dict[str, Any]:
        if chunks:
            self._chunks_indexed()
        current = self.view()
        return self._fresh(answers.verify(current, answer, chunks, pages), current)

    def cite(self, source: str, text: str) -> dict[str, Any]:
        """Where a quote stands in a raw source, as the provenance comment that cites it."""
        current = self.snapshot()
        wiki = current.wiki
        prefix = wiki.config.raw_prefix.rstrip("/") + "/"
        path = source.replace("\\", "/").strip()
        path = path[len(prefix) :] if path.startswith(prefix) else path
        found = wiki.sources.get(path)
        if found is None:
            closest = difflib.get_close_matches(path, sorted(wiki.sources), n=3)
            hint = f" (closest: {', '.join(prefix + c for c in closest)})" if closest else ""
            raise OperationError(
                404,
                "unknown_source",
                f"no raw source '{source}'{hint}; name it as citations do: {prefix}notes.md",
                closest=[prefix + c for c in closest],
            )
        try:
            located = locate(found, text)
        except ValueError as exc:
            raise OperationError(422, "cannot_cite", str(exc)) from None
        shown = prefix + found.path

        def place(where: Place) -> dict[str, Any]:
            spec = where.spec(shown)
            return {
                "citation": spec,
                "comment": comment(spec),
                "start": where.start,
                "end": where.end,
                "text": "\n".join(found.lines[where.start - 1 : where.end]),
                "closeness": round(where.score, 4),
            }

        answer = {
            "source": shown,
            "found": place(located.found) if located.found else None,
            "occurrences": located.occurrences,
            "candidates": [place(c) for c in located.candidates],
            "generation": self._shown(current).generation,
        }
        return self._fresh(answer, current)


def _unknown(missing: list[dict[str, Any]], what: str) -> str:
    parts = []
    for entry in missing[:5]:
        hint = f" (closest: {', '.join(entry['closest'])})" if entry["closest"] else ""
        parts.append(f"{entry['id']}{hint}")
    return f"no such {what}: " + "; ".join(parts) + ". Copy IDs verbatim from search results."


def _search_answer(
    text: str,
    ranking: Ranking,
    hit: Callable[[Ranking, Fused, bool], dict[str, Any]],
    explain: bool,
) -> dict[str, Any]:
    return {
        "query": text,
        "hits": [hit(ranking, fused, explain) for fused in ranking.fused],
        "lanes": answers.lane_json(ranking.runs, ranking.weights),
        # Never refused for length: a lane that ranked on part of the query says what it left.
        "query_truncated": bool(ranking.bounded),
        **({"bounded": ranking.bounded} if ranking.bounded else {}),
        # A chunk search says when the per-source cap or the duplicate cut passed hits over.
        **(
            {"spread": ranking.spread.to_json()}
            if ranking.spread and ranking.spread.removed
            else {}
        ),
        "generation": ranking.generation,
    }
