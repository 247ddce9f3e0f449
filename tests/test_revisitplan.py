"""newscrawl.algorithms.revisitplan and newscrawl.crawlstate: records, schedule, due order."""

from __future__ import annotations

import datetime as dt

import pytest

from newscrawl.algorithms.revisitplan import (
    RevisitConfig,
    channel_yield,
    due_order,
    is_due,
    new_record,
    observations,
    record_visit,
    schedule,
    yield_priority,
)
from newscrawl.crawlstate import RunState, from_doc, parse_now, to_doc

H = 3600.0
CFG = RevisitConfig(min_interval=600.0, max_interval=7 * 86400.0, miss_interval=86400.0)
T0 = 1_700_000_000.0


def _channel():
    return new_record("c1", "https://s.example/politik/", now=T0, role="node", host="s.example")


def test_new_record_is_to_visit_at_once():
    rec = _channel()
    assert is_due(rec, T0) and rec["last_visit"] is None and rec["history"] == []
    assert not is_due({**rec, "evicted": True}, T0)


def test_visits_build_history_and_schedule():
    rec = record_visit(_channel(), now=T0, cfg=CFG, status=200, how="first", new_links=20,
                       listed=20, fingerprint="f1", validators={"etag": '"a"'})
    assert rec["visits"] == 1 and rec["fingerprint"] == "f1" and rec["listed"] == 20
    assert rec["estimator"] == "halve_double" and "channel page" in rec["estimator_reason"]
    assert rec["due"] == T0 + rec["interval"] and not is_due(rec, T0 + 1)
    rec2 = record_visit(rec, now=T0 + 2 * H, cfg=CFG, status=304, how="conditional", changed=False)
    assert [h["how"] for h in rec2["history"]] == ["first", "conditional"]
    assert rec2["fingerprint"] == "f1" and rec2["last_changed"] is None
    assert rec["history"] == rec2["history"][:1]  # the input is not changed


def test_channel_changed_means_new_links():
    rec = _channel()
    for i, new in enumerate([20, 0, 3, 0]):
        rec = record_visit(rec, now=T0 + i * H, cfg=CFG, status=200, how="fingerprint",
                           changed=True, new_links=new)
    assert [o.changed for o in observations(rec)][1:] == [False, True, False]
    # 3 new links over 3 hours since the first visit: 1 per hour
    assert channel_yield(rec, T0 + 5 * H, CFG) == pytest.approx(2.0)
    assert channel_yield(_channel(), T0, CFG) == CFG.channel_prior


def test_failed_visits_back_off():
    rec = _channel()
    rec = record_visit(rec, now=T0, cfg=CFG, status=404, how="first")
    assert rec["misses"] == 1 and rec["interval"] == 86400.0 and rec["estimator"] == "miss_backoff"
    rec = record_visit(rec, now=T0 + 86400, cfg=CFG, status=0, how="fingerprint")
    assert rec["misses"] == 2 and rec["interval"] == 2 * 86400.0
    rec = record_visit(rec, now=T0 + 3 * 86400, cfg=CFG, status=200, how="fingerprint", changed=True)
    assert rec["misses"] == 0 and observations(rec)[-1].changed is True
    assert len(observations(rec)) == 1  # failed visits say nothing about change


def test_articles_follow_correction_decay():
    rec = new_record("a1", "https://s.example/a.html", now=T0, role="content")
    rec = record_visit(rec, now=T0, cfg=CFG, status=200, how="first", published=T0 - 600)
    assert rec["estimator"] == "correction_decay" and rec["due"] == pytest.approx(T0 + 600)
    old = record_visit(rec, now=T0 + 30 * 86400, cfg=CFG, status=200, how="head", changed=False)
    assert old["interval"] == CFG.max_interval and "over" in old["estimator_reason"]
    interval, due, name, _ = schedule(old, T0 + 30 * 86400, CFG)
    assert (interval, name) == (CFG.max_interval, "correction_decay")


def test_history_is_capped():
    cfg = RevisitConfig(history=3)
    rec = _channel()
    for i in range(5):
        rec = record_visit(rec, now=T0 + i * H, cfg=cfg, status=200, how="head", changed=False)
    assert len(rec["history"]) == 3 and rec["visits"] == 5


def test_due_order_is_due_time_then_pagerank_then_weight():
    base = {"role": "node", "evicted": False}
    recs = [
        {**base, "url": "a", "due": 5.0, "pagerank": 1.0, "weight": 0.1},
        {**base, "url": "b", "due": 5.0, "pagerank": 2.0, "weight": 0.1},
        {**base, "url": "c", "due": 1.0, "pagerank": 0.1, "weight": 0.1},
        {**base, "url": "d", "due": 5.0, "pagerank": 2.0, "weight": 0.9},
        {**base, "url": "e", "due": 99.0},
    ]
    assert [r["url"] for r in due_order(recs, 10.0)] == ["c", "d", "b", "a"]


def test_yield_priority():
    assert yield_priority(1.0) == 1000 and yield_priority(0.0) == 0 and yield_priority(2.0) == 2000
    assert yield_priority(float("nan")) == 0 and yield_priority(1e12) == 5_000_000


def test_config_is_checked():
    with pytest.raises(ValueError):
        RevisitConfig(min_interval=0)
    with pytest.raises(ValueError):
        RevisitConfig(min_interval=10, max_interval=5)


def test_now_argument_and_documents():
    assert parse_now("2022-01-29T05:11:00Z") == dt.datetime(2022, 1, 29, 5, 11, tzinfo=dt.timezone.utc).timestamp()
    assert parse_now("2022-01-29T05:11:00") == parse_now("2022-01-29T05:11:00+00:00")
    assert parse_now("1643433060") == 1643433060.0 and parse_now("") is None
    with pytest.raises(ValueError):
        parse_now("tomorrow")
    rec = record_visit(_channel(), now=T0, cfg=CFG, status=200, how="first")
    doc = to_doc(rec)
    assert doc["_id"] == "c1" and isinstance(doc["due"], dt.datetime)
    assert isinstance(doc["history"][0]["t"], dt.datetime)
    assert from_doc(doc) == rec


def test_run_state_clock_budget_and_drain():
    state = RunState(CFG, now=T0, budget=2)
    assert T0 <= state.now() < T0 + 60
    assert state.spend() and state.spend() and not state.spend() and state.spent == 2
    state.load([to_doc(record_visit(_channel(), now=T0 - 86400 * 30, cfg=CFG, status=200, how="first"))])
    assert state.is_known("c1") and state.is_due("c1")
    meta = state.revisit_meta("c1", "https://s.example/politik/")
    assert meta["known"] and meta["role"] == "node"
    assert not state.revisit_meta("zz", "https://s.example/x")["known"]
    state.ensure("a9", "https://s.example/a9.html", role="content")
    state.observe("c1", "https://s.example/politik/", role="node", status=200, how="head", changed=False)
    new, old = state.drain()
    assert [d["_id"] for d in new] == ["a9"] and [d["_id"] for d in old] == ["c1"]
    assert not state.dirty
    before, after = state.learn("s.example", "head_refused")
    assert (before.mode, after.mode) == ("head", "conditional")
    assert state.drain_hosts()[0]["mode"] == "conditional"
