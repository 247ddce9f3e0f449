"""Link classes, directories, URL shape and group roles (newscrawl.algorithms.linkclass)."""

import pytest

from newscrawl.algorithms.linkclass import (
    CONTENT, DROPPED, NODE, LinkClass, StartURL, classify_link, classify_page, directory_of,
    group_roles, is_article_shaped, is_directory_page,
)
from newscrawl.algorithms.linkextract import RawLink

START = StartURL.parse("http://news.example.com.cn/world/index.html")


@pytest.mark.parametrize("url, expected", [
    ("http://other.org/x", LinkClass.OUTWARD),
    ("http://sports.example.com.cn/", LinkClass.CROSSWISE),  # same registered domain, other host
    ("http://news.example.com.cn/china/a-b-c-d.html", LinkClass.CROSSWISE),  # other branch
    ("http://news.example.com.cn/", LinkClass.UPWARD),
    ("http://news.example.com.cn/index.html", LinkClass.UPWARD),
    ("http://news.example.com.cn/world/2024-10-01/doc-abc.shtml", LinkClass.DOWNWARD),
    ("http://news.example.com.cn/world/asia/", LinkClass.DOWNWARD),
    ("http://news.example.com.cn/world/some-long-article-slug-here.html", LinkClass.HORIZONTAL),
    ("http://news.example.com.cn/world/index.html?page=2", LinkClass.HORIZONTAL),
])
def test_classify_link(url, expected):
    assert classify_link(START, url) is expected


def test_frame_is_decided_by_tag():
    assert classify_link(START, "http://other.org/ad.html", tag="frame") is LinkClass.FRAME


@pytest.mark.parametrize("url, directory", [
    ("https://www.sueddeutsche.de/", "/"),
    ("https://www.sueddeutsche.de/sport", "/sport/"),
    ("https://www.sueddeutsche.de/sport/", "/sport/"),
    ("https://www.zeit.de/news/index", "/news/"),
    ("https://www.sueddeutsche.de/sport/berlin-marathon-hendel-lux.GoPAarjxoHNezv1hVvgdhr", "/sport/"),
    ("https://www.heise.de/news/Playstation-5-Pro-bekommt-KI-Upscaler-11193995.html", "/news/"),
    ("http://news.sina.com.cn/c/2018-08-08/doc-ihhkuskt.shtml", "/c/2018-08-08/"),
])
def test_directory_of(url, directory):
    assert directory_of(url) == directory


@pytest.mark.parametrize("url", [
    "https://www.sueddeutsche.de/sport/berlin-marathon-hendel-lux.GoPAarjxoHNezv1hVvgdhr",
    "https://www.zeit.de/news/2023-04/28/nach-massenschlaegerei-real-star-llull-entschuldigt-sich",
    "http://news.sina.com.cn/c/2018-08-08/doc-ihhkuskt.shtml",
    "https://www.sueddeutsche.de/stil/cappuccino-lifehack-1.6318012",
    "http://new.qq.com/omn/20180222/20180222A0XXXX.html",
])
def test_article_shaped(url):
    assert is_article_shaped(url)
    assert not is_directory_page(url)


@pytest.mark.parametrize("url", [
    "https://www.sueddeutsche.de/sport",
    "https://www.sueddeutsche.de/thema/Und_nun_zum_Sport",
    "https://www.zeit.de/news/index",
    "https://www.heise.de/newsticker/",
    "https://www.sueddeutsche.de/",
    "https://www.heise.de/newsticker/archiv/2024/01",
    "https://www.zeit.de/2024/01",
    "https://example.com/archive/2024/05/",
    "https://example.com/2024/05/12/",
])
def test_directory_pages(url):
    assert is_directory_page(url)
    assert not is_article_shaped(url)


def test_group_roles_follow_seed_004():
    groups = {"http://h/": 6, "http://h/a/": 30, "http://h/b/": 20, "http://h/c/": 3, "http://h/d/": 9}
    roles = group_roles(groups, min_group=5, dominant_ratio=0.5)
    assert roles["http://h/"] == NODE  # ancestor of other groups: a channel directory
    assert roles["http://h/c/"] == NODE  # fewer than 5 links
    assert roles["http://h/a/"] == CONTENT  # dominant
    assert roles["http://h/b/"] == CONTENT  # evenly spread: also content
    assert roles["http://h/d/"] == NODE  # well below the largest group


def _links(urls, tag="a"):
    return [RawLink(u, "t", tag, {"image": 0, "font_size": 0, "bold": 0}) for u in urls]


def test_classify_page_paper_rule_without_shape():
    start = "http://h.example.com/"
    urls = [f"http://h.example.com/list/p{i}.htm" for i in range(8)]
    urls += ["http://h.example.com/about.htm", "http://h.example.com/x/y.htm"]
    page = classify_page(start, _links(urls), use_shape=False)
    roles = {link.url: link.role for link in page.links}
    assert all(roles[u] == CONTENT for u in urls[:8])
    assert roles["http://h.example.com/x/y.htm"] == NODE


def test_classify_page_merges_duplicates_and_fragments():
    start = "http://h.example.com/"
    raw = [RawLink("http://h.example.com/a.htm#x", "", "a", {"image": 1, "font_size": 0, "bold": 0}),
           RawLink("http://h.example.com/a.htm", "Title", "a", {"image": 0, "font_size": 0, "bold": 1})]
    page = classify_page(start, raw)
    assert len(page.links) == 1
    link = page.links[0]
    assert link.text == "Title" and link.features["image"] == 1 and link.features["bold"] == 1
    assert page.counts == {"horizontal": 1}


def test_crosswise_entries_and_outward_frames():
    start = "https://www.sina.com.cn/"
    raw = _links(["https://news.sina.com.cn/c/2018-08-08/doc-ihhkuskt.shtml",
                  "https://sports.sina.com.cn/", "https://sports.sina.com.cn/g/2018-08-08/doc-i1.shtml",
                  "https://browser.sina.com.cn/", "https://weibo.com/x"])
    raw += _links(["https://ads.other.com/f.html", "https://www.sina.com.cn/frame.html"], tag="frame")
    page = classify_page(start, raw)
    by_url = {link.url: link for link in page.links}
    # news. and sports. carry articles (editorial hosts); sports.'s root is a node link itself,
    # news. gets an entry; a lone link to another host's root shows nothing: not followed.
    assert page.entries == ["https://news.sina.com.cn/"]
    assert by_url["https://sports.sina.com.cn/"].role == NODE
    assert by_url["https://browser.sina.com.cn/"].role == DROPPED
    assert by_url["https://news.sina.com.cn/c/2018-08-08/doc-ihhkuskt.shtml"].role == CONTENT
    assert by_url["https://weibo.com/x"].link_class is LinkClass.OUTWARD
    assert by_url["https://weibo.com/x"].role == DROPPED
    assert by_url["https://ads.other.com/f.html"].role == DROPPED
    assert by_url["https://www.sina.com.cn/frame.html"].role == NODE
    assert by_url["https://www.sina.com.cn/frame.html"].link_class is LinkClass.FRAME


def test_bad_start_url_raises():
    with pytest.raises(ValueError):
        classify_page("not-a-url", [])
