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


import pytest  # noqa: E402

from newscrawl.algorithms.fingerprint import url_fingerprint_bytes  # noqa: E402
from newscrawl.algorithms.urls import (  # noqa: E402
    looks_like_host,
    redact_credentials,
    split_credentials,
)


@pytest.mark.parametrize("url", [
    "http://news.example/politik/a.html;jsessionid=0A1B2C3D4E",
    "http://news.example/politik/a.html;JSESSIONID=ffff?",
    "http://news.example/;jsessionid=RANDOM/politik/a.html",
    "http://news.example/politik/a.html?PHPSESSID=9f8e7d",
    "http://news.example/politik/a.html?phpsessid=1&sid=2&sessionid=3&session_id=4",
    "http://news.example/politik/a.html?ASPSESSIONIDQADBCRCT=1",
    "http://news.example/(S(lit3py55t21z5v55vlm25s55))/politik/a.html",
    "http://user:secret@news.example/politik/a.html",
    "http://news.example/politik/a.html?utm_source=x&CFID=1&CFTOKEN=2#frag",
])
def test_session_ids_and_credentials_are_not_part_of_the_canonical_url(url):
    assert canonicalize_url(url) == "http://news.example/politik/a.html"
    assert url_fingerprint(url) == url_fingerprint("http://news.example/politik/a.html")
    assert url_fingerprint_bytes(url, fold_www=False) == bytes.fromhex(
        url_fingerprint("http://news.example/politik/a.html"))


def test_parameters_that_only_look_like_session_ids_stay():
    url = "http://news.example/a.html?side=1&sids=2&topic=session"
    assert canonicalize_url(url) == "http://news.example/a.html?side=1&sids=2&topic=session"
    assert canonicalize_url("http://news.example/a;page=2") == "http://news.example/a;page=2"


def test_credentials_are_split_off_and_redacted_from_text():
    assert split_credentials("https://a%40b:p%3Aw@h.example/x") == ("https://h.example/x", "a@b", "p:w")
    assert split_credentials("https://h.example/x") == ("https://h.example/x", None, None)
    assert redact_credentials("GET <http://ann:secret@h.example/a> and 'https://tok@x.example'") == \
        "GET <http://h.example/a> and 'https://x.example'"
    assert redact_credentials("mail anna@example.org") == "mail anna@example.org"


@pytest.mark.parametrize("text, expected", [
    ("www.zeit.de/index", True), ("127.0.0.1:8080/x", True), ("localhost", True),
    ("[::1]:80/", True), ("28", False), ("b.html", False), ("foo", False)])
def test_looks_like_host(text, expected):
    assert looks_like_host(text) is expected


@given(st.text(max_size=120))
def test_url_hygiene_never_raises_and_is_idempotent(text):
    for url in ("http://u:p@example.com/;jsessionid=" + text, "http://example.com/?sid=" + text):
        once = canonicalize_url(url)
        assert canonicalize_url(once) == once
        assert "u:p@" not in once
    assert isinstance(redact_credentials(text), str)
