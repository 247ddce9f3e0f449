"""URL canonicalisation, fingerprints and registered domains (newscrawl.algorithms.urls)."""

from hypothesis import given, strategies as st

from newscrawl.algorithms.urls import canonicalize_url, host_of, registered_domain, url_fingerprint


def test_registered_domain_uses_public_suffix_list():
    assert registered_domain("news.sina.com.cn") == "sina.com.cn"
    assert registered_domain("www.qq.com") == "qq.com"
    assert registered_domain("sz-magazin.sueddeutsche.de") == "sueddeutsche.de"
    assert registered_domain("www.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("127.0.0.1") == "127.0.0.1"
    assert registered_domain("localhost") == "localhost"
    assert registered_domain("") == ""


def test_canonical_url_drops_fragment_tracking_and_sorts_query():
    a = canonicalize_url("https://www.sueddeutsche.de/gutscheine?utm_medium=x&b=2&a=1#top")
    assert a == "https://www.sueddeutsche.de/gutscheine?a=1&b=2"


def test_fingerprint_is_8_bytes_hex_and_equal_for_equivalent_urls():
    fp = url_fingerprint("https://www.heise.de/news/a.html?utm_source=rss#x")
    assert len(fp) == 16 and int(fp, 16) >= 0
    assert fp == url_fingerprint("https://www.heise.de/news/a.html")
    assert fp != url_fingerprint("https://www.heise.de/news/b.html")


def test_host_of():
    assert host_of("https://User@News.Sina.com.cn:8080/x") == "news.sina.com.cn"
    assert host_of("not a url") == ""


@given(st.text(max_size=200))
def test_canonicalize_never_raises_and_is_idempotent(text):
    url = "http://example.com/" + text
    once = canonicalize_url(url)
    assert canonicalize_url(once) == once


@given(st.text(max_size=100))
def test_registered_domain_never_raises(host):
    assert isinstance(registered_domain(host), str)
