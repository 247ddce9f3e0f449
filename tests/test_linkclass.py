"""Link classes, directories, URL shape and group roles (newscrawl.algorithms.linkclass)."""

import pytest

from newscrawl.algorithms.linkclass import (
    CONTENT, DROPPED, NODE, LinkClass, StartURL, classify_link, classify_page, directory_of,
    group_roles, is_article_shaped, is_channel_shaped, is_directory_page,
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


@pytest.mark.parametrize("start, url, expected", [
    # Another explicit port of the same host (or a sister host) is another site: a page must
    # not make the crawl probe the ports of a host.
    ("http://127.0.0.1:18711/", "http://127.0.0.1:18712/news/2024-05-01/secret.html", LinkClass.OUTWARD),
    ("http://127.0.0.1:18711/", "http://127.0.0.1/politik/", LinkClass.OUTWARD),
    ("http://www.example.com/", "http://www.example.com:8080/politik/", LinkClass.OUTWARD),
    ("http://www.example.com/", "http://sport.example.com:8080/", LinkClass.OUTWARD),
    # The scheme's default port is the same as none.
    ("http://www.example.com/", "http://www.example.com:80/politik/", LinkClass.DOWNWARD),
    ("https://www.example.com:443/", "https://www.example.com/politik/", LinkClass.DOWNWARD),
    ("http://127.0.0.1:18711/", "http://127.0.0.1:18711/politik/", LinkClass.DOWNWARD),
])
def test_another_port_is_outward(start, url, expected):
    assert classify_link(StartURL.parse(start), url) is expected


def test_content_channel_and_frame_links_on_another_port_are_dropped():
    start = "http://127.0.0.1:18711/"
    other = ["http://127.0.0.1:18712/politik/2024-05-01/secret-article-on-another-port.html",
             "http://127.0.0.1:18712/politik/", "http://127.0.0.1:18712/sport/"]
    page = classify_page(start, _links(other) + _links(["http://127.0.0.1:18712/f.html"], tag="frame"))
    assert all(link.role == DROPPED for link in page.links), [(l.url, l.role) for l in page.links]
    assert page.entries == []


def test_bad_start_url_raises():
    with pytest.raises(ValueError):
        classify_page("not-a-url", [])


# --- issue 10: article shapes, service links, channel following (real URLs of the labelled pages)

@pytest.mark.parametrize("url", [
    # ids longer than 24 characters: base64 of '20180805/n600578583.shtml'
    "https://tv.sohu.com/v/MjAxODA4MDUvbjYwMDU3ODU4My5zaHRtbA==.html",
    # print-issue articles /YYYY/NN/<slug>
    "https://www.zeit.de/2023/18/kunst-unfaelle-wertsteigerung",
    "https://www.zeit.de/zeit-magazin/2023/18/romanze-ausland-liebeskolumne",
    # feature / column pieces under /original/ with short ids
    "http://news.qq.com/original/oneday/2958.html",
    "http://news.qq.com/original/eyan/ey156.html",
    "http://gy.qq.com/original/guyu_lab/lab085.html",
    "http://view.news.qq.com/original/intouchtoday/n4157.html",
    # a subject directory named like a service page
    "https://www.zeit.de/digital/datenschutz/2023-04/big-brother-award-microsoft-lebenswerk",
])
def test_issue10_false_negatives_are_article_shaped(url):
    assert is_article_shaped(url)


@pytest.mark.parametrize("url", [
    "https://www.zeit.de/serie/was-chefinnen-wirklich-denken-podcast",  # podcast series index
    "https://www.zeit.de/serie/pegasus-der-spion-in-unseren-handys",
    "https://sz-magazin.sueddeutsche.de/tag/das-kreuz-mit-den-worten/",
    "https://www.zeit.de/wochenende/2023/17",  # an issue page: a number, no slug
    "https://www.example.com/archiv/2024/05/",
])
def test_series_and_issue_pages_are_not_articles(url):
    assert not is_article_shaped(url)


@pytest.mark.parametrize("url", [
    "https://www.zeit.de/serie/was-chefinnen-wirklich-denken-podcast",
    "http://news.qq.com/society_index.shtml",
    "http://fashion.qq.com/beauty/beauty_list.htm",
    "http://rufodao.qq.com/l/ruxue/gushengjinxian/list201511416042.htm",
    "http://news.qq.com/zt2017/2017ztqt/lswl.htm",
    "http://history.sina.com.cn/news/list/20.shtml",
    "http://finance.sina.com.cn/roll/index.d.html?lid=1004",
    "http://slide.mil.news.sina.com.cn/s_list_8_62085.html",
    "http://127.0.0.1/politik/page-2.html",  # the next page of a list
])
def test_channel_shaped(url):
    assert is_channel_shaped(url)


@pytest.mark.parametrize("url", [
    "http://www.qq.com/privacy.htm",
    "http://news.sina.com.cn/c/2018-08-08/doc-ihhkuskt7577970.shtml",
    "http://www.sina.com.cn/license/dx000007.html",
])
def test_not_channel_shaped(url):
    assert not is_channel_shaped(url)


@pytest.mark.parametrize("url, reason", [
    ("https://preisvergleich.heise.de/3336051?ccpid=hocid-pvgmodul&cs_id=1206858352", "service:host"),
    ("https://jobs.heise.de/stellenanzeigen/3639796.html", "service:host"),
    ("https://it-kenner.heise.de/secure-it-fuer-unternehmen/", "service:host"),  # sponsored
    ("http://v.qq.com/detail/7/71987.html", "service:pattern"),  # VOD programme page
    ("http://coral.qq.com/5502403414", "service:host"),  # comment thread
    ("https://www.heise.de/download/product/crystaldiskinfo-59349", "service:path"),
])
def test_issue10_false_positives_are_dropped_as_service_links(url, reason):
    start = "https://www.heise.de/" if "heise" in url else "https://www.qq.com/"
    page = classify_page(start, _links([url]))
    assert (page.links[0].role, page.links[0].reason) == (DROPPED, reason)


def test_other_branches_of_the_host_are_followed_as_channels():
    # from https://www.sueddeutsche.de/sport: /politik and /thema/Bundesliga are CROSSWISE
    page = classify_page("https://www.sueddeutsche.de/sport", _links([
        "https://www.sueddeutsche.de/politik", "https://www.sueddeutsche.de/thema/Bundesliga",
        "https://www.sueddeutsche.de/", "https://www.sueddeutsche.de/gutscheine/ebay"]))
    roles = {link.url: (link.link_class, link.role) for link in page.links}
    assert roles["https://www.sueddeutsche.de/politik"] == (LinkClass.CROSSWISE, NODE)
    assert roles["https://www.sueddeutsche.de/thema/Bundesliga"] == (LinkClass.CROSSWISE, NODE)
    assert roles["https://www.sueddeutsche.de/"] == (LinkClass.UPWARD, DROPPED)
    assert roles["https://www.sueddeutsche.de/gutscheine/ebay"][1] == DROPPED
    assert page.node_requests() == ["https://www.sueddeutsche.de/politik",
                                    "https://www.sueddeutsche.de/thema/Bundesliga"]
    off = classify_page("https://www.sueddeutsche.de/sport",
                        _links(["https://www.sueddeutsche.de/politik"]), follow_channels=False)
    assert off.links[0].role == DROPPED


def test_sister_hosts_are_followed_on_evidence():
    start = "http://www.sohu.com/"
    urls = ["http://business.sohu.com/994", "http://business.sohu.com/995",  # a section row
            "http://it.sohu.com/880",  # one link, no article: no evidence
            "http://mil.sohu.com/", "http://mil.sohu.com/20180808/n1.shtml",  # an article there
            "http://bj.mil.sohu.com/"]  # an edition of an editorial host
    page = classify_page(start, _links(urls))
    roles = {link.url: link.role for link in page.links}
    assert roles["http://business.sohu.com/994"] == roles["http://business.sohu.com/995"] == NODE
    assert roles["http://it.sohu.com/880"] == DROPPED
    assert roles["http://mil.sohu.com/"] == NODE and roles["http://bj.mil.sohu.com/"] == NODE
    assert "http://business.sohu.com/" in page.entries  # the root is not linked itself
    assert "http://mil.sohu.com/" not in page.entries  # linked, so followed as a link
    assert page.node_requests()[-1] == "http://business.sohu.com/"
    one = classify_page(start, _links(urls), sister_evidence=1)
    assert {link.url: link.role for link in one.links}["http://it.sohu.com/880"] == NODE


def test_a_navigation_block_of_editorial_hosts_carries_its_other_links():
    def links(urls, block):
        return [RawLink(u, "t", "a", {}, block) for u in urls]
    start = "http://www.qq.com/"
    raw = links(["http://news.qq.com/a/20180205/004622.htm", "http://sports.qq.com/a/20180205/1.htm"], 0)
    # a channel bar: two editorial hosts and baby.qq.com, which shows nothing by itself
    raw += links(["http://news.qq.com/", "http://sports.qq.com/", "http://baby.qq.com/"], 1)
    # a product row: no editorial host in it
    raw += links(["http://player.qq.com/", "http://pim.qq.com/", "http://xf.qq.com/"], 2)
    page = classify_page(start, raw)
    roles = {link.url: link.role for link in page.links}
    assert roles["http://baby.qq.com/"] == NODE
    assert roles["http://player.qq.com/"] == roles["http://pim.qq.com/"] == DROPPED
    none = classify_page(start, raw, block_share=1.01)
    assert {link.url: link.role for link in none.links}["http://baby.qq.com/"] == DROPPED


def test_leaf_pages_of_the_home_directory_are_not_channels():
    page = classify_page("http://www.qq.com/", _links([
        "http://www.qq.com/sheweishouye.htm", "http://www.qq.com/icp.shtml", "http://www.qq.com/map/"]))
    roles = {link.url: (link.role, link.reason) for link in page.links}
    assert roles["http://www.qq.com/sheweishouye.htm"] == (DROPPED, "leaf")  # help page
    assert roles["http://www.qq.com/map/"] == (NODE, "")


def test_custom_rules_reach_the_classifier():
    from newscrawl.algorithms.linkrules import build_rules
    rules = build_rules({"sites": {"sueddeutsche.de": {"paths": ["thema"]}}})
    page = classify_page("https://www.sueddeutsche.de/", _links(
        ["https://www.sueddeutsche.de/thema/Ukraine"]), rules=rules)
    assert (page.links[0].role, page.links[0].reason) == (DROPPED, "service:path")
