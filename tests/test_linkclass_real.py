"""Link classification of real pages, pinned by hand-checked tables.

Pipeline under test (defaults): ``root = lxml.html.fromstring(text)``;
``raw = extract_links(root, page_url)``; ``page = classify_page(page_url, raw)``.

The tables live in ``tests/linkclass_tables.py`` (shared with
``benchmarks/linkclass_quality.py``): for the sueddeutsche, heise, sina and qq home pages at least
45 rows ``(url, class, role, note)`` each, checked by hand against DESIGN.md §2 and the
``linkclass.py`` docstring, plus small supplements for the link forms those four pages lack
(protocol-relative links: sohu; frames: zeit, sueddeutsche /sport). Rows where today's
classifier is wrong are ``xfail(strict=True)`` (``KNOWN_WRONG``): fixing the classifier makes
them pass, and strictness then asks for the mark to be removed.

Pages are read in place from ``../shared/corpus``; the tests skip, naming the missing path, when
it is absent.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from urllib.parse import urlsplit

import pytest

import linkclass_tables as T
from newscrawl.algorithms.linkclass import CONTENT, DROPPED, NODE, LinkClass


@lru_cache(maxsize=None)
def _classified(name: str):
    """(PageClassification, ExtractionStats, {url: ClassifiedLink}) or the missing path."""
    try:
        page, stats = T.classify(name)
    except T.MissingCorpus as exc:
        return str(exc)
    return page, stats, {link.url: link for link in page.links}


def classified(name: str):
    result = _classified(name)
    if isinstance(result, str):
        pytest.skip(f"needs {result} (the shared corpus is not here)")
    return result


def _row_params():
    params = []
    for name, rows in T.TABLES.items():
        wrong = T.KNOWN_WRONG.get(name, {})
        for url, cls, role, note in rows:
            marks = ()
            if url in wrong:
                fix = wrong[url]
                marks = (pytest.mark.xfail(strict=True, reason=f"classifier fix {fix!r} "
                                                                "(linkclass_tables.FIXES)"),)
            params.append(pytest.param(name, url, cls, role, note, marks=marks,
                                       id=f"{name}:{url[:90]}"))
    return params


@pytest.mark.parametrize(("name", "url", "cls", "role", "note"), _row_params())
def test_hand_checked_row(name, url, cls, role, note):
    _page, _stats, by_url = classified(name)
    link = by_url.get(url)
    assert link is not None, f"{url} not among the page's links ({note})"
    assert (link.link_class.value, link.role) == (cls, role), note


# --- the tables themselves ------------------------------------------------------------------

def test_tables_are_well_formed():
    classes = {c.value for c in LinkClass}
    for name, rows in T.TABLES.items():
        urls = [row[0] for row in rows]
        assert len(urls) == len(set(urls)), f"{name}: duplicate rows"
        for url, cls, role, note in rows:
            assert cls in classes and role in (NODE, CONTENT, DROPPED), (name, url)
            assert urlsplit(url).scheme in ("http", "https") and "#" not in url, url
            assert note, url
            if cls == LinkClass.OUTWARD.value:
                assert role == DROPPED, url
        assert set(T.KNOWN_WRONG.get(name, {})) <= set(urls), f"{name}: KNOWN_WRONG not in table"
    for fixes in T.KNOWN_WRONG.values():
        assert set(fixes.values()) <= set(T.FIXES)


@pytest.mark.parametrize("name", T.HOME_PAGES)
def test_home_tables_cover_the_tricky_cases(name):
    rows = T.TABLES[name]
    assert len(rows) >= 45
    cls_counts = Counter(row[1] for row in rows)
    role_counts = Counter(row[2] for row in rows)
    for cls in ("crosswise", "outward"):
        assert cls_counts[cls] >= 5, (name, cls)
    assert cls_counts["horizontal"] + cls_counts["downward"] >= 5
    for role in (NODE, CONTENT, DROPPED):
        assert role_counts[role] >= 5, (name, role)
    assert any("?" in row[0] for row in rows), "a link told apart by its query"
    if name != "heise":  # heise's articles on other hosts are sponsored (business-services)
        assert any(T.host(row[0]) != urlsplit(T.PAGES[name].url).hostname
                   and row[1] == "crosswise" and row[2] == CONTENT for row in rows)


# --- whole-page sanity ----------------------------------------------------------------------

@pytest.mark.parametrize("name", T.HOME_PAGES)
def test_page_sanity(name):
    page, stats, by_url = classified(name)
    urls = list(by_url)
    assert len(urls) == len(page.links), "links are distinct canonical URLs"
    for url in urls:
        assert urlsplit(url).scheme in ("http", "https"), url
        assert "#" not in url, url
        assert not url.lower().startswith(("javascript:", "mailto:", "tel:", "data:"))
        assert "utm_" not in url, url
    counts = Counter(link.link_class.value for link in page.links)
    assert counts == Counter(page.counts)
    assert counts["outward"] > 0 and counts["crosswise"] > 0
    assert page.by_role(CONTENT) and page.by_role(NODE)
    assert all(link.role == DROPPED for link in page.links
               if link.link_class is LinkClass.OUTWARD)
    assert all(link.features["html_tag"] == (link.role == CONTENT) for link in page.links)
    entry_hosts = {T.host(e) for e in page.entries}
    node_hosts = {T.host(link.url) for link in page.links
                  if link.role == NODE and link.link_class is LinkClass.CROSSWISE}
    followed = entry_hosts | node_hosts
    assert T.EXPECTED_FOLLOWED_HOSTS[name] <= followed
    assert not T.NOT_FOLLOWED_HOSTS[name] & followed, "service hosts are not followed"
    linked = {T.host(link.url) for link in page.links}
    assert T.NOT_FOLLOWED_HOSTS[name] <= linked, "the service hosts are on the page"
    start_host = urlsplit(T.PAGES[name].url).hostname
    assert start_host not in entry_hosts, "no entry for the page's own host"
    for entry in page.entries:
        assert urlsplit(entry).path == "/" and not urlsplit(entry).query, entry


def test_non_links_are_counted_not_listed():
    # heise: mailto:newstipps@heise.de and '#top'; sina: 56 javascript: hrefs, a mailto:,
    # '#jump0'; qq: 48 javascript: hrefs, ten '#', and an <iframe src=""> (not a frame link).
    _page, stats, _ = classified("heise")
    assert stats.not_http >= 1 and stats.fragment_only >= 1
    _page, stats, _ = classified("sina")
    assert stats.not_http >= 57 and stats.fragment_only >= 1
    page, stats, by_url = classified("qq")
    assert stats.not_http >= 48 and stats.fragment_only >= 10
    assert not [link for link in page.links if link.tag == "frame"]
    assert T.PAGES["qq"].url not in by_url


def test_fragments_and_duplicates_merge():
    _page, _stats, by_url = classified("heise")
    # '…/download/search' and '…/download/search#?page=1&sort=…&wt_mc=…' are one link.
    assert sum(1 for url in by_url if url.startswith("https://www.heise.de/download/search")) == 1
    _page, _stats, by_url = classified("qq")
    assert sum(1 for url in by_url if url.startswith("http://ent.qq.com/a/20180204/010321")) == 1


@pytest.mark.parametrize("name", ["sueddeutsche", "heise", "sina", "qq"])
def test_one_crosswise_entry_per_host(name):
    # DESIGN.md §2: "one entry http://A.B.C/ per host". sina links news.sina.com.cn over http and
    # https, qq news.qq.com and v.qq.com: one entry each all the same.
    page, _stats, _ = classified(name)
    hosts = Counter(T.host(entry) for entry in page.entries)
    assert [h for h, n in hosts.items() if n > 1] == []


def test_registered_domains_of_chinese_portals():
    # .com.cn is a public suffix: every *.sina.com.cn host is crosswise, sina.com / sina.cn are not.
    page, _stats, _ = classified("sina")
    for link in page.links:
        host = T.host(link.url)
        if host.endswith(".sina.com.cn") and host != "www.sina.com.cn":
            assert link.link_class is LinkClass.CROSSWISE, link.url
        if host.endswith((".sina.com", ".sina.cn")) or host in ("sina.com", "sina.cn"):
            assert link.link_class is LinkClass.OUTWARD, link.url


def test_protocol_relative_links_take_the_page_scheme():
    # sohu's home page (http) writes 201 of its anchors as '//host/path'.
    import lxml.html

    from newscrawl.algorithms.urls import canonicalize_url

    page, _stats, by_url = classified("sohu")
    url, text = T.load_page("sohu")
    hrefs = [a.get("href").strip() for a in lxml.html.fromstring(text).iter("a")
             if (a.get("href") or "").strip().startswith("//")]
    assert len(hrefs) > 100
    for href in hrefs:
        assert canonicalize_url("http:" + href) in by_url, href
