"""Every ``newscrawl_*`` request-meta key, and the page context the keys carry.

Scrapy components hand per-request facts to each other in ``request.meta``; this module is the
one place that spells those keys (nobody else writes ``"newscrawl_..."``), the way
``scrapy-redis`` keeps its key templates in one ``defaults.py``.

A page is reached with eight facts about how it was found — :class:`PageContext`. They travel
in request meta while the crawl runs, are kept in the page's crawl-state record (field
``request``) so a later run can fetch the page again as it was found, and are copied into the
page's item. The four mappings are the methods of :class:`PageContext`:

========================  =====================================================================
meta → context            :meth:`PageContext.from_meta`
context → meta            :meth:`PageContext.to_meta`
context → record fields   :meth:`PageContext.to_record` (and back: :meth:`PageContext.from_record`)
context → item fields     :meth:`PageContext.to_item`
========================  =====================================================================

Weights: a request's ``weight`` is the NewsPageRank weight its page is expected to get (the
in-link's score times the weight of the page holding the link, seed 004 §3). A crawl-state
record holds one weight, the page's NewsPageRank weight, in its top-level ``weight`` field;
the stored ``request`` context therefore carries no weight of its own (:meth:`to_record` leaves
it out, :meth:`from_record` reads the record's ``weight``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# --- page context (set by the spider and the link classification) -----------------------------
#: str: the analyst's entry URL the page was reached from.
ENTRY_URL = "newscrawl_entry_url"
#: str: the StartURL the link was classified against (the page holding the link).
START_URL = "newscrawl_start_url"
#: int: node-link depth below the entry URL (entry = 0).
DEPTH = "newscrawl_depth"
#: str: link class of the in-link (``entry``, ``downward``, ``horizontal``, ``crosswise``, ...).
LINK_CLASS = "newscrawl_link_class"
#: dict[str, int]: NewsPageRank features of the in-link (0/1).
FEATURES = "newscrawl_features"
#: float: weight of the page holding the in-link (entry: 1).
PARENT_WEIGHT = "newscrawl_parent_weight"
#: float: the NewsPageRank weight the page is expected to get (in-link score × parent weight).
WEIGHT = "newscrawl_weight"
#: str: URL of the page holding the link.
REFERER = "newscrawl_referer"

# --- request roles and routing ----------------------------------------------------------------
#: str: ``entry`` | ``node`` | ``content`` | ``frame`` | ``feed`` | ``sitemap``; a request
#: without it is not a page.
ROLE = "newscrawl_role"
#: int: frames nested above this page (frames of frames are followed a bounded depth).
FRAME_DEPTH = "newscrawl_frame_depth"

# --- incremental re-crawls (crawl state, HEAD probes) ------------------------------------------
#: dict: a page's stored state for the middlewares
#: (:meth:`newscrawl.crawlstate.RunState.revisit_meta`).
REVISIT = "newscrawl_revisit"
#: str: how the GET of a known page came about (``head``, ``conditional``, ``fingerprint``).
REVISIT_HOW = "newscrawl_revisit_how"
#: dict: the HEAD validators seen just before the GET (consistency check).
REVISIT_HEAD = "newscrawl_revisit_head"
#: bool: marks a HEAD side request (it passes the HEAD probe and the budget untouched).
PROBE = "newscrawl_probe"
#: str: a verification GET of a page a HEAD or a 304 said unchanged; the value names the
#: validator that said so (``etag``, ``last-modified``).
VERIFY = "newscrawl_verify"
#: dict: what a feed or sitemap entry said of the article it links (``kind``, ``url`` of the
#: feed or sitemap, ``title``, ``feed_date`` / ``sitemap_date``; middlewares/feeds.py).
FEED_ENTRY = "newscrawl_feed_entry"
#: float: run-clock time a watched crawl asked for this page again (monitoring mode): a later
#: visit of a page whose links were classified earlier in the run, not the same page twice.
VISIT = "newscrawl_visit"

# --- distributed crawling (newscrawl/distributed) ----------------------------------------------
#: ``[host, token]``: the host lease a request of the shared frontier holds until it is sent.
LEASE = "newscrawl_lease"
#: float: ``time.monotonic()`` when the request went to the downloader (response time).
SENT_AT = "newscrawl_sent_at"
#: str: the pending member of a request whose host lease the worker took itself
#: (:meth:`newscrawl.distributed.frontier.RedisFrontier.lease_host`): a watched page it owns,
#: sent and answered by this worker, not through the shared queues (:mod:`extensions.watchshare`).
OWN = "newscrawl_own"

#: int: a watched crawl's dispatch class of the request (:func:`newscrawl.algorithms.watch.due_rank`:
#: 0 news, 1 a source, 2 backlog, 3 a re-check); the request rate lets classes 0-1 take any token
#: and keeps one back from classes 2-3 (:class:`~newscrawl.algorithms.watch.RateBudget`).
DISPATCH = "newscrawl_dispatch"

# --- WARC import (middlewares/warcreplay.py) -----------------------------------------------------
#: str: ``WARC-Date`` of the archived capture that answered this request (an import crawl).
WARC_DATE = "newscrawl_warc_date"
#: int: which of the URL's archived captures answers this request (0 = the oldest; an import
#: walks a URL's repeated captures in time order, so they become versions).
WARC_CAPTURE = "newscrawl_warc_capture"

#: Every key above (a key outside this tuple is a typo).
ALL_KEYS = (ENTRY_URL, START_URL, DEPTH, LINK_CLASS, FEATURES, PARENT_WEIGHT, WEIGHT, REFERER,
            ROLE, FRAME_DEPTH, REVISIT, REVISIT_HOW, REVISIT_HEAD, PROBE, VERIFY, VISIT, LEASE,
            SENT_AT, OWN, FEED_ENTRY, DISPATCH, WARC_DATE, WARC_CAPTURE)

#: Context field → meta key (the eight facts of :class:`PageContext`).
_META_OF = {
    "entry_url": ENTRY_URL,
    "start_url": START_URL,
    "depth": DEPTH,
    "link_class": LINK_CLASS,
    "features": FEATURES,
    "parent_weight": PARENT_WEIGHT,
    "weight": WEIGHT,
    "referer": REFERER,
}


def _number(value: Any) -> float | None:
    """``value`` as a finite float, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _number_or(value: Any, default: float) -> float:
    number = _number(value)
    return default if number is None else number


@dataclass(frozen=True)
class PageContext:
    """How a page was reached: the eight facts every page request carries.

    Attributes:
        entry_url: the analyst's entry URL the page was reached from.
        start_url: the StartURL its in-link was classified against.
        depth: node-link depth below the entry URL (levels; entry = 0).
        link_class: class of the in-link (``entry`` for the seeds, ``known`` for re-run
            requests of pages stored without one).
        features: NewsPageRank features of the in-link (``{"image": 0|1, ...}``).
        parent_weight: weight of the page holding the in-link (0..1; entry: 1).
        weight: the NewsPageRank weight the page is expected to get (0..1), None if unknown.
        referer: URL of the page holding the in-link, None for entries.
    """

    entry_url: str | None = None
    start_url: str | None = None
    depth: int = 0
    link_class: str | None = None
    features: dict[str, int] = field(default_factory=dict)
    parent_weight: float = 1.0
    weight: float | None = None
    referer: str | None = None

    @classmethod
    def entry(cls, url: str) -> PageContext:
        """The context of an entry URL (a seed): depth 0, weight 1 (seed 004 §3: r(entry) = 1)."""
        return cls(entry_url=url, start_url=url, depth=0, link_class="entry", features={},
                   parent_weight=1.0, weight=1.0)

    # -- meta -----------------------------------------------------------------------------------

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> PageContext:
        """The context a request's meta carries; missing keys get the field defaults."""
        depth = meta.get(DEPTH)
        return cls(
            entry_url=meta.get(ENTRY_URL),
            start_url=meta.get(START_URL),
            depth=int(depth) if isinstance(depth, (int, float)) else 0,
            link_class=meta.get(LINK_CLASS),
            features=dict(meta.get(FEATURES) or {}),
            parent_weight=_number_or(meta.get(PARENT_WEIGHT), 1.0),
            weight=_number(meta.get(WEIGHT)),
            referer=meta.get(REFERER),
        )

    def to_meta(self) -> dict[str, Any]:
        """Request meta for this context (facts that are None are left out)."""
        return {key: getattr(self, name) for name, key in _META_OF.items()
                if getattr(self, name) is not None}

    # -- crawl-state records ---------------------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        """The ``request`` field of a crawl-state record: what a later run needs to fetch the
        page again as it was found. The weight is not part of it: the record's own ``weight``
        field holds the page's weight (see the module docstring)."""
        return {name: getattr(self, name) for name in _META_OF
                if name != "weight" and getattr(self, name) is not None}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PageContext:
        """The context of a stored record (its ``request`` field and its ``weight``), for a
        re-run request; facts never stored default to the page itself as its entry."""
        ctx = record.get("request") or {}
        url = record.get("url")
        return cls(
            entry_url=ctx.get("entry_url") or url,
            start_url=ctx.get("start_url") or url,
            depth=int(ctx.get("depth") or 0),
            link_class=ctx.get("link_class") or "known",
            features=dict(ctx.get("features") or {}),
            parent_weight=_number_or(ctx.get("parent_weight"), 1.0),
            weight=_number(record.get("weight")),
            referer=ctx.get("referer") or None,
        )

    # -- items -----------------------------------------------------------------------------------

    def to_item(self) -> dict[str, Any]:
        """The item fields of this context (:mod:`newscrawl.items`). ``weight`` is not among
        them: the NewsPageRank pipeline computes the item's weight."""
        return {
            "entry_url": self.entry_url,
            "start_url": self.start_url,
            "link_class": self.link_class,
            "depth": self.depth,
            "referer": self.referer,
            "features": dict(self.features),
            "parent_weight": self.parent_weight,
        }
