"""Integration: `scrapy crawl news` over real captured sites served under their real URLs by the
pywb replay proxy of ../shared/replay (sueddeutsche.de, zeit.de, sina.com.cn, qq.com; heise.de
is in the manual acceptance crawl of the README, left out here to keep the suite short)."""

import json
import re
from datetime import datetime, timezone

import pytest

from newscrawl.algorithms.textcompare import body_matches
from tests.conftest import shared_path
from tests.helpers import crawl, open_store, read_items, stats_of

pytestmark = pytest.mark.integration

ENTRIES = ["https://www.sueddeutsche.de/", "https://www.zeit.de/index", "https://www.sina.com.cn/",
           "https://www.qq.com/"]
SZ_ARTICLE = "https://www.sueddeutsche.de/sport/berlin-marathon-hendel-lux.GoPAarjxoHNezv1hVvgdhr"
ZEIT_ARTICLE = "https://www.zeit.de/news/2023-04/28/nach-massenschlaegerei-real-star-llull-entschuldigt-sich"
CJK = re.compile(r"[\u4e00-\u9fff]")
MOJIBAKE = re.compile(r"[\ufffd]|Ã.|Â.|æ[\x80-\xbf]|ç[\x80-\xbf]")


@pytest.fixture(scope="module")
def replay_crawl(replay_proxy, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replaycrawl")
    proc = crawl(["-a", "start_urls=" + ",".join(ENTRIES), "-a", "depth=1",
                  "-O", str(tmp / "items.jsonl")], tmp / "data",
                 env={"http_proxy": replay_proxy, "https_proxy": replay_proxy}, timeout=900)
    return tmp, stats_of(proc.stderr)


def _gt(name, key):
    path = shared_path("corpus", "04_fundus_multilingual_articles_gt", "de", name)
    return json.loads(path.read_text(encoding="utf-8"))[key]


@pytest.mark.parametrize("url, gt_file, key", [
    (SZ_ARTICLE, "SZ.json", "V1_1"), (ZEIT_ARTICLE, "DieZeit.json", "V1")])
def test_articles_match_ground_truth(replay_crawl, url, gt_file, key):
    tmp, _ = replay_crawl
    gt = _gt(gt_file, key)
    with open_store(tmp / "data") as store:
        doc = store.articles.find_one({"url": url})
    assert doc is not None, f"{url} not stored"
    assert doc["title"] == gt["title"]
    ok, f1 = body_matches(doc["text"], gt["body"])
    assert ok, f"body F1 {f1:.3f}"
    expected = datetime.fromisoformat(gt["publishing_date"]).astimezone(timezone.utc)
    assert doc["published"] == expected
    assert doc["role"] == "content" and doc["weight"] > 0


def test_sport_section_is_reached_as_a_node_link(replay_crawl):
    tmp, _ = replay_crawl
    with open_store(tmp / "data") as store:
        sport = store.nodes.find_one({"url": "https://www.sueddeutsche.de/sport"})
        edge = store.links.find_one({"target_url": "https://www.sueddeutsche.de/sport",
                                     "source_url": "https://www.sueddeutsche.de/"})
    assert sport["role"] == "node" and sport["depth"] == 1
    assert edge["role"] == "node" and edge["link_class"] == "downward"


def test_link_classes_per_site_agree_between_stats_and_store(replay_crawl):
    tmp, stats = replay_crawl
    with open_store(tmp / "data") as store:
        stored = {(d["_id"]["site"], d["_id"]["cls"]): d["n"] for d in store.links.aggregate([
            {"$group": {"_id": {"site": "$site", "cls": "$link_class"}, "n": {"$sum": 1}}}])}
    assert {site for site, _ in stored} == {"sueddeutsche.de", "zeit.de", "sina.com.cn", "qq.com"}
    for (site, cls), n in stored.items():
        assert int(stats[f"newscrawl/linkclass/{cls}/{site}"]) == n, (site, cls)
    counted = {k for k in stats if k.count("/") == 3 and k.startswith("newscrawl/linkclass/")
               and not k.startswith(("newscrawl/linkclass/role", "newscrawl/linkclass/skipped",
                                     "newscrawl/linkclass/dropped"))}
    assert len(counted) == len(stored)


@pytest.mark.parametrize("site", ["qq.com", "sina.com.cn"])
def test_chinese_link_texts_are_decoded(replay_crawl, site):
    tmp, _ = replay_crawl
    with open_store(tmp / "data") as store:
        texts = [d["anchor_text"] for d in store.links.find({"site": site}, {"anchor_text": 1})]
    cjk = [t for t in texts if CJK.search(t or "")]
    assert len(cjk) > 200
    assert not [t for t in texts if MOJIBAKE.search(t or "")]


def test_feed_export_carries_every_stored_article_field(replay_crawl):
    tmp, _ = replay_crawl
    feed = {i["url"]: i for i in read_items(tmp / "items.jsonl") if i["kind"] == "article"}
    with open_store(tmp / "data") as store:
        docs = list(store.articles.find())
    assert docs
    for doc in docs:
        missing = set(doc) - {"_id", "first_seen", "last_seen"} - set(feed[doc["url"]])
        assert not missing, (doc["url"], missing)
