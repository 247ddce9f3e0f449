"""The shadow update mode (seed 002 §2) end to end, and eviction by PageRank under
NEWSCRAWL_MAX_PAGES: two runs over the changing sites of tests/mocksite_changing.py. The live
collections are read back after each run: a run's articles must be there, whole, once it is
merged (and nothing before)."""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlsplit

import pytest

from newscrawl.fingerprint import NewsRequestFingerprinter
from tests.helpers import crawl, open_store, stats_of
from tests.mocksite_changing import CHANGES, article_path
from tests.test_crawl_incremental import RUN_TIMES, SITES, changing_sites

pytestmark = pytest.mark.slow

page_fp = NewsRequestFingerprinter().page_fp


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def shadow_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shadow")
    state_file = tmp / "version.txt"
    results, logs, live = [], [], []
    with changing_sites(state_file) as urls:
        for version, now, extra in ((1, RUN_TIMES[0], {}), (2, RUN_TIMES[1], {"NEWSCRAWL_MAX_PAGES": 20})):
            state_file.write_text(str(version))
            proc = crawl(["-a", "start_urls=" + ",".join(urls[site] for site in SITES), "-a", f"now={now}"],
                         tmp / "data", settings={"LOG_LEVEL": "INFO", "NEWSCRAWL_UPDATE_MODE": "shadow",
                                                 **extra})
            results.append(stats_of(proc.stderr))
            logs.append(proc.stderr)
            with open_store(tmp / "data") as store:  # what readers see after the run
                live.append({
                    "articles": {d["url"]: d for d in store.articles.find({}, {"_id": 0})},
                    "pages": {d["_id"]: d for d in store.pages.find({}, {"history": 0})},
                })
    return urls, tmp / "data", results, logs, live


def test_shadow_runs_are_merged_whole(shadow_runs):
    urls, data, (first, second), _, _ = shadow_runs
    assert int(first["newscrawl/crawlstate/merged_items"]) == int(first["item_scraped_count"]) == 24
    assert int(first["newscrawl/crawlstate/merged_pages"]) == 24
    assert "newscrawl/store/articles" not in first  # nothing went straight to the live collections
    assert int(second["newscrawl/crawlstate/merged_versions"]) == 3
    assert int(second["downloader/request_method_count/HEAD"]) == 7  # same checks as in place
    with open_store(data) as store:
        assert store.staged_runs() == [] and store.staging.count_documents({}) == 0
        assert store.versions.count_documents({}) == 3


def test_the_merged_articles_are_stored_and_read_back(shadow_runs):
    urls, _, _, _, (after_first, _) = shadow_runs
    articles = after_first["articles"]
    expected = {urls[site].rstrip("/") + article_path(n) for site in SITES for n in (1, 2, 3, 4)}
    assert set(articles) == expected  # all 16, nothing else
    start = _at(RUN_TIMES[0])
    for url, doc in articles.items():
        assert doc["fp"] == page_fp(url) and doc["kind"] == "article" and doc["role"] == "content"
        assert doc["title"].startswith("Meldung ") and "Absatz 1 der Meldung" in doc["text"]
        assert 0 < doc["weight"] <= 1 and doc["site"] == urlsplit(url).hostname
        # one run clock: the run ran "at" RUN_TIMES[0]
        assert start <= doc["first_seen"] == doc["last_seen"] == doc["fetched_at"] < start + dt.timedelta(hours=1)
        record = after_first["pages"][doc["fp"]]
        assert record["url"] == url and record["visits"] == 1 and record["weight"] == doc["weight"]


def test_the_summary_comes_after_the_merge(shadow_runs):
    _, _, _, logs, _ = shadow_runs
    merged = logs[0].index("merged into the live collections")
    assert "Results: 16 articles, 8 nodes" in logs[0][merged:]
    assert "Results: 0 articles" not in logs[0]


def test_the_second_run_merges_its_corrections(shadow_runs):
    urls, _, _, _, (_, after_second) = shadow_runs
    articles, pages = after_second["articles"], after_second["pages"]
    kept = {r["url"] for r in pages.values()
            if r["role"] == "content" and r.get("last_visit") and not r.get("evicted")}
    assert set(articles) == kept  # every article not evicted is live, none other
    corrected = [urls[site].rstrip("/") + article_path(n)
                 for site, change in CHANGES.items() if site in SITES for n in change["corrected"]]
    assert any(url in articles for url in corrected)
    for url in corrected:
        if url in articles:
            assert "Korrektur zu Meldung" in articles[url]["text"]
            assert articles[url]["last_seen"] >= _at(RUN_TIMES[1])
    good2 = urls["good"].rstrip("/") + article_path(2)
    if good2 in articles:
        assert articles[good2]["title"].endswith("(aktualisiert)")


def test_eviction_keeps_max_pages_by_pagerank(shadow_runs):
    urls, data, (_, second), _, _ = shadow_runs
    assert int(second["newscrawl/crawlstate/evicted"]) == 25 - 20
    with open_store(data) as store:
        evicted = list(store.pages.find({"evicted": True}))
        kept = list(store.pages.find({"evicted": {"$ne": True}}))
        assert len(evicted) == 5 and len(kept) == 20
        assert not any(d.get("seed") for d in evicted)
        assert max(d["pagerank"] for d in evicted) <= min(d["pagerank"] for d in kept if not d.get("seed"))
        for doc in evicted:  # bodies gone, records stay (never due, not new again)
            assert store.articles.find_one({"fp": doc["_id"]}) is None
            assert doc["due"] is None
