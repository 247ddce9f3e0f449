"""The shape keys of the live loopback site (tests/livesite.py) that the benchmark matrix
(benchmarks/_matrix.py, ``live_freshness.py --matrix``) draws: per-channel history with
rate-spaced publication times, host lists for ``no_validators`` / ``no_head``, a host whose
validators lie, and channel feeds, site feed and news sitemap switched apart. Also the shape
drawer's documented ranges. The site runs briefly on loopback; nothing else is contacted."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import REPO

sys.path.insert(0, str(REPO / "benchmarks"))

import _matrix  # noqa: E402  (benchmarks/_matrix.py)

HOSTS = ["127.0.0.45", "127.0.0.46"]


@contextmanager
def live_site(tmp: Path, **cfg):
    config = {"hosts": HOSTS, "rates": [[40.0, 1.0], [20.0]], "duration": 60, "day": 60,
              "amplitude": 0.0, "index_size": 5, "correct_share": 0.0, "correct_after": 10,
              "seed": 5, **cfg}
    (tmp / "site.json").write_text(json.dumps(config))
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"),
                             str(tmp / "site.json"), str(tmp / "site")],
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"livesite.py did not print its URLs (got {line!r})")
        ready = json.loads(line)
        yield {h: u.rstrip("/") for h, u in ready["hosts"].items()}, ready["start"], tmp / "site"
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def _fetch(url: str, method: str = "GET", headers: dict[str, str] | None = None):
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _articles(site: Path) -> list[dict]:
    return [json.loads(x) for x in (site / "articles.jsonl").read_text().splitlines() if x]


def test_history_per_channel_spaced_at_the_channel_rate(tmp_path):
    with live_site(tmp_path, initial=[[30, 0], [4]], history_spacing="rate") as (_, start, site):
        articles = _articles(site)
    old = [a for a in articles if a["published"] < start]
    per = {(a["host"], a["channel"]): [] for a in old}
    for a in old:
        per[(a["host"], a["channel"])].append(a["published"])
    assert len(per[(HOSTS[0], 0)]) == 30 and (HOSTS[0], 1) not in per and len(per[(HOSTS[1], 0)]) == 4
    # 30 gaps of a Poisson process at 40/min: mean 1.5 s (well inside 0.5–4 s), not 60 s
    times = sorted(per[(HOSTS[0], 0)])
    mean_gap = (start - times[0]) / len(times)
    assert 0.5 < mean_gap < 4.0, mean_gap


def test_default_history_keeps_sixty_second_spacing(tmp_path):
    with live_site(tmp_path, initial=3) as (_, start, site):
        old = sorted(a["published"] for a in _articles(site) if a["published"] < start
                     and a["host"] == HOSTS[1])
    assert [round(start - t) for t in old] == [180, 120, 60]


def test_lying_host_keeps_validators_while_the_body_changes(tmp_path):
    with live_site(tmp_path, lying=[HOSTS[0]], no_validators=[HOSTS[1]], no_head=[HOSTS[1]]) as (
            urls, _, _site):
        a, b = urls[HOSTS[0]], urls[HOSTS[1]]
        status, first, body1 = _fetch(a + "/section0/")
        head1 = _fetch(a + "/section0/", "HEAD")[1]
        etag = first["ETag"]
        assert status == 200 and head1["ETag"] == etag
        deadline = time.time() + 15
        while True:  # channel 0 publishes 40/min: wait until its list changes
            time.sleep(0.5)
            status, later, body2 = _fetch(a + "/section0/")
            if body2 != body1 or time.time() > deadline:
                break
        assert body2 != body1, "the channel published nothing in 15 s"
        head2 = _fetch(a + "/section0/", "HEAD")[1]
        assert later["ETag"] == etag and head2["ETag"] == etag
        assert head2["Last-Modified"] == first["Last-Modified"]
        assert head2["Content-Length"] == str(len(body1)) != str(len(body2))
        # and a conditional GET with the frozen ETag says "unchanged"
        assert _fetch(a + "/section0/", headers={"If-None-Match": etag})[0] == 304
        # the other host: listed as no validators and no HEAD
        status, headers, _ = _fetch(b + "/section0/")
        assert status == 200 and "ETag" not in headers and "Last-Modified" not in headers
        assert _fetch(b + "/section0/", "HEAD")[0] == 405


def test_feeds_site_feed_and_sitemap_switch_apart(tmp_path):
    with live_site(tmp_path, channel_feeds=False, site_feed=[HOSTS[0]], news_sitemap=[HOSTS[1]]) as (
            urls, _, _site):
        a, b = urls[HOSTS[0]], urls[HOSTS[1]]
        home_a, home_b = _fetch(a + "/")[2].decode(), _fetch(b + "/")[2].decode()
        assert 'href="/feed.xml"' in home_a and "feed.xml" not in home_b
        assert _fetch(a + "/feed.xml")[0] == 200 and _fetch(b + "/feed.xml")[0] == 404
        assert _fetch(a + "/section0/feed.xml")[0] == 404
        assert "feed.xml" not in _fetch(a + "/section0/")[2].decode()
        assert "Sitemap:" not in _fetch(a + "/robots.txt")[2].decode()
        assert f"Sitemap: {b}/news-sitemap.xml" in _fetch(b + "/robots.txt")[2].decode()
        assert _fetch(b + "/news-sitemap.xml")[0] == 200 and _fetch(a + "/news-sitemap.xml")[0] == 404


def test_drawn_shapes_stay_in_the_documented_ranges():
    r = _matrix.RANGES
    seen_cycle = seen_lying = 0
    for seed in range(1, 41):
        cfg = _matrix.draw_shape(seed, 30.0, block=1)
        assert cfg == _matrix.draw_shape(seed, 30.0, block=1)  # the seed decides
        n_channels = sum(len(h) for h in cfg["rates"])
        assert r["hosts"][0] <= len(cfg["hosts"]) <= r["hosts"][1]
        assert r["channels"][0] <= n_channels <= r["channels"][1]
        assert all(len(h) >= 1 for h in cfg["rates"])
        rates = [x for h in cfg["rates"] for x in h]
        assert max(rates) / min(rates) <= 10 ** r["rate_decades"] + 1e-9
        site_rate = _matrix.articles_per_hour(cfg)
        assert r["site_rate"][0] - 1e-6 <= site_rate <= r["site_rate"][1] + 1e-6
        assert r["index_size"][0] <= cfg["index_size"] <= r["index_size"][1]
        assert all(r["initial"][0] <= n <= r["initial"][1] for h in cfg["initial"] for n in h)
        special = cfg["no_validators"] + cfg["no_head"] + cfg["lying"]
        assert len(special) == len(set(special)) and set(special) <= set(cfg["hosts"])
        seen_cycle += cfg["amplitude"] > 0
        seen_lying += bool(cfg["lying"])
        assert cfg["day"] == 30 * 60.0 and not math.isnan(cfg["amplitude"])
    assert 5 < seen_cycle < 35 and 5 < seen_lying < 35  # both on and off occur
