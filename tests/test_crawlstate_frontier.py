"""The durable frontier of the crawl state: links found and not fetched are written soon, a
page's visit never before the records of its links or before its item."""

from __future__ import annotations

from scrapy import signals
from scrapy.http import HtmlResponse, Request

from extensions.crawlstate import CrawlStateExtension
from middlewares.revisit import RevisitSpiderMiddleware
from newscrawl import meta
from newscrawl.algorithms.revisitplan import RevisitConfig
from newscrawl.crawlstate import RunState
from newscrawl.fingerprint import NewsRequestFingerprinter
from newscrawl.items import NodeItem
from tests.conftest import component_crawler

NOW = 1_730_000_000.0
HOME = "https://s.example/"
A1 = "https://s.example/politik/2024-10-01/kanzler-trifft-minister-1.html"
A2 = "https://s.example/politik/2024-10-02/opposition-kritisiert-plaene-2.html"
fp = NewsRequestFingerprinter().page_fp


class Clock:
    """A run clock the test moves by hand."""

    def __init__(self, t: float) -> None:
        self.t = self.started = t

    def now(self) -> float:
        return self.t


def _state() -> tuple[RunState, Clock]:
    clock = Clock(NOW)
    return RunState(RevisitConfig(), clock=clock), clock  # type: ignore[arg-type]


def _link(state: RunState, parent: str | None, url: str) -> str:
    """What the revisit middleware does for a new link: a to-visit record, requested."""
    child = fp(url)
    if parent:
        state.discovered(parent, child)
    state.ensure(child, url, role="content", request={"referer": HOME, "depth": 1})
    state.scheduled.add(child)
    return child


def _visit(state: RunState, url: str, role: str = "node") -> str:
    page = fp(url)
    state.scheduled.add(page)
    state.observe(page, url, role=role, status=200, how="first")
    return page


def _ids(docs) -> list[str]:
    return [d["_id"] for d in docs]


def test_a_link_not_fetched_is_written_once_it_waited_and_a_fetched_one_once_visited():
    state, clock = _state()
    a1, a2 = _link(state, None, A1), _link(state, None, A2)
    assert state.drain(final=False, pending_after=10) == ([], [])  # young: maybe fetched soon
    _visit(state, A1, "content")
    clock.t += 11
    new, old = state.drain(final=False, pending_after=10)
    assert _ids(new) == [a2, a1]  # the to-visit record first, then the visit
    assert new[0]["last_visit"] is None and new[0]["request"]["referer"] == HOME
    assert [r["fp"] for r in state.pending_records()] == [a2]


def test_a_visit_waits_for_the_records_of_the_links_it_found():
    state, clock = _state()
    home = _visit(state, HOME)
    child = _link(state, home, A1)
    grandchild_page = _visit(state, A2)  # a page found by the home page, visited, with a link
    state.discovered(home, grandchild_page)
    state.discovered(grandchild_page, child)
    assert state.drain(final=False, pending_after=10) == ([], [])
    clock.t += 11
    new, _ = state.drain(final=False, pending_after=10)
    assert _ids(new)[0] == child and set(_ids(new)) == {home, child, grandchild_page}
    state.mark_stored(_ids(new))
    state.drain(final=False, pending_after=10)
    assert state.children == {}


def test_a_visit_waits_for_its_output_and_its_item():
    state, clock = _state()
    home = _visit(state, HOME)
    state.expanding.add(home)
    state.awaiting_item.add(home)
    clock.t += 100
    assert state.drain(final=False, pending_after=10) == ([], [])
    state.expanding.discard(home)
    assert state.drain(final=False, pending_after=10) == ([], [])
    state.item_handed(home)
    assert _ids(state.drain(final=False, pending_after=10)[0]) == [home]


def test_the_last_drain_writes_everything_and_the_durable_cut_stops_before_held_visits():
    state, clock = _state()
    home = _visit(state, HOME)
    state.awaiting_item.add(home)
    child = _link(state, home, A1)
    clock.t += 5
    state.drain(final=False, pending_after=10)
    assert state.durable_cut(1000.0) < 1000.0 - 5  # the visit 5 s ago is not written
    new, _ = state.drain(final=True)
    assert set(_ids(new)) == {home, child}
    assert state.durable_cut(1000.0) == 1000.0


def test_the_middleware_holds_a_page_while_its_output_is_read_and_until_its_item_is_handed():
    crawler = component_crawler({"NEWSCRAWL_REVISIT_NOW": NOW})
    state = crawler.get_extension(CrawlStateExtension).state
    mw = RevisitSpiderMiddleware.from_crawler(crawler)
    home = fp(HOME)
    rv = {"fp": home, "url": HOME, "known": False}
    response = HtmlResponse(HOME, body=b"<html></html>", request=Request(HOME, meta={
        meta.REVISIT: rv, meta.ROLE: "entry"}))
    item = NodeItem(kind="node", url=HOME, fp=home, role="entry", links=[])
    output = mw.process_spider_output(response, iter([
        item, Request(A1, meta={meta.ROLE: "content"})]))
    assert next(output) is item
    assert home in state.expanding and home in state.awaiting_item
    assert next(output).url == A1
    assert state.children == {home: {fp(A1)}}
    assert list(output) == []
    assert home not in state.expanding  # the output is read
    crawler.signals.send_catch_log(signal=signals.item_scraped, item=item,
                                   response=response, spider=None)
    assert home not in state.awaiting_item


def test_pending_records_from_the_store_are_added_once():
    state, _ = _state()
    known = _link(state, None, A1)
    docs = [{"_id": known, "fp": known, "url": A1, "last_visit": None},
            {"_id": "f00d", "fp": "f00d", "url": A2, "last_visit": None, "history": []},
            {"_id": "beef", "fp": "beef", "url": HOME, "last_visit": NOW}]
    assert state.add_pending(docs) == 1
    assert state.add_pending(docs) == 0
    assert {r["fp"] for r in state.pending_records()} == {known, "f00d"}
    assert "f00d" in state.stored
