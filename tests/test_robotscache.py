"""newscrawl.algorithms.robotscache: how long a robots.txt answer may be reused (RFC 9309 §2.4,
RFC 9111 §5.2.2.1 / §5.3) and the cached entry."""

from __future__ import annotations

import pytest

from newscrawl.algorithms.robotscache import DAY, MAX_BODY, entry, freshness_lifetime, is_fresh

DATE = "Thu, 01 Jan 2026 00:00:00 GMT"


@pytest.mark.parametrize(("cache_control", "expires", "date", "want"), [
    ("max-age=600", None, None, 600.0),
    ("public, max-age=\"600\", must-revalidate", None, None, 600.0),
    ("s-maxage=60, max-age=7200", None, None, 7200.0),
    ("max-age=99999999", None, None, DAY),  # never beyond 24 h (RFC 9309 §2.4)
    ("no-store", None, None, 0.0),
    ("private, no-cache", "Thu, 01 Jan 2026 02:00:00 GMT", DATE, 0.0),
    ("max-age=600", "Thu, 01 Jan 2026 02:00:00 GMT", DATE, 600.0),  # max-age wins over Expires
    (None, "Thu, 01 Jan 2026 02:00:00 GMT", DATE, 7200.0),
    (None, "Wed, 31 Dec 2025 00:00:00 GMT", DATE, 0.0),  # expired already
    (None, "0", DATE, 0.0),  # an invalid Expires means expired (RFC 9111 §5.3)
    (None, "Thu, 01 Jan 2026 02:00:00 GMT", None, 0.0),  # no Date to measure it from
    ("public", None, None, DAY),  # nothing said: the 24 h default
    (None, None, None, DAY),
])
def test_freshness_lifetime(cache_control, expires, date, want):
    assert freshness_lifetime(cache_control, expires, date) == want


def test_the_cap_is_configurable():
    assert freshness_lifetime(None, None, None, cap=3600) == 3600
    assert freshness_lifetime("max-age=7200", None, None, cap=3600) == 3600
    assert freshness_lifetime(None, None, None, cap=0) == 0


def test_entries_and_freshness():
    e = entry("https://s.example", 200, b"User-agent: *\nDisallow: /private\n", now=1000.0,
              lifetime=600.0)
    assert e == {"origin": "https://s.example", "status": 200,
                 "body": "User-agent: *\nDisallow: /private\n", "fetched": 1000.0,
                 "expires": 1600.0}
    assert is_fresh(e, "https://s.example", 1000.0) and is_fresh(e, "https://s.example", 1599.0)
    assert not is_fresh(e, "https://s.example", 1600.0)  # expired
    assert not is_fresh(e, "https://s.example", 999.0)  # fetched "in the future": clock set back
    assert not is_fresh(e, "http://s.example", 1200.0)  # another origin
    assert is_fresh(entry("https://s.example", 404, b"", now=0, lifetime=10), "https://s.example", 5)
    assert not is_fresh(entry("https://s.example", 503, b"", now=0, lifetime=10), "https://s.example", 5)
    assert len(entry("https://s.example", 200, b"x" * (MAX_BODY + 10), now=0, lifetime=1)["body"]) == MAX_BODY
    assert entry("https://s.example", 200, b"\xff\xfeDisallow", now=0, lifetime=1)["body"].endswith("Disallow")
    for junk in (None, "robots", {"origin": "https://s.example"},
                 {**e, "status": "200"}, {**e, "expires": "tomorrow"}, {**e, "body": b"bytes"}):
        assert not is_fresh(junk, "https://s.example", 1200.0)
