"""Downloader middleware: check a known page with HEAD (or a conditional GET) before fetching it.

Seed 002 §3.1: "在请求爬行整个网页之前，先进行HEAD请求，以获得网页的元信息" — before fetching a
known page, ask for its metadata and compare it with what was stored. For a request whose meta
:data:`newscrawl.meta.REVISIT` says the page is known (set by :mod:`middlewares.revisit` from the
crawl state loaded at spider open; no database call here), depending on the host's learned
policy (:class:`newscrawl.algorithms.changedetect.HostPolicy`, kept in the run's in-memory
:class:`newscrawl.crawlstate.RunState`, handed over by
:class:`extensions.crawlstate.CrawlStateExtension`):

* ``head`` — a ``HEAD`` side request is sent first, the way Scrapy's ``RobotsTxtMiddleware``
  sends robots.txt requests (``engine.download_async``, a meta flag :data:`newscrawl.meta.PROBE`
  so the side request passes this middleware untouched, high priority). Validators unchanged
  (:func:`~newscrawl.algorithms.changedetect.compare_validators`) → the GET is not sent
  (:class:`~scrapy.exceptions.IgnoreRequest`), the visit is recorded as unchanged. Changed or
  not comparable → the GET goes on, marked ``how = head``. A HEAD answer that shows the host's
  HEAD cannot be trusted (refused 403/405/501, no validators, ``Content-Length`` 0 or absent:
  :func:`~newscrawl.algorithms.changedetect.head_problem`) switches the host to ``conditional``
  at once and the page is fetched that way. Until a host's first HEAD answer is in, its other
  known pages wait for it (one probe per unknown host, not a burst of refused HEADs). A HEAD
  answered 404/410 means the page is gone: recorded as a failed visit, no GET.
* ``conditional`` — the GET carries ``If-None-Match`` / ``If-Modified-Since`` with the stored
  validators; ``304 Not Modified`` is recorded as unchanged and goes no further.
* ``fingerprint`` — a plain GET; the spider middleware compares the content fingerprint.

Validators earn trust: an "unchanged" HEAD or 304 gets a full GET anyway when the host's sample
picks it (:class:`~newscrawl.algorithms.changedetect.Verification`,
``NEWSCRAWL_HEADPROBE_VERIFY_*``; the GET goes on / is asked again unconditionally, marked
:data:`newscrawl.meta.VERIFY`; paid here: the budget, and the rate even into debt, ``charge``).

A known page stored without a validator (no ``ETag`` nor valid ``Last-Modified``; a
``Content-Length`` alone cannot prove "unchanged") is fetched with a plain GET at once. A
``Last-Modified`` later than the answer's ``Date`` (the wall clock without one), or at the epoch,
is no validator: never stored, never sent as ``If-Modified-Since``. Each recorded visit names
the validator that decided it (record field ``validator``). Hosts move from ``head`` to
``conditional`` to ``fingerprint`` on evidence the spider middleware collects (a HEAD or
conditional GET that claimed a change the text does not show; HEAD and GET validators that
disagree; :func:`~newscrawl.algorithms.changedetect.learn_host`). Failed answers (status >= 400
after retries, download errors) of every tracked request are recorded as failed visits here.

Order: a priority below ``RetryMiddleware`` (550), e.g. 540 (``process_response`` sees final
answers only), above ``DefaultHeadersMiddleware`` (400) / ``UserAgentMiddleware`` (500). HEAD side
requests are free (:mod:`middlewares.budget`): their page request was counted already.

Settings: ``NEWSCRAWL_HEADPROBE_ENABLED`` (off raises :class:`~scrapy.exceptions.NotConfigured`),
``NEWSCRAWL_REVISIT_ENABLED``. Stats (``newscrawl/headprobe/<event>``): ``head`` (HEAD requests
sent), ``skipped`` (GETs not sent: HEAD said unchanged), ``get_after_head`` (HEAD said changed or
could not tell), ``conditional`` (conditional GETs sent), ``not_modified`` (304 answers),
``fingerprint`` (plain GETs of known pages), ``gone`` (HEAD answered 404/410),
``head_<refused|no_validators|zero_length|no_length>``, ``host/<mode>`` (hosts switched), and
``newscrawl/revisit/failed`` (failed visits recorded), ``verify`` (verification GETs sent;
outcomes: ``verify_match`` / ``verify_mismatch`` / ``caught_lying``), ``verify_no_budget``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from extensions.crawlstate import CrawlStateExtension
from newscrawl import meta
from newscrawl.algorithms.changedetect import (
    CONDITIONAL,
    HEAD,
    UNCHANGED,
    Validators,
    Verification,
    VerificationDraws,
    compare,
    conditional_headers,
    head_problem,
)
from newscrawl.algorithms.revisit import HOW_CONDITIONAL, HOW_FINGERPRINT, HOW_HEAD
from newscrawl.algorithms.urls import registered_domain
from newscrawl.components import require_enabled, require_extension, settings_kwargs
from newscrawl.crawlstate import RunState
from newscrawl.meta import PageContext

logger = logging.getLogger(__name__)

_PREFIX = "newscrawl/headprobe"
#: HEAD answers meaning the page itself is gone (no GET needed).
GONE_STATUSES = frozenset({404, 410})


class HeadProbeMiddleware:
    """HEAD / conditional GET / fingerprint GET for known pages (see the module docstring)."""

    #: Priority of the HEAD side requests (robots.txt requests use 1000).
    PROBE_PRIORITY = 1000

    def __init__(self, state: RunState, stats: Any, crawler: Any = None, *,
                 verify: Verification | None = None) -> None:
        self.state = state
        self.stats = stats
        self.verify = VerificationDraws(verify or Verification(0.0, 0.0))  # default: none
        #: sends the HEAD side requests (``crawler.engine.download_async``, as Scrapy's
        #: RobotsTxtMiddleware does: the engine is built after its middlewares)
        self.crawler = crawler
        self._waiters: dict[str, list[Deferred]] = {}  # host -> waiting on its first HEAD
        self._logged: set[tuple[str, str]] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> HeadProbeMiddleware:
        require_enabled(crawler.settings, "NEWSCRAWL_REVISIT_ENABLED", "NEWSCRAWL_HEADPROBE_ENABLED")
        run = require_extension(crawler, CrawlStateExtension)
        verify = Verification(**settings_kwargs(
            crawler.settings, start="NEWSCRAWL_HEADPROBE_VERIFY_START",
            floor="NEWSCRAWL_HEADPROBE_VERIFY_FLOOR",
            trust_after="NEWSCRAWL_HEADPROBE_VERIFY_TRUST_AFTER"))
        return cls(run.state, crawler.stats, crawler, verify=verify)

    def _inc(self, key: str) -> None:
        self.stats.inc_value(f"{_PREFIX}/{key}")

    # -- requests ------------------------------------------------------------------------------

    async def process_request(self, request: Request, spider: Any = None) -> None:
        rv = request.meta.get(meta.REVISIT)
        state = self.state
        if (not rv or not rv.get("known") or request.meta.get(meta.PROBE)
                or request.method != "GET" or request.meta.get(meta.REVISIT_HOW)):
            return None
        stored = Validators.from_dict(rv.get("validators"))
        if not stored.any or rv.get("verify"):  # verify: the scheduler doubts "unchanged"
            return self._fingerprint(request)
        host = urlparse_cached(request).hostname or ""
        while host in self._waiters:  # the host's first HEAD is out: its answer decides
            waiter: Deferred = Deferred()
            self._waiters[host].append(waiter)
            await maybe_deferred_to_future(waiter)
        policy = state.host_policy(host)
        # Channel pages skip the HEAD once the host is learned (``rv["head"]`` False, from the
        # crawl state): a conditional GET answers in one request either way.
        skip_head = rv.get("head") is False and policy.learned
        if policy.mode == HEAD and not skip_head:
            if await self._head(request, host, stored, state, first=not policy.learned):
                return None  # the GET goes on, marked ``how = head``
            policy = state.host_policy(host)
        if policy.mode in (HEAD, CONDITIONAL) and conditional_headers(stored):
            for name, value in conditional_headers(stored).items():
                request.headers[name] = value
            request.meta[meta.REVISIT_HOW] = HOW_CONDITIONAL
            self._inc("conditional")
            return None
        return self._fingerprint(request)

    def _fingerprint(self, request: Request) -> None:
        request.meta[meta.REVISIT_HOW] = HOW_FINGERPRINT
        self._inc("fingerprint")
        return None

    async def _head(self, request: Request, host: str, stored: Validators, state: RunState,
                    *, first: bool) -> bool:
        """Send the HEAD; raise IgnoreRequest when no GET is needed.

        Returns True when the GET must go on (marked ``how = head``), False when the HEAD
        answer showed the host's HEAD cannot be trusted: the caller chooses another way.
        """
        if first:
            self._waiters[host] = []
        probe_meta: dict[str, Any] = {meta.PROBE: True, "dont_redirect": True,
                                      "handle_httpstatus_all": True}
        if request.meta.get("download_slot"):
            probe_meta["download_slot"] = request.meta["download_slot"]
        probe = Request(
            request.url,
            method="HEAD",
            headers={k: v for k, v in request.headers.items()
                     if k.lower() not in (b"cookie", b"if-none-match", b"if-modified-since")},
            priority=self.PROBE_PRIORITY,
            meta=probe_meta,
            callback=NO_CALLBACK,
            dont_filter=True,
        )
        try:
            self._inc("head")
            try:
                response = await self.crawler.engine.download_async(probe)
            except IgnoreRequest:
                raise  # the budget or robots.txt refused the probe: the page waits too
            except Exception as exc:  # noqa: BLE001 - a failed probe costs nothing but the GET
                logger.debug("HEAD %s failed (%s); fetching it", request.url, exc)
                self._inc("head_failed")
                request.meta[meta.REVISIT_HOW] = HOW_HEAD
                return True
            fresh = Validators.from_headers(response.headers.get, now=time.time())
            problem = head_problem(response.status, fresh)
            if problem is not None:
                self._learn(state, host, "head_" + problem)
                self._inc("head_" + problem)
                return False
            if response.status in GONE_STATUSES:
                self._inc("gone")
                self._observe_failure(request, state, response.status)
                raise IgnoreRequest(f"HEAD {request.url}: {response.status}, page gone")
            if 200 <= response.status < 300:
                self._learn(state, host, "head_ok")
                verdict, validator = compare(stored, fresh)
                if verdict == UNCHANGED and not self._verifying(request, host, validator):
                    self._inc("skipped")
                    self.stats.inc_value("newscrawl/revisit/unchanged/head")
                    self._observe(request, state, status=response.status, how=HOW_HEAD,
                                  changed=False, validator=validator)
                    raise IgnoreRequest(f"HEAD {request.url}: unchanged")
                request.meta[meta.REVISIT_HEAD] = fresh.to_dict()
            if not request.meta.get(meta.VERIFY):
                self._inc("get_after_head")
            request.meta[meta.REVISIT_HOW] = HOW_HEAD
            return True
        finally:
            if first:
                for waiter in self._waiters.pop(host, ()):
                    waiter.callback(None)

    def _verifying(self, request: Request, host: str, validator: str) -> bool:
        """True (and the request marked :data:`newscrawl.meta.VERIFY`) when the host's
        verification sample picks this "unchanged" page for a full GET anyway."""
        rv, state = request.meta[meta.REVISIT], self.state
        if not self.verify.sample(host, state.host_policy(host), rv["fp"],
                                  int(rv.get("visits") or 0)):
            return False
        if (state.budget is not None or state.rate is not None) \
                and not state.charge(registered_domain(host)):  # (budget.py lets VERIFY pass)
            self.verify.cancel(host)
            self._inc("verify_no_budget")
            return False
        request.meta[meta.VERIFY] = validator
        self._inc("verify")
        return True

    def _learn(self, state: RunState, host: str, event: str) -> None:
        before, after = state.learn(host, event)
        if after.mode != before.mode:
            self._inc(f"host/{after.mode}")
            if (host, after.mode) not in self._logged:
                self._logged.add((host, after.mode))
                logger.info("Host %s: change detection switched from %s to %s (%s)", host,
                            before.mode, after.mode, after.reason)

    # -- answers -------------------------------------------------------------------------------

    def process_response(self, request: Request, response: Any, spider: Any = None) -> Any:
        rv = request.meta.get(meta.REVISIT)
        state = self.state
        if not rv or request.meta.get(meta.PROBE):
            return response
        if response.status == 304 and request.meta.get(meta.REVISIT_HOW) == HOW_CONDITIONAL:
            host = urlparse_cached(request).hostname or ""
            self._inc("not_modified")
            self._learn(state, host, "not_modified")
            validator = Validators.from_dict(rv.get("validators")).validator
            if self._verifying(request, host, validator):  # the same page again, in full
                headers = {k: v for k, v in request.headers.items()
                           if k.lower() not in (b"if-none-match", b"if-modified-since")}
                return request.replace(headers=headers, dont_filter=True)
            self.stats.inc_value("newscrawl/revisit/unchanged/conditional")
            self._observe(request, state, status=304, how=HOW_CONDITIONAL, changed=False,
                          validator=validator)
            raise IgnoreRequest(f"{request.url}: 304 Not Modified")
        if response.status >= 400:
            self._observe_failure(request, state, response.status)
        return response

    def process_exception(self, request: Request, exception: BaseException,
                          spider: Any = None) -> None:
        rv = request.meta.get(meta.REVISIT)
        state = self.state
        if not rv or request.meta.get(meta.PROBE) or isinstance(exception, IgnoreRequest):
            return None
        self._observe_failure(request, state, 0)
        return None

    # -- recording -----------------------------------------------------------------------------

    def _observe(self, request: Request, state: RunState, *, status: int, how: str,
                 changed: bool | None, validator: str = "none") -> None:
        rv = request.meta[meta.REVISIT]
        host = urlparse_cached(request).hostname or ""
        role = request.meta.get(meta.ROLE) or rv.get("role") or "content"
        state.observe(rv["fp"], rv.get("url") or request.url, role=role, status=status, how=how,
                      changed=changed, host=host, site=registered_domain(host),
                      request=PageContext.from_meta(request.meta).to_record(),
                      validator=validator)

    def _observe_failure(self, request: Request, state: RunState, status: int) -> None:
        self.stats.inc_value("newscrawl/revisit/failed")
        known = bool(request.meta[meta.REVISIT].get("known"))
        self._observe(request, state, status=status,
                      how=request.meta.get(meta.REVISIT_HOW)
                      or (HOW_FINGERPRINT if known else "first"),
                      changed=None)
