"""newscrawl.store's page side (articles, nodes, links: write semantics, inserts before upserts,
retries, indexes, search, counts) against real servers over real sockets: the embedded
SecantusDB always, and the MongoDB named by the MONGO_URI environment variable when it is set.
Spill files and unreachable servers: tests/test_store_spill.py."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from pymongo import UpdateOne
from pymongo.errors import AutoReconnect, BulkWriteError, DuplicateKeyError, OperationFailure

from newscrawl.store import NewsStore, StoreUnavailable, spill
from newscrawl.store.pages import link_update, page_update

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 10, 1, 8, 0, tzinfo=UTC)
T1 = dt.datetime(2024, 10, 2, 9, 30, tzinfo=UTC)


def article(fp: str = "a" * 16, **fields: object) -> dict:
    doc = {
        "kind": "article",
        "fp": fp,
        "url": f"https://news.example.com/2024/{fp}.html",
        "site": "example.com",
        "host": "news.example.com",
        "title": "Election results",
        "text": "The votes were counted overnight.",
        "weight": 0.5,
        "published": T0,
        "fetched_at": T0,
        "language": "en",
    }
    doc.update(fields)
    return doc


def link(target: str, link_class: str = "downward", **fields: object) -> dict:
    doc = {
        "source_url": "https://news.example.com/",
        "source_fp": "n" * 16,
        "target_url": f"https://news.example.com/{target}",
        "target_fp": target,
        "link_class": link_class,
        "role": "content",
        "features": {"image": 1, "font_size": 0, "bold": 0, "html_tag": 1},
        "r0": 0.7,
        "site": "example.com",
        "anchor_text": "headline",
        "first_seen": T0,
    }
    doc.update(fields)
    return doc


def node(links: list[dict], **fields: object) -> dict:
    doc = {
        "kind": "node",
        "fp": "n" * 16,
        "url": "https://news.example.com/",
        "site": "example.com",
        "role": "entry",
        "weight": 1.0,
        "fetched_at": T0,
        "link_counts": {"downward": len(links)},
        "links": links,
    }
    doc.update(fields)
    return doc


def test_upsert_twice_keeps_one_doc(store: NewsStore) -> None:
    first = store.write_pages([article()])
    assert first == {
        "articles": 1, "nodes": 0, "links": 0,
        "new_articles": 1, "new_nodes": 0, "new_links": 0, "errors": 0,
    }  # fmt: skip
    second = store.write_pages([article(title="Election results (updated)", fetched_at=T1)])
    assert second["articles"] == 1 and second["new_articles"] == 0
    assert store.articles.count_documents({}) == 1
    doc = store.articles.find_one({"fp": "a" * 16})
    assert doc["title"] == "Election results (updated)"
    assert doc["first_seen"] == T0  # $setOnInsert: kept
    assert doc["last_seen"] == doc["fetched_at"] == T1  # $set: moved on


def test_weight_keeps_max_and_update_weights_overwrites(store: NewsStore) -> None:
    for weight in (0.5, 0.3, 0.9, 0.1):
        store.write_pages([article(weight=weight)])
    store.write_pages([article(weight=None)])  # no weight: leaves it alone
    assert store.articles.find_one()["weight"] == 0.9
    store.write_pages([node([])])
    assert store.update_weights({"a" * 16: 0.2, "n" * 16: 0.4, "f" * 16: 1.0}) == 2
    assert store.articles.find_one()["weight"] == 0.2
    assert store.nodes.find_one()["weight"] == 0.4
    assert store.update_weights({"a" * 16: 0.2}) == 0  # unchanged
    assert store.update_weights({}) == 0


def test_node_links_go_to_the_links_collection(store: NewsStore) -> None:
    counts = store.write_pages([node([link("t1"), link("t2", "horizontal")])])
    assert counts["nodes"] == 1 and counts["links"] == 2 and counts["new_links"] == 2
    stored = store.nodes.find_one()
    assert "links" not in stored and stored["link_counts"] == {"downward": 2}
    assert store.links.count_documents({}) == 2
    edge = store.links.find_one({"target_fp": "t1"})
    assert edge["source_fp"] == "n" * 16 and edge["features"]["image"] == 1
    assert edge["first_seen"] == T0 and edge["last_seen"] == T0

    again = store.write_pages(
        [node([link("t1", anchor_text="new headline", first_seen=T1)], fetched_at=T1)]
    )
    assert again["links"] == 1 and again["new_links"] == 0
    assert store.links.count_documents({}) == 2
    edge = store.links.find_one({"target_fp": "t1"})
    assert edge["anchor_text"] == "new headline"
    assert edge["first_seen"] == T0 and edge["last_seen"] == T1


def _write_by_upserts(store: NewsStore, docs: list[dict], now: dt.datetime) -> None:
    """The reference: every page and link written by its upsert, as write_pages did before it
    inserted new documents."""
    ops: dict = {store.articles: [], store.nodes: [], store.links: []}
    for doc in docs:
        if doc["kind"] == "article":
            ops[store.articles].append(page_update(doc, now))
            continue
        ops[store.nodes].append(page_update(doc, now))
        for edge in doc.get("links") or ():
            update = link_update(edge, doc, now)
            if update is not None:
                ops[store.links].append(update)
    for collection, batch in ops.items():
        if batch:
            collection.bulk_write(batch, ordered=False)


def _stored(store: NewsStore) -> dict:
    """Every stored page and link without ``_id``, as (field, value) lists: field order counts."""
    return {
        collection.name: sorted(
            (list(doc.items()) for doc in collection.find({}, {"_id": 0})), key=repr
        )
        for collection in (store.articles, store.nodes, store.links)
    }


def test_inserts_store_what_the_upserts_stored(store: NewsStore) -> None:
    """write_pages inserts new documents and upserts existing ones; the stored documents are
    the ones the upserts alone produce, field order included."""
    reference = NewsStore(store.client[f"{store.db.name}_ref"])
    reference.ensure_indexes()
    later = T1 + dt.timedelta(hours=1)
    first = [
        article("a" * 16),
        article("b" * 16, weight=None, fetched_at=None),  # no weight
        article("c" * 16, weight=float("nan"), first_seen=T0 - dt.timedelta(days=1)),
        node([link("t1"), link("t2", last_seen=T1, first_seen=None), {"source_fp": "n" * 16}]),
        article("a" * 16, title="Election results (corrected)", weight=0.7),  # twice in a batch
        article("d" * 16, **{"x.y": 1}),  # a path in $set, a name in an insert: upserted
        article("f" * 16, **{"10": "ten"}),  # mongod orders numeric names numerically
    ]
    second = [
        article("a" * 16, fetched_at=T1, weight=0.3, title="Election results (final)"),
        article("e" * 16, last_seen=T0),
        node([link("t1", anchor_text="new headline"), link("t4", "horizontal")], fetched_at=T1),
        article("d" * 16, **{"x.y": 2}),
    ]
    def write_round(batch, counts, now):
        """Write ``batch`` both ways at run clock ``now``: same counts as given, same stored
        documents."""
        assert store.write_pages(batch, now=now) == counts
        _write_by_upserts(reference, batch, now)
        assert _stored(store) == _stored(reference)

    try:
        write_round(first, {"articles": 6, "nodes": 1, "links": 2, "new_articles": 5,
                            "new_nodes": 1, "new_links": 2, "errors": 1}, T1)
        assert store.articles.find_one({"fp": "d" * 16})["x"] == {"y": 1}  # a path, as in $set
        write_round(second, {"articles": 3, "nodes": 1, "links": 2, "new_articles": 1,
                             "new_nodes": 0, "new_links": 1, "errors": 0}, later)
        doc = store.articles.find_one({"fp": "a" * 16})
        # the item's fetch time (stamped by the run clock) is when the page was seen: first
        # fetched at T0, last at T1; the writer's clock (T1 / later) only stands in without one
        assert doc["first_seen"] == T0 and doc["last_seen"] == T1 and doc["weight"] == 0.7
        assert doc["title"] == "Election results (final)"
    finally:
        store.client.drop_database(reference.db.name)


def test_only_existing_documents_are_upserted(
    store: NewsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    upserts: list[tuple[str, list]] = []
    bulk = store.bulk.write

    def spy(name, ops, retries, backoff, **kwargs):
        upserts.append((name, list(ops)))
        return bulk(name, ops, retries, backoff, **kwargs)

    monkeypatch.setattr(store.bulk, "write", spy)
    fresh = [article("a" * 16), article("b" * 16), node([link("t1"), link("t2")])]
    counts = store.write_pages(fresh, now=T1)
    assert upserts == []  # everything new: inserts only
    assert counts["new_articles"] == 2 and counts["new_nodes"] == 1 and counts["new_links"] == 2

    # a, the node and t1 exist (duplicate key 11000): exactly those fall back to their upserts
    again = [article("c" * 16), article("a" * 16, fetched_at=T1), node([link("t1"), link("t3")])]
    counts = store.write_pages(again, now=T1)
    assert upserts == [
        ("articles", [page_update(again[1], T1)]),
        ("nodes", [page_update(again[2], T1)]),
        ("links", [link_update(again[2]["links"][0], again[2], T1)]),
    ]
    assert counts == {
        "articles": 2, "nodes": 1, "links": 2,
        "new_articles": 1, "new_nodes": 0, "new_links": 1, "errors": 0,
    }  # fmt: skip
    assert store.articles.find_one({"fp": "a" * 16})["first_seen"] == T0  # its first fetch
    assert store.articles.count_documents({}) == 3 and store.links.count_documents({}) == 3

    # a key twice in one batch: the first write inserts, the second follows as its upsert
    upserts.clear()
    twice = [article("d" * 16, weight=0.2), article("d" * 16, weight=0.9, title="second")]
    counts = store.write_pages(twice, now=T1)
    assert upserts == [("articles", [page_update(twice[1], T1)])]
    assert counts["articles"] == 2 and counts["new_articles"] == 1
    doc = store.articles.find_one({"fp": "d" * 16})
    assert doc["title"] == "second" and doc["weight"] == 0.9


def test_mostly_known_documents_are_upserted_directly(
    store: NewsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch after one of mostly known documents (a re-crawl) skips the inserts, which would
    fail; a batch after one with enough new documents inserts first again."""
    calls: list[tuple[str, int]] = []
    bulk, bulk_insert = store.bulk.write, store.bulk.insert

    def spy_bulk(name, ops, retries, backoff, **kwargs):
        calls.append(("upsert", len(ops)))
        return bulk(name, ops, retries, backoff, **kwargs)

    def spy_insert(name, docs, retries, backoff):
        calls.append(("insert", len(docs)))
        return bulk_insert(name, docs, retries, backoff)

    monkeypatch.setattr(store.bulk, "write", spy_bulk)
    monkeypatch.setattr(store.bulk, "insert", spy_insert)

    def batch(start: int, stop: int) -> list[dict]:
        return [article(f"{i:016x}", fetched_at=T1) for i in range(start, stop)]

    def write(docs: list[dict]) -> tuple[list, int, int]:
        calls.clear()
        counts = store.write_pages(docs)
        return list(calls), counts["articles"], counts["new_articles"]

    assert write(batch(0, 10)) == ([("insert", 10)], 10, 10)
    assert write(batch(0, 10)) == ([("insert", 10), ("upsert", 10)], 10, 0)  # all known
    assert write(batch(1, 11)) == ([("upsert", 10)], 10, 1)  # directly; 10 % new
    assert write(batch(20, 30)) == ([("upsert", 10)], 10, 10)  # still directly; all new
    assert write(batch(30, 40)) == ([("insert", 10)], 10, 10)  # inserts first again
    assert store.articles.count_documents({}) == 31
    assert store.articles.find_one({"fp": f"{0:016x}"})["first_seen"] == T1


class _Flaky:
    """A collection whose bulk writes fail with AutoReconnect as ``fail(ops, calls)`` decides,
    after (``applied``) or before the server applied them."""

    def __init__(self, collection, fail, *, applied: bool) -> None:
        self.collection, self.fail, self.applied, self.calls = collection, fail, applied, 0

    def bulk_write(self, ops, **kwargs):
        self.calls += 1
        if not self.fail(ops, self.calls):
            return self.collection.bulk_write(ops, **kwargs)
        if self.applied:  # the acknowledgement is lost, the write is not
            try:
                self.collection.bulk_write(ops, **kwargs)
            except BulkWriteError:
                pass
        raise AutoReconnect("connection closed")

    def __getattr__(self, name):
        return getattr(self.collection, name)


def test_a_lost_insert_acknowledgement_is_retried_without_double_writes(
    store: NewsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.write_pages([article("a" * 16)])
    flaky = _Flaky(store.articles, lambda ops, calls: calls == 1, applied=True)
    monkeypatch.setitem(store._collections, "articles", flaky)
    counts = store.write_pages([article("a" * 16, fetched_at=T1), article("b" * 16)],
                               retries=2, backoff=0.01)
    # the retry finds both stored (duplicate keys) and upserts them: b was created by the lost
    # attempt, so it counts as matched; nothing is stored twice
    assert flaky.calls == 3 and counts["articles"] == 2 and counts["errors"] == 0
    assert store.articles.count_documents({}) == 2
    doc = store.articles.find_one({"fp": "a" * 16})
    assert doc["first_seen"] == T0 and doc["last_seen"] == T1


def test_a_server_lost_between_inserts_and_upserts_spills_and_replays(
    store: NewsStore, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store.write_pages([node([link("t1")])])
    # inserts go through, the upserts of the known documents meet a server that went away
    flaky = _Flaky(store.links, lambda ops, calls: isinstance(ops[0], UpdateOne), applied=False)
    monkeypatch.setitem(store._collections, "links", flaky)
    docs = [article("a" * 16), node([link("t1", fetched_at=T1), link("t2")], fetched_at=T1)]
    with pytest.raises(StoreUnavailable) as info:
        store.write_pages(docs, retries=1, backoff=0.01)
    assert info.value.docs == [docs[1]]  # the article was written; the node is not complete
    spill(info.value.docs, tmp_path / "spill.jsonl")
    monkeypatch.setitem(store._collections, "links", flaky.collection)  # the server is back
    counts = store.replay_spill(tmp_path / "spill.jsonl")
    assert counts["nodes"] == 1 and counts["links"] == 2 and counts["new_links"] == 0
    assert store.links.count_documents({}) == 2
    assert store.links.find_one({"target_fp": "t1"})["last_seen"] == T1


def test_indexes(store: NewsStore) -> None:
    store.ensure_indexes()  # idempotent

    def keys(collection) -> dict:
        specs = collection.index_information().values()
        return {tuple(spec["key"]): spec.get("unique", False) for spec in specs}

    articles = keys(store.articles)
    assert articles[(("fp", 1),)] is True
    assert (("site", 1), ("published", -1)) in articles
    assert (("weight", -1),) in articles
    nodes = keys(store.nodes)
    assert nodes[(("fp", 1),)] is True and (("site", 1),) in nodes
    links = keys(store.links)
    assert links[(("source_fp", 1), ("target_fp", 1))] is True
    assert (("target_fp", 1),) in links and (("site", 1), ("link_class", 1)) in links

    store.write_pages([article(), node([link("t1")])])
    with pytest.raises(DuplicateKeyError):
        store.articles.insert_one({"fp": "a" * 16})
    with pytest.raises(DuplicateKeyError):
        store.nodes.insert_one({"fp": "n" * 16})
    with pytest.raises(DuplicateKeyError):
        store.links.insert_one({"source_fp": "n" * 16, "target_fp": "t1"})


def test_text_index_depends_on_the_server(store: NewsStore) -> None:
    secantus = "secantusVersion" in store.client.admin.command("buildInfo")
    # SecantusDB refuses text indexes (code 67 CannotCreateIndex); MongoDB builds one
    assert store.text_index is (not secantus)
    assert store._pages.has_text_index() is (not secantus)


def test_update_operators_the_store_relies_on(store: NewsStore) -> None:
    """$set/$setOnInsert/$max/$inc/$addToSet in upserts, as documented in newscrawl.store."""
    coll = store.db["operators"]

    def upsert(weight: float, seen: dt.datetime, tag: str) -> None:
        coll.update_one(
            {"fp": "x"},
            {
                "$set": {"last_seen": seen},
                "$setOnInsert": {"first_seen": seen},
                "$max": {"weight": weight, "latest": seen},
                "$inc": {"visits": 1},
                "$addToSet": {"tags": tag},
            },
            upsert=True,
        )

    upsert(0.5, T1, "a")
    upsert(0.9, T0, "b")
    upsert(0.1, T0, "a")
    doc = coll.find_one({"fp": "x"}, {"_id": 0})
    assert doc == {
        "fp": "x", "first_seen": T1, "last_seen": T0, "weight": 0.9, "latest": T1,
        "visits": 3, "tags": ["a", "b"],
    }  # fmt: skip
    with pytest.raises(OperationFailure) as info:  # one path in $set and $setOnInsert
        coll.update_one({"fp": "y"}, {"$set": {"v": 1}, "$setOnInsert": {"v": 2}}, upsert=True)
    assert info.value.code == 40
    if not store.text_index:
        with pytest.raises(OperationFailure) as info:
            list(store.articles.find({"$text": {"$search": "x"}}))
        assert info.value.code == 2  # BadValue: unknown top level operator $text


def test_datetimes_come_back_tz_aware_utc(store: NewsStore) -> None:
    beijing = dt.timezone(dt.timedelta(hours=8))
    local = dt.datetime(2024, 10, 1, 16, 0, 0, 123000, tzinfo=beijing)
    store.write_pages([article(published=local, fetched_at=local)])
    doc = store.articles.find_one()
    for field in ("published", "fetched_at", "first_seen", "last_seen"):
        assert doc[field].utcoffset() == dt.timedelta(0)
        assert doc[field] == local  # the same instant
    assert doc["published"].hour == 8


def test_search(store: NewsStore) -> None:
    store.write_pages(
        [
            article("a" * 16, title="Wahl in Brandenburg", text="Die SPD gewinnt.", weight=0.9),
            article("b" * 16, title="Börse", text="Warten auf die Wahl in den USA.", weight=0.4),
            article("c" * 16, title="国务院新闻办公室举行发布会", text="介绍经济运行情况", site="gov.cn"),
            article("d" * 16, title="C++ (and regexes)", text="a+b*c", weight=0.1),
        ]
    )
    found = store.search("wahl")
    assert [d["fp"] for d in found] == ["a" * 16, "b" * 16]  # case-insensitive, by weight
    assert "text" not in found[0] and "_id" not in found[0]
    assert store.search("WAHL", limit=1)[0]["fp"] == "a" * 16
    assert store.search("wahl", site="gov.cn") == []
    assert [d["fp"] for d in store.search("新闻办")] == ["c" * 16]  # CJK: substring match
    assert store.search("发布会", site="gov.cn", with_text=True)[0]["text"] == "介绍经济运行情况"
    assert store.search("   ") == []
    assert store.search("Brandenburg")[0]["title"] == "Wahl in Brandenburg"
    if not store.text_index:
        # regex fallback: every term must occur; metacharacters are literal
        assert [d["fp"] for d in store.search("wahl spd")] == ["a" * 16]
        assert [d["fp"] for d in store.search('"wahl in brandenburg"')] == ["a" * 16]
        assert [d["fp"] for d in store.search("c++ (and")] == ["d" * 16]
        assert [d["fp"] for d in store.search("a+b*c")] == ["d" * 16]
        assert [d["fp"] for d in store.search("BÖRSE")] == ["b" * 16]


def test_counts_by_class(store: NewsStore) -> None:
    store.write_pages(
        [
            node([link("t1"), link("t2"), link("t3", "horizontal"), link("t4", "crosswise")]),
            node([link("u1", source_fp="m" * 16, site="other.org")], fp="m" * 16, site="other.org"),
            node([{"target_fp": "u2", "site": "other.org"}], fp="o" * 16, site="other.org"),
        ]
    )
    assert store.counts_by_class() == {"downward": 3, "horizontal": 1, "crosswise": 1, "unknown": 1}
    assert store.counts_by_class("example.com") == {"downward": 2, "horizontal": 1, "crosswise": 1}
    assert store.counts_by_class("nowhere.net") == {}


def test_bad_documents_are_counted_not_fatal(store: NewsStore) -> None:
    counts = store.write_pages(
        [
            article("a" * 16),
            {"kind": "article", "url": "https://x/no-fp"},
            {"kind": "weird", "fp": "w" * 16},
            article("b" * 16, extra=object()),  # not BSON-encodable
            node([link("t1"), {"source_fp": "n" * 16}]),  # a link without target_fp
        ]
    )
    assert counts["errors"] == 4
    assert counts["articles"] == 1 and counts["nodes"] == 1 and counts["links"] == 1
    assert store.articles.distinct("fp") == ["a" * 16]
