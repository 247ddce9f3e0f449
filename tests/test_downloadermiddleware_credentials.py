"""middlewares.credentials: entry credentials as an Authorization header for their origin only."""

import base64

from scrapy import Request

from middlewares.credentials import CredentialsMiddleware
from spiders.news import NewsSpider
from tests.conftest import component_crawler, open_spider


def _mw():
    crawler = component_crawler()
    spider = NewsSpider.from_crawler(
        crawler, start_urls="http://ann:s3cret@127.0.0.1:8080/,https://news.example/")
    mw = CredentialsMiddleware.from_crawler(crawler)
    open_spider(crawler, spider)
    return mw, crawler, spider


def test_entry_credentials_go_to_their_origin_only_and_never_in_a_url():
    mw, crawler, spider = _mw()
    assert spider.entry_urls == ["http://127.0.0.1:8080/", "https://news.example/"]
    expected = b"Basic " + base64.b64encode(b"ann:s3cret")
    same_host = Request("http://127.0.0.1:8080/politik/a.html")
    assert mw.process_request(same_host) is None
    assert same_host.headers[b"Authorization"] == expected
    # another host, another port of the same host, another scheme (RFC 7617 §2: the origin)
    for url in ("https://news.example/", "http://127.0.0.2:8080/", "http://sub.127.0.0.1.nip.example/",
                "http://127.0.0.1:8081/", "https://127.0.0.1:8080/", "http://127.0.0.1/"):
        other = Request(url)
        assert mw.process_request(other) is None
        assert b"Authorization" not in other.headers
    assert crawler.stats.get_value("newscrawl/credentials/sent") == 1


def test_a_url_with_credentials_is_replaced_by_one_without():
    mw, crawler, _ = _mw()
    replaced = mw.process_request(Request("http://bob:pw@news.example/a"))
    assert replaced.url == "http://news.example/a" and replaced.dont_filter
    assert b"Authorization" not in replaced.headers
    assert crawler.stats.get_value("newscrawl/credentials/stripped") == 1
