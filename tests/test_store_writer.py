"""BufferedWriter: one thread, calls in order, spill on outage, back-pressure, the durable
watermark over pages and crawl state, shadow staging; against a recording fake store and the
embedded store."""

from __future__ import annotations

import datetime as dt
import math
import threading
import time
import uuid

import pytest

from newscrawl.store import NewsStore, StoreUnavailable, load_spill
from newscrawl.store.writer import BufferedWriter

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 10, 2, tzinfo=UTC)


class FakeStore:
    """Records every call; ``down`` makes page writes raise StoreUnavailable."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.down = False
        self.gate: threading.Event | None = None

    def write_pages(self, docs, *, now=None):
        if self.gate is not None:
            self.gate.wait(10)
        if self.down:
            raise StoreUnavailable("down", docs)
        self.calls.append(("pages", [d["fp"] for d in docs], now))
        return {"articles": len(docs), "new_articles": len(docs)}

    def stage(self, run, target, docs):
        self.calls.append(("stage", run, target, len(docs)))
        return len(docs)

    def write_state(self, new, old):
        if self.down:
            raise StoreUnavailable("down")
        self.calls.append(("state", [d["_id"] for d in new], [d["_id"] for d in old]))
        return len(new) + len(old)

    def write_hosts(self, docs):
        self.calls.append(("hosts", len(docs)))

    def archive_version(self, fp, new, *, archived_at, stage_run=None):
        self.calls.append(("archive", fp, archived_at, stage_run))
        return {"fp": fp, "url": "u", "version": 1, "diff": {"title_changed": True, "body_changed_pct": 5.0}}

    def update_weights(self, weights):
        self.calls.append(("weights", dict(weights)))
        return len(weights)

    def merge_staged(self, run, *, now=None):
        self.calls.append(("merge", run, now))
        return {"items": 1, "pages": 1, "hosts": 0, "versions": 0, "atomic": True}

    def close(self):
        self.calls.append(("close",))


class Stats(dict):
    def inc_value(self, key, count=1):
        self[key] = self.get(key, 0) + count

    def set_value(self, key, value):
        self[key] = value


def _writer(store=None, tmp_path=None, **kwargs):
    stats = Stats()
    writer = BufferedWriter(stats=stats, **{"batch_size": 2, "flush_interval": 3600.0, **kwargs})
    writer.start(store, spill_path=tmp_path / "spill.jsonl" if tmp_path else None)
    writer.bind_run(clock=lambda: T0)
    return writer, stats


def _page(fp, links=0):
    return {"kind": "article", "fp": fp, "url": f"https://s.example/{fp}",
            "links": [{"target_fp": f"{fp}-{i}"} for i in range(links)]}


def test_pages_are_written_in_batches_in_order_with_the_run_clock(tmp_path):
    store = FakeStore()
    writer, stats = _writer(store, tmp_path)
    assert writer.add_page(_page("a")) is None and store.calls == []
    writer.add_page(_page("b"))  # batch full (2 writes)
    writer.add_page(_page("c", links=1))  # a page and its link count two
    writer.add_page(_page("d"))
    writer.flush().result(5)
    assert [c[1] for c in store.calls] == [["a", "b"], ["c"], ["d"]]
    assert all(c[2] == T0 for c in store.calls)  # write_pages(now=the run clock)
    assert stats["newscrawl/store/articles"] == 4


def test_final_weights_follow_the_last_page_and_close_comes_last(tmp_path):
    store = FakeStore()
    writer, _ = _writer(store, tmp_path, batch_size=100)
    writer.add_page(_page("old"))
    writer.add_page(_page("a1"))
    writer.update_weights({"a1": 0.7})  # after every page buffered so far
    writer.close().result(5)
    assert store.calls == [("pages", ["old", "a1"], T0), ("weights", {"a1": 0.7}), ("close",)]
    with pytest.raises(RuntimeError):
        writer.submit(print)


def test_archive_is_before_the_write_of_the_new_text(tmp_path):
    store = FakeStore()
    writer, stats = _writer(store, tmp_path, batch_size=100)
    writer.archive("a1", {"title": "T"}, at=T0)
    writer.add_page(_page("a1"))
    writer.flush().result(5)
    assert [c[0] for c in store.calls] == ["archive", "pages"]
    assert stats["newscrawl/crawlstate/versions"] == 1


def test_an_outage_spills_and_later_batches_go_straight_to_the_spill_file(tmp_path):
    store = FakeStore()
    store.down = True
    writer, stats = _writer(store, tmp_path, retry_after=30.0)
    for fp in "abc":
        writer.add_page(_page(fp))
    writer.flush().result(5)
    store.down = False  # back, but the writer waits retry_after before trying again
    writer.add_page(_page("d"))
    writer.flush().result(5)
    assert [d["fp"] for d in load_spill(tmp_path / "spill.jsonl")] == ["a", "b", "c", "d"]
    assert stats["newscrawl/store/spilled"] == 4 and not writer.available
    assert writer.update_weights({"a": 1.0}).result(5) == 0  # not written while away
    assert not [c for c in store.calls if c[0] == "weights"]


def test_unavailable_at_start_spills_first(tmp_path):
    store = FakeStore()
    writer = BufferedWriter(batch_size=1)
    writer.start(store, spill_path=tmp_path / "s.jsonl", available=False)
    writer.add_page(_page("a"))
    writer.flush().result(5)
    assert store.calls == [] and len(load_spill(tmp_path / "s.jsonl")) == 1


def test_back_pressure_when_batches_queue_up(tmp_path):
    store = FakeStore()
    store.gate = threading.Event()  # the writer thread blocks in write_pages
    writer, _ = _writer(store, tmp_path, batch_size=1, max_queued=2)
    waits = [writer.add_page(_page(str(i))) for i in range(4)]
    assert waits[:2] == [None, None] and waits[2] is not None and waits[3] is not None
    store.gate.set()
    waits[3].result(5)
    assert [fp for c in store.calls for fp in c[1]] == ["0", "1", "2", "3"]


def test_durable_time_covers_pages_and_crawl_state(tmp_path):
    store = FakeStore()
    writer, _ = _writer(store, tmp_path, batch_size=100)
    before = time.monotonic()
    assert writer.durable_time() >= before  # nothing buffered: everything is durable
    writer.add_page(_page("a"))
    assert writer.durable_time() < before  # a page waits in the buffer
    cut = time.monotonic()
    writer.flush().result(5)
    assert writer.durable_time() >= cut
    writer.track_state()  # crawl state counts from now on
    assert writer.durable_time() == 0.0
    writer.state_settled(cut)
    assert writer.durable_time() == cut
    later = time.monotonic()
    assert writer.write_state([{"_id": "r1"}], [], [], cut=later).result(5) == 1
    assert writer.durable_time() >= later
    store.down = True  # the store refuses state writes: acknowledgements must not wait
    assert writer.write_state([{"_id": "r2"}], [], [], cut=time.monotonic()).result(5) is None
    now = time.monotonic()
    assert writer.durable_time() >= now  # the page watermark alone counts now
    writer.add_page(_page("b"))
    assert writer.durable_time() >= cut and not math.isinf(writer.durable_time())


def test_shadow_mode_stages_everything_and_the_weights_follow_the_merge(tmp_path):
    store = FakeStore()
    writer, stats = _writer(store, tmp_path, batch_size=100)
    writer.bind_run(clock=lambda: T0, stage_run="run-1")
    writer.add_page(_page("a"))
    writer.write_state([{"_id": "a"}], [{"_id": "b"}], [{"_id": "h"}], cut=0.0).result(5)
    writer.archive("a", {}, at=T0).result(5)
    assert writer.update_weights({"a": 0.9}) is None  # held for the merge
    writer.flush().result(5)
    assert writer.merge().result(5)["items"] == 1
    assert store.calls == [("stage", "run-1", "pages", 2), ("stage", "run-1", "hosts", 1),
                           ("archive", "a", T0, "run-1"), ("stage", "run-1", "items", 1),
                           ("merge", "run-1", T0), ("weights", {"a": 0.9})]
    assert stats["newscrawl/store/staged"] == 1 and stats["newscrawl/crawlstate/staged"] == 2


def test_merge_needs_a_shadow_run():
    with pytest.raises(RuntimeError, match="shadow"):
        BufferedWriter().merge()


@pytest.fixture
def real_store(embedded):
    name = f"test_{uuid.uuid4().hex[:12]}"
    store = NewsStore.connect(embedded.uri, name, timeout=5.0)
    store.ensure_indexes()
    store.ensure_state_indexes()
    yield store  # the writer closes it
    with NewsStore.connect(embedded.uri, name, timeout=5.0) as admin:
        admin.client.drop_database(name)


def test_against_the_embedded_store(real_store, tmp_path):
    writer = BufferedWriter(batch_size=100)
    writer.start(real_store, spill_path=tmp_path / "spill.jsonl")
    writer.bind_run(clock=lambda: T0)
    writer.add_page({"kind": "article", "fp": "a" * 16, "url": "https://s.example/a", "title": "T",
                     "weight": 0.2})
    writer.add_page({"kind": "node", "fp": "n" * 16, "url": "https://s.example/", "links": [
        {"source_fp": "n" * 16, "target_fp": "a" * 16, "target_url": "https://s.example/a"}]})
    writer.update_weights({"a" * 16: 0.8}).result(10)
    doc = real_store.articles.find_one({"fp": "a" * 16})
    assert doc["title"] == "T" and doc["weight"] == 0.8
    assert doc["first_seen"] == doc["last_seen"] == T0  # no fetched_at: the run clock
    assert real_store.links.count_documents({}) == 1
    assert writer.write_state([{"_id": "a" * 16, "fp": "a" * 16, "url": "https://s.example/a"}], [],
                              [{"_id": "s.example", "mode": "head"}], cut=0.0).result(10) == 1
    pages, hosts = real_store.load_state()
    assert [p["_id"] for p in pages] == ["a" * 16] and hosts[0]["_id"] == "s.example"
    writer.close().result(10)


class CountingDownStore(FakeStore):
    """Down from the start; counts the attempts that reach it (and their retries)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = True
        self.attempts: list[tuple[str, int | None]] = []

    def write_pages(self, docs, *, now=None, retries=None):
        self.attempts.append(("pages", retries))
        return super().write_pages(docs, now=now)

    def write_state(self, new, old, retries=None):
        self.attempts.append(("state", retries))
        return super().write_state(new, old)


def test_at_close_a_failed_store_gets_one_attempt_then_state_is_spilled_and_replayed(tmp_path):
    store = CountingDownStore()
    writer, stats = _writer(store, tmp_path)
    writer.start(store, spill_path=tmp_path / "spill.jsonl", available=False,
                 state_spill_path=tmp_path / "state-spill.jsonl")
    writer.add_page(_page("a"))
    writer.add_page(_page("b"))  # straight to the spill file: the store failed at open
    assert writer.write_state([{"_id": "r1"}], [], [], cut=1.0).result(5) is None
    assert store.attempts == []  # during the run, a store that failed recently is not tried
    writer.closing()
    writer.add_page(_page("c"))
    writer.flush().result(5)
    assert store.attempts == [("pages", 0)]  # one attempt, no retries
    assert writer.gave_up
    new, old, hosts = [{"_id": "r1", "url": "u1"}], [{"_id": "r2", "url": "u2"}], [{"_id": "h"}]
    assert writer.write_state(new, old, hosts, cut=2.0, final=True).result(5) is None
    assert store.attempts == [("pages", 0)]  # given up: the store is not asked again
    assert stats["newscrawl/store/spilled"] == 3
    assert stats["newscrawl/crawlstate/spilled"] == 2
    assert not writer.available

    class Replay:
        def __init__(self):
            self.state, self.hosts = [], []

        def write_state(self, new, old):
            self.state += [d["_id"] for d in [*new, *old]]
            return len(new) + len(old)

        def write_hosts(self, docs):
            self.hosts += [d["_id"] for d in docs]

    from newscrawl.store import replay_state_spill

    target = Replay()
    assert replay_state_spill(target, tmp_path / "state-spill.jsonl") == {"pages": 2, "hosts": 1}
    assert (target.state, target.hosts) == (["r1", "r2"], ["h"])
    assert not (tmp_path / "state-spill.jsonl").exists()
    assert replay_state_spill(target, tmp_path / "state-spill.jsonl") == {"pages": 0, "hosts": 0}
