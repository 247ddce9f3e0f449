"""Every query of the store's hot paths uses an index, on the embedded SecantusDB and on a real
MongoDB (MONGO_URI): crawl-state writes ("newer visit wins"), page and link upserts, weight
updates, the version archive, eviction, the staging lookups and the upgrade's key lookups.

Reads are checked with ``explain`` (the winning plan scans an index, never the collection).
Writes are checked with ``explain`` of the update where the server's answer means something (a
bare ``_id`` filter must not report a collection scan; SecantusDB reports a scan for every
update), and on every server by their cost per document at two collection sizes (200 and 2,000
documents): a scan per write makes it grow about tenfold, an index lookup keeps it flat. The same
harness measures the ``$or`` filter of the re-crawl regression (issue 8) and must see it grow.
"""

from __future__ import annotations

import datetime as dt
import os
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pymongo import ReplaceOne

from newscrawl.store import NewsStore
from newscrawl.store.crawlstate import state_filter
from newscrawl.store.pages import link_spec, page_spec

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 10, 1, 8, 0, tzinfo=UTC)
SMALL, LARGE = 200, 2000
#: Writes timed per size (the regression's filter: fewer, it is slow by design).
OPS, SCAN_OPS = 100, 30
#: A write path passes when its cost per document at LARGE is below SLACK x its cost at SMALL
#: (plus FLOOR seconds for timer noise); a scan per write grows ~LARGE/SMALL = 10x.
SLACK, FLOOR = 3.0, 0.0005


def fp(i: int) -> str:
    return f"{i:016x}"


def record(i: int, visited: dt.datetime | None) -> dict[str, Any]:
    return {"_id": fp(i), "fp": fp(i), "url": f"https://s.example/{i}", "role": "content",
            "last_visit": visited, "visits": int(visited is not None), "due": T0, "history": [],
            "pad": "x" * 200}


def article(i: int, **fields: Any) -> dict[str, Any]:
    return {"kind": "article", "fp": fp(i), "url": f"https://s.example/{i}", "site": "s.example",
            "title": f"Article {i}", "text": "Text " * 40, "weight": 0.5, "fetched_at": T0,
            **fields}


def node(i: int, targets: range) -> dict[str, Any]:
    return {"kind": "node", "fp": fp(10**9 + i), "url": f"https://s.example/c{i}",
            "site": "s.example", "fetched_at": T0,
            "links": [{"target_fp": fp(t), "target_url": f"https://s.example/{t}",
                       "link_class": "downward"} for t in targets]}


@pytest.fixture(params=["secantus", "mongo"])
def server(request) -> str:
    if request.param == "mongo":
        uri = os.environ.get("MONGO_URI")
        if not uri:
            pytest.skip("MONGO_URI is not set: no real MongoDB server to test the store against")
        return uri
    return str(request.getfixturevalue("embedded").uri)


def open_store(uri: str) -> NewsStore:
    store = NewsStore.connect(uri, f"test_shape_{uuid.uuid4().hex[:10]}", timeout=5.0)
    store.ensure_indexes()
    store.ensure_state_indexes()
    return store


def close_store(store: NewsStore, uri: str) -> None:
    """Drop the test database on a real MongoDB (the embedded one lives in a temporary folder
    and goes with it: dropping costs seconds there)."""
    if uri == os.environ.get("MONGO_URI"):
        store.client_or_db_client().drop_database(store.db.name)
    store.close()


def fill_pages(store: NewsStore, start: int, stop: int) -> None:
    store.pages.insert_many([record(i, T0 if i % 2 else None) for i in range(start, stop)])


def fill_bodies(store: NewsStore, start: int, stop: int) -> None:
    """Articles ``start..stop`` and channel pages linking to them (30 links each), inserted as
    write_pages stores them (a fast set-up: inserts, not upserts)."""
    stored = {"first_seen": T0, "last_seen": T0}
    store.articles.insert_many([{**article(i), **stored} for i in range(start, stop)])
    nodes = [node(c, range(c * 30, c * 30 + 30)) for c in range(start // 30, stop // 30)]
    store.nodes.insert_many([{k: v for k, v in n.items() if k != "links"} | stored for n in nodes])
    store.links.insert_many([{**link, "source_fp": n["fp"], **stored}
                             for n in nodes for link in n["links"]])


def fill_versions(store: NewsStore, start: int, stop: int) -> None:
    store.articles.insert_many([article(i) for i in range(start, stop)])
    store.versions.insert_many([{"fp": fp(i), "version": 1, "url": f"https://s.example/{i}"}
                                for i in range(start, stop)])


@pytest.fixture
def filled(server: str) -> Iterator[NewsStore]:
    """A store with SMALL documents in every collection a hot path reads (plans depend on the
    indexes, not on the size)."""
    store = open_store(server)
    fill_pages(store, 0, SMALL)
    fill_versions(store, 0, SMALL)
    fill_bodies(store, SMALL, 2 * SMALL)
    store.stage("run-a", "items", [article(i) for i in range(50)])
    store.stage("run-b", "pages", [record(i, T0) for i in range(50)])
    yield store
    close_store(store, server)


def plan_stages(plan: dict[str, Any]) -> list[str]:
    stages = [str(plan.get("stage"))]
    for key in ("inputStage", "queryPlan"):
        if isinstance(plan.get(key), dict):
            stages += plan_stages(plan[key])
    for child in plan.get("inputStages") or ():
        stages += plan_stages(child)
    return stages


def uses_index(explained: dict[str, Any]) -> bool:
    stages = plan_stages(explained["queryPlanner"]["winningPlan"])
    return "COLLSCAN" not in stages and bool(
        {"IXSCAN", "IDHACK", "EXPRESS_IXSCAN", "EXPRESS_IDHACK", "COUNT_SCAN",
         "DISTINCT_SCAN"} & set(stages))


def explain(store: NewsStore, command: dict[str, Any]) -> dict[str, Any]:
    return store.db.command("explain", command, verbosity="queryPlanner")


def link_filter() -> dict[str, Any]:
    spec = link_spec({"target_fp": fp(40)}, node(1, range(0)), T0)
    assert spec is not None
    return spec[0]


def test_reads_of_the_hot_paths_use_an_index(filled: NewsStore) -> None:
    some = [fp(i) for i in range(0, 1000, 7)]
    finds = {
        "archive_version: the stored article": ("articles", {"fp": fp(5)}),
        "update_weights / evict: page bodies by fp": ("nodes", {"fp": {"$in": some}}),
        "write_pages: the upsert of a page": ("articles", page_spec(article(5), T0)[0]),
        "write_pages: the upsert of a link": (
            "links", link_filter()),
        "update_pagerank / upgrade: records by _id": ("pages", {"_id": {"$in": some}}),
        "merge_staged: the run's entries": ("staging", {"run": "run-a"}),
        "merge_staged: the commit marker": ("staging", {"target": "commit", "run": "run-a"}),
        "upgrade: links into targets": ("links", {"target_fp": {"$in": some}}),
    }
    for what, (name, filt) in finds.items():
        assert uses_index(explain(filled, {"find": name, "filter": filt})), what
    versions = {"archive_version: the last number of an article": {"fp": fp(5)},
                "archive_version: the kept text of an article": {"fp": fp(5), "content_fp": "0"}}
    for what, filt in versions.items():
        assert uses_index(explain(filled, {"find": "article_versions", "filter": filt})), what
    committed = {"distinct": "staging", "key": "run", "query": {"target": "commit"}}
    assert uses_index(explain(filled, committed)), "committed_runs"


def update_explain_is_informative(store: NewsStore) -> bool:
    """True when the server's explain of an update reports an index for a bare ``_id``."""
    plan = explain(store, {"update": "pages", "updates": [{"q": {"_id": fp(1)}, "u": {"x": 1}}]})
    return uses_index(plan)


def per_doc_costs(uri: str, fill: Callable[[NewsStore, int, int], None],
                  write: Callable[[NewsStore, int], int], tries: int = 2) -> list[float]:
    """Seconds per document of ``write(store, size)`` (it returns the documents written) on a
    store that ``fill`` grows to SMALL, then to LARGE documents; the best of ``tries``."""
    store = open_store(uri)
    try:
        costs, have = [], 0
        for size in (SMALL, LARGE):
            fill(store, have, size)
            have = size
            best = float("inf")
            for _ in range(tries):
                started = time.perf_counter()
                n = write(store, size)
                best = min(best, (time.perf_counter() - started) / max(n, 1))
            costs.append(best)
        return costs
    finally:
        close_store(store, uri)


_tick = [0]


def _later() -> dt.datetime:
    _tick[0] += 1
    return T0 + dt.timedelta(hours=_tick[0])


def replace_state(store: NewsStore, size: int) -> int:
    """write_state of known records, newer visits: the conditional replace of each record."""
    at = _later()
    docs = [record(i, at) for i in range(1, size, max(size // OPS, 1))][:OPS]
    assert store.write_state([], docs) == len(docs)
    return len(docs)


def upsert_pages(store: NewsStore, size: int) -> int:
    """write_pages of known articles and a channel page's known links (upserts)."""
    at = _later()
    docs = [article(i, fetched_at=at) for i in range(0, size, max(size // OPS, 1))][:OPS]
    docs.append(node(1, range(30, 60)))
    counts = store.write_pages(docs, now=at)
    assert counts["new_articles"] == counts["new_links"] == 0
    return counts["articles"] + counts["nodes"] + counts["links"]


def archive_versions(store: NewsStore, size: int) -> int:
    """archive_version of 50 stored articles whose text was not kept yet (the versions the
    previous call kept are removed first: one old text is kept once)."""
    at = _later()
    fps = [fp(i) for i in range(0, size, max(size // 50, 1))]
    store.versions.delete_many({"fp": {"$in": fps}, "version": {"$gte": 2}})
    for page in fps:
        assert store.archive_version(page, {"title": "T", "text": "t"}, archived_at=at)
    return len(fps)


def replace_with_or(store: NewsStore, size: int) -> int:
    """The filter of the re-crawl regression: ``{_id, $or: [...]}`` (a scan per record on
    SecantusDB)."""
    at = _later()
    ops = [ReplaceOne({"_id": fp(i), "$or": [{"last_visit": None},
                                             {"last_visit": {"$lte": at}}]},
                      record(i, at), upsert=True)
           for i in range(1, size, max(size // SCAN_OPS, 1))][:SCAN_OPS]
    store.pages.bulk_write(ops, ordered=False)
    return len(ops)


def test_update_filters_use_an_index_where_the_server_explains_updates(server: str) -> None:
    store = open_store(server)
    try:
        store.write_state([record(1, T0)], [])
        if not update_explain_is_informative(store):
            pytest.skip("this server's explain of an update reports a scan even for a bare _id "
                        "(SecantusDB): the timing test below checks the write paths")
        new = record(1, _later())
        filters = {"write_state: conditional replace": ("pages", state_filter(new)),
                   "write_state: unvisited record": ("pages", state_filter(record(1, None))),
                   "write_pages: page upsert": ("articles", page_spec(article(5), T0)[0]),
                   "write_pages: link upsert": ("links", link_filter())}
        for what, (name, filt) in filters.items():
            plan = explain(store, {"update": name, "updates": [{"q": filt, "u": {"$set": {"x": 1}}}]})
            assert uses_index(plan), what
    finally:
        close_store(store, server)


@pytest.mark.parametrize("fill, write", [(fill_pages, replace_state), (fill_bodies, upsert_pages),
                                         (fill_versions, archive_versions)],
                         ids=["write_state", "write_pages", "archive_version"])
def test_writes_of_the_hot_paths_cost_the_same_in_a_larger_store(server: str, fill,
                                                                  write) -> None:
    small, large = per_doc_costs(server, fill, write)
    assert large < SLACK * small + FLOOR, (
        f"{write.__name__}: {small * 1000:.2f} ms/doc at {SMALL} documents, "
        f"{large * 1000:.2f} ms/doc at {LARGE}: grows with the collection (a scan per write)")


def test_the_timing_harness_sees_a_scan(embedded) -> None:
    """The measurement above would catch the regression: the ``$or`` filter's cost per record
    grows with the collection on SecantusDB."""
    small, large = per_doc_costs(embedded.uri, fill_pages, replace_with_or, tries=1)
    assert large > 3 * small, (small, large)
