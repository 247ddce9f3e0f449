"""RevisitSpiderMiddleware: fingerprints decide changed / unchanged; new, due and not-due links."""

from __future__ import annotations

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request

from extensions.crawlstate import CrawlStateExtension
from middlewares.revisit import RevisitSpiderMiddleware
from newscrawl import meta
from newscrawl.algorithms.changedetect import links_fingerprint, text_fingerprint
from newscrawl.algorithms.revisitplan import RevisitConfig, new_record, record_visit
from newscrawl.crawlstate import to_doc
from newscrawl.fingerprint import NewsRequestFingerprinter
from newscrawl.items import ArticleItem, NodeItem
from tests.conftest import component_crawler

HOME = "https://s.example/"
A1 = "https://s.example/politik/2024-10-01/kanzler-trifft-minister-1.html"
A2 = "https://s.example/politik/2024-10-02/opposition-kritisiert-plaene-2.html"
NOW = 1_730_000_000.0
CFG = RevisitConfig()
fp = NewsRequestFingerprinter().page_fp


def _setup(records=(), budget=None):
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": NOW, "NEWSCRAWL_BUDGET": budget or 0})
    state = crawler.get_extension(CrawlStateExtension).state
    state.load([to_doc(r) for r in records])
    return RevisitSpiderMiddleware.from_crawler(crawler), state, crawler.stats


def _visited(url, role, *, at, fingerprint=None, **kw):
    rec = new_record(fp(url), url, now=at, role=role, request={"entry_url": HOME, "depth": 1})
    return record_visit(rec, now=at, cfg=CFG, status=200, how="first", fingerprint=fingerprint, **kw)


def _response(url, request_meta):
    return HtmlResponse(url, body=b"<html><body>x</body></html>", request=Request(url, meta=request_meta))


def _out(mw, response, objects):
    return list(mw.process_spider_output(response, iter(objects)))


def test_unchanged_article_is_dropped_changed_one_marked():
    old = _visited(A1, "content", at=NOW - 86400 * 30, fingerprint=text_fingerprint("T", "alt"))
    mw, state, stats = _setup([old])
    request_meta = {meta.ROLE: "content", meta.REVISIT: state.revisit_meta(fp(A1), A1),
                    meta.REVISIT_HOW: "fingerprint"}
    same = ArticleItem(kind="article", fp=fp(A1), url=A1, role="content", title="T", text="alt")
    assert _out(mw, _response(A1, request_meta), [same]) == []
    assert stats.get_value("newscrawl/revisit/unchanged/fingerprint") == 1
    request_meta[meta.REVISIT_HOW] = "head"
    changed = ArticleItem(kind="article", fp=fp(A1), url=A1, role="content", title="T", text="neu")
    assert _out(mw, _response(A1, request_meta), [changed]) == [changed]
    assert state.changed_articles == {fp(A1): text_fingerprint("T", "alt")}
    assert [h["how"] for h in state.get(fp(A1))["history"]] == ["first", "fingerprint", "head"]
    # HEAD told the truth; both answers had no validator (the host is learned as such)
    assert state.host_policy("s.example").counts == {"true_change": 1, "no_validator": 2}
    assert state.host_policy("s.example").mode == "fingerprint"
    assert [h["validator"] for h in state.get(fp(A1))["history"][1:]] == ["fingerprint"] * 2


def test_channel_fingerprint_is_the_link_set_and_new_links_are_counted():
    old = _visited(HOME, "node", at=NOW - 3600, fingerprint=links_fingerprint([A1]))
    known = _visited(A1, "content", at=NOW - 3600)
    mw, state, _ = _setup([old, known])
    links = [{"target_url": u, "target_fp": fp(u), "role": "content"} for u in (A1, A2)]
    links.append({"target_url": "https://ads.example.net/x", "target_fp": "ad", "role": "dropped"})
    item = NodeItem(kind="node", fp=fp(HOME), url=HOME, role="node", links=links)
    request_meta = {meta.ROLE: "node", meta.REVISIT: state.revisit_meta(fp(HOME), HOME)}
    assert _out(mw, _response(HOME, request_meta), [item]) == [item]
    rec = state.get(fp(HOME))
    assert rec["history"][-1]["new_links"] == 1 and rec["listed"] == 2
    assert rec["fingerprint"] == links_fingerprint([A1, A2])  # the ad link is not part of it


def test_links_new_due_and_not_due():
    fresh = _visited(A1, "content", at=NOW - 60)  # visited a minute ago: not due
    mw, state, stats = _setup([fresh])
    linked = [Request(u, meta={meta.ROLE: "content", meta.WEIGHT: 0.5}) for u in (A1, A2, A2)]
    out = _out(mw, _response(HOME, {}), linked)
    assert [r.url for r in out] == [A2]
    assert out[0].meta[meta.REVISIT] == {"fp": fp(A2), "url": A2, "known": False}
    assert state.get(fp(A2))["last_visit"] is None  # known now, to visit
    assert stats.get_value("newscrawl/revisit/not_due") == 1
    assert stats.get_value("newscrawl/revisit/new") == 1
    assert stats.get_value("newscrawl/revisit/already_scheduled") == 1


def test_a_new_record_holds_one_weight_and_the_context():
    mw, state, _ = _setup()
    context = {meta.ENTRY_URL: HOME, meta.START_URL: HOME, meta.DEPTH: 1, meta.LINK_CLASS: "downward",
               meta.FEATURES: {"image": 1}, meta.PARENT_WEIGHT: 1.0, meta.WEIGHT: 0.5, meta.REFERER: HOME}
    _out(mw, _response(HOME, {}), [Request(A2, meta={**context, meta.ROLE: "content"})])
    record = state.get(fp(A2))
    assert record["weight"] == 0.5 and "weight" not in record["request"]
    assert record["request"] == {"entry_url": HOME, "start_url": HOME, "depth": 1,
                                 "link_class": "downward", "features": {"image": 1},
                                 "parent_weight": 1.0, "referer": HOME}


def test_budget_orders_by_expected_new_articles():
    mw, state, _ = _setup(budget=10)
    out = _out(mw, _response(HOME, {}), [
        Request(A1, meta={meta.ROLE: "content", meta.WEIGHT: 1.0}),
        Request("https://s.example/sport/", meta={meta.ROLE: "node"}),
    ])
    assert [r.priority for r in out] == [1900, 1000]


def test_disabled_or_without_the_extension():
    with pytest.raises(NotConfigured):
        RevisitSpiderMiddleware.from_crawler(component_crawler({"NEWSCRAWL_REVISIT_ENABLED": False}))
    with pytest.raises(NotConfigured, match="CrawlStateExtension"):
        RevisitSpiderMiddleware.from_crawler(component_crawler(extensions=()))


def _verify_response(url, request_meta, **headers):
    return HtmlResponse(url, body=b"<html><body>x</body></html>", headers=headers,
                        request=Request(url, meta=request_meta))


@pytest.mark.parametrize("text, etag, event, mode", [
    ("alt", '"v1"', "verify_match", "head"),  # the text confirms "unchanged"
    ("neu", '"v1"', "verify_mismatch", "fingerprint"),  # the validators lied
    ("neu", '"v2"', None, "head"),  # changed after the check: nobody lied
])
def test_a_verification_get_confirms_or_distrusts_the_validators(text, etag, event, mode):
    old = _visited(A1, "content", at=NOW - 86400 * 30, fingerprint=text_fingerprint("T", "alt"),
                   validators={"etag": '"v1"', "last_modified": None, "content_length": 10})
    mw, state, stats = _setup([old])
    state.learn("s.example", "head_ok")
    request_meta = {meta.ROLE: "content", meta.REVISIT: state.revisit_meta(fp(A1), A1),
                    meta.REVISIT_HOW: "head", meta.VERIFY: "etag"}
    item = ArticleItem(kind="article", fp=fp(A1), url=A1, role="content", title="T", text=text)
    out = _out(mw, _verify_response(A1, request_meta, ETag=etag), [item])
    assert out == ([] if text == "alt" else [item])  # an unchanged page is not stored again
    assert state.host_policy("s.example").mode == mode
    for name in ("verify_match", "verify_mismatch"):
        assert stats.get_value(f"newscrawl/headprobe/{name}") == (1 if name == event else None)
    assert stats.get_value("newscrawl/revisit/false_change/head") is None
    assert stats.get_value(f"newscrawl/revisit/{'unchanged' if text == 'alt' else 'changed'}/verified") == 1
    last = state.get(fp(A1))["history"][-1]
    assert (last["how"], last["validator"], last["changed"]) == ("head", "fingerprint", text != "alt")


def test_a_host_caught_lying_is_logged_once_at_warning(caplog):
    lm = "Mon, 30 Sep 2024 08:00:00 GMT"
    olds = [_visited(url, "content", at=NOW - 86400 * 30, fingerprint=text_fingerprint("T", "alt"),
                     validators={"etag": '"v1"', "last_modified": lm, "content_length": 10})
            for url in (A1, A2)]
    mw, state, stats = _setup(olds)
    state.learn("s.example", "head_ok")
    caplog.set_level("INFO", logger="middlewares.revisit")
    for url in (A1, A2):  # both verifications were in flight when the first lie was caught
        request_meta = {meta.ROLE: "content", meta.REVISIT: state.revisit_meta(fp(url), url),
                        meta.REVISIT_HOW: "conditional", meta.VERIFY: "etag"}
        item = ArticleItem(kind="article", fp=fp(url), url=url, role="content", title="T",
                           text="neu")
        # the full answer keeps the old ETag and Last-Modified although its body changed
        assert _out(mw, _verify_response(url, request_meta, ETag='"v1"',
                                         **{"Last-Modified": lm}), [item]) == [item]
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "s.example: validators say unchanged but the body changed" in warnings[0].getMessage()
    assert stats.get_value("newscrawl/headprobe/verify_mismatch") == 2
    assert stats.get_value("newscrawl/headprobe/caught_lying") == 1
    assert state.host_policy("s.example").mode == "fingerprint"


def test_http_cache_is_refused_at_start():
    from newscrawl.settingscheck import SettingsError, check_combinations

    with pytest.raises(SettingsError, match="HTTPCACHE_ENABLED=True cannot be combined"):
        component_crawler({"HTTPCACHE_ENABLED": True})
    with pytest.raises(SettingsError, match="HTTPCACHE_ENABLED=True cannot be combined"):
        check_combinations({"HTTPCACHE_ENABLED": "1", "NEWSCRAWL_REVISIT_ENABLED": True})
    check_combinations({"HTTPCACHE_ENABLED": True, "NEWSCRAWL_REVISIT_ENABLED": False})


def test_an_entry_pages_yield_is_the_channel_links_new_since_its_last_visit():
    """Home pages are scheduled by the channels they add, not by the articles they tease."""
    politik, sport, kultur = (HOME + p for p in ("politik/", "sport/", "kultur/"))
    mw, state, _ = _setup()
    first = NodeItem(kind="node", fp=fp(HOME), url=HOME, role="entry", links=[
        {"target_url": u, "target_fp": fp(u), "role": "node"} for u in (politik, sport)] + [
        {"target_url": A1, "target_fp": fp(A1), "role": "content"}])
    request_meta = {meta.ROLE: "entry", meta.REVISIT: state.revisit_meta(fp(HOME), HOME)}
    _out(mw, _response(HOME, request_meta), [first])
    rec = state.get(fp(HOME))
    assert rec["node_links"] == sorted([fp(politik), fp(sport)]) and rec["listed"] == 2
    # next visit: one new channel and a new article; the yield is the channel
    second = NodeItem(kind="node", fp=fp(HOME), url=HOME, role="entry", links=[
        {"target_url": u, "target_fp": fp(u), "role": "node"} for u in (politik, sport, kultur)] + [
        {"target_url": u, "target_fp": fp(u), "role": "content"} for u in (A1, A2)])
    state.clock = type(state.clock)(NOW + 3600)
    request_meta = {meta.ROLE: "entry", meta.REVISIT: state.revisit_meta(fp(HOME), HOME)}
    _out(mw, _response(HOME, request_meta), [second])
    rec = state.get(fp(HOME))
    assert rec["history"][-1]["new_links"] == 1 and rec["listed"] == 3
    assert rec["estimator"] == "channel_scheduler" and rec["sched"]["visits"] == 2
