"""Monitoring mode on several workers: the pure ownership/claim rules
(newscrawl/algorithms/watchshare.py) and the Redis schedule (newscrawl/distributed/watchshare.py)
on the real Redis server (database 15, see tests/redis_helpers.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

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
from newscrawl.distributed.frontier import RedisFrontier, Wait
from newscrawl.distributed.watchshare import SharedSchedule
from tests.redis_helpers import REDIS_URL, namespace, redis_server  # noqa: F401  (fixtures)

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import distributed as bench  # noqa: E402  (benchmarks/distributed.py)

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


def test_a_host_leased_for_an_own_request_excludes_the_queues_and_a_dead_owner_frees_it(
        redis_server, namespace):  # noqa: F811
    a = RedisFrontier(redis_server, namespace, worker_timeout=0.3, worker_id="a")
    b = RedisFrontier(redis_server, namespace, worker_timeout=30.0, worker_id="b")
    b.push("h.example", b"queued", score=0.0)
    a.join(new_round=False)
    leased = a.lease_host("h.example")
    assert not isinstance(leased, Wait) and leased[0].startswith(b"lease:")
    assert isinstance(b.pop(), Wait)  # the queued request waits: nobody else reaches the host
    assert a.lease_host("h.example").wait_ms == -1
    # kill -9 of a: its heartbeat runs out; b frees the lease and requeues nothing for it
    time.sleep(0.4)
    requeued, freed, _, dead = b.heartbeat()
    assert (requeued, freed, dead) == (0, 1, 1) and len(b) == 1
    popped = b.pop()
    assert not isinstance(popped, Wait) and popped.payload == b"queued"
    # released with a pause: the host is not leased again before it ends
    b.release("h.example", popped.token, pause=5.0, response_time=0.1)
    assert 4000 < b.lease_host("h.example").wait_ms <= 5000


# --- two watch workers on one Redis against a live loopback site ------------------------------

HOSTS = ["127.0.0.43", "127.0.0.44"]
MIN_INTERVAL, MAX_INTERVAL, WORKER_TIMEOUT, CLAIM_TTL = 2.0, 5.0, 3.0, 3.0
RATE = 7200  # requests per hour over both workers
RUN, KILL_AT = 30.0, 12.0


def _channel(path: str) -> bool:
    return path == "/" or (path.startswith("/section") and path.endswith("/"))


def _worker_command(ready: dict, namespace: str, tmp: Path, name: str) -> list[str]:
    urls = ",".join(ready["hosts"][h] for h in HOSTS)
    settings = {
        "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": ",".join(["127.0.0.1", "localhost", *HOSTS]),
        "NEWSCRAWL_REVISIT_MIN_INTERVAL": MIN_INTERVAL, "NEWSCRAWL_REVISIT_MAX_INTERVAL": MAX_INTERVAL,
        "NEWSCRAWL_WATCH_MIN_INTERVAL": MIN_INTERVAL, "NEWSCRAWL_WATCH_MAX_INTERVAL": MAX_INTERVAL,
        "NEWSCRAWL_REVISIT_FLUSH_INTERVAL": 1, "NEWSCRAWL_PAGERANK_ENABLED": False,
        "NEWSCRAWL_REDIS_NAMESPACE": namespace, "NEWSCRAWL_REDIS_WORKER_TIMEOUT": WORKER_TIMEOUT,
        "NEWSCRAWL_WATCH_CLAIM_TTL": CLAIM_TTL, "NEWSCRAWL_WATCH_LOG_INTERVAL": 10,
        "NEWSCRAWL_POLITENESS_LOG": str(tmp / f"{name}.exchanges.jsonl"),
        "TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": os.environ.get("NCT_LOG", "INFO"),
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"start_urls={urls}",
           "-a", "depth=1", "-a", "watch=1", "-a", f"for={RUN:.0f}s", "-a", f"rate={RATE}"]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    return cmd


@pytest.mark.slow
def test_two_watch_workers_share_channels_rate_and_take_over_a_killed_one(tmp_path, namespace):  # noqa: F811
    config = {"hosts": HOSTS, "rates": [[6.0, 3.0, 1.0], [4.0, 2.0]], "duration": 90, "day": 60,
              "amplitude": 0.3, "index_size": 20, "initial": 2, "correct_share": 0.0,
              "correct_after": 10, "no_validators": "", "no_head": "", "seed": 11}
    (tmp_path / "site.json").write_text(json.dumps(config))
    site = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"),
                             str(tmp_path / "site.json"), str(tmp_path / "site")],
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    env.update({"NEWSCRAWL_DATA_DIR": str(tmp_path / "data"), "REDIS_URL": REDIS_URL})
    workers: list[subprocess.Popen] = []
    try:
        ready = json.loads(site.stdout.readline())
        for name in ("w0", "w1"):
            with open(tmp_path / f"{name}.log", "w") as log:
                workers.append(subprocess.Popen(_worker_command(ready, namespace, tmp_path, name),
                                                cwd=REPO, env=env, stdout=log,
                                                stderr=subprocess.STDOUT))
        # Killed KILL_AT s after the crawl's first request, not after the start of the
        # processes: their start-up takes seconds more on a loaded machine.
        requests_log, wait_until = tmp_path / "site" / "requests.jsonl", time.time() + 90
        while time.time() < wait_until and not (requests_log.exists() and requests_log.stat().st_size):
            time.sleep(0.2)
        t0 = time.time()
        time.sleep(KILL_AT)
        workers[0].send_signal(signal.SIGKILL)
        workers[0].wait()
        killed = time.time()
        workers[1].wait(timeout=RUN + 60)
    finally:
        for proc in (*workers, site):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        site.stdout.close()
    log0, log1 = (tmp_path / "w0.log").read_text(), (tmp_path / "w1.log").read_text()
    assert workers[1].returncode == 0, log1[-3000:]
    # (a) no channel page fetched twice within its interval, over both workers (the site's own
    # log; a GET right after a 304 or a HEAD of the page verifies it: the same visit)
    visits: dict[tuple[str, str], list[float]] = {}
    last: dict[tuple[str, str], dict] = {}
    for r in _site_requests(tmp_path / "site"):
        if r["path"] == "/robots.txt" or not _channel(r["path"]):
            continue
        page, before = (r["host"], r["path"]), last.get((r["host"], r["path"]))
        last[page] = r
        if before and r["t"] - before["t"] < 1.0 and (before["status"] == 304
                                                      or before["method"] == "HEAD"):
            continue
        visits.setdefault(page, []).append(r["t"])
    # pages the crawl watches as channels: fetched again before the kill (the link classifier
    # may take a section page linked from a sibling section for an article)
    watched = {page for page, times in visits.items() if len([t for t in times if t < killed]) > 1}
    assert len(watched) >= 4, sorted(visits)  # of 2 home pages and 5 sections
    gaps = [(page, b - a) for page, times in visits.items() for a, b in zip(times, times[1:])]
    assert len(gaps) >= 3 * len(watched), "channel pages were not fetched again"
    assert not [g for g in gaps if g[1] < MIN_INTERVAL - 0.3], sorted(gaps, key=lambda g: g[1])[:5]
    # (b) politeness over both workers: one exchange per host at a time, each after the pause
    # the previous one set; the request rate split over the live workers, and held
    logs = [tmp_path / "w0.exchanges.jsonl", tmp_path / "w1.exchanges.jsonl"]
    exchanges = bench.read_exchanges(logs)
    assert bench.overlap_count(logs)[0] == 0
    assert "'newscrawl/redis/own'" in log1  # owned pages went out on the worker's own lease
    assert "lease_conflict" not in log0 + log1
    by_host: dict[str, list[dict]] = {}
    for e in sorted((e for e in exchanges if e["lease"]), key=lambda e: e["start"]):
        by_host.setdefault(e["host"], []).append(e)
    early = [(a["url"], b["url"], b["start"] - a["end"], a["pause"]) for host in by_host.values()
             for a, b in zip(host, host[1:]) if b["start"] < a["end"] + (a["pause"] or 0) - 0.05]
    assert not early, early[:5]
    assert "2 live" in log0 and f"rate share {RATE // 2}/h" in log0
    assert "1 live" in log1 and f"rate share {RATE}/h" in log1.split("1 live", 1)[1]
    pages = [e for e in exchanges if not e["url"].endswith("/robots.txt")]
    span = max(e["start"] for e in pages) - t0
    allowed = RATE / 3600.0 * span + RATE / 60.0 + 10  # the rate, a minute's burst, HEAD probes
    assert len(pages) <= allowed, (len(pages), allowed)
    # (c) after the kill the survivor fetches every channel page, those of the killed worker
    # too, within the worker timeout plus the longest interval (and a claim in flight)
    def page(url: str) -> tuple[str, str]:
        return urlsplit(url).hostname or "", urlsplit(url).path

    mine = {page(e["url"]) for e in bench.read_exchanges(logs[:1]) if e["start"] < killed}
    assert watched & mine, "worker 0 fetched no channel page before it was killed"
    # (+ 5 s: a survivor busy with the killed worker's articles on a loaded 2-core machine)
    limit = killed + WORKER_TIMEOUT + CLAIM_TTL + MAX_INTERVAL + 5.0
    after = {page(e["url"]) for e in bench.read_exchanges(logs[1:]) if killed < e["start"] <= limit}
    assert watched <= after, sorted(watched - after)


def _site_requests(site_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (site_dir / "requests.jsonl").read_text().splitlines() if x]
