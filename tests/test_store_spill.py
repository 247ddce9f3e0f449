"""Spill files and unreachable servers: the documents a store could not take are kept on disk
and replayed into the database they were meant for; an unreachable server is StoreUnavailable
in every method (callers need no pymongo)."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
import uuid
from pathlib import Path

import pytest

from newscrawl import embedded as embedded_mod
from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore, StoreError, StoreUnavailable, load_spill, spill, spill_target
from tests.test_store_pages import T0, article, link, node


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


def test_spill_target_names_the_database_not_the_credentials():
    assert spill_target("mongodb://127.0.0.1:41234/", "newscrawl", embedded=True) == \
        "embedded-newscrawl"
    a = spill_target("mongodb://user:secret@db1:27017/", "newscrawl", embedded=False)
    assert a == spill_target("mongodb://other:pw@db1:27017/?retryWrites=true", "newscrawl",
                             embedded=False)
    assert a.startswith("mongo-") and len(a) == 16 and "secret" not in a
    assert a != spill_target("mongodb://db2:27017/", "newscrawl", embedded=False)
    assert a != spill_target("mongodb://db1:27017/", "news2", embedded=False)
    assert spill_target("not a uri", "newscrawl", embedded=False).startswith("mongo-")


def test_an_unreachable_server_is_store_unavailable_never_a_pymongo_error(tmp_path: Path) -> None:
    """Callers need no pymongo: connect, indexes, crawl state and every read or write report an
    unreachable server as StoreUnavailable (a StoreError), within the timeout."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ValueError):
        NewsStore.connect("mongodb://127.0.0.1:99999999/")
    store = NewsStore.connect(f"mongodb://127.0.0.1:{port}/", timeout=0.2)
    calls = {
        "ensure_indexes": store.ensure_indexes,
        "ensure_state_indexes": store.ensure_state_indexes,
        "load_state": store.load_state,
        "upgrade": lambda: store.upgrade(lambda url: url),
        "write_state": lambda: store.write_state([{"_id": "a"}], [], retries=0),
        "write_pages": lambda: store.write_pages([article()], retries=0),
        "link_edges": lambda: list(store.link_edges()),
        "committed_runs": store.committed_runs,
        "load_schedule": store.load_schedule,
        "document_counts": store.document_counts,
    }
    try:
        for name, call in calls.items():
            with pytest.raises(StoreUnavailable) as info:
                call()
            assert isinstance(info.value, StoreError) and "unavailable" in str(info.value), name
    finally:
        store.close()
