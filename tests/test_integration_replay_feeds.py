"""Integration: the CNN edition feed through the pywb replay proxy (issue 12 acceptance).

Three runs of ``scrapy crawl news -a start_urls=http://edition.cnn.com/`` a minute after the
three captures of ``http://rss.cnn.com/rss/edition.rss`` on 2020-04-23 (15:15, 19:38, 21:35 UTC;
``Accept-Datetime`` picks the capture, ``-a now=`` runs the crawl at that time). The first run
discovers the feed from the home page's ``<link rel=alternate>``; each run counts the entries
its capture adds (expected: computed here from the captured files of set 14 with the project's
feed parser — 25, then 1); the feed is asked for with a conditional GET when the previous
capture's answer carried a validator (these captures carry none: plain GETs)."""

from __future__ import annotations

import datetime as dt
import urllib.request

import pytest

from newscrawl.algorithms.feeds import parse_feed
from newscrawl.fingerprint import NewsRequestFingerprinter
from tests.conftest import shared_path
from tests.helpers import crawl, open_store, stats_of

pytestmark = pytest.mark.integration

HOME, FEED = "http://edition.cnn.com/", "http://rss.cnn.com/rss/edition.rss"
CAPTURES = ["2020-04-23T1515Z", "2020-04-23T1938Z", "2020-04-23T2135Z"]
RUN_AT = [dt.datetime(2020, 4, 23, 15, 16, tzinfo=dt.timezone.utc),
          dt.datetime(2020, 4, 23, 19, 39, tzinfo=dt.timezone.utc),
          dt.datetime(2020, 4, 23, 21, 36, tzinfo=dt.timezone.utc)]


def _http_date(when: dt.datetime) -> str:
    return when.strftime("%a, %d %b %Y %H:%M:%S GMT")


def captured_entries(capture: str) -> set[str]:
    """Page fingerprints of every entry of the captured feed file (off-site ones included)."""
    path = shared_path("corpus", "14_feeds_sitemaps", "gesab001_headlines_gitscrape",
                       "cnn_edition", f"{capture}.xml")
    page_fp = NewsRequestFingerprinter().page_fp
    return {page_fp(e.url) for e in parse_feed(path.read_bytes(), FEED).entries}


def served_validators(proxy: str, when: dt.datetime) -> bool:
    """Does the replayed feed answer at ``when`` carry an ETag or a Last-Modified?"""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    request = urllib.request.Request(FEED, headers={"Accept-Datetime": _http_date(when)})
    with opener.open(request, timeout=30) as answer:
        return bool(answer.headers.get("ETag") or answer.headers.get("Last-Modified"))


@pytest.fixture(scope="module")
def cnn_runs(replay_proxy, tmp_path_factory):
    data = tmp_path_factory.mktemp("cnn-feed") / "data"
    env = {"http_proxy": replay_proxy, "https_proxy": replay_proxy}
    results = []
    for when in RUN_AT:
        proc = crawl(["-a", f"start_urls={HOME}", "-a", "depth=0", "-a", f"now={when.isoformat()}"],
                     data, env=env, timeout=600,
                     settings={"DEFAULT_REQUEST_HEADERS": '{"Accept-Datetime": "%s"}' % _http_date(when),
                               "CONCURRENT_REQUESTS_PER_DOMAIN": 32})
        results.append(stats_of(proc.stderr))
    with open_store(data) as store:
        hosts = {d["_id"]: d for d in store.db.hosts.find()}
        feed = store.pages.find_one({"url": FEED})
    validators = [served_validators(replay_proxy, when) for when in RUN_AT]
    return results, hosts, feed, validators


def _n(stats: dict, key: str) -> int:
    return int(stats.get(key, 0))


def test_home_page_link_discovers_the_edition_feed(cnn_runs):
    results, hosts, feed, _ = cnn_runs
    assert _n(results[0], "newscrawl/feeds/discovered/feed") == 1
    assert {"url": FEED, "kind": "feed", "via": "alternate"}.items() <= hosts["cnn.com"]["sources"][0].items()
    assert feed is not None and feed["role"] == "feed"


def test_each_run_finds_exactly_the_entries_its_capture_adds(cnn_runs):
    results, _hosts, feed, _ = cnn_runs
    expected, known = [], set()
    for capture in CAPTURES:
        entries = captured_entries(capture)
        expected.append(len(entries - known))
        known |= entries
    assert expected[1:] == [25, 1]  # the set's README: 25 and then 1 new item
    found = [_n(stats, "newscrawl/feeds/new_entries") for stats in results]
    assert found == expected
    assert [_n(stats, "newscrawl/feeds/fetched/feed") for stats in results] == [1, 1, 1]
    assert set(feed["feed_entries"]) == captured_entries(CAPTURES[-1])
    # off-site entries (cnn.it short links) are dropped and counted
    assert all(_n(stats, "newscrawl/feeds/offsite") > 0 for stats in results)


def test_conditional_get_where_the_headers_allow(cnn_runs):
    results, _hosts, _feed, validators = cnn_runs
    for before, stats in zip(validators, results[1:]):
        conditional = _n(stats, "newscrawl/headprobe/conditional")
        assert conditional >= 1 if before else conditional == 0
