"""Validators earn trust, end to end (issue 20): a watched crawl of a live loopback site
(tests/livesite.py) with an honest host and a host whose validators lie — its HEADs and
conditional GETs keep ``ETag``, ``Last-Modified`` and ``Content-Length`` while the body changes
(new articles on its channel pages). The lie is caught within the host's first 3 "unchanged"
answers, logged once at WARNING, and the host's news is found from then on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO, crawl, open_store, stats_of

pytestmark = pytest.mark.slow

HONEST, LIAR = "127.0.0.51", "127.0.0.52"
HOSTS = [HONEST, LIAR]
SETTINGS = {
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": ",".join(["127.0.0.1", "localhost", *HOSTS]),
    "NEWSCRAWL_REVISIT_MIN_INTERVAL": 2,
    "NEWSCRAWL_REVISIT_MAX_INTERVAL": 6,
    "NEWSCRAWL_WATCH_MIN_INTERVAL": 2,  # sources: monitoring mode's own bounds
    "NEWSCRAWL_WATCH_MAX_INTERVAL": 6,
    # the site publishes 2 articles a second: a politeness budget above that (the default, one
    # request a second per site, would make this a test of the budget, not of the validators)
    "NEWSCRAWL_WATCH_SITE_RATE": 36000,
    "NEWSCRAWL_REVISIT_FLUSH_INTERVAL": 1,
    "NEWSCRAWL_WATCH_LOG_INTERVAL": 10,
    "NEWSCRAWL_PAGERANK_ENABLED": False,
    "LOG_LEVEL": "INFO",
}
WARNING = "validators say unchanged but the body changed"
_LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \[middlewares\.revisit\] WARNING: Host (\S+): "
                       + WARNING, re.M)


@contextmanager
def live_site(tmp: Path):
    # two busy channels per host (30 articles a minute each): every revisit a few seconds
    # apart finds new articles listed; no corrections, so the only changes are new articles
    config = {"hosts": HOSTS, "rates": [[30.0, 30.0], [30.0, 30.0]], "duration": 120,
              "day": 600, "amplitude": 0.0, "index_size": 20, "initial": 3, "correct_share": 0.0,
              "correct_after": 600, "no_validators": "", "no_head": "", "lying": LIAR, "seed": 7}
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


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else []


def test_a_host_whose_validators_lie_is_caught_within_three_revisits_and_warned_once(tmp_path):
    with live_site(tmp_path) as (ready, site_dir):
        urls = ",".join(ready["hosts"][h] for h in HOSTS)
        proc = crawl(["-a", f"start_urls={urls}", "-a", "depth=1", "-a", "watch=1", "-a", "for=40s"],
                     tmp_path / "data", settings=SETTINGS, timeout=240)
        requests = _jsonl(site_dir / "requests.jsonl")
        articles = _jsonl(site_dir / "articles.jsonl")
    log = proc.stderr
    stats = stats_of(log)
    warnings = _LOG_TIME.findall(log)
    assert [host for _, host in warnings] == [LIAR], log[-4000:]
    assert log.count(WARNING) == 1
    assert int(stats["newscrawl/headprobe/caught_lying"]) == 1
    # the log's clock is local time, second resolution
    caught = time.mktime(time.strptime(warnings[0][0], "%Y-%m-%d %H:%M:%S"))
    liar = [r for r in requests if r["host"] == LIAR]
    # every "unchanged" claim the lying host made: HEAD 200 (validators kept) or 304
    claims = [r for r in liar if (r["method"] == "HEAD" and r["status"] == 200) or r["status"] == 304]
    before = [r for r in claims if r["t"] < caught + 1.0]
    assert 1 <= len(before) <= 3, f"caught after {len(before)} unchanged answers: {before}"
    # caught: its pages are fetched in full from then on (no more claims to believe), and
    # its channel pages were fetched again after the catch
    after = [r for r in claims if r["t"] >= caught + 2.0]
    assert not after, f"the lying host was still asked for validators: {after}"
    channel_gets = [r for r in liar if r["method"] == "GET" and r["status"] == 200
                    and r["path"].startswith("/section") and r["t"] >= caught + 1.0]
    assert channel_gets, "no channel page of the lying host was fetched after the catch"
    # its news is found: articles the liar published in the run's second half are stored
    with open_store(tmp_path / "data") as store:
        stored = {doc["url"] for doc in store.articles.find({}, {"url": 1})}
        host_doc = store.hosts.find_one({"_id": LIAR})
    assert host_doc["mode"] == "fingerprint" and host_doc["counts"]["verify_mismatch"] >= 1
    start = min(r["t"] for r in requests)
    late = [a for a in articles if a["host"] == LIAR and start + 15 <= a["published"] <= start + 30]
    base = ready["hosts"][LIAR].rstrip("/")
    found = [a for a in late if base + a["path"] in stored]
    assert late and len(found) >= 0.8 * len(late), (len(found), len(late))
    # the honest host's validators are not suspected
    assert stats.get("newscrawl/headprobe/host/fingerprint") == "1"  # the liar only
