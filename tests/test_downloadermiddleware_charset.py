"""CharsetMiddleware as a Scrapy component: re-decoding HTML responses with the detected
encoding (the detection itself is tested in test_charset.py)."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Response, TextResponse

from middlewares.charset import CharsetMiddleware
from tests.conftest import component_crawler, shared_path
from tests.test_charset import INVALID_GBK_PAGES, SET12, ZH, _page, _strip_wrapper


def test_middleware_disabled_raises_not_configured() -> None:
    with pytest.raises(NotConfigured):
        CharsetMiddleware.from_crawler(component_crawler({"NEWSCRAWL_CHARSET_ENABLED": False}))


def test_middleware_fixes_gbk_page_served_without_charset() -> None:
    crawler = component_crawler()
    mw = CharsetMiddleware.from_crawler(crawler)
    # the undeclared GBK page of set 12 that Scrapy alone decodes as ISO-8859-5
    page = shared_path("corpus", SET12, "original", "6dc2d508-abb9-467c-bbea-1fedfcec5f9d.html")
    body = _strip_wrapper(page.read_bytes())
    url = "http://bbs.zol.com.cn/index20050828/index_221_4487.shtml"
    request = Request(url)
    response = HtmlResponse(url, body=body, headers={"Content-Type": "text/html"},
                            request=request)
    fixed = mw.process_response(request, response)
    assert fixed is not response
    assert fixed.encoding == "gb18030"
    assert fixed.text.count("\ufffd") == INVALID_GBK_PAGES[page.name]
    assert "太行山上" in fixed.text
    assert "太行山上" in fixed.xpath("string(.)").get()  # selectors see the re-decoded text
    stats = crawler.stats.get_stats()
    assert stats["newscrawl/charset/detected"] == 1
    assert stats["newscrawl/charset/undeclared"] == 1
    assert "newscrawl/charset/header_overridden" not in stats

    # every GBK page of the set: no U+FFFD after the middleware, except the two invalid ones
    for other in sorted(page.parent.glob("*.html")):
        resp = HtmlResponse(url, body=_strip_wrapper(other.read_bytes()),
                            headers={"Content-Type": "text/html"})
        count = mw.process_response(request, resp).text.count("\ufffd")
        assert count == INVALID_GBK_PAGES.get(other.name, 0), other.name


def test_middleware_overrides_a_lying_header_and_leaves_good_pages_alone() -> None:
    crawler = component_crawler()
    mw = CharsetMiddleware.from_crawler(crawler)
    request = Request("http://example.com/")
    lying = HtmlResponse("http://example.com/", body=_page(ZH).encode("gbk"),
                         headers={"Content-Type": "text/html; charset=utf-8"})
    fixed = mw.process_response(request, lying)
    assert fixed.encoding == "gb18030" and ZH in fixed.text
    assert crawler.stats.get_value("newscrawl/charset/header_overridden") == 1

    good = HtmlResponse("http://example.com/", body=_page(ZH).encode("utf-8"),
                        headers={"Content-Type": "text/html; charset=utf-8"})
    assert mw.process_response(request, good) is good
    ascii_page = HtmlResponse("http://example.com/", body=b"<html>hi</html>")
    assert mw.process_response(request, ascii_page) is ascii_page
    binary = Response("http://example.com/a.png", body=b"\x89PNG\r\n\x1a\n\xff\xfe")
    assert mw.process_response(request, binary) is binary
    plain = TextResponse("http://example.com/a.txt", body=_page(ZH).encode("gbk"),
                         headers={"Content-Type": "text/plain"})
    assert mw.process_response(request, plain) is plain
    assert crawler.stats.get_value("newscrawl/charset/detected") == 1
