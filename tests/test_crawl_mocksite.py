"""End-to-end crawl of a served mock site with messy pages: crawl -> classify -> extract ->
weigh -> store, through the real embedded store and Scrapy's feed export."""

import pytest

from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore
from tests.conftest import _free_port
from tests.helpers import crawl, open_store, read_items, served, stats_of
from tests.mocksite import ARTICLES, BROKEN, GBK_ARTICLE, HUGE_ARTICLE, LOOP, PRIVATE


@pytest.fixture(scope="module")
def mock_crawl(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mockcrawl")
    with served() as base:
        proc = crawl(["-a", f"start_urls={base}", "-O", str(tmp / "items.jsonl")], tmp / "data",
                     settings={"NEWSCRAWL_EXTRACT_MAX_BYTES": 1_000_000, "LOG_LEVEL": "INFO"})
    return base, tmp, proc, stats_of(proc.stderr)


def test_every_article_is_stored_with_text_date_and_weight(mock_crawl):
    base, tmp, _, _ = mock_crawl
    with open_store(tmp / "data") as store:
        articles = {d["url"]: d for d in store.articles.find()}
        for path in ARTICLES:
            doc = articles[base.rstrip("/") + path]
            assert doc["title"].startswith("Kanzler trifft Minister")
            assert "Haushalt" in doc["text"]
            assert doc["published"].tzinfo is not None and doc["published"].hour == 6  # 08:30+02:00
            assert doc["published_source"] == "og" and doc["published_confidence"] >= 0.9
            assert 0 < doc["weight"] <= 1 and doc["role"] == "content"
        # Headline teasers on the home page weigh more than list items on the channel page only.
        home_teaser = articles[base.rstrip("/") + ARTICLES[0]]["weight"]
        channel_only = articles[base.rstrip("/") + ARTICLES[5]]["weight"]
        assert home_teaser > channel_only > 0


def test_gbk_page_without_charset_is_decoded(mock_crawl):
    base, tmp, _, _ = mock_crawl
    with open_store(tmp / "data") as store:
        doc = store.articles.find_one({"url": base.rstrip("/") + GBK_ARTICLE})
    assert doc is not None and "国务院" in doc["title"] and "\ufffd" not in doc["text"]
    assert doc["encoding"].lower() in ("gb18030", "gbk")


def test_bad_pages_are_counted_not_fatal(mock_crawl):
    base, tmp, proc, stats = mock_crawl
    assert stats["finish_reason"] == "'finished'"
    assert int(stats["newscrawl/extraction/skipped_too_large"]) == 1
    # The endless redirect chain ends at REDIRECT_MAX_TIMES (10) and is dropped, not stored.
    assert 10 <= int(stats["downloader/response_status_count/302"]) <= 11
    with open_store(tmp / "data") as store:
        assert store.articles.find_one({"url": base.rstrip("/") + HUGE_ARTICLE}) is not None
        assert store.articles.find_one({"url": base.rstrip("/") + BROKEN}) is not None
        assert store.articles.find_one({"url": base.rstrip("/") + PRIVATE}) is None  # robots.txt
        assert store.articles.count_documents({"url": {"$regex": "redirect-loop"}}) == 0


def test_link_classes_agree_between_stats_store_and_feed(mock_crawl):
    base, tmp, _, stats = mock_crawl
    with open_store(tmp / "data") as store:
        stored = store.counts_by_class()
        home = store.nodes.find_one({"url": base})
    for cls, n in stored.items():
        assert int(stats[f"newscrawl/linkclass/{cls}"]) == n
    assert stored["outward"] >= 1 and stored["frame"] == 1
    assert home["link_counts"]["outward"] == 1 and home["role"] == "entry" and home["weight"] == 1.0
    items = read_items(tmp / "items.jsonl")
    feed_articles = {i["url"]: i for i in items if i["kind"] == "article"}
    with open_store(tmp / "data") as store:
        for doc in store.articles.find():
            feed = feed_articles[doc["url"]]
            missing = {k for k in doc if k not in ("_id", "first_seen", "last_seen")} - set(feed)
            assert not missing, missing


def test_unreachable_database_spills_and_the_next_run_on_it_replays(tmp_path):
    """A database that is not there: the crawl finishes, every item goes to the spill file of
    that database; a run on another store leaves the file alone; the next run on that database
    writes the items back."""
    data = tmp_path / "data"
    port = _free_port()
    uri = f"mongodb://127.0.0.1:{port}/"
    with served() as base:
        proc = crawl(["-a", f"start_urls={base}", "-a", "depth=0"], data,
                     settings={"NEWSCRAWL_MONGO_URI": uri, "NEWSCRAWL_MONGO_TIMEOUT": 0.5,
                               "LOG_LEVEL": "INFO"}, status=1)  # kept, but not in the store
        stats = stats_of(proc.stderr)
        assert proc.stderr.rstrip().splitlines()[-1].startswith(
            "newscrawl: crawl FAILED: could not write to the store: it was unreachable")
        assert stats["finish_reason"] == "'finished'"
        scraped = int(stats["item_scraped_count"])
        assert int(stats["newscrawl/store/spilled"]) == scraped > 1
        spills = list(data.glob("spill-news-mongo-*.jsonl"))
        assert len(spills) == 1
        # The embedded store of the data folder is another database: not replayed there.
        proc = crawl(["-a", "start_urls=" + base, "-a", "depth=0"], data,
                     settings={"LOG_LEVEL": "INFO"})
        other = stats_of(proc.stderr)
        assert "newscrawl/store/replayed" not in other and spills[0].exists()
        assert int(other["newscrawl/store/spills_elsewhere"]) == 1
        # The database comes up (a server on the same address): the spill is written there.
        server = EmbeddedMongo(tmp_path / "real", port=port)
        server.start()
        try:
            proc = crawl(["-a", "start_urls=" + base, "-a", "depth=0"], data,
                         settings={"NEWSCRAWL_MONGO_URI": uri, "LOG_LEVEL": "INFO"})
            assert int(stats_of(proc.stderr)["newscrawl/store/replayed"]) == scraped
            assert not spills[0].exists()
            store = NewsStore.connect(uri)
            try:
                assert store.articles.count_documents({}) + store.nodes.count_documents({}) \
                    >= scraped
            finally:
                store.close()
        finally:
            server.stop()


def test_a_bad_seed_line_is_skipped_and_the_crawl_runs(tmp_path):
    seeds = tmp_path / "seeds.txt"
    with served() as base:
        seeds.write_text(f"http://\n{base}\nnot a url\n", encoding="utf-8")
        proc = crawl(["-a", f"seeds={seeds}", "-a", "depth=0"], tmp_path / "data",
                     settings={"NEWSCRAWL_MONGO_ENABLED": "False", "LOG_LEVEL": "INFO"})
    stats = stats_of(proc.stderr)
    assert proc.returncode == 0 and stats["finish_reason"] == "'finished'"
    assert int(stats["newscrawl/seeds/skipped"]) == 2 and int(stats["item_scraped_count"]) >= 1
