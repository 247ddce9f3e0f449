"""newscrawl.store against real servers over real sockets: the embedded SecantusDB always, and
the MongoDB named by the MONGO_URI environment variable when it is set."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pymongo.errors import DuplicateKeyError, OperationFailure

from newscrawl import embedded as embedded_mod
from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore, StoreUnavailable, load_spill, spill

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
    assert store._has_text_index() is (not secantus)


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


def test_spill_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "spill" / "pages.jsonl"
    docs = [article(title="Bürgerschaft 选举"), node([link("t1")])]
    assert spill(docs, path) == 2
    assert spill([], path) == 0
    assert spill(docs[:1], path) == 1
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and "选举" in lines[0]
    assert json.loads(lines[0])["published"] == {"$date": "2024-10-01T08:00:00Z"}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"kind": "article", "fp": "torn')  # a crash mid-line
    loaded = load_spill(path)
    assert loaded == [docs[0], docs[1], docs[0]]
    assert loaded[0]["published"].tzinfo is not None and loaded[0]["published"] == T0


def test_unavailable_server_raises_after_retries_and_spill_replays(
    tmp_path: Path, embedded: EmbeddedMongo
) -> None:
    server = EmbeddedMongo(tmp_path / "doomed")
    doomed = NewsStore.connect(server.start(), "newscrawl", timeout=0.3)
    live = NewsStore.connect(embedded.uri, f"test_{uuid.uuid4().hex[:12]}", timeout=5.0)
    spill_file = tmp_path / "spill.jsonl"
    try:
        assert doomed.write_pages([article("z" * 16)])["articles"] == 1
        os.kill(server.pid, signal.SIGKILL)  # the database goes away
        while embedded_mod.pid_alive(server.pid):
            time.sleep(0.02)

        docs = [article(), node([link("t1"), link("t2")])]
        started = time.monotonic()
        with pytest.raises(StoreUnavailable) as info:
            doomed.write_pages(docs, retries=2, backoff=0.05)
        elapsed = time.monotonic() - started
        assert 0.15 <= elapsed < 10  # 3 attempts, backoff 0.05 + 0.1 s
        assert info.value.docs == docs
        assert spill(info.value.docs, spill_file) == 2

        # replay while the server is still down: nothing lost, the file keeps every doc
        with pytest.raises(StoreUnavailable):
            doomed.replay_spill(spill_file, retries=0)
        assert load_spill(spill_file) == docs
        assert list(tmp_path.glob("spill.jsonl.replay-*")) == []

        # the database is back (here: another server): replay writes and removes the file
        counts = live.replay_spill(spill_file, batch_size=1)
        assert counts["articles"] == 1 and counts["nodes"] == 1 and counts["links"] == 2
        assert not spill_file.exists()
        assert live.articles.find_one({"fp": "a" * 16})["published"] == T0
        assert live.links.count_documents({"source_fp": "n" * 16}) == 2
        assert set(live.replay_spill(spill_file).values()) == {0}  # no file: nothing to do
    finally:
        server.stop()
        doomed.close()
        live.client.drop_database(live.db.name)
        live.close()
