"""Component tests of the destination middleware and the counted redirect middlewares."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Response
from scrapy.exceptions import CannotResolveHostError

import middlewares.destination as destination
from middlewares.destination import DestinationMiddleware
from middlewares.redirect import CountedMetaRefreshMiddleware, CountedRedirectMiddleware
from tests.conftest import component_crawler


def _middleware(allowed: str = "127.0.0.1", **settings):
    crawler = component_crawler({"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": allowed, **settings},
                                extensions=())
    return DestinationMiddleware.from_crawler(crawler), crawler.stats


def _run(middleware, request):
    return asyncio.run(middleware.process_request(request))


def test_switched_off_raises_not_configured():
    with pytest.raises(NotConfigured):
        _middleware(NEWSCRAWL_DESTINATION_ENABLED=False)


@pytest.mark.parametrize("url, reason", [
    ("http://127.0.0.9:8080/", "loopback"), ("http://2130706441/", "loopback"),
    ("http://0x7f.0.0.9/x", "loopback"), ("http://167772161/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link_local"), ("http://[::1]:81/", "loopback"),
    ("http://localhost:8000/", "loopback"), ("http://[::ffff:10.0.0.1]/", "private"),
])
def test_literal_private_hosts_are_refused_counted_and_logged(url, reason, caplog):
    middleware, stats = _middleware()
    with pytest.raises(IgnoreRequest):
        _run(middleware, Request(url))
    assert stats.get_value(f"newscrawl/destination/{reason}") == 1
    assert [r for r in caplog.records if r.levelname == "WARNING" and url in r.getMessage()]


def test_allowed_literal_passes_without_resolving(monkeypatch):
    async def no_resolution(host):
        raise AssertionError("an IP literal needs no resolution")
    monkeypatch.setattr(destination, "resolve", no_resolution)
    middleware, stats = _middleware()
    assert _run(middleware, Request("http://127.0.0.1:8080/")) is None
    assert _run(middleware, Request("http://0x7f.1:8080/")) is None  # the same address
    assert _run(middleware, Request("http://93.184.216.34/")) is None


def test_names_are_checked_after_resolution(monkeypatch):
    answers = {"metadata.test": ["169.254.169.254"], "mixed.test": ["93.184.216.34", "10.0.0.1"],
               "public.test": ["93.184.216.34"], "gone.test": []}
    asked = []

    async def fake(host):
        asked.append(host)
        return answers[host]
    monkeypatch.setattr(destination, "resolve", fake)
    middleware, stats = _middleware()
    with pytest.raises(IgnoreRequest):
        _run(middleware, Request("http://metadata.test/"))
    with pytest.raises(IgnoreRequest):
        _run(middleware, Request("http://mixed.test/"))
    assert _run(middleware, Request("http://public.test/")) is None
    with pytest.raises(CannotResolveHostError):  # as the download would fail (retried by Scrapy)
        _run(middleware, Request("http://gone.test/"))
    assert stats.get_value("newscrawl/destination/link_local") == 1
    assert stats.get_value("newscrawl/destination/private") == 1
    assert asked == ["metadata.test", "mixed.test", "public.test", "gone.test"]


def test_with_a_proxy_only_the_literal_host_is_checked(monkeypatch):
    async def no_resolution(host):
        raise AssertionError("the proxy resolves names")
    monkeypatch.setattr(destination, "resolve", no_resolution)
    middleware, _ = _middleware(allowed="")
    proxied = {"proxy": "http://127.0.0.1:8091"}  # the proxy itself is on loopback: fine
    assert _run(middleware, Request("https://www.heise.de/", meta=proxied)) is None
    with pytest.raises(IgnoreRequest):
        _run(middleware, Request("http://10.0.0.1/", meta=proxied))
    with pytest.raises(IgnoreRequest):
        _run(middleware, Request("http://localhost/", meta=proxied))


def test_robots_txt_side_requests_are_refused_silently(caplog):
    middleware, stats = _middleware()
    with pytest.raises(IgnoreRequest):
        _run(middleware, Request("http://10.0.0.1/robots.txt", meta={"dont_obey_robotstxt": True}))
    assert stats.get_value("newscrawl/destination/private") is None and not caplog.records


def _redirect_crawler(entries=("http://www.zeit.de/",), **settings):
    crawler = component_crawler({"REDIRECT_MAX_TIMES": 3, **settings}, extensions=())
    crawler.spider = SimpleNamespace(entry_urls=list(entries))
    return crawler


def test_redirect_to_another_site_is_counted_and_not_followed(caplog):
    caplog.set_level("INFO")
    crawler = _redirect_crawler()
    middleware = CountedRedirectMiddleware.from_crawler(crawler)
    request = Request("https://www.zeit.de/a")
    same = Response(request.url, status=301, headers={"Location": "https://zeit.de/b"})
    assert isinstance(middleware.process_response(request, same), Request)
    away = Response(request.url, status=302, headers={"Location": "http://tracker.example/x"})
    with pytest.raises(IgnoreRequest):
        middleware.process_response(request, away)
    assert crawler.stats.get_value("newscrawl/destination/cross_domain") == 1
    assert "Not following redirect from https://www.zeit.de/a to http://tracker.example/x" \
        in caplog.text


def test_redirect_to_an_entry_site_is_followed():
    crawler = _redirect_crawler(entries=("http://www.zeit.de/", "https://www.heise.de/"))
    middleware = CountedRedirectMiddleware.from_crawler(crawler)
    request = Request("https://www.zeit.de/a")
    response = Response(request.url, status=302, headers={"Location": "https://www.heise.de/x"})
    assert middleware.process_response(request, response).url == "https://www.heise.de/x"


def test_meta_refresh_to_another_site_is_counted(caplog):
    caplog.set_level("INFO")
    crawler = _redirect_crawler()
    middleware = CountedMetaRefreshMiddleware.from_crawler(crawler)
    request = Request("https://www.zeit.de/a")
    body = b"<html><head><meta http-equiv='refresh' content='0;url=http://evil.example/'></head></html>"
    with pytest.raises(IgnoreRequest):
        middleware.process_response(request, HtmlResponse(request.url, body=body))
    assert crawler.stats.get_value("newscrawl/destination/cross_domain") == 1
    assert "Not following meta refresh" in caplog.text


def test_too_long_chain_is_counted_and_logged(caplog):
    crawler = _redirect_crawler()
    middleware = CountedRedirectMiddleware.from_crawler(crawler)
    request = Request("https://www.zeit.de/0")
    for hop in range(1, 4):
        response = Response(request.url, status=302, headers={"Location": f"/{hop}"})
        request = middleware.process_response(request, response)
    with pytest.raises(IgnoreRequest):
        middleware.process_response(request, Response(request.url, status=302,
                                                      headers={"Location": "/4"}))
    assert crawler.stats.get_value("newscrawl/redirect/max_hops") == 1
    assert "Dropped https://www.zeit.de/0 after 3 hops" in caplog.text


def test_cross_site_check_off_with_the_policy():
    crawler = _redirect_crawler(NEWSCRAWL_DESTINATION_ENABLED=False)
    middleware = CountedRedirectMiddleware.from_crawler(crawler)
    request = Request("https://www.zeit.de/a")
    response = Response(request.url, status=302, headers={"Location": "http://other.example/"})
    assert middleware.process_response(request, response).url == "http://other.example/"


def test_redirect_loop_is_counted_and_logged(caplog):
    crawler = _redirect_crawler()
    middleware = CountedRedirectMiddleware.from_crawler(crawler)
    request = Request("https://www.zeit.de/a")
    request = middleware.process_response(request, Response(
        request.url, status=302, headers={"Location": "/b"}))
    with pytest.raises(IgnoreRequest):
        middleware.process_response(request, Response(request.url, status=302,
                                                      headers={"Location": "/a#top"}))
    assert crawler.stats.get_value("newscrawl/redirect/loop") == 1
    assert "Dropped https://www.zeit.de/a: its redirect loops back to https://www.zeit.de/a#top" \
        in caplog.text
