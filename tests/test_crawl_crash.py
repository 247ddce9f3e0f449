"""Nothing lost on a crash: ``kill -9`` of a real ``scrapy crawl news`` mid-crawl, then the same
command again, against a loopback site of 300 tiny articles whose home and channel pages answer
"unchanged" to the second run (:mod:`tests.faultsite`), when it requests them at all (known pages
that are not due are not requested).

The links found and not fetched when the crawl was killed must come from the crawl state (the
durable frontier), not from pages that look unchanged: every article stored exactly once.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.faultsite import FaultSite, article_paths, serve
from tests.helpers import crawl, open_store, stats_of

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

#: Loopback crawls: the site's host allowed, no telnet, the store's writes small and frequent.
SETTINGS = {
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": "127.0.0.1,localhost",
    "TELNETCONSOLE_ENABLED": "False",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "4",
    "NEWSCRAWL_REVISIT_FLUSH_INTERVAL": "1",
    "NEWSCRAWL_MONGO_FLUSH_INTERVAL": "1",
}
#: Articles the site served when each trial's first run is killed: 5 moments of one crawl with
#: NEWSCRAWL_TEST_FULL=1 (the acceptance size), 3 of them by default (the suite's time budget).
KILL_AFTER = ((15, 75, 135, 195, 255) if os.environ.get("NEWSCRAWL_TEST_FULL") == "1"
              else (15, 135, 255))


def command(url: str, settings: dict[str, str]) -> list[str]:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"start_urls={url}",
           "-a", "depth=1"]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    return cmd


def kill_when(proc: subprocess.Popen, site: FaultSite, articles: int, timeout: float = 120) -> int:
    """SIGKILL ``proc`` once the site served ``articles`` articles; the articles served then."""
    deadline = time.monotonic() + timeout
    while site.articles_fetched() < articles:
        if proc.poll() is not None:
            raise AssertionError(f"the crawl ended (exit {proc.returncode}) before {articles} "
                                 f"articles were served")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{articles} articles not served in {timeout} s")
        time.sleep(0.005)
    proc.kill()  # SIGKILL: no close step, no last write
    proc.wait()
    return site.articles_fetched()


def stored_articles(data_dir: Path) -> dict[str, int]:
    """URL path → documents stored for it (``articles`` collection)."""
    counts: dict[str, int] = {}
    with open_store(data_dir) as store:
        for doc in store.articles.find({}, {"url": 1}):
            path = "/" + doc["url"].split("/", 3)[3]
            counts[path] = counts.get(path, 0) + 1
    return counts


@pytest.mark.parametrize("kill_after", KILL_AFTER)
def test_kill_9_then_the_same_command_loses_nothing(kill_after, tmp_path):
    site = FaultSite()
    data_dir = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI",
                                                            "REDIS_URL")}
    env["NEWSCRAWL_DATA_DIR"] = str(data_dir)
    with serve(site) as url:
        with open(tmp_path / "killed.log", "w", encoding="utf-8") as log:
            proc = subprocess.Popen(command(url, SETTINGS), cwd=REPO, env=env, stdout=log,
                                    stderr=subprocess.STDOUT)
        served_before = kill_when(proc, site, kill_after)
        assert served_before < len(article_paths()), "killed too late to test anything"
        gets_before = Counter(site.gets)
        rerun = crawl(["-a", f"start_urls={url}", "-a", "depth=1"], data_dir, settings=SETTINGS)
    stats = stats_of(rerun.stderr)
    stored = stored_articles(data_dir)
    lost = sorted(set(article_paths()) - set(stored))
    twice = {p: n for p, n in stored.items() if n > 1}
    assert not lost, f"{len(lost)} of 300 articles lost (killed after {served_before}): {lost[:5]}"
    assert not twice, f"stored more than once: {twice}"
    assert len(stored) == 300
    if kill_after >= 195:
        # Late kills: the first run had read the home page and every channel page, so the
        # re-run finds them known and not due (the channel scheduler requests none of them,
        # stat newscrawl/revisit/entry_not_due) or unchanged (HEAD / conditional GET: 304).
        # Either way the site sent none of their bodies to the re-run (it counts 200 GETs
        # only), so the re-run read no link from a page: every article not served before the
        # kill reached it as a to-visit record of the crawl state, requested at start
        # (newscrawl/revisit/new counts those requests), and none was lost (asserted above).
        pages_read = {p: n - gets_before[p] for p, n in site.gets.items()
                      if not p.endswith(".html") and n > gets_before[p]}
        assert not pages_read, f"the re-run read home/channel pages again: {pages_read}"
        unserved = set(article_paths()) - set(gets_before)
        assert unserved
        assert int(stats.get("newscrawl/revisit/new", 0)) >= len(unserved), stats
        assert int(stats.get("newscrawl/crawlstate/loaded", 0)) > served_before // 2


# --- distributed: Redis restarted empty mid-crawl ----------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _redis_server(port: int) -> subprocess.Popen:
    """A redis-server of this test on ``port`` (127.0.0.1), keeping nothing on disk."""
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("redis-server did not start")


#: Articles served when Redis is restarted empty: 5 moments with NEWSCRAWL_TEST_FULL=1, 1 by
#: default (the suite's time budget).
RESTART_AFTER = ((40, 100, 160, 220, 280) if os.environ.get("NEWSCRAWL_TEST_FULL") == "1"
                 else (100,))


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server (Redis)")
@pytest.mark.parametrize("restart_after", RESTART_AFTER)
def test_redis_restarted_empty_mid_crawl_loses_nothing_and_says_so(tmp_path, restart_after):
    site = FaultSite(delay=0.005)
    data_dir = tmp_path / "data"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI",
                                                            "REDIS_URL")}
    env.update({"NEWSCRAWL_DATA_DIR": str(data_dir),
                "REDIS_URL": f"redis://127.0.0.1:{port}/15"})  # db 15 of this test's server
    settings = {**SETTINGS, "NEWSCRAWL_REDIS_IDLE_CLOSE": "1.5",
                "NEWSCRAWL_REDIS_WORKER_TIMEOUT": "3", "NEWSCRAWL_POLITENESS_FACTOR": "0"}
    redis = _redis_server(port)
    try:
        with serve(site) as url:
            with open(tmp_path / "worker.log", "w", encoding="utf-8") as log:
                worker = subprocess.Popen(command(url, settings), cwd=REPO, env=env, stdout=log,
                                          stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 120
            while site.articles_fetched() < restart_after and worker.poll() is None:
                assert time.monotonic() < deadline, f"{restart_after} articles not served in 120 s"
                time.sleep(0.005)
            redis.kill()  # restarted empty: every queued request is gone
            redis.wait()
            redis = _redis_server(port)
            assert worker.wait(timeout=300) == 0
    finally:
        redis.kill()
        redis.wait()
    stored = stored_articles(data_dir)
    lost = sorted(set(article_paths()) - set(stored))
    assert not lost, f"{len(lost)} of 300 articles lost: {lost[:5]}"
    assert not {p: n for p, n in stored.items() if n > 1}
    log_text = (tmp_path / "worker.log").read_text(encoding="utf-8")
    stats = stats_of(log_text)
    assert log_text.count("Redis lost the shared frontier") == 1  # one warning, counted
    assert int(stats.get("newscrawl/redis/frontier_lost", 0)) == 1, stats
    assert int(stats.get("newscrawl/revisit/requeued", 0)) > 0, stats
