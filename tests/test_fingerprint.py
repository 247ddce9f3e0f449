"""Pure parts of the distributed crawl: fingerprints, aliases, buckets, URL cache, politeness."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from newscrawl.algorithms.fingerprint import (
    alias_url,
    bucket_contains,
    canonical_host,
    split_fingerprint,
    url_fingerprint_bytes,
)
from newscrawl.algorithms.politeness import next_delay, response_time_estimate
from newscrawl.algorithms.urlcache import LRUSet
from newscrawl.algorithms.urls import url_fingerprint
from newscrawl.distributed.addon import is_distributed


def test_get_fingerprint_is_mercators_8_byte_url_fingerprint():
    url = "http://example.com/a/b.html?y=2&x=1&utm_source=feed#top"
    assert url_fingerprint_bytes(url, fold_www=False) == bytes.fromhex(url_fingerprint(url))
    assert len(url_fingerprint_bytes(url)) == 8


@pytest.mark.parametrize("a, b", [
    ("http://www.example.com/a", "http://example.com/a"),
    ("http://EXAMPLE.com:80/a", "http://example.com/a"),
    ("http://example.com./a", "http://example.com/a"),
    ("http://127.0.0.7/a", "http://example.com/a"),
])
def test_aliases_share_one_fingerprint(a, b):
    aliases = {"127.0.0.7": "www.example.com"}
    assert url_fingerprint_bytes(a, aliases=aliases) == url_fingerprint_bytes(b, aliases=aliases)


@pytest.mark.parametrize("a, b", [
    ("http://example.com/a", "https://example.com/a"),
    ("http://example.com:8080/a", "http://example.com/a"),
    ("http://news.example.com/a", "http://example.com/a"),
])
def test_different_pages_differ(a, b):
    assert url_fingerprint_bytes(a) != url_fingerprint_bytes(b)


def test_method_and_body_count():
    url = "http://example.com/a"
    get = url_fingerprint_bytes(url)
    assert url_fingerprint_bytes(url, method="HEAD") != get
    assert url_fingerprint_bytes(url, method="POST", body=b"x") != url_fingerprint_bytes(
        url, method="POST", body=b"y")


def test_canonical_host():
    assert canonical_host("WWW.Sina.com.cn.") == "sina.com.cn"
    assert canonical_host("www.com") == "www.com"
    assert canonical_host("www.example.com", fold_www=False) == "www.example.com"
    assert canonical_host("mirror.example.net", aliases={"mirror.example.net": "Example.NET"}) \
        == "example.net"
    # credentials are no part of the canonical URL (newscrawl.algorithms.urls.canonicalize_url)
    assert alias_url("http://user@www.example.com:8080/x") == "http://example.com:8080/x"


@given(st.text(max_size=80))
def test_fingerprints_never_raise(text):
    assert len(url_fingerprint_bytes(text)) == 8
    assert len(url_fingerprint_bytes("http://" + text)) == 8


def test_split_and_scan_buckets():
    fp = bytes(range(8))
    assert split_fingerprint(fp, 1) == ("00", bytes(range(1, 8)))
    assert split_fingerprint(fp, 3) == ("000102", bytes(range(3, 8)))
    with pytest.raises(ValueError):
        split_fingerprint(fp, 0)
    with pytest.raises(ValueError):
        split_fingerprint(b"short", 1)
    packed = b"AAAABBBBCCCC"
    assert bucket_contains(packed, b"BBBB")
    assert not bucket_contains(packed, b"ABBB")  # straddles two records
    with pytest.raises(ValueError):
        bucket_contains(packed, b"")


def test_lru_set_forgets_the_least_recently_used():
    cache = LRUSet(2)
    cache.add("a")
    cache.add("b")
    assert "a" in cache  # refreshes a
    cache.add("c")  # evicts b
    assert "b" not in cache and "a" in cache and "c" in cache
    assert (cache.hits, cache.misses) == (3, 1)
    off = LRUSet(0)
    off.add("a")
    assert "a" not in off and len(off) == 0
    with pytest.raises(ValueError):
        LRUSet(-1)


def test_mercator_pause():
    assert next_delay(0.2) == pytest.approx(2.0)
    assert next_delay(0.2, factor=0) == 0
    assert next_delay(30, max_delay=60) == 60
    assert next_delay(0.001, min_delay=0.5) == 0.5
    assert next_delay(0.1, crawl_delay=120, max_delay=60) == 120  # Crawl-delay is never capped
    assert next_delay(float("nan")) == 0
    with pytest.raises(ValueError):
        next_delay(1, factor=-1)
    with pytest.raises(ValueError):
        next_delay(1, min_delay=2, max_delay=1)
    assert response_time_estimate([0.03, 0.004, float("inf"), -1]) == 0.004
    assert response_time_estimate([]) == 0.0


class _Settings(dict):
    def getbool(self, name):
        value = self.get(name)
        if isinstance(value, str):
            if value.lower() in ("1", "true"):
                return True
            if value.lower() in ("0", "false"):
                return False
            raise ValueError(value)
        return bool(value)


@pytest.mark.parametrize("settings, environ, expected", [
    ({}, {}, False),
    ({"NEWSCRAWL_DISTRIBUTED": "auto"}, {"REDIS_URL": "redis://r:6379/0"}, True),
    ({"REDIS_URL": "redis://r:6379/0"}, {}, True),
    ({"NEWSCRAWL_DISTRIBUTED": "1"}, {}, True),
    ({"NEWSCRAWL_DISTRIBUTED": "0", "REDIS_URL": "redis://r"}, {"REDIS_URL": "redis://r"}, False),
])
def test_distributed_switch(settings, environ, expected):
    assert is_distributed(_Settings(settings), environ) is expected


def test_distributed_switch_rejects_nonsense():
    with pytest.raises(ValueError):
        is_distributed(_Settings({"NEWSCRAWL_DISTRIBUTED": "sometimes"}), {})
