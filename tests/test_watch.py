"""Monitoring mode end to end: ``scrapy crawl news -a watch=1`` against a small live loopback
site that publishes over real time (tests/livesite.py).

* a watched crawl of ~30 s stores the articles published while it runs, and logs its status line;
* SIGTERM stops a watched crawl the way Scrapy stops any crawl, and what it fetched is stored;
* ``kill -9`` of a watched crawl while article requests are in flight (the site holds article
  answers back), then the same command again: every article still listed on its channel is
  stored — also when its channel page no longer changes, so only the crawl state can tell.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO, crawl, open_store, stats_of

pytestmark = pytest.mark.slow

HOSTS = ["127.0.0.31", "127.0.0.32"]
SETTINGS = {
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": ",".join(["127.0.0.1", "localhost", *HOSTS]),
    "NEWSCRAWL_REVISIT_MIN_INTERVAL": 2,
    "NEWSCRAWL_REVISIT_MAX_INTERVAL": 8,
    "NEWSCRAWL_WATCH_MAX_INTERVAL": 8,  # sources: monitoring mode's own bounds
    "NEWSCRAWL_REVISIT_FLUSH_INTERVAL": 1,
    "NEWSCRAWL_WATCH_LOG_INTERVAL": 10,
    "NEWSCRAWL_PAGERANK_ENABLED": False,
    "LOG_LEVEL": "INFO",
}


@contextmanager
def live_site(tmp: Path, **cfg):
    config = {"hosts": HOSTS, "rates": [[6.0, 2.0], [4.0]], "duration": 120, "day": 60,
              "amplitude": 0.5, "index_size": 20, "initial": 2, "correct_share": 0.2,
              "correct_after": 10, "no_validators": HOSTS[1], "no_head": "", "seed": 5, **cfg}
    (tmp / "site.json").write_text(json.dumps(config))
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"), str(tmp / "site.json"),
                             str(tmp / "site")], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"livesite.py did not print its URLs (got {line!r})")
        yield json.loads(line), tmp / "site"
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def _articles(site_dir: Path) -> list[dict]:
    return [json.loads(x) for x in (site_dir / "articles.jsonl").read_text().splitlines() if x]


def _requests(site_dir: Path) -> list[dict]:
    path = site_dir / "requests.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else []


def _stored_urls(data_dir: Path) -> set[str]:
    with open_store(data_dir) as store:
        return {doc["url"] for doc in store.articles.find({}, {"url": 1})}


def _args(ready: dict, *extra: str) -> list[str]:
    urls = ",".join(ready["hosts"][h] for h in HOSTS)
    return ["-a", f"start_urls={urls}", "-a", "depth=1", "-a", "watch=1", *extra]


def test_watch_stores_articles_published_while_it_runs(tmp_path):
    with live_site(tmp_path) as (ready, site_dir):
        t0 = time.time()
        proc = crawl(_args(ready, "-a", "for=30s"), tmp_path / "data", settings=SETTINGS, timeout=180)
        end = t0 + 30
    stats = stats_of(proc.stderr)
    during = [a for a in _articles(site_dir) if t0 + 3 <= a["published"] <= end - 8]
    assert len(during) >= 3, "the site published too little to test anything"
    base = {h: ready["hosts"][h].rstrip("/") for h in HOSTS}
    stored = _stored_urls(tmp_path / "data")
    missing = [a["path"] for a in during if base[a["host"]] + a["path"] not in stored]
    assert not missing, f"published during the run but not stored: {missing}"
    assert int(stats["newscrawl/watch/new_articles"]) >= len(during)
    assert "Watch: " in proc.stderr and "publication->capture delay median" in proc.stderr
    assert stats.get("finish_reason") == "'finished'"
    # channel pages were fetched again after the first sweep, not only once
    channel_gets = [r for r in _requests(site_dir) if r["path"].startswith("/section")
                    and r["path"].endswith("/") and r["method"] in ("GET", "HEAD")]
    assert len(channel_gets) > 3 * 3


def _kill_when_articles_in_flight(proc: subprocess.Popen, site_dir: Path, deadline: float) -> bool:
    """SIGKILL the crawl once a channel answer listed an article whose answer is held back, a
    little after the crawl state was flushed; True when that moment came."""
    while time.time() < deadline:
        time.sleep(0.2)
        requests = _requests(site_dir)
        listed_at = {i: r["t"] for r in requests if r["status"] == 200 and r["method"] == "GET"
                     for i in r.get("listed") or ()}
        fetched = {r["path"] for r in requests if r["method"] == "GET" and "/story-" in r["path"]}
        paths = {a["id"]: a["path"] for a in _articles(site_dir)}
        pending = [i for i, t in listed_at.items() if paths.get(i) not in fetched or t > time.time() - 3]
        if requests and pending and time.time() - max(listed_at.values(), default=0) > 1.5:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
    return False


def test_watch_kill9_and_restart_loses_no_listed_article(tmp_path):
    # Publishing stops 12 s in; article answers are held back 4 s, so a kill shortly after a
    # channel page listed new articles catches them in flight.
    data = tmp_path / "data"
    with live_site(tmp_path, rates=[[12.0, 6.0], [8.0]], duration=12, initial=1,
                   article_delay=4.0) as (ready, site_dir):
        env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
        env["NEWSCRAWL_DATA_DIR"] = str(data)
        cmd = [sys.executable, "-m", "scrapy", "crawl", "news", *_args(ready)]
        for key, value in SETTINGS.items():
            cmd += ["-s", f"{key}={value}"]
        with open(tmp_path / "first.log", "w") as log:
            first = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
            try:
                killed = _kill_when_articles_in_flight(first, site_dir, time.time() + 60)
            finally:
                if first.poll() is None:
                    first.kill()
                    first.wait()
        assert killed, "no moment with article requests in flight came"
        crawl(_args(ready, "-a", "for=25s"), data, settings=SETTINGS, timeout=180)
    base = {h: ready["hosts"][h].rstrip("/") for h in HOSTS}
    listed = _articles(site_dir)  # publishing stopped: at most 20 per channel, all still listed
    stored = _stored_urls(data)
    missing = [a["path"] for a in listed if base[a["host"]] + a["path"] not in stored]
    assert not missing, f"listed on their channels but lost after kill -9 and restart: {missing}"


def test_watch_stops_gracefully_on_sigterm_and_flushes(tmp_path):
    data = tmp_path / "data"
    with live_site(tmp_path) as (ready, site_dir):
        env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
        env["NEWSCRAWL_DATA_DIR"] = str(data)
        cmd = [sys.executable, "-m", "scrapy", "crawl", "news", *_args(ready)]
        for key, value in {**SETTINGS, "NEWSCRAWL_REVISIT_FLUSH_INTERVAL": 600}.items():
            cmd += ["-s", f"{key}={value}"]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.time() + 60
            while time.time() < deadline and not any("/story-" in r["path"] for r in _requests(site_dir)):
                time.sleep(0.5)
            time.sleep(3)
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        fetched = {r["path"] for r in _requests(site_dir) if r["method"] == "GET"
                   and r["status"] == 200 and "/story-" in r["path"]}
    assert proc.returncode == 0, out[-3000:]
    assert "'finish_reason': 'shutdown'" in out
    assert "result: INTERRUPTED (SIGTERM); saved: " in out  # the summary says how it ended
    stats = stats_of(out)
    # the crawl state was written at the close, not by a periodic flush (600 s apart)
    assert int(stats["newscrawl/crawlstate/written"]) > 0
    stored = _stored_urls(data)
    missing = [path for path in fetched if not any(url.endswith(path) for url in stored)]
    assert fetched and not missing, f"fetched before SIGTERM but not stored: {missing}"


def test_watch_with_defaults_only_revisits_busy_channels_within_minutes(tmp_path):
    # Issue 20: `--watch` alone (no -a rate, no revisit settings) must revisit; the busiest
    # channel's first article after the start is captured within two minutes of publication.
    with live_site(tmp_path, rates=[[6.0, 2.0], [4.0]], duration=200, initial=2) as (ready, site_dir):
        t0 = time.time()
        proc = crawl(_args(ready, "-a", "for=110s"), tmp_path / "data",
                     settings={"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": SETTINGS["NEWSCRAWL_ALLOWED_PRIVATE_HOSTS"],
                               "LOG_LEVEL": "INFO"}, timeout=300)
    requests = _requests(site_dir)
    first_get: dict[str, float] = {}
    for r in requests:
        if r["method"] == "GET" and r["status"] == 200:
            first_get.setdefault(r["path"], r["t"])
    busiest = sorted((a for a in _articles(site_dir) if a["host"] == HOSTS[0] and a["channel"] == 0
                      and a["published"] >= t0 + 10), key=lambda a: a["published"])
    assert busiest, "the busiest channel published nothing after the start"
    first = busiest[0]
    assert first["path"] in first_get, f"{first['path']} (published {first['published'] - t0:.0f} s in) never fetched"
    assert first_get[first["path"]] - first["published"] <= 120
    channel_gets = [r for r in requests if r["path"] == "/section0/" and r["method"] in ("GET", "HEAD")]
    assert len(channel_gets) >= 3, "the busiest channel was not revisited"
    assert "requests/hour" in proc.stderr  # the politeness budget it runs under is logged
    stats = stats_of(proc.stderr)
    assert int(stats.get("newscrawl/revisit/found_backlog", 0)) > 0
    assert int(stats.get("newscrawl/revisit/found_news", 0)) > 0
