"""HeadProbeMiddleware as a Scrapy component; the HEAD side request is answered by a mocked
``engine.download_async`` (the habit of Scrapy's robots.txt tests)."""

from __future__ import annotations

from unittest.mock import AsyncMock, Mock

import pytest
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Request, Response
from twisted.internet.defer import Deferred

from extensions.crawlstate import CrawlStateExtension
from middlewares.headprobe import HeadProbeMiddleware
from newscrawl import meta
from tests.conftest import component_crawler

URL = "https://news.example/politik/2024-10-01/artikel-1.html"
LM = "Mon, 30 Sep 2024 08:00:00 GMT"
STORED = {"etag": '"v1"', "last_modified": LM, "content_length": 500}


def _crawler(settings=None):
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": 1_700_000_000.0, **(settings or {})})
    crawler.engine = Mock()
    return crawler


def _state(crawler):
    return crawler.get_extension(CrawlStateExtension).state


def _request(validators=STORED, known=True):
    return Request(URL, meta={meta.ROLE: "content",
                              meta.REVISIT: {"fp": "f1", "url": URL, "known": known,
                                             "validators": validators, "fingerprint": "x"}})


def _head_answer(status=200, **headers):
    return Response(URL, status=status, headers=headers)


def _run(coro):
    """Run a middleware coroutine to its end (it must not wait on anything but our mocks)."""
    d = Deferred.fromCoroutine(coro)
    results = []
    d.addBoth(results.append)
    assert results, "the coroutine is still waiting"
    if isinstance(results[0], Exception) or hasattr(results[0], "raiseException"):
        results[0].raiseException()
    return results[0]


def _stat(crawler, key):
    return crawler.stats.get_value(f"newscrawl/headprobe/{key}", 0)


def test_unchanged_head_saves_the_get():
    crawler = _crawler(NEVER)  # no verification draw
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(
        ETag='"v1"', **{"Last-Modified": LM, "Content-Length": "500"}))
    mw = HeadProbeMiddleware.from_crawler(crawler)
    with pytest.raises(IgnoreRequest):
        _run(mw.process_request(_request()))
    probe = crawler.engine.download_async.call_args.args[0]
    assert probe.method == "HEAD" and probe.meta[meta.PROBE] and probe.dont_filter
    assert (_stat(crawler, "head"), _stat(crawler, "skipped")) == (1, 1)
    record = _state(crawler).get("f1")
    assert record["history"][-1]["how"] == "head" and record["history"][-1]["changed"] is False
    assert _state(crawler).host_policy("news.example").learned


def test_changed_head_lets_the_get_go_marked():
    crawler = _crawler()
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(
        ETag='"v2"', **{"Last-Modified": LM, "Content-Length": "510"}))
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request()
    assert _run(mw.process_request(request)) is None
    assert request.meta[meta.REVISIT_HOW] == "head" and request.meta[meta.REVISIT_HEAD]["etag"] == '"v2"'
    assert _stat(crawler, "get_after_head") == 1


@pytest.mark.parametrize("answer, problem", [
    (_head_answer(405), "refused"),
    (_head_answer(200, ETag='"r"', **{"Content-Length": "0"}), "zero_length"),
    (_head_answer(200), "no_validators"),
])
def test_untrustworthy_head_switches_the_host_to_conditional_gets(answer, problem):
    crawler = _crawler()
    crawler.engine.download_async = AsyncMock(return_value=answer)
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request()
    assert _run(mw.process_request(request)) is None
    assert request.meta[meta.REVISIT_HOW] == "conditional"
    assert request.headers[b"If-None-Match"] == b'"v1"' and request.headers[b"If-Modified-Since"] == LM.encode()
    assert _stat(crawler, f"head_{problem}") == 1 and _stat(crawler, "host/conditional") == 1
    # the next page of the host goes straight to a conditional GET
    second = _request()
    assert _run(mw.process_request(second)) is None and second.meta[meta.REVISIT_HOW] == "conditional"
    assert crawler.engine.download_async.call_count == 1


def test_one_probe_per_unknown_host_others_wait_for_its_answer(monkeypatch):
    # No reactor here: await the waiters' Deferreds directly (a crawl converts them to futures).
    monkeypatch.setattr("middlewares.headprobe.maybe_deferred_to_future", lambda d: d)
    crawler = _crawler()
    pending: Deferred = Deferred()
    crawler.engine.download_async = Mock(return_value=pending)
    mw = HeadProbeMiddleware.from_crawler(crawler)
    first, second = _request(), _request()
    d1 = Deferred.fromCoroutine(mw.process_request(first))
    d2 = Deferred.fromCoroutine(mw.process_request(second))
    assert crawler.engine.download_async.call_count == 1 and not d1.called and not d2.called
    pending.callback(_head_answer(405))
    assert d1.called and d2.called
    assert first.meta[meta.REVISIT_HOW] == second.meta[meta.REVISIT_HOW] == "conditional"
    assert crawler.engine.download_async.call_count == 1


def test_pages_without_stored_validators_and_new_pages_skip_the_head():
    crawler = _crawler()
    crawler.engine.download_async = AsyncMock()
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request(validators={"etag": None, "last_modified": None, "content_length": None})
    assert _run(mw.process_request(request)) is None and request.meta[meta.REVISIT_HOW] == "fingerprint"
    new = _request(known=False)
    assert _run(mw.process_request(new)) is None and meta.REVISIT_HOW not in new.meta
    assert crawler.engine.download_async.call_count == 0


def test_head_404_means_gone_no_get():
    crawler = _crawler()
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(404))
    mw = HeadProbeMiddleware.from_crawler(crawler)
    with pytest.raises(IgnoreRequest):
        _run(mw.process_request(_request()))
    assert _state(crawler).get("f1")["misses"] == 1 and _stat(crawler, "gone") == 1


def test_304_is_unchanged_and_errors_are_misses():
    crawler = _crawler(NEVER)  # no verification draw
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request()
    request.meta[meta.REVISIT_HOW] = "conditional"
    with pytest.raises(IgnoreRequest):
        mw.process_response(request, Response(URL, status=304))
    state = _state(crawler)
    assert state.get("f1")["history"][-1]["status"] == 304 and _stat(crawler, "not_modified") == 1
    ok = HtmlResponse(URL, status=200, body=b"<html></html>")
    assert mw.process_response(_request(), ok) is ok
    mw.process_response(_request(), Response(URL, status=500))
    mw.process_exception(_request(), TimeoutError())
    mw.process_exception(_request(), IgnoreRequest())  # robots.txt / budget: not a miss
    assert state.get("f1")["misses"] == 2


def test_disabled():
    with pytest.raises(NotConfigured):
        HeadProbeMiddleware.from_crawler(_crawler({"NEWSCRAWL_HEADPROBE_ENABLED": False}))
    with pytest.raises(NotConfigured):
        HeadProbeMiddleware.from_crawler(_crawler({"NEWSCRAWL_REVISIT_ENABLED": False}))
    with pytest.raises(NotConfigured, match="CrawlStateExtension"):
        HeadProbeMiddleware.from_crawler(component_crawler(extensions=()))


# --- the validator model and trust, but verify --------------------------------------------

ALWAYS = {"NEWSCRAWL_HEADPROBE_VERIFY_START": 1.0, "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": 1.0}
NEVER = {"NEWSCRAWL_HEADPROBE_VERIFY_START": 0.0, "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": 0.0}


def test_a_stored_content_length_alone_is_no_validator():
    crawler = _crawler()
    crawler.engine.download_async = AsyncMock()
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request(validators={"etag": None, "last_modified": None, "content_length": 500})
    assert _run(mw.process_request(request)) is None
    assert request.meta[meta.REVISIT_HOW] == "fingerprint" and b"If-Modified-Since" not in request.headers
    assert crawler.engine.download_async.call_count == 0  # no HEAD: it could only prove "changed"


def test_a_head_answering_only_content_length_cannot_say_unchanged():
    crawler = _crawler(NEVER)
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(**{"Content-Length": "500"}))
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request()
    assert _run(mw.process_request(request)) is None  # fetched, never skipped
    assert _stat(crawler, "head_no_validators") == 1 and _stat(crawler, "skipped") == 0


def test_an_epoch_last_modified_stored_by_older_code_is_not_echoed():
    crawler = _crawler(NEVER)
    state = _state(crawler)
    state.learn("news.example", "head_refused")  # a conditional-GET host
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request(validators={"etag": None, "last_modified": "Thu, 01 Jan 1970 00:00:00 GMT",
                                   "content_length": 500})
    assert _run(mw.process_request(request)) is None
    assert request.meta[meta.REVISIT_HOW] == "fingerprint" and b"If-Modified-Since" not in request.headers


def test_a_sampled_unchanged_head_gets_the_full_get_anyway():
    crawler = _crawler(ALWAYS)
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(
        ETag='W/"v1"', **{"Content-Length": "500"}))
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request()
    assert _run(mw.process_request(request)) is None  # no IgnoreRequest: the GET goes on
    assert request.meta[meta.VERIFY] == "etag" and request.meta[meta.REVISIT_HOW] == "head"
    assert (_stat(crawler, "verify"), _stat(crawler, "skipped"), _stat(crawler, "get_after_head")) == (1, 0, 0)
    assert _state(crawler).get("f1") is None  # the GET records the visit


def test_an_unsampled_unchanged_head_records_the_deciding_validator():
    crawler = _crawler(NEVER)
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(
        **{"Last-Modified": LM, "Content-Length": "500", "Date": "Tue, 01 Oct 2024 00:00:00 GMT"}))
    mw = HeadProbeMiddleware.from_crawler(crawler)
    with pytest.raises(IgnoreRequest):
        _run(mw.process_request(_request()))
    entry = _state(crawler).get("f1")["history"][-1]
    assert (entry["how"], entry["validator"], entry["changed"]) == ("head", "last-modified", False)
    assert _stat(crawler, "verify") == 0


def test_a_sampled_304_is_requested_again_without_conditions():
    crawler = _crawler(ALWAYS)
    mw = HeadProbeMiddleware.from_crawler(crawler)
    request = _request()
    request.meta[meta.REVISIT_HOW] = "conditional"
    request.headers[b"If-None-Match"] = b'"v1"'
    request.headers[b"If-Modified-Since"] = LM.encode()
    again = mw.process_response(request, Response(URL, status=304))
    assert isinstance(again, Request) and again.dont_filter and again.method == "GET"
    assert b"If-None-Match" not in again.headers and b"If-Modified-Since" not in again.headers
    assert again.meta[meta.VERIFY] == "etag" and again.meta[meta.REVISIT_HOW] == "conditional"
    assert _stat(crawler, "not_modified") == _stat(crawler, "verify") == 1
    assert crawler.stats.get_value("newscrawl/revisit/unchanged/conditional") is None
    assert _run(mw.process_request(again)) is None  # passes the probe untouched
    assert b"If-None-Match" not in again.headers


# --- validators earn trust (issue 20) ------------------------------------------------------

def _page_request(n):
    url = f"https://news.example/politik/2024-10-01/artikel-{n}.html"
    return Request(url, meta={meta.ROLE: "content",
                              meta.REVISIT: {"fp": f"f{n}", "url": url, "known": True, "visits": 2,
                                             "validators": STORED, "fingerprint": "x"}})


def test_an_unproven_hosts_first_three_unchanged_answers_are_all_verified():
    crawler = _crawler()  # the defaults: NEWSCRAWL_HEADPROBE_VERIFY_TRUST_AFTER = 3
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(
        ETag='"v1"', **{"Last-Modified": LM, "Content-Length": "500"}))
    mw = HeadProbeMiddleware.from_crawler(crawler)
    requests = [_page_request(n) for n in range(3)]
    for request in requests:  # unchanged HEADs, the verification GETs not answered yet
        assert _run(mw.process_request(request)) is None
    assert all(r.meta[meta.VERIFY] == "etag" for r in requests)
    assert (_stat(crawler, "verify"), _stat(crawler, "skipped")) == (3, 0)
    # once three verifications confirmed "unchanged" the host is trusted: sampled rarely
    state = _state(crawler)
    for _ in range(3):
        state.learn("news.example", "verify_match")
    later = [_page_request(n) for n in range(3, 40)]
    verified = 0
    for request in later:
        try:
            _run(mw.process_request(request))
            verified += 1
        except IgnoreRequest:
            pass
    assert verified < len(later) // 2 and _stat(crawler, "skipped") == len(later) - verified


def test_a_verification_get_is_paid_from_the_budget_and_skipped_without_one():
    crawler = _crawler(ALWAYS)
    crawler.engine.download_async = AsyncMock(return_value=_head_answer(
        ETag='"v1"', **{"Last-Modified": LM, "Content-Length": "500"}))
    state = _state(crawler)
    state.budget, state.spent = 2, 0
    mw = HeadProbeMiddleware.from_crawler(crawler)
    assert _run(mw.process_request(_page_request(1))) is None  # verified: one unit spent
    assert state.spent == 1 and _stat(crawler, "verify") == 1
    state.spent = 2  # the budget is spent: the next "unchanged" is taken as it is
    with pytest.raises(IgnoreRequest):
        _run(mw.process_request(_page_request(2)))
    assert state.spent == 2 and _stat(crawler, "verify_no_budget") == 1
    assert mw.verify.pending("news.example", state.host_policy("news.example")) == 1
    # a 304 picked for verification pays too; without a unit it is the 304's "unchanged"
    request = _page_request(3)
    request.meta[meta.REVISIT_HOW] = "conditional"
    with pytest.raises(IgnoreRequest):
        mw.process_response(request, Response(request.url, status=304))
    assert _stat(crawler, "verify_no_budget") == 2
    state.budget = 10
    again = mw.process_response(_cond(4), Response(_cond(4).url, status=304))
    assert isinstance(again, Request) and again.meta[meta.VERIFY] and state.spent == 3


def _cond(n):
    request = _page_request(n)
    request.meta[meta.REVISIT_HOW] = "conditional"
    return request
