"""NewsStore's crawl-state side (pages, hosts, versions, staging) against the embedded SecantusDB
and, when MONGO_URI is set, a real MongoDB."""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterator

import pytest

from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 10, 1, 8, 0, tzinfo=UTC)


def record(fp: str, **fields) -> dict:
    return {"_id": fp, "fp": fp, "url": f"https://s.example/{fp}", "role": "content",
            "due": T0, "history": [], **fields}


def article(fp: str, title: str, text: str) -> dict:
    return {"kind": "article", "fp": fp, "url": f"https://s.example/{fp}", "title": title,
            "text": text, "weight": 0.5, "fetched_at": T0}


def test_write_state_inserts_new_and_replaces_known(store):
    assert store.write_state([record("a"), record("b")], []) == 2
    # "b" is written as new again (another crawl knew it first): replaced, not lost
    assert store.write_state([record("b", visits=2), record("c")], [record("a", visits=5)]) == 3
    pages, hosts = store.load_state()
    assert {p["_id"]: p.get("visits") for p in pages} == {"a": 5, "b": 2, "c": None}
    store.write_hosts([{"_id": "s.example", "mode": "conditional"}])
    store.write_hosts([{"_id": "s.example", "mode": "fingerprint"}])
    assert store.load_state()[1] == [{"_id": "s.example", "mode": "fingerprint"}]


def visited(fp: str, visits: int, at: dt.datetime) -> dict:
    return record(fp, visits=visits, last_visit=at,
                  history=[{"t": at - dt.timedelta(hours=i), "status": 200} for i in range(visits)])


def test_write_state_concurrent_workers_merge_instead_of_clobbering(store):
    """Workers A and B share the store; both loaded "p" and "q" unvisited at their start."""
    store.write_state([record("p"), record("q"), record("r", visits=1, last_visit=T0)], [])
    t1, t2 = T0 + dt.timedelta(hours=1), T0 + dt.timedelta(hours=2)
    # A visits "p" and "q"; it also finds "n" first
    assert store.write_state([visited("n", 1, t1)], [visited("p", 1, t1), visited("q", 1, t1)]) == 3
    # B, stale: writes its unvisited "p" (a weight changed), "n" as new and unvisited, and an
    # older visit of "r"... none of which may undo A's visits
    written = store.write_state([record("n")], [record("p", weight=0.3),
                                                visited("r", 1, T0 - dt.timedelta(hours=1))])
    assert written == 0
    # ...but B's newer visit of "q" replaces A's older one, and a new "m" is inserted
    assert store.write_state([record("m")], [visited("q", 2, t2)]) == 2
    pages = {p["_id"]: p for p in store.load_state()[0]}
    assert pages["p"]["visits"] == 1 and len(pages["p"]["history"]) == 1
    assert pages["n"]["visits"] == 1 and pages["n"]["last_visit"].replace(tzinfo=UTC) == t1
    assert pages["r"]["last_visit"].replace(tzinfo=UTC) == T0
    assert pages["q"]["visits"] == 2 and pages["q"]["last_visit"].replace(tzinfo=UTC) == t2
    assert "m" in pages
    # an equally recent record still replaces (the same worker writing its record again)
    assert store.write_state([], [visited("q", 2, t2) | {"weight": 0.9}]) == 1
    assert store.pages.find_one({"_id": "q"})["weight"] == 0.9


def test_archive_version_keeps_the_stored_text_with_a_diff(store):
    assert store.archive_version("x", {"title": "T", "text": "t"}, archived_at=T0) is None
    store.write_pages([article("x", "Haushalt", "Der Haushalt wird um vier Milliarden gekürzt.")])
    new = {"title": "Haushalt", "text": "Der Haushalt wird um drei Milliarden gekürzt."}
    version = store.archive_version("x", new, archived_at=T0 + dt.timedelta(days=1))
    assert version["version"] == 1 and version["text"].endswith("vier Milliarden gekürzt.")
    assert not version["diff"]["title_changed"] and version["diff"]["body_changed_pct"] > 0
    store.write_pages([article("x", "Haushalt", new["text"])])
    second = store.archive_version("x", {"title": "Haushalt!", "text": new["text"]},
                                   archived_at=T0 + dt.timedelta(days=2))
    assert second["version"] == 2 and second["diff"]["title_changed"] is True  # "!" counts
    assert store.versions.count_documents({"fp": "x"}) == 2


def test_pagerank_and_eviction(store):
    store.write_state([record("a"), record("b")], [])
    store.write_pages([article("a", "A", "a"), {"kind": "node", "fp": "n", "url": "https://s.example/",
                       "links": [{"source_fp": "n", "target_fp": "a", "target_url": "https://s.example/a"}]}])
    assert list(store.link_edges()) == [("n", "a")]
    assert store.update_pagerank({"a": 1.5, "b": 0.2, "zz": 9.0}) == 2
    assert store.pages.find_one({"_id": "a"})["pagerank"] == 1.5
    assert store.evict(["a"], at=T0) == 1
    assert store.articles.find_one({"fp": "a"}) is None
    evicted = store.pages.find_one({"_id": "a"})
    assert evicted["evicted"] and evicted["due"] is None


def test_shadow_run_is_invisible_until_merged(store):
    run = "20241001T080000Z-1-abc"
    store.write_pages([article("old", "Alt", "alt")])
    store.stage(run, "items", [article("new", "Neu", "neu"), {**article("old", "Alt", "alt"), "weight": 0.9}])
    store.stage(run, "pages", [record("new", visits=1)])
    store.stage(run, "hosts", [{"_id": "s.example", "mode": "head"}])
    store.stage(run, "versions", [{"fp": "old", "version": 1, "title": "Alt", "text": "älter"}])
    assert store.staged_runs() == [run] and store.committed_runs() == []
    assert store.articles.find_one({"fp": "new"}) is None  # readers still see the old picture
    counts = store.merge_staged(run, now=T0)
    assert counts == {"items": 2, "pages": 1, "hosts": 1, "versions": 1, "atomic": counts["atomic"]}
    assert store.articles.find_one({"fp": "new"})["title"] == "Neu"
    assert store.articles.find_one({"fp": "old"})["weight"] == 0.9  # write_pages semantics: max
    assert store.pages.find_one({"_id": "new"})["visits"] == 1
    assert store.versions.count_documents({"fp": "old"}) == 1
    assert store.staged_runs() == [] and store.committed_runs() == []
    # SecantusDB and replica sets merge in one transaction
    if store.db.command("buildInfo").get("secantusVersion"):
        assert counts["atomic"] is True


def test_pending_pages_and_the_frontier_marker(store):
    store.write_state([record("p", last_visit=None), visited("v", 1, T0),
                       record("e", last_visit=None, evicted=True), record("n")], [])
    assert sorted(d["_id"] for d in store.pending_pages()) == ["n", "p"]
    assert store.frontier_marker("news") is None
    store.save_frontier_marker("news", "abc", at=T0)
    store.save_frontier_marker("news", "def", at=T0)
    store.save_frontier_marker("other", "xyz", at=T0)
    assert store.frontier_marker("news") == "def"
