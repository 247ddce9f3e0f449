"""The state of one run, in memory: its clock, its budget, known pages, learned hosts.

:class:`RunState` is owned by the crawl-state extension (:mod:`extensions.crawlstate`), which
fills it at spider open from the store and writes back what changed, both through the store's
writer thread; the spider, the middlewares and the item pipelines receive it in
``from_crawler`` and read and update it on the reactor thread, never blocking. Pure: no Scrapy,
Twisted or database import. The per-page state a downloader middleware needs travels in request
meta (:data:`newscrawl.meta.REVISIT`, see :meth:`RunState.revisit_meta`).

Records are the dicts of :mod:`newscrawl.algorithms.revisitplan` (times as epoch seconds);
:func:`to_doc` / :func:`from_doc` convert them to and from the store's documents (``_id`` =
``fp``, times as UTC datetimes, so analysts can query ``db.pages.find({due: {$lte: new
Date()}})``). A record holds one weight, the page's NewsPageRank weight (field ``weight``); its
``request`` context (:meth:`newscrawl.meta.PageContext.to_record`) holds none.

The run clock (:class:`RunClock`) is the one clock of a run: every time a run records — a
record's visits, an item's ``fetched_at``, a document's ``first_seen``/``last_seen``, an
archived version, an eviction — is read from it. It is the wall clock, or, with
``-a now=2022-01-29T05:11:00Z`` (setting ``NEWSCRAWL_REVISIT_NOW``), that instant plus the
seconds elapsed since the run started, so a test or a replay of captures taken at known times
runs "at" those times.

The request budget (``-a budget=N``, ``NEWSCRAWL_BUDGET``) and the request rate of monitoring
mode (``-a rate=N`` requests per hour, ``NEWSCRAWL_WATCH_RATE``; a
:class:`~newscrawl.algorithms.watch.RateBudget` with a share per site) are counted here once
(:meth:`RunState.spend`), by the budget middleware.

The run's channel scheduler (:attr:`RunState.scheduler`,
:class:`~newscrawl.algorithms.channelsched.ChannelScheduler`) gives channel pages their due
times: its estimates are restored from the records' ``sched`` field and the hosts' ``profile``
field at load, the due times of known channels re-planned (:func:`replan_channels`), and every
channel visit observed by it. Host documents keep every field they were loaded with
(:attr:`RunState.host_extras`), so fields other components store there survive the replace.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from newscrawl.algorithms.changedetect import HostPolicy, learn_host
from newscrawl.algorithms.feedlinks import merge_source
from newscrawl.algorithms.pagerank import PageInfo, eviction_order
from newscrawl.algorithms.revisitplan import (
    CHANNEL_ROLES,
    RevisitConfig,
    channel_yield,
    due_order,
    is_due,
    new_record,
    record_visit,
    replan_channels,
    restore_channel,
)
from newscrawl.algorithms.watch import RateBudget

UTC = dt.timezone.utc
#: Record fields holding times (epoch seconds in memory, datetimes in the store).
_TIME_FIELDS = ("first_seen", "last_visit", "due", "published", "last_changed")
#: Update modes (seed 002 §2): ``inplace`` (即时更新) or ``shadow`` (备份式更新).
UPDATE_MODES = ("inplace", "shadow")


def parse_now(value: str | float | dt.datetime | None) -> float | None:
    """Epoch seconds of a ``-a now=`` value: ISO 8601 (``Z`` or offset; naive = UTC) or epoch
    seconds. None/empty gives None.

    Raises:
        ValueError: an unparsable value.
    """
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"now must be ISO 8601 (2022-01-29T05:11:00Z) or epoch seconds, got {value!r}") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def parse_budget(value: Any) -> int | None:
    """A budget argument (``-a budget=``, ``NEWSCRAWL_BUDGET``) as a request count: None for
    unlimited (0, empty, None).

    >>> parse_budget("7"), parse_budget("0"), parse_budget(None)
    (7, None, None)

    Raises:
        ValueError: not a whole number >= 0.
    """
    if value is None or value == "":
        return None
    return parse_whole_number(value, "budget", unit=" of requests") or None


def parse_rate(value: Any) -> float | None:
    """A request-rate argument (``-a rate=``, ``NEWSCRAWL_WATCH_RATE``) in requests per hour:
    None for no cap (0, empty, None).

    >>> parse_rate("600"), parse_rate(0), parse_rate("")
    (600.0, None, None)

    Raises:
        ValueError: not a number >= 0.
    """
    if value is None or value == "":
        return None
    try:
        rate = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"rate must be a number of requests per hour, got {value!r}") from None
    if not math.isfinite(rate) or rate < 0:
        raise ValueError(f"rate must be >= 0 requests per hour, got {value!r}")
    return rate or None


def parse_whole_number(value: Any, what: str, *, unit: str = "") -> int:
    """An argument or setting as a whole number >= 0 (``what`` and ``unit`` name it in errors).

    >>> parse_whole_number("3", "depth")
    3

    Raises:
        ValueError: ``"<what> must be a whole number<unit>, got …"`` or ``"<what> must be >= 0, …"``.
    """
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a whole number{unit}, got {value!r}") from None
    if number < 0:
        raise ValueError(f"{what} must be >= 0, got {number}")
    return number


class RunClock:
    """The one clock of a run (see the module docstring).

    Args:
        start: epoch seconds the run starts "at" (``-a now=``), or None for the wall clock.
    """

    def __init__(self, start: float | None = None) -> None:
        self._start = start
        self._t0 = time.monotonic()
        #: epoch seconds when the run started (on this clock)
        self.started = self.now()

    @property
    def fixed(self) -> bool:
        """True when the run runs "at" a given time rather than on the wall clock."""
        return self._start is not None

    def now(self) -> float:
        """The run's current time (epoch seconds, UTC)."""
        if self._start is None:
            return time.time()
        return self._start + (time.monotonic() - self._t0)

    def utcnow(self) -> dt.datetime:
        """The run's current time as a timezone-aware UTC datetime."""
        return dt.datetime.fromtimestamp(self.now(), UTC)


def new_run_id(now: float) -> str:
    """A run id that sorts by start time: ``YYYYmmddTHHMMSSZ-<pid>-<random>``."""
    stamp = dt.datetime.fromtimestamp(now, UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{os.getpid()}-{secrets.token_hex(3)}"


def _to_dt(value: Any) -> Any:
    if isinstance(value, (int, float)) and math.isfinite(value):
        return dt.datetime.fromtimestamp(value, UTC)
    return value


def _to_ts(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    return value


def to_doc(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record as a store document: ``_id = fp``, times as UTC datetimes."""
    doc = {k: v for k, v in record.items() if k != "_id"}
    for name in _TIME_FIELDS:
        if name in doc:
            doc[name] = _to_dt(doc[name])
    doc["history"] = [{**h, "t": _to_dt(h.get("t"))} for h in record.get("history") or ()]
    if record.get("sources"):
        doc["sources"] = [{**s, "seen_at": _to_dt(s.get("seen_at"))} for s in record["sources"]]
    doc["_id"] = record["fp"]
    return doc


def from_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`to_doc` (``_id`` dropped, ``fp`` kept).

    Records written by older versions kept the in-link's weight in ``request.weight`` as well;
    it becomes the record's ``weight`` when that is unset (one weight per record).
    """
    rec = {k: v for k, v in doc.items() if k != "_id"}
    rec.setdefault("fp", doc.get("_id"))
    request = rec.get("request")
    if isinstance(request, dict) and "weight" in request:
        request = dict(request)
        legacy = request.pop("weight")
        rec["request"] = request
        if rec.get("weight") is None and isinstance(legacy, (int, float)):
            rec["weight"] = float(legacy)
    for name in _TIME_FIELDS:
        if name in rec:
            rec[name] = _to_ts(rec[name])
    rec["history"] = [{**h, "t": _to_ts(h.get("t"))} for h in doc.get("history") or ()]
    if isinstance(doc.get("sources"), list):
        rec["sources"] = [{**s, "seen_at": _to_ts(s.get("seen_at"))} for s in doc["sources"]
                          if isinstance(s, Mapping)]
    return rec


class RunState:
    """The clock, the budget, known pages and hosts of a run, and its changes to them (see the
    module docstring).

    Args:
        cfg: the revisit schedule's bounds.
        now: the run clock's start (epoch seconds) or None for the wall clock; ignored when
            ``clock`` is given.
        clock: the run clock (default: ``RunClock(now)``).
        budget: requests this run may send (None: unlimited).
        rate: requests per hour of a watched crawl, shared fairly by the sites (None: no cap).
        strikes: evidence needed before a host's validators are distrusted.
        run_id: id of this run (staging of the shadow update mode); default from the clock.
        mode: update mode, one of :data:`UPDATE_MODES`.

    Raises:
        ValueError: an unknown ``mode``.
    """

    def __init__(self, cfg: RevisitConfig, *, now: float | None = None,
                 clock: RunClock | None = None, budget: int | None = None, strikes: int = 2,
                 run_id: str | None = None, mode: str = "inplace",
                 rate: float | None = None) -> None:
        if mode not in UPDATE_MODES:
            raise ValueError(f"NEWSCRAWL_UPDATE_MODE must be one of {UPDATE_MODES}, got {mode!r}")
        self.cfg = cfg
        self.clock = clock or RunClock(now)
        self.started = self.clock.started
        self.budget = budget
        self.spent = 0
        self.rate = RateBudget(rate, now=self.clock.now()) if rate else None
        #: Called with ``(fp, record, visited)`` after every visit is recorded (``visited`` True)
        #: and every release (:meth:`release`, False): the watch extension's due-time queue.
        self.listeners: list[Callable[[str, dict[str, Any] | None, bool], None]] = []
        self.strikes = strikes
        self.mode = mode
        self.run_id = run_id or new_run_id(self.started)
        self.records: dict[str, dict[str, Any]] = {}
        self.stored: set[str] = set()  # fps whose record exists in the store
        self.dirty: set[str] = set()
        self.hosts: dict[str, HostPolicy] = {}
        self.hosts_dirty: set[str] = set()
        #: fields of the host documents besides the change-detection policy (by host)
        self.host_extras: dict[str, dict[str, Any]] = {}
        #: the channel scheduler (module docstring)
        self.scheduler = cfg.channel_scheduler()
        self.scheduled: set[str] = set()  # fps requested in this run
        self.observed: set[str] = set()  # fps visited in this run
        self.new_this_run: set[str] = set()  # fps first known in this run
        self.changed_articles: dict[str, str | None] = {}  # fp -> previous text fingerprint
        self.aliases: dict[str, str] = {}  # item fp (final URL) -> record fp (requested URL)
        #: A channel page was stored in this run (the link graph, which only channel pages
        #: feed, may have changed: PageRank is recomputed at the end).
        self.links_changed = False
        self.loaded = False
        #: Monitoring mode with one process (:class:`extensions.watch.WatchExtension`): new
        #: article links are handed to its dispatcher (:meth:`found`), which sends news before
        #: backlog within the request rate, instead of going to Scrapy's scheduler.
        self.watching = False
        #: where the request rate of a watched crawl came from, when not from ``-a rate``
        self.rate_note = ""
        #: article links found in this run: on a source's first visit (backlog) / on a revisit
        self.found_counts: dict[str, int] = {"news": 0, "backlog": 0}
        # The durable frontier (see :meth:`drain`): records of pages whose output is still being
        # read (their links not all recorded yet), records whose item has not reached the
        # store's writer yet, and the to-visit records each page discovered that the store
        # does not hold yet.
        self.expanding: set[str] = set()
        self.awaiting_item: set[str] = set()
        self.children: dict[str, set[str]] = {}

    # -- clock ----------------------------------------------------------------------------------

    def now(self) -> float:
        """The run clock (epoch seconds; see :class:`RunClock`)."""
        return self.clock.now()

    # -- loading --------------------------------------------------------------------------------

    def load(self, docs: Iterable[Mapping[str, Any]], hosts: Iterable[Mapping[str, Any]] = ()) -> None:
        """Take the records and host policies read from the store."""
        for doc in docs:
            rec = from_doc(doc)
            fp = rec.get("fp")
            if fp:
                self.records[fp] = rec
                self.stored.add(fp)
        for doc in hosts:
            host = doc.get("_id") or doc.get("host")
            if host:
                if "mode" in doc:  # a learned policy (not only fields of other components)
                    self.hosts[str(host)] = HostPolicy.from_dict(doc)
                self._load_host_extras(str(host), doc)
        self._load_scheduler()
        self.loaded = True

    def _load_host_extras(self, host: str, doc: Mapping[str, Any]) -> None:
        policy = set(HostPolicy().to_dict())
        extras = {k: v for k, v in doc.items() if k not in policy and k not in ("_id", "updated")}
        if extras:
            self.host_extras[host] = extras
        self.scheduler.restore_profile(host, extras.get("profile"))

    def _load_scheduler(self) -> None:
        """Channel estimates from the records, then the due times of the scheduler's plan."""
        for rec in self.records.values():
            restore_channel(self.scheduler, rec)
        replan_channels(self.records.values(), self.scheduler, self.now())

    # -- pages ----------------------------------------------------------------------------------

    def get(self, fp: str) -> dict[str, Any] | None:
        """The record of page fingerprint ``fp``, or None."""
        return self.records.get(fp)

    def is_known(self, fp: str) -> bool:
        """True when ``fp`` has a record (visited or to visit)."""
        return fp in self.records

    def is_due(self, fp: str) -> bool:
        """True when ``fp`` is unknown or due at the run clock's now."""
        rec = self.records.get(fp)
        return rec is None or is_due(rec, self.now())

    def revisit_meta(self, fp: str, url: str) -> dict[str, Any]:
        """The ``newscrawl_revisit`` request meta of a page: its fp, whether it is known, and the
        stored validators, fingerprint and visit count the downloader/spider middlewares compare
        with (the visit count numbers the verification draw,
        :class:`newscrawl.algorithms.changedetect.Verification`); for a channel page also
        ``head`` (False: no HEAD first, a conditional GET costs one request either way) and
        ``verify``: fetch it unconditionally, a run of "unchanged" answers being improbable
        (:meth:`~newscrawl.algorithms.channelsched.ChannelScheduler.verify_due`)."""
        rec = self.records.get(fp)
        if rec is None or not rec.get("last_visit"):
            return {"fp": fp, "url": url, "known": False}
        out = {
            "fp": fp,
            "url": url,
            "known": True,
            "validators": rec.get("validators"),
            "fingerprint": rec.get("fingerprint"),
            "role": rec.get("role"),
            "visits": int(rec.get("visits") or 0),
        }
        if rec.get("role") in CHANNEL_ROLES:
            # A HEAD then a GET costs 1 + P(changed) requests where a conditional GET costs one
            # (a 304 or the page): under the channel budget channel pages skip the HEAD.
            out["head"] = False
            out["verify"] = self.scheduler.verify_due(fp, self.now())
        return out

    def ensure(self, fp: str, url: str, *, role: str, host: str = "", site: str = "",
               seed: bool = False, request: Mapping[str, Any] | None = None,
               weight: float | None = None) -> dict[str, Any]:
        """The record of ``fp``, created as to-visit if unknown (marked dirty then).

        Args:
            request: the page context to store (:meth:`newscrawl.meta.PageContext.to_record`).
            weight: the NewsPageRank weight the page is expected to get (a new record's
                ``weight``; the item's weight replaces it once the page is fetched).
        """
        rec = self.records.get(fp)
        if rec is None:
            rec = new_record(fp, url, now=self.now(), role=role, host=host, site=site, seed=seed,
                             request=request)
            if weight is not None:
                rec["weight"] = float(weight)
            self.records[fp] = rec
            self.new_this_run.add(fp)
            self.dirty.add(fp)
        elif seed and not rec.get("seed"):
            rec["seed"] = True
            rec["role"] = "entry"
            self.dirty.add(fp)
        return rec

    def observe(self, fp: str, url: str, *, role: str, status: int, how: str,
                changed: bool | None = None, host: str = "", site: str = "", seed: bool = False,
                request: Mapping[str, Any] | None = None, **visit: Any) -> dict[str, Any]:
        """Record one visit of ``fp`` at the run clock (see :func:`record_visit` for ``visit``).

        Returns the updated record. A second observation of the same page in one run (a page
        reached twice through redirects) is recorded too; the history shows both.
        """
        rec = self.ensure(fp, url, role=role, host=host, site=site, seed=seed, request=request)
        if request:
            merged = {**(rec.get("request") or {}), **{k: v for k, v in request.items() if v is not None}}
            rec["request"] = merged
        if role and rec.get("role") != "entry":
            rec["role"] = role
        new = record_visit(rec, now=self.now(), cfg=self.cfg, status=status, how=how,
                           changed=changed, scheduler=self.scheduler, **visit)
        self.records[fp] = new
        self.dirty.add(fp)
        self.observed.add(fp)
        if self.scheduler.profiles_dirty:
            for group, profile in self.scheduler.drain_profiles().items():
                self.set_host_field(str(group), "profile", profile)
        for listener in self.listeners:
            listener(fp, new, True)
        return new

    def start_watch(self, sites: set[str], site_rate: float, burst_seconds: float, *,
                    dispatch: bool) -> bool:
        """Monitoring mode begins. Without a request rate (``-a rate``) the politeness budget
        ``site_rate`` requests/hour per site of ``sites`` becomes the rate and the channel
        budget a ceiling (the no-budget √ rule while it fits); either way at most
        ``burst_seconds`` of tokens at once. ``dispatch``: new article links go to the watch
        dispatcher (:meth:`found`; one process). Returns True when the rate is the default."""
        default = self.rate is None and site_rate > 0
        if default:
            self.rate = RateBudget(site_rate * max(len(sites), 1), now=self.now(),
                                   burst_seconds=burst_seconds)
            self.rate_note = (f"no -a rate: {max(len(sites), 1)} site(s) x {site_rate:.0f}/h, "
                              "NEWSCRAWL_WATCH_SITE_RATE")
        elif self.rate is not None:
            self.rate.burst_seconds = burst_seconds
            self.rate.set_rate(self.rate.rate * 3600.0)
        self.scheduler.budget_is_cap = default
        self.watching = dispatch
        return default

    def found(self, fp: str, *, news: bool, entry: Mapping[str, Any] | None = None) -> bool:
        """New article link ``fp`` (its record exists) found in a watched crawl: marked
        ``found: news`` (listed by a source on a revisit: published since) or ``backlog``
        (listed at a source's first visit), kept with its feed entry, and handed to the
        listeners like a release (the watch dispatcher requests it: news first). False (nothing
        done) for an unknown ``fp`` or one found before (another source listed it first)."""
        rec = self.records.get(fp)
        if rec is None or rec.get("found"):
            return False
        kind = "news" if news else "backlog"
        self.found_counts[kind] += 1
        fields: dict[str, Any] = {"found": kind}
        if entry and not rec.get("feed_entry"):
            fields["feed_entry"] = {k: v for k, v in entry.items() if k != "url"}
        self.set_fields(fp, **fields)
        self.release(fp)
        return True

    def release(self, fp: str) -> None:
        """Forget that ``fp`` was requested in this run (a request refused for now, e.g. by the
        request rate, or dropped as a duplicate): it may be requested again; listeners are told."""
        self.scheduled.discard(fp)
        for listener in self.listeners:
            listener(fp, self.records.get(fp), False)

    def set_fields(self, fp: str, **fields: Any) -> None:
        """Set record fields (weight, published, pagerank...) and mark the record dirty."""
        rec = self.records.get(fp)
        if rec is None:
            return
        changed = {k: v for k, v in fields.items() if rec.get(k) != v}
        if changed:
            rec.update(changed)
            self.dirty.add(fp)

    def add_source(self, fp: str, kind: str, url: str, *,
                   entry: Mapping[str, Any] | None = None) -> bool:
        """Record that source ``url`` of ``kind`` (``feed``, ``sitemap``, ``channel``) lists
        page ``fp``: its record's ``sources`` gain ``{kind, url, seen_at}`` (run clock) unless
        listed already; ``entry`` (what a feed or sitemap entry said: title, date) is kept in
        the record's ``feed_entry`` while it has none. Returns True when the record changed;
        nothing happens for an unknown ``fp``
        (:func:`newscrawl.algorithms.feedlinks.merge_source`)."""
        rec = self.records.get(fp)
        if rec is None:
            return False
        merged = merge_source(rec.get("sources"), kind, url, self.now())
        changed = merged is not None
        if merged is not None:
            rec["sources"] = merged
        if entry and not rec.get("feed_entry"):
            rec["feed_entry"] = dict(entry)
            changed = True
        if changed:
            self.dirty.add(fp)
        return changed

    # -- the durable frontier -------------------------------------------------------------------

    def discovered(self, parent: str, child: str) -> None:
        """Page ``parent`` links to ``child``, whose record the store may not hold yet: the
        visit of ``parent`` is not written before ``child``'s record (see :meth:`drain`)."""
        if child not in self.stored and child != parent:
            self.children.setdefault(parent, set()).add(child)

    def item_handed(self, item_fp: str) -> None:
        """The item of page ``item_fp`` reached the store's writer (or was dropped): its
        record may be written (an article's visit is never in the store before its text)."""
        self.awaiting_item.discard(self.aliases.get(item_fp, item_fp))

    def durable_cut(self, monotonic_now: float) -> float:
        """The ``time.monotonic()`` up to which the visits of the records just drained are all
        of them: ``monotonic_now``, or just before the earliest visit held back (seconds)."""
        times = [float(t) for fp in self.dirty & self.observed
                 if isinstance(t := (self.records.get(fp) or {}).get("last_visit"), (int, float))]
        if not times:
            return monotonic_now
        return min(monotonic_now, monotonic_now - (self.now() - min(times)) - 0.001)

    def pending_records(self) -> list[dict[str, Any]]:
        """Records of pages known and never visited (links found, not fetched yet: the
        durable frontier), evicted pages left out."""
        return [r for r in self.records.values()
                if not r.get("last_visit") and not r.get("evicted")]

    def add_pending(self, docs: Iterable[Mapping[str, Any]]) -> int:
        """Take the to-visit records the store holds and this run does not know (found by
        other workers since it started); returns how many."""
        added = 0
        for doc in docs:
            rec = from_doc(doc)
            fp = rec.get("fp")
            if fp and fp not in self.records and not rec.get("last_visit"):
                self.records[fp] = rec
                self.stored.add(fp)
                added += 1
        return added

    def _held(self, pending_after: float) -> set[str]:
        """Dirty records a periodic flush leaves for later (see :meth:`drain`)."""
        now = self.now()
        waiting = (self.scheduled - self.observed) & self.dirty
        # A to-visit record of this run is written once it waited ``pending_after`` seconds
        # unvisited; one visited before is written once, visited. Known pages requested again
        # are in the store already: their pending visit is durable.
        def young(fp: str) -> bool:
            found = (self.records.get(fp) or {}).get("first_seen")
            return isinstance(found, (int, float)) and now - found < pending_after

        keep = {fp for fp in waiting if fp in self.stored or young(fp)}
        keep |= (self.expanding | self.awaiting_item) & self.dirty
        for parent in [p for p, kids in self.children.items() if not kids - self.stored]:
            del self.children[parent]
        # A page's visit waits for the records of the links it found (and theirs, in turn).
        held_parents = {p for p in self.children if p in self.dirty}
        while True:
            more = {p for p in held_parents - keep if self.children[p] & keep}
            if not more:
                return keep
            keep |= more

    def drain(self, *, final: bool = True,
              pending_after: float = 0.0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Take the dirty records as ``(new docs, existing docs)`` for the store.

        With ``final=False`` (periodic flushes) some records stay dirty for a later flush:

        * a to-visit record created in this run, until it waited ``pending_after`` seconds
          (run clock) unvisited: a page fetched sooner is written once, visited, which saves
          a replace per page (an insert is ~5x cheaper on SecantusDB); one still waiting then
          is written as it is, so the links found and not fetched yet survive a crash (the
          durable frontier, drained first by the next run: :meth:`pending_records`);
        * the record of a page whose output is still being read (:attr:`expanding`) or whose
          item has not reached the store's writer (:attr:`awaiting_item`);
        * the visit of a page while a record of a link it found (:meth:`discovered`) is held:
          once a page's visit is in the store, so are the to-visit records of its links, so a
          later run that finds the page unchanged (HEAD) still has them.

        New docs come out to-visit records first (written before the visits that found them).
        """
        new: list[dict[str, Any]] = []
        old: list[dict[str, Any]] = []
        keep = set() if final else self._held(pending_after)
        batch = sorted(self.dirty - keep,
                       key=lambda fp: (bool((self.records.get(fp) or {}).get("last_visit")), fp))
        for fp in batch:
            rec = self.records.get(fp)
            if rec is None:
                continue
            (old if fp in self.stored else new).append(to_doc(rec))
        self.dirty = keep
        if final:
            self.children.clear()
        return new, old

    def mark_stored(self, fps: Iterable[str]) -> None:
        """Record that the store holds the records ``fps`` (later writes replace them)."""
        self.stored.update(fps)

    # -- hosts ----------------------------------------------------------------------------------

    def apply_pagerank(self, ranks: Mapping[str, float]) -> dict[str, float]:
        """Take new PageRank values (seed 002 §1.2) into the records; returns the ones that
        changed (relative change over 1e-6), which the store writes."""
        changed = {}
        for fp, value in ranks.items():
            rec = self.records.get(fp)
            if rec is None:
                continue
            old = rec.get("pagerank")
            if not isinstance(old, (int, float)) or abs(value - old) > 1e-6 * max(1.0, abs(old)):
                changed[fp] = value
                rec["pagerank"] = value
        return changed

    def eviction_victims(self, max_pages: int, miss_limit: int) -> list[str]:
        """The visited pages to evict to keep ``max_pages`` (seed 000: lowest PageRank first,
        pages failing ``miss_limit`` times in a row before them, seeds never), marked evicted
        in their records (:func:`newscrawl.algorithms.pagerank.eviction_order`)."""
        pages = {fp: PageInfo(pagerank=rec.get("pagerank"), misses=int(rec.get("misses") or 0),
                              protected=bool(rec.get("seed")))
                 for fp, rec in self.records.items()
                 if rec.get("last_visit") and not rec.get("evicted")}
        victims = eviction_order(pages, max_pages, miss_limit=miss_limit)
        for fp in victims:
            self.records[fp]["evicted"] = True
        return victims

    def host_policy(self, host: str) -> HostPolicy:
        """The learned change-detection policy of ``host`` (a fresh one when unknown)."""
        return self.hosts.get(host) or HostPolicy()

    def learn(self, host: str, event: str) -> tuple[HostPolicy, HostPolicy]:
        """Apply one host event; returns ``(before, after)``."""
        before = self.host_policy(host)
        after = learn_host(before, event, strikes=self.strikes)
        self.hosts[host] = after
        self.hosts_dirty.add(host)
        return before, after

    def host_field(self, host: str, name: str) -> Any:
        """Field ``name`` of ``host``'s document (None when unset)."""
        return self.host_extras.get(host, {}).get(name)

    def set_host_field(self, host: str, name: str, value: Any) -> None:
        """Keep ``value`` in field ``name`` of ``host``'s document (written with its policy)."""
        self.host_extras.setdefault(host, {})[name] = value
        self.hosts_dirty.add(host)

    def drain_hosts(self) -> list[dict[str, Any]]:
        """Take the changed host documents (policy and :attr:`host_extras`) for the store
        (``_id`` = host, ``updated`` on the run clock)."""
        docs = [{"_id": h, **self.host_extras.get(h, {}),
                 **(self.hosts[h].to_dict() if h in self.hosts else {}), "updated": _to_dt(self.now())}
                for h in sorted(self.hosts_dirty) if h in self.hosts or h in self.host_extras]
        self.hosts_dirty.clear()
        return docs

    # -- planning -------------------------------------------------------------------------------

    def due_records(self, *, channels: bool) -> list[dict[str, Any]]:
        """Due records of channel pages (``channels=True``) or article pages, in priority order
        (due time, then PageRank, then weight), seeds and pages already requested left out."""
        now = self.now()
        pick = [r for r in self.records.values()
                if (r.get("role") in CHANNEL_ROLES) == channels and not r.get("seed")
                and r["fp"] not in self.scheduled]
        return cast("list[dict[str, Any]]", list(due_order(pick, now)))

    def expected_yield(self, record: Mapping[str, Any]) -> float:
        """New articles a visit of channel page ``record`` is expected to show now."""
        return channel_yield(record, self.now(), self.cfg)

    # -- budget ---------------------------------------------------------------------------------

    def charge(self, site: str = "") -> bool:
        """Count one request that belongs to a visit under way (a verification GET): against
        the budget (False when it is spent) and the request rate, which may go into debt
        (:meth:`~newscrawl.algorithms.watch.RateBudget.charge`)."""
        if self.budget is not None and self.spent >= self.budget:
            return False
        if self.rate is not None:
            self.rate.charge(site, self.now())
        self.spent += 1
        return True

    def spend(self, site: str = "", dispatch: int | None = None) -> bool:
        """Count one request (of registered domain ``site``; ``dispatch``: its watch class,
        :meth:`~newscrawl.algorithms.watch.RateBudget.available`) against the budget and the
        request rate; False (and nothing counted) when either is exhausted for now."""
        if self.budget is not None and self.spent >= self.budget:
            return False
        if self.rate is not None and not self.rate.try_spend(site, self.now(), dispatch):
            return False
        self.spent += 1
        return True
