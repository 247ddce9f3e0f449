"""``scrapy crawl news`` as several workers on one Redis (the real server): exactly-once fetching,
one request in flight per host, and no URL lost when a worker is killed with SIGKILL.

The multi-host site and its server are those of ``benchmarks/distributed.py`` (smaller).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from newscrawl.distributed import keys
from tests.helpers import open_store, served
from tests.redis_helpers import REDIS_URL, delete_namespace, redis_client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import distributed as bench  # noqa: E402  (benchmarks/distributed.py)

pytestmark = pytest.mark.slow

CRAWLED = re.compile(r"Crawled \((\d+)\) <GET ([^>]+)>")
#: Settings of every worker here: no MongoDB (the workers would race to start the embedded
#: server on one data folder), short idle and heartbeat times.
SETTINGS = {
    # the mock site and the generated sites on 127.0.0.1-4 (loopback is refused unless allowed)
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4",
    "NEWSCRAWL_MONGO_ENABLED": "False",
    "NEWSCRAWL_REVISIT_ENABLED": "False",
    "NEWSCRAWL_REDIS_IDLE_CLOSE": "1.5",
    "NEWSCRAWL_REDIS_WORKER_TIMEOUT": "3",
    "TELNETCONSOLE_ENABLED": "False",
}


@pytest.fixture
def redis_namespace():
    client = redis_client()
    name = f"nctest-crawl-{uuid.uuid4().hex[:8]}"
    yield name
    delete_namespace(client, name)


def _command(args: list[str], settings: dict[str, str]) -> list[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "news", *args]
    for key, value in {**SETTINGS, **settings}.items():
        command += ["-s", f"{key}={value}"]
    return command


def _env(tmp: Path, redis: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI",
                                                            "REDIS_URL")}
    env["NEWSCRAWL_DATA_DIR"] = str(tmp / "data")
    if redis:
        env["REDIS_URL"] = REDIS_URL
    return env


def _start(args, settings, tmp: Path, name: str, redis: bool = True) -> subprocess.Popen:
    log = open(tmp / f"{name}.log", "w", encoding="utf-8")
    proc = subprocess.Popen(_command(args, settings), cwd=REPO, env=_env(tmp, redis),
                            stdout=log, stderr=subprocess.STDOUT)
    log.close()
    return proc


def _wait(procs, timeout=300):
    for proc in procs:
        proc.wait(timeout=timeout)


def _crawled(tmp: Path, name: str) -> list[tuple[str, str]]:
    text = (tmp / f"{name}.log").read_text(encoding="utf-8", errors="replace")
    return [(status, url) for status, url in CRAWLED.findall(text)
            if not url.endswith("/robots.txt")]


def test_two_workers_fetch_the_mock_site_once(tmp_path, redis_namespace):
    with served() as base:
        args = ["-a", f"start_urls={base}"]
        alone = _start(args, {"LOG_LEVEL": "DEBUG", "NEWSCRAWL_DISTRIBUTED": "False"}, tmp_path,
                       "inmemory", redis=False)
        _wait([alone])
        settings = {"LOG_LEVEL": "DEBUG", "NEWSCRAWL_REDIS_NAMESPACE": redis_namespace,
                    "NEWSCRAWL_POLITENESS_LOG": str(tmp_path / "exchanges.jsonl")}
        workers = [_start(args, settings, tmp_path, f"worker{i}") for i in range(2)]
        _wait(workers)
    assert alone.returncode == 0 and [w.returncode for w in workers] == [0, 0]
    expected = _crawled(tmp_path, "inmemory")
    first, second = _crawled(tmp_path, "worker0"), _crawled(tmp_path, "worker1")
    assert len(expected) >= 10
    assert sorted(first + second) == sorted(expected)  # every request once, over both workers
    overlaps, exchanges = bench.overlap_count([tmp_path / "exchanges.jsonl"])
    assert overlaps == 0 and exchanges >= len(expected)
    log = (tmp_path / "worker0.log").read_text()
    assert "Shared frontier" in log and "'newscrawl/politeness/lease_conflict'" not in log
    # The add-on enabled the frontier's owner and the politeness middleware by import path.
    assert "newscrawl.distributed.extension.FrontierExtension" in log
    assert "newscrawl.distributed.politeness.PolitenessMiddleware" in log


def _held(client, namespace: str, proc) -> int:
    """Requests the worker process ``proc`` has taken and not yet acknowledged (its pending
    hash in Redis; worker ids are ``<hostname>-<pid>-<random>``)."""
    for member in client.zrange(keys.key(keys.WORKERS_KEY, namespace), 0, -1):
        worker = member.decode()
        if f"-{proc.pid}-" in worker:
            return int(client.hlen(keys.key(keys.PENDING_KEY, namespace, worker=worker)))
    return 0


def test_a_killed_worker_loses_no_url(tmp_path, redis_namespace):
    client = redis_client()
    site, per_channel = bench.generate(tmp_path / "site", hosts=4, pages=280)
    server = bench.SiteServer(tmp_path / "site", 4, delay_ms=2)
    try:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("".join(server.url(i) + "\n" for i in range(4)))
        args = ["-a", f"seeds={seeds}", "-a", f"depth={per_channel + 2}"]
        settings = {"LOG_LEVEL": "INFO", "NEWSCRAWL_REDIS_NAMESPACE": redis_namespace,
                    "NEWSCRAWL_POLITENESS_FACTOR": "2",
                    # With the store: what the killed worker fetched but had not written yet
                    # must not count as done.
                    "NEWSCRAWL_MONGO_ENABLED": "True", "NEWSCRAWL_MONGO_FLUSH_INTERVAL": "1",
                    "NEWSCRAWL_REVISIT_ENABLED": "True", "NEWSCRAWL_REVISIT_FLUSH_INTERVAL": "5",
                    "NEWSCRAWL_POLITENESS_LOG": str(tmp_path / "exchanges.jsonl"),
                    # every page of the site, its footer service pages too
                    **bench.SAME_PAGES_SETTINGS}
        total = sum(len(paths) for paths in site.values())
        workers = [_start(args, settings, tmp_path, f"worker{i}") for i in range(2)]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            fetched = sum(1 for url in server.stats()["hits"] if not url.endswith("/robots.txt"))
            # Kill while worker 0 holds requests, so that their recovery is exercised.
            if (fetched >= 0.3 * total and _held(client, redis_namespace, workers[0])) \
                    or workers[0].poll() is not None:
                break
            time.sleep(0.02)
        workers[0].send_signal(signal.SIGKILL)
        workers[0].wait()
        held = _held(client, redis_namespace, workers[0])
        killed_at = fetched
        time.sleep(1)
        workers.append(_start(args, settings, tmp_path, "restarted"))
        _wait(workers[1:])
        hits = server.stats()["hits"]
    finally:
        server.stop()
    assert [w.returncode for w in workers] == [-signal.SIGKILL, 0, 0]
    assert 0 < killed_at < total
    expected = {f"{host}{path}" for host, paths in site.items() for path in paths}
    fetched = {url for url in hits if not url.endswith("/robots.txt")}
    assert fetched == expected  # the union is complete
    twice = [url for url in expected if hits[url] > 1]
    # Only what the killed worker had in hand: taken, or fetched but not yet stored.
    assert len(twice) <= held
    overlaps, _ = bench.overlap_count([tmp_path / "exchanges.jsonl"])
    assert overlaps == 0
    recovered = (tmp_path / "worker1.log").read_text() + (tmp_path / "restarted.log").read_text()
    assert "durability barrier: StoreExtension" in recovered  # the barrier is on
    if held:  # almost always; 0 only if worker 0 acknowledged in the instant before the kill
        assert "Recovered" in recovered
    # Items the killed worker had not yet written were not acknowledged either: fetched again
    # and stored by the others, so the store holds every page.
    with open_store(tmp_path / "data") as store:
        stored = {d["url"] for d in store.articles.find({}, {"url": 1})} | \
            {d["url"] for d in store.nodes.find({}, {"url": 1})}
        unvisited = [d["url"] for d in store.pages.find({"visits": {"$lt": 1}}, {"url": 1})
                     if d.get("url") in stored]
    stored_pages = {urlsplit(u).hostname + (urlsplit(u).path or "/") for u in stored}
    assert not expected - stored_pages, sorted(expected - stored_pages)[:5]
    assert not unvisited, unvisited[:5]  # and every crawl-state record shows its visit
    json.dumps(hits)  # the server's book is plain data
