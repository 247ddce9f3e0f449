"""Hostile cases of the destination policy and of redirect chains
(tests/hostile/cases_destination.py): refused before any connection, counted, logged."""

from __future__ import annotations

from tests.hostile.cases_destination import PARTNER_TARGET, PARTNER_TITLE


def test_nothing_ever_reached_the_trap_host(hostile):
    """127.0.0.9 listens and is not allowed: an entry there, redirects and a meta refresh to
    it, numeric spellings of it (refused as entries) and a name resolving to it are refused
    with no connection."""
    assert hostile.site.connections_to("trap") == []
    assert hostile.site.connections_to("other") == []


def test_entries_on_a_loopback_address_are_refused_in_every_spelling(hostile):
    # Refused by the destination policy: trap-entry, metadata.hostile.test (resolved), the
    # redirect and the meta refresh to it. The numeric spellings (2130706441, 0x7f.0.0.9,
    # 0177.0.0.011) do not even become requests: the seeds refuse bare-number hosts, with the
    # destination policy's own reading of them as the second line (tests/test_destination.py).
    assert hostile.stat("newscrawl/destination/loopback") == 4
    for host in ("127.0.0.9", "metadata.hostile.test"):
        assert hostile.log_lines(rf"WARNING: Refused http://{host}:\d+/.*127\.0\.0\.9\)? is a "
                                 r"loopback address")
    assert hostile.stat("newscrawl/seeds/skipped_numeric_host") == 3
    for host in ("2130706441", "0x7f.0.0.9", "0177.0.0.011"):
        assert hostile.log_lines(rf"'http://{host}:\d+/numeric-\w+/': the host is a bare number")
    assert not hostile.log_lines(r"Refused .*/robots.txt")


def test_redirect_and_meta_refresh_to_the_trap_are_refused(hostile):
    assert hostile.log_lines(r"Refused http://127.0.0.9:\d+/latest/meta-data/: 127.0.0.9 is a loop")
    assert hostile.log_lines(r"Refused http://127.0.0.9:\d+/latest/meta-data/iam: 127.0.0.9 is a")
    assert hostile.article("redirect-to-trap") is None


def test_redirect_to_another_site_is_counted_not_followed(hostile):
    assert hostile.stat("newscrawl/destination/cross_domain") == 1
    assert hostile.log_lines(r"INFO: Not following redirect from .*/cross-site-redirect/.* to "
                             r"http://127.0.0.30:")
    assert hostile.article("cross-site-redirect") is None


def test_redirect_to_an_entry_site_is_followed(hostile):
    doc = hostile.store.articles.find_one({"url": hostile.url(PARTNER_TARGET, "partner")})
    assert doc is not None and doc["title"] == PARTNER_TITLE


def test_redirect_and_refresh_chains_end_counted_and_logged(hostile):
    assert hostile.stat("newscrawl/redirect/max_hops") == 2
    assert hostile.log_lines(r"WARNING: Dropped http://127.0.0.1:\d+/redirect-chain/.* after 10 hops")
    assert hostile.log_lines(r"WARNING: Dropped http://127.0.0.1:\d+/refresh-chain/.* after 10 hops")
    assert len(hostile.site.requests_to("/redirect-chain/2024")) == 11


def test_idn_host_is_crawled_by_its_punycode_name(hostile):
    node = hostile.store.nodes.find_one({"url": {"$regex": r"^http://www\.xn--bcher-kva\.test:"}})
    assert node is not None and node["title"] == "Bücher"
