"""NewsRequestFingerprinter: one fingerprint for the duplicate filter, the store and the crawl
state (``page_fp`` is the request fingerprint of a GET, as hex); aliases from the settings."""

from __future__ import annotations

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from newscrawl.fingerprint import NewsRequestFingerprinter, page_fingerprint
from tests.conftest import component_crawler


def test_page_fp_is_the_duplicate_filters_fingerprint_as_hex():
    crawler = component_crawler()
    fingerprinter = crawler.request_fingerprinter
    for url in ("http://www.example.com/a", "https://news.example.com/b?utm_source=x&z=1#top"):
        assert fingerprinter.page_fp(url) == fingerprinter.fingerprint(Request(url)).hex()
    # www. folded: the stored fp of http://www.example.com/a is the duplicate filter's
    assert fingerprinter.page_fp("http://www.example.com/a") == fingerprinter.page_fp(
        "http://example.com/a")
    assert len(fingerprinter.page_fp("http://example.com/")) == 16
    assert page_fingerprint(crawler)("http://example.com/a") == fingerprinter.page_fp(
        "http://example.com/a")


def test_aliases_and_www_folding_come_from_the_settings():
    crawler = component_crawler({"NEWSCRAWL_HOST_ALIASES": {"127.0.0.9": "example.com"},
                                 "NEWSCRAWL_ALIAS_FOLD_WWW": False})
    page_fp = page_fingerprint(crawler)
    assert page_fp("http://127.0.0.9/a") == page_fp("http://example.com/a")
    assert page_fp("http://www.example.com/a") != page_fp("http://example.com/a")


def test_a_redirect_between_aliases_is_not_its_own_duplicate():
    fingerprinter = NewsRequestFingerprinter()
    request = Request("http://www.example.com/a", meta={"redirect_urls": ["http://example.com/a"]})
    assert fingerprinter.fingerprint(request) != fingerprinter.fingerprint(Request("http://example.com/a"))


def test_another_fingerprinter_is_refused():
    crawler = get_crawler(settings_dict={})
    with pytest.raises(TypeError, match="REQUEST_FINGERPRINTER_CLASS"):
        page_fingerprint(crawler)
