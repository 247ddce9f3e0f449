"""The shadow update mode (seed 002 §2) end to end, and eviction by PageRank under
NEWSCRAWL_MAX_PAGES: two runs over the changing sites of tests/mocksite_changing.py."""

from __future__ import annotations

import pytest

from tests.helpers import crawl, open_store, stats_of
from tests.mocksite_changing import article_path
from tests.test_crawl_incremental import RUN_TIMES, SITES, changing_sites

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shadow_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shadow")
    state_file = tmp / "version.txt"
    results = []
    with changing_sites(state_file) as urls:
        for version, now, extra in ((1, RUN_TIMES[0], {}), (2, RUN_TIMES[1], {"NEWSCRAWL_MAX_PAGES": 20})):
            state_file.write_text(str(version))
            proc = crawl(["-a", "start_urls=" + ",".join(urls[site] for site in SITES), "-a", f"now={now}"],
                         tmp / "data", settings={"LOG_LEVEL": "INFO", "NEWSCRAWL_UPDATE_MODE": "shadow",
                                                 **extra})
            results.append(stats_of(proc.stderr))
    return urls, tmp / "data", results


def test_shadow_runs_are_merged_whole(shadow_runs):
    urls, data, (first, second) = shadow_runs
    assert int(first["newscrawl/crawlstate/merged_items"]) == int(first["item_scraped_count"]) == 24
    assert int(first["newscrawl/crawlstate/merged_pages"]) == 24
    assert "newscrawl/store/articles" not in first  # nothing went straight to the live collections
    assert int(second["newscrawl/crawlstate/merged_versions"]) == 3
    assert int(second["downloader/request_method_count/HEAD"]) == 8  # same checks as in place
    with open_store(data) as store:
        assert store.staged_runs() == [] and store.staging.count_documents({}) == 0
        assert store.versions.count_documents({}) == 3
        live = store.articles.find_one({"url": urls["good"].rstrip("/") + article_path(2)})
        assert live is None or live["title"].endswith("(aktualisiert)")


def test_eviction_keeps_max_pages_by_pagerank(shadow_runs):
    urls, data, (_, second) = shadow_runs
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
