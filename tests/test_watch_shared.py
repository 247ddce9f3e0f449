"""Monitoring mode on several workers: the pure ownership/claim rules
(newscrawl/algorithms/watchshare.py) and the Redis schedule (newscrawl/distributed/watchshare.py)
on the real Redis server (database 15, see tests/redis_helpers.py)."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from newscrawl.algorithms.watchshare import (
    claim_until,
    handover,
    may_take,
    owned,
    owner_of,
    rate_share,
)
from newscrawl.distributed import keys
from newscrawl.distributed.watchshare import SharedSchedule
from tests.redis_helpers import namespace, redis_server  # noqa: F401  (fixtures)

KEYS = [f"page-{i}" for i in range(3000)]


def test_every_worker_computes_the_same_owner_and_shares_are_even():
    workers = ["w-a", "w-b", "w-c"]
    owners = Counter(owner_of(k, workers) for k in KEYS)
    assert set(owners) == set(workers)
    assert all(800 < n < 1200 for n in owners.values()), owners
    # order of the live list does not matter
    assert all(owner_of(k, workers) == owner_of(k, list(reversed(workers))) for k in KEYS[:200])
    assert owned(KEYS, ["w-a", "w-b"], "w-c") == {k for k in KEYS if owner_of(k, workers) == "w-c"}


def test_a_dead_worker_hands_on_only_its_own_pages():
    before = {w: owned(KEYS, ["w-a", "w-b", "w-c"], w) for w in ("w-a", "w-b", "w-c")}
    after = {w: owned(KEYS, ["w-a", "w-b"], w) for w in ("w-a", "w-b")}
    for w in ("w-a", "w-b"):
        gained, lost = handover(before[w], after[w])
        assert not lost  # survivors keep what they had
        assert gained <= before["w-c"]
    assert after["w-a"] | after["w-b"] == set(KEYS)
    assert not after["w-a"] & after["w-b"]


def test_rate_share_and_claim_rules():
    assert rate_share(3600.0, 2) == 1800.0 and rate_share(3600.0, 0) == 3600.0
    assert may_take(None, 10.0) and may_take(10.0, 10.0) and not may_take(10.5, 10.0)
    assert claim_until(100.0, 30.0) == 130.0
    with pytest.raises(ValueError):
        claim_until(100.0, 0.0)
    with pytest.raises(ValueError):
        rate_share(float("nan"), 2)


def test_claims_are_exclusive_until_the_due_time(redis_server, namespace):  # noqa: F811
    a = SharedSchedule(redis_server, namespace, "worker-a", worker_timeout=5.0)
    b = SharedSchedule(redis_server, namespace, "worker-b", worker_timeout=5.0)
    now = time.time()
    claimed, refused = a.take(["ch1", "ch2"], now=now, until=now + 30)
    assert set(claimed) == {"ch1", "ch2"} and not refused
    claimed, refused = b.take(["ch1"], now=now + 1, until=now + 31)
    assert not claimed and refused["ch1"] == pytest.approx(now + 30, abs=0.01)
    # the visit sets the next due time and publishes the estimate; b goes on from it
    a.visited("ch1", due=now + 5, estimate={"sched": {"v": 1}, "last_visit": now, "due": now + 5})
    assert b.take(["ch1"], now=now + 4, until=now + 34)[0] == {}
    claimed, _ = b.take(["ch1"], now=now + 5, until=now + 35)
    assert claimed["ch1"]["last_visit"] == pytest.approx(now)
    assert b.due_before(now + 36) == ["ch2", "ch1"]
    # only the holder hands a claim back
    assert not a.unclaim("ch1", due=now) and b.unclaim("ch1", due=now + 6)
    assert redis_server.hget(keys.key(keys.WATCH_BY_KEY, namespace), "ch1") == b"worker-b"


def test_heartbeats_expire_and_junk_estimates_are_skipped(redis_server, namespace):  # noqa: F811
    a = SharedSchedule(redis_server, namespace, "worker-a", worker_timeout=0.3)
    b = SharedSchedule(redis_server, namespace, "worker-b", worker_timeout=30.0)
    assert a.heartbeat() == ["worker-a"]
    assert b.heartbeat() == ["worker-a", "worker-b"]
    time.sleep(0.4)
    assert b.heartbeat() == ["worker-b"]  # a's heartbeat ran out
    assert b.heartbeat(leaving=True) == []
    redis_server.hset(keys.key(keys.WATCH_SCHED_KEY, namespace), "bad", b"{not json")
    assert b.estimates(["bad", "missing"]) == {}
    with pytest.raises(ValueError):
        SharedSchedule(redis_server, namespace, "w", worker_timeout=0)
