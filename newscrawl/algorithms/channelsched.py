"""Channel scheduler: channel pages revisited ∝ √(rate of new article links) within a budget.

The one scheduler of channel (entry and node) pages on the crawl path: batch re-runs take the
due times of channel records from it (:func:`newscrawl.algorithms.revisitplan.record_visit`
with ``scheduler=``, via :class:`newscrawl.crawlstate.RunState`), a long-running monitor asks
it what is due next and when, and ``benchmarks/revisit_sim.py`` drives the same object. Pure:
plain data in, plain data out, no clock read; every time is seconds since the epoch (UTC),
passed in.

The API (keys are page fingerprints, groups host names)
-------------------------------------------------------
* :meth:`ChannelScheduler.observe` ``(key, t, new_links, *, listed, changed, group)`` — one
  visit of a channel: how many article links (node links, for entry pages) it showed that were
  not known before (a ``304`` / unchanged HEAD is ``new_links=0``; the first visit only starts
  the channel's clock).
* :meth:`ChannelScheduler.plan` ``(now, budget_rate=None)`` — split the visit budget
  (visits/hour) over every known channel; returns each channel's interval (seconds). Cheap to
  call every few minutes; :meth:`~ChannelScheduler.interval` re-plans on its own when the last
  plan is older than ``replan_every``.
* :meth:`ChannelScheduler.next_due` ``(key, now=None) -> float`` — when the channel should be
  visited next (last visit + its interval).
* :meth:`ChannelScheduler.due` ``(now)`` — the channels due at ``now``, earliest first;
  :meth:`ChannelScheduler.pick` ``(now)`` — the one to fetch in a free request slot (earliest
  due, even a little early, never within ``min_interval`` of its last visit): what a
  work-conserving monitor loop does with every slot of its budget.
* :meth:`ChannelScheduler.export` / :meth:`~ChannelScheduler.restore` — a channel's estimate as
  plain numbers (the ``sched`` field of its crawl-state record);
  :meth:`~ChannelScheduler.export_profile` / :meth:`~ChannelScheduler.restore_profile` — a
  host's hour-of-day profile (the ``profile`` field of its ``hosts`` document), so estimates
  survive restarts.

The algorithm
-------------
* **Rate per channel.** ``r̂ᵢ(t) = b̂ᵢ · profile_host(t)``: the base rate ``b̂ᵢ`` is a
  Gamma-Poisson posterior mean over exponentially decayed sums (half-life ``half_life``),
  ``(Σ links + a) / (Σ ∫profile dt + a / prior)``, so it is Cho & Garcia-Molina's Poisson rate
  of a page ("Estimating frequency of change", ACM TOIT 2003; seed 002 models pages as Poisson
  processes with rate λᵢ) counted in new links rather than in changes. A visit whose new links
  filled the whole list (``new_links ≥ listed``) is censored — more may have scrolled off — and
  counts ``saturation_boost`` times.
* **Prior.** Empirical Bayes (Robbins 1956): the Gamma prior of a channel has the pooled rate
  ``(Σ links + a) / (Σ exposure + a / prior)`` of its host's channels (its site's publishing
  rate), whose own prior is the pooled rate of every channel, whose prior is ``prior_rate``
  (1 link/hour). A new channel starts there, so the first hour is not spent at the minimum
  interval nor at the maximum; and a monitor that started minutes ago ranks its channels by
  what they showed, not by 18 minutes of pseudo-exposure at 1 link/hour.
* **Hour of day.** Each host has a :class:`DailyProfile` (24 bins, mean 1) of when it
  publishes, fitted to its channels' hour-of-day counts as a multiplicative Poisson model
  ``rate(i, hour) = bᵢ · p_hour`` by iterative proportional fitting
  (:meth:`ChannelScheduler.fit_profiles`), so busy hours get more visits and the night fewer —
  the √λ oracle of the simulation, which allocates on mean rates, cannot.
* **√ allocation.** A channel visited ``f`` times per second whose new articles arrive at rate
  ``λ`` shows each after ``1/(2f)`` on average; the article-weighted mean delay
  ``Σ λᵢ/(2fᵢ) / Σ λᵢ`` under ``Σ fᵢ = B`` is smallest for ``fᵢ ∝ √λᵢ`` (Lagrange) — the
  square-root allocation of Cho & Garcia-Molina ("Synchronizing a database to improve
  freshness", SIGMOD 2000; "Effective page refresh policies for web crawlers", ACM TODS 28(4),
  2003). :func:`sqrt_allocation` computes it exactly (water-filling) with a per-channel floor
  that visits a channel before ``max_fill`` of its list turned over (no article scrolls off
  unseen), and clamps every interval to ``[min_interval, max_interval]``
  (``NEWSCRAWL_REVISIT_MIN/MAX_INTERVAL``).
* **No budget** (``budget_per_hour = 0``): ``fᵢ = √(r̂ᵢ / reference_interval)`` — a channel
  publishing one link per ``reference_interval`` (1 h) is visited once per that interval, one
  publishing 4× as much twice as often.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from newscrawl.algorithms.revisit import Observation, check_bounds, clamp_interval

__all__ = [
    "ChannelScheduler",
    "DailyProfile",
    "Level",
    "RateState",
    "sqrt_allocation",
    "water_level",
]

DAY = 86400.0
HOUR = 3600.0
#: Version of the exported state (``export`` / ``export_profile``).
STATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class Level:
    """The solution of one √ allocation: ``fᵢ = clip(c·√rateᵢ, scale·loᵢ, hi)`` visits/second.

    ``c`` is the water level (``inf``: every channel with a rate at the ceiling), ``scale`` < 1
    only when even the floors exceed the budget (they are then scaled down together), ``hi`` =
    ``1 / min_interval``.
    """

    c: float
    scale: float
    hi: float

    def frequency(self, root: float, lo: float) -> float:
        """Visits per second of a channel with ``√rate = root`` and floor ``lo``."""
        if root <= 0:
            return min(lo * self.scale, self.hi)
        if math.isinf(self.c):
            return self.hi
        return min(max(self.c * root, lo * self.scale), self.hi)


def water_level(roots: list[float], los: list[float], hi: float, budget: float) -> Level:
    """The level ``c`` with ``Σ clip(c·rootᵢ, loᵢ, hi) = budget`` (visits/second).

    ``roots`` are ``√rate`` (0 for no rate), ``los`` the floors (visits/second, ≤ ``hi``).
    Exact: ``g(c)`` is piecewise linear and non-decreasing, its breakpoints are walked in order.
    When the floors alone exceed ``budget`` they are scaled down together (``scale < 1``); when
    every channel at the ceiling fits, ``c = inf`` (the budget is not spent).
    """
    budget = budget if math.isfinite(budget) and budget > 0 else 0.0
    total_lo = math.fsum(los)
    if total_lo >= budget:
        return Level(0.0, budget / total_lo if total_lo > 0 else 0.0, hi)
    if math.fsum(hi if s > 0 else lo for s, lo in zip(roots, los)) <= budget:
        return Level(math.inf, 1.0, hi)
    events: list[tuple[float, int, int]] = []  # (c, +1 start / -1 stop, index)
    for i, (s, lo) in enumerate(zip(roots, los)):
        if s > 0:
            events.append((lo / s, 1, i))
            events.append((hi / s, -1, i))
    events.sort()
    # status: 0 = at its floor (before its start), 1 = on the √ line, 2 = at the ceiling.
    # ``slope`` is re-summed exactly after every removal: subtracting a large root leaves a
    # rounding residue that, multiplied by a huge ``c`` (tiny rates), would swamp the sum.
    status = [0] * len(roots)
    active: set[int] = set()
    fixed = total_lo
    slope = 0.0
    for c_ev, kind, i in events:
        if fixed + slope * c_ev >= budget:
            break
        if kind == 1:
            status[i] = 1
            active.add(i)
            fixed -= los[i]
            slope += roots[i]
        else:
            status[i] = 2
            active.discard(i)
            fixed += hi
            slope = math.fsum(roots[j] for j in active)
    slope = math.fsum(roots[j] for j in active)
    fixed = math.fsum(lo if st == 0 else hi for lo, st in zip(los, status) if st != 1)
    return Level((budget - fixed) / slope if slope > 0 else 0.0, 1.0, hi)


def _root(rate: float) -> float:
    return math.sqrt(rate) if 0 < rate < math.inf else 0.0  # NaN fails both comparisons


def _floor(f: float, base_lo: float, hi: float) -> float:
    return min(f, hi) if base_lo < f < math.inf else base_lo


def _interval(f: float, min_interval: float, max_interval: float) -> float:
    interval = 1.0 / f if f > 0 else max_interval
    return float(min(max(interval, min_interval), max_interval))


def sqrt_allocation(
    rates: Mapping[Hashable, float],
    budget: float,
    *,
    min_interval: float,
    max_interval: float,
    floors: Mapping[Hashable, float] | None = None,
) -> dict[Hashable, float]:
    """Split a visit budget over pages ∝ √rate; returns the revisit interval of each page (s).

    ``rates`` are new items per second, ``budget`` visits per second. Visit frequencies are
    ``fᵢ = clip(c·√rateᵢ, loᵢ, 1/min_interval)`` with ``loᵢ = max(1/max_interval, floorᵢ)``
    (``floors`` are visits per second a page needs, e.g. not to drop articles off its list) and
    ``c`` chosen so that ``Σ fᵢ = budget`` (:func:`water_level`). When even the floors exceed
    the budget they are scaled down together; when every page is at the minimum interval the
    budget is not spent. Cho & Garcia-Molina (2000, 2003) for the √ rule.

    Raises:
        ValueError: bad bounds (:func:`~newscrawl.algorithms.revisit.check_bounds`).
    """
    check_bounds(min_interval, max_interval)
    keys = list(rates)
    if not keys:
        return {}
    hi = 1.0 / min_interval
    base_lo = 1.0 / max_interval
    floor_of = floors or {}
    roots = [_root(rates[k]) for k in keys]
    los = [_floor(floor_of.get(k, 0.0), base_lo, hi) for k in keys]
    level = water_level(roots, los, hi, budget)
    return {k: _interval(level.frequency(s, lo), min_interval, max_interval)
            for k, s, lo in zip(keys, roots, los)}


@dataclass(slots=True)
class DailyProfile:
    """Learned hour-of-day shape of a host's publishing, mean 1 (UTC hours, ``bins`` per day).

    ``links`` per hour are the new links of the host's channels, ``expected`` the links a flat
    profile would give there (each channel's base rate × the seconds it was watched in that
    hour); the profile is ``(links + prior) / (expected + prior)``, smoothed over neighbouring
    hours and normalised to mean 1. :meth:`ChannelScheduler.fit_profiles` sets both sums (a
    fit of the channels' hour-of-day counts). Sums decay with ``half_life`` so the shape follows schedule changes; a host with no
    data has a flat profile. The shape is recomputed at most every ``refresh`` seconds.

    Decay is lazy: sums are stored scaled to the reference time ``ref`` (a value stored at
    ``ref`` is worth ``stored · 2^{−(t − ref)/half_life}`` at ``t``).
    """

    bins: int = 24
    half_life: float = 7 * DAY
    prior: float = 1.0
    smooth: float = 0.25
    refresh: float = 900.0
    links: list[float] = field(default_factory=list)
    expected: list[float] = field(default_factory=list)
    ref: float | None = None
    _shape: list[float] | None = None
    _shape_at: float = -math.inf
    _cum: list[float] | None = None
    _fit_at: float = -math.inf

    def __post_init__(self) -> None:
        if len(self.links) != self.bins:
            self.links = [0.0] * self.bins
        if len(self.expected) != self.bins:
            self.expected = [0.0] * self.bins

    @property
    def width(self) -> float:
        return DAY / self.bins

    def bin_of(self, t: float) -> int:
        """The bin of time ``t`` (UTC hour of day for 24 bins)."""
        return int((t % DAY) // self.width) % self.bins

    def shape(self, now: float | None = None) -> list[float]:
        """The profile, one multiplier per bin, mean 1."""
        stale = now is not None and now - self._shape_at >= self.refresh
        if self._shape is None or stale:
            f = 1.0
            if now is not None and self.ref is not None and now > self.ref:
                f = 0.5 ** ((now - self.ref) / self.half_life)
            raw = [(a * f + self.prior) / (e * f + self.prior) for a, e in zip(self.links, self.expected)]
            n, k = self.bins, self.smooth
            sm = [k * raw[(i - 1) % n] + (1 - 2 * k) * raw[i] + k * raw[(i + 1) % n] for i in range(n)]
            mean = sum(sm) / n
            self._shape = [x / mean for x in sm] if mean > 0 else [1.0] * n
            cum = [0.0]
            for x in self._shape:
                cum.append(cum[-1] + x * self.width)
            self._cum = cum
            if now is not None:
                self._shape_at = now
        return self._shape

    def at(self, t: float) -> float:
        """The profile's multiplier at time ``t``."""
        return self.shape(t)[self.bin_of(t)]

    def cumulative(self, t: float, now: float | None = None) -> float:
        """``∫ profile`` from the epoch to ``t`` (profile-adjusted seconds), with the shape as of
        ``now``: O(1), for solving due times."""
        shape = self.shape(now)
        cum = self._cum
        assert cum is not None
        day = math.floor(t / DAY)
        x = t - day * DAY
        b = min(int(x // self.width), self.bins - 1)
        return day * cum[-1] + cum[b] + shape[b] * (x - b * self.width)

    def spans(self, t0: float, t1: float) -> list[tuple[int, float]]:
        """``(bin, seconds)`` of ``(t0, t1]`` for the bins it touches (whole days: every bin)."""
        if not (t1 > t0) or not math.isfinite(t1 - t0):
            return []
        w = self.width
        days = math.floor((t1 - t0) / DAY)
        if days:
            out = {i: days * w for i in range(self.bins)}
            t0 += days * DAY
        else:
            out = {}
        k = math.floor(t0 / w)
        for _ in range(self.bins + 2):  # at most a day's worth of bins remains
            if k * w >= t1:
                break
            seconds = min(t1, (k + 1) * w) - max(t0, k * w)
            if seconds > 0:
                b = k % self.bins
                out[b] = out.get(b, 0.0) + seconds
            k += 1
        return list(out.items())

    def overlaps(self, t0: float, t1: float) -> list[float]:
        """Seconds of ``(t0, t1]`` falling in each bin."""
        out = [0.0] * self.bins
        for b, seconds in self.spans(t0, t1):
            out[b] += seconds
        return out

    def integral(self, t0: float, t1: float, spans: list[tuple[int, float]] | None = None) -> float:
        """``∫ profile`` over ``(t0, t1]``: profile-adjusted seconds."""
        shape = self.shape(t1)
        return sum(shape[b] * x for b, x in (self.spans(t0, t1) if spans is None else spans))

    def to_dict(self) -> dict[str, Any]:
        """Plain numbers for the host's store document (``ref`` in epoch seconds)."""
        return {"v": STATE_VERSION, "bins": self.bins, "links": list(self.links),
                "expected": list(self.expected), "ref": self.ref}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, **params: Any) -> DailyProfile | None:
        """The inverse of :meth:`to_dict` (``params``: half_life, prior, smooth); None for
        junk (a wrong version, bin count or non-numeric sums)."""
        if not isinstance(data, Mapping) or data.get("v") != STATE_VERSION:
            return None
        bins, links, expected = data.get("bins"), data.get("links"), data.get("expected")
        if (not isinstance(bins, int) or not 1 <= bins <= 24 * 60 or not isinstance(links, list)
                or not isinstance(expected, list) or len(links) != bins or len(expected) != bins):
            return None
        a = [_num(x, math.nan) for x in links]
        e = [_num(x, math.nan) for x in expected]
        if any(math.isnan(x) or x < 0 for x in a + e):
            return None
        ref = _opt_num(data.get("ref"))
        prof = cls(bins=bins, links=a, expected=e, ref=ref, **params)
        if ref is not None:  # a fitted profile's ``ref`` is its fit time: refitted as if kept
            prof._fit_at = ref
        return prof


def _num(value: Any, default: float = 0.0) -> float:
    """A finite float from stored data, else ``default`` (junk is never raised on)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return default
    return float(value)


def _opt_num(value: Any) -> float | None:
    v = _num(value, math.nan)
    return None if math.isnan(v) else v


@dataclass(slots=True)
class RateState:
    """Decayed sums behind one channel's base rate of new links (storable as plain numbers).

    ``links`` = Σ new links seen, ``exposure`` = Σ profile-adjusted seconds they were seen over,
    both decayed to ``updated`` with the scheduler's half-life; ``recent_links`` /
    ``recent_exposure`` are the same with the short half-life used for the drop-off floor.
    """

    first_visit: float | None = None
    last_visit: float | None = None
    updated: float | None = None
    links: float = 0.0
    exposure: float = 0.0
    recent_links: float = 0.0
    recent_exposure: float = 0.0
    listed: int | None = None
    visits: int = 0
    #: seconds of watching the first visit's listing was worth (:mod:`~newscrawl.algorithms.
    #: listing`; 0: the listing told nothing and the channel is explored)
    evidence: float = 0.0
    #: the last visit that saw the page itself (not a 304 / an unchanged HEAD)
    last_full: float | None = None
    #: new links and seconds watched by hour-of-day bin (decayed with the profile half-life),
    #: what the host's :class:`DailyProfile` is fitted to (empty until the first gap)
    bin_links: list[float] = field(default_factory=list)
    bin_seconds: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain numbers (times as epoch seconds), for the crawl-state record."""
        return {"v": STATE_VERSION, "first_visit": self.first_visit, "last_visit": self.last_visit,
                "updated": self.updated, "links": self.links, "exposure": self.exposure,
                "recent_links": self.recent_links, "recent_exposure": self.recent_exposure,
                "listed": self.listed, "visits": self.visits, "last_full": self.last_full,
                "evidence": self.evidence,
                "bin_links": list(self.bin_links), "bin_seconds": list(self.bin_seconds)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RateState:
        """The inverse of :meth:`to_dict`; junk values become the defaults (never raised on)."""
        listed = data.get("listed")
        visits = data.get("visits")
        return cls(
            first_visit=_opt_num(data.get("first_visit")),
            last_visit=_opt_num(data.get("last_visit")),
            updated=_opt_num(data.get("updated")),
            links=max(_num(data.get("links")), 0.0),
            exposure=max(_num(data.get("exposure")), 0.0),
            recent_links=max(_num(data.get("recent_links")), 0.0),
            recent_exposure=max(_num(data.get("recent_exposure")), 0.0),
            listed=int(listed) if isinstance(listed, int) and listed > 0 else None,
            visits=int(visits) if isinstance(visits, int) and visits > 0 else 0,
            last_full=_opt_num(data.get("last_full")),
            evidence=max(_num(data.get("evidence")), 0.0),
            **_bins(data.get("bin_links"), data.get("bin_seconds")),
        )


def _bins(links: Any, seconds: Any) -> dict[str, list[float]]:
    """Stored per-bin sums when both are lists of one length of numbers ≥ 0, else none."""
    if (not isinstance(links, list) or not isinstance(seconds, list) or len(links) != len(seconds)
            or not 1 <= len(links) <= 24 * 60):
        return {}
    a = [_num(x, math.nan) for x in links]
    e = [_num(x, math.nan) for x in seconds]
    if any(math.isnan(x) or x < 0 for x in a + e):
        return {}
    return {"bin_links": a, "bin_seconds": e}


@dataclass
class ChannelScheduler:
    """Revisit intervals and due times of channel pages from their yield of new article links.

    See the module docstring for the API and the algorithm. Attributes (all times in seconds,
    rates in links/second unless named per hour):

    * ``budget_per_hour`` — channel visits per hour split over all channels (0: no budget, the
      ``reference_interval`` rule); ``min_interval`` / ``max_interval`` — the clamp.
    * ``index_size`` — links a channel lists when it never said (its list length otherwise);
      ``max_fill`` — share of the list a visit may expect to be new (the drop-off floor).
    * ``half_life`` / ``recent_half_life`` — decay of the long-run / recent rate sums;
      ``prior_rate`` / ``prior_links`` — the default prior (1 link/hour) and its weight.
    * ``profile_*`` — the hour-of-day profiles (:class:`DailyProfile`): half-life, prior,
      smoothing, the links a host's channels must have shown before its profile is fitted
      (``profile_min_links``) and the rounds of each fit (``profile_iterations``,
      :meth:`fit_profiles`).
    * ``explore_interval`` — a channel whose first visit's listing told nothing about its rate
      (no dated items; :mod:`~newscrawl.algorithms.listing`) is visited again this soon, so its
      rate is measured instead of assumed (None: planned from the prior; monitoring mode sets
      ``NEWSCRAWL_WATCH_EXPLORE_INTERVAL``).
    * ``budget_is_cap`` — ``budget_per_hour`` is a ceiling, not a target: while the no-budget
      rule (``reference_interval``) costs less, it applies (monitoring without ``-a rate``).
    * ``replan_every`` — :meth:`interval` re-plans when the plan is older than this.
    * ``verify_below`` — :meth:`verify_due` asks for a full GET when "unchanged since the
      last full answer" is less likely than this.

    Defaults (half-lives, priors, ``max_fill``) were chosen on ``benchmarks/revisit_sim.py``.

    Raises:
        ValueError: bad bounds.
    """

    budget_per_hour: float
    min_interval: float
    max_interval: float
    index_size: int = 20
    max_fill: float = 0.35
    half_life: float = 2 * DAY
    recent_half_life: float = HOUR
    profile_half_life: float = 7 * DAY
    profile_prior: float = 1.0
    profile_smooth: float = 0.25
    profile_min_links: float = 20.0
    profile_iterations: int = 3
    prior_rate: float = 24.0 / DAY
    prior_links: float = 0.3
    saturation_boost: float = 2.0
    reference_interval: float = HOUR
    explore_interval: float | None = None
    budget_is_cap: bool = False
    replan_every: float = 300.0
    verify_below: float = 0.5
    channels: dict[Hashable, RateState] = field(default_factory=dict)
    groups: dict[Hashable, Hashable] = field(default_factory=dict)
    profiles: dict[Hashable, DailyProfile] = field(default_factory=dict)
    #: intervals of the last :meth:`plan` (seconds) and when it ran
    planned: dict[Hashable, float] = field(default_factory=dict)
    #: due time of every visited channel under the current plan (epoch seconds)
    due_at: dict[Hashable, float] = field(default_factory=dict)
    planned_at: float | None = None
    _level: Level | None = None
    _group_prior: dict[Hashable, float] = field(default_factory=dict)
    _global_prior: float = 24.0 / DAY
    #: host profiles changed since :meth:`drain_profiles`
    profiles_dirty: set[Hashable] = field(default_factory=set)
    #: hosts observed since their profile was last fitted, and the channels of each host
    _fit_due: set[Hashable] = field(default_factory=set)
    _members: dict[Hashable, set[Hashable]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_bounds(self.min_interval, self.max_interval)
        self._global_prior = self.prior_rate

    # -- learning --------------------------------------------------------------------------------

    def profile(self, key: Hashable) -> DailyProfile:
        """The daily profile of channel ``key``'s host (created flat when unknown)."""
        return self.profile_of(self.groups.get(key, key))

    def profile_of(self, group: Hashable) -> DailyProfile:
        """The daily profile of host ``group`` (created flat when unknown)."""
        prof = self.profiles.get(group)
        if prof is None:
            prof = self.profiles[group] = DailyProfile(
                half_life=self.profile_half_life, prior=self.profile_prior, smooth=self.profile_smooth
            )
        return prof

    def observe(self, key: Hashable, t: float, new_links: int | None, *, listed: int | None = None,
                changed: bool | None = None, group: Hashable | None = None,
                evidence: tuple[float, float] | None = None) -> None:
        """Record one visit of channel ``key`` at ``t`` that showed ``new_links`` links not
        known before (None: not counted; then ``changed`` says whether at least one was).

        ``listed``: links the channel listed (``new_links >= listed`` means more may have
        scrolled off unseen). ``group``: the channel's host, for the daily profile. The first
        visit only starts the channel's clock (every link is new then). A time that is not
        finite is ignored; one at or before the last visit counts the visit only. A visit that
        counted links (``new_links`` not None) saw the page itself (see :meth:`verify_due`).

        ``evidence``: ``(rate links/s, seconds)`` the first visit's listing showed
        (:func:`newscrawl.algorithms.listing.listing_evidence`): on a channel's first visit it
        counts as ``seconds`` of watching that showed ``rate × seconds`` new links, so the first
        revisit is planned from the page; ignored on later visits and when not finite.
        """
        self.observe_visit(key, Observation(t, bool(changed), new_links=new_links, listed=listed),
                           group=group, evidence=evidence)

    def observe_visit(self, key: Hashable, obs: Observation, *, group: Hashable | None = None,
                      evidence: tuple[float, float] | None = None) -> None:
        """:meth:`observe` with an :class:`~newscrawl.algorithms.revisit.Observation`."""
        if group is not None:
            self.groups[key] = group
        self._members.setdefault(self.groups.get(key, key), set()).add(key)
        st = self.channels.get(key)
        if st is None:
            st = self.channels[key] = RateState()
        t = obs.time
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            return
        st.visits += 1
        if obs.new_links is not None and (st.last_full is None or t > st.last_full):
            st.last_full = t
        if obs.listed is not None and obs.listed > 0:
            st.listed = int(obs.listed)
        prev = st.last_visit
        if st.first_visit is None or t < st.first_visit:
            st.first_visit = t
        if prev is None or t <= prev:
            st.last_visit = t if prev is None else max(prev, t)
            if prev is None and evidence is not None:
                self._take_evidence(st, t, evidence)
            return
        st.last_visit = t
        if obs.new_links is None:
            links = 1.0 if obs.changed else 0.0  # a change shows at least one new link
        else:
            links = float(max(obs.new_links, 0))
        listed = st.listed or self.index_size
        if obs.new_links is not None and listed > 0 and obs.new_links >= listed:
            links *= self.saturation_boost
        prof = self.profile(key)
        spans = prof.spans(prev, t)
        exposure = prof.integral(prev, t, spans)
        self._decay(st, t)
        st.links += links
        st.exposure += exposure
        st.recent_links += links
        st.recent_exposure += exposure
        # The hour-of-day sums the host's profile is fitted to (:meth:`fit_profiles`): the
        # seconds watched in each bin, and the links spread over them ∝ the current profile
        # (the E-step of EM for counts censored to the gap between visits).
        if len(st.bin_links) != prof.bins or len(st.bin_seconds) != prof.bins:
            st.bin_links = [0.0] * prof.bins
            st.bin_seconds = [0.0] * prof.bins
        shape = prof.shape(t)
        weights = [shape[b] * x for b, x in spans]
        total = sum(weights)
        for (b, x), wgt in zip(spans, weights):
            st.bin_seconds[b] += x
            if total > 0:
                st.bin_links[b] += links * wgt / total
        g = self.groups.get(key, key)
        self._fit_due.add(g)
        if t - prof._fit_at >= prof.refresh:
            self.fit_profiles(t, hosts=[g])

    def _take_evidence(self, st: RateState, t: float, evidence: tuple[float, float]) -> None:
        """The first visit's listing as ``seconds`` of watching that showed ``rate × seconds``
        links (long-run and recent sums alike; no hour-of-day bins: its times are not ours)."""
        try:
            rate, seconds = float(evidence[0]), float(evidence[1])
        except (TypeError, ValueError, IndexError):
            return
        if not (math.isfinite(rate) and math.isfinite(seconds)) or rate < 0 or seconds <= 0:
            return
        self._decay(st, t)
        st.links += rate * seconds
        st.exposure += seconds
        st.recent_links += rate * seconds
        st.recent_exposure += seconds
        st.evidence = seconds

    def forget(self, key: Hashable) -> None:
        """Drop channel ``key`` (a page gone or evicted)."""
        self._members.get(self.groups.get(key, key), set()).discard(key)
        self.channels.pop(key, None)
        self.groups.pop(key, None)
        self.planned.pop(key, None)
        self.due_at.pop(key, None)

    def _decay(self, st: RateState, t: float) -> None:
        if st.updated is not None and t > st.updated:
            dt = t - st.updated
            d = 0.5 ** (dt / self.half_life)
            dr = 0.5 ** (dt / self.recent_half_life)
            st.links *= d
            st.exposure *= d
            st.recent_links *= dr
            st.recent_exposure *= dr
            dp = 0.5 ** (dt / self.profile_half_life)
            st.bin_links = [x * dp for x in st.bin_links]
            st.bin_seconds = [x * dp for x in st.bin_seconds]
        if st.updated is None or t > st.updated:
            st.updated = t

    def _prior(self, key: Hashable) -> float:
        """Prior base rate of ``key``: its host's pooled rate (as of the last plan), else the
        pooled rate of every channel, else ``prior_rate``."""
        return self._group_prior.get(self.groups.get(key, key), self._global_prior)

    def _base(self, st: RateState, now: float, prior: float) -> float:
        d = 1.0
        if st.updated is not None and now > st.updated:
            d = 0.5 ** ((now - st.updated) / self.half_life)
        a = self.prior_links
        return (st.links * d + a) / (st.exposure * d + a / prior)

    def _recent(self, st: RateState, now: float) -> float:
        if st.recent_exposure <= 0:
            return 0.0
        d = 1.0
        if st.updated is not None and now > st.updated:
            d = 0.5 ** ((now - st.updated) / self.recent_half_life)
        return st.recent_links * d / (st.recent_exposure * d + self.recent_half_life / 4)

    def _shapes(self, prof: DailyProfile, now: float) -> tuple[float, float]:
        """This bin's multiplier, and the larger of this bin's and the next one's."""
        shape = prof.shape(now)
        b = prof.bin_of(now)
        here = shape[b]
        return here, max(here, shape[(b + 1) % prof.bins])

    # -- estimates -------------------------------------------------------------------------------

    def base_rate(self, key: Hashable, now: float) -> float:
        """Estimated mean new links per second of channel ``key`` (no hour-of-day shape)."""
        st = self.channels.get(key)
        prior = self._prior(key)
        if st is None:
            return prior
        return self._base(st, now, prior)

    def rate(self, key: Hashable, now: float) -> float:
        """Estimated new links per second of channel ``key`` at ``now`` (hour of day included)."""
        return self.base_rate(key, now) * self._shapes(self.profile(key), now)[0]

    def fill_rate(self, key: Hashable, now: float) -> float:
        """A cautious rate for the drop-off floor: the higher of the long-run and the recent
        (short half-life) base rate, at the higher of this hour's and the next hour's profile."""
        st = self.channels.get(key)
        base = self.base_rate(key, now)
        if st is not None:
            base = max(base, self._recent(st, now))
        return base * self._shapes(self.profile(key), now)[1]

    def expected_links(self, key: Hashable, now: float) -> float:
        """New links a visit of channel ``key`` at ``now`` is expected to show: the base rate
        times ``∫ profile`` since its last visit (the prior rate × 1 h for a channel never
        visited)."""
        st = self.channels.get(key)
        if st is None or st.last_visit is None:
            return self.base_rate(key, now) * HOUR
        if now <= st.last_visit:
            return 0.0
        prof = self.profile(key)
        area = prof.cumulative(now, now) - prof.cumulative(st.last_visit, now)
        return self.base_rate(key, now) * max(area, 0.0)

    def verify_due(self, key: Hashable, now: float) -> bool:
        """Should the next visit of channel ``key`` fetch the page itself, whatever its
        validators say (an unconditional GET)?

        True when the visits since the page was last seen in full all answered "unchanged"
        (``304`` / HEAD) although the links expected over that time make that improbable:
        ``P(no new link) = e^{−E} < verify_below`` (½: the page is more likely changed than
        not, so the unconditional GET costs little; ``E`` over the estimated rate and the
        hour-of-day profile since the last full answer). Validators that stay the same while
        the page changes (refreshed only every few hours, cached by a CDN) otherwise hide new
        articles until the list has scrolled past them; the rate estimate itself stays right,
        as the full answer counts every link that piled up.
        """
        st = self.channels.get(key)
        if st is None or st.last_full is None or st.last_visit is None:
            return False
        if st.last_visit <= st.last_full or now <= st.last_full:
            return False
        prof = self.profile(key)
        area = prof.cumulative(now, now) - prof.cumulative(st.last_full, now)
        return self.base_rate(key, now) * area > -math.log(self.verify_below)

    def _root_floor(self, key: Hashable, now: float,
                    shapes: tuple[float, float] | None = None) -> tuple[float, float]:
        """``(√rate, floor visits/s)`` of one channel at ``now``."""
        m = shapes or self._shapes(self.profile(key), now)
        st = self.channels.get(key)
        base = self.base_rate(key, now)
        fill = base if st is None else max(base, self._recent(st, now))
        listed = (st.listed if st is not None else None) or self.index_size
        floor = fill * m[1] / max(self.max_fill * listed, 1e-9)
        return _root(base * m[0]), _floor(floor, 1.0 / self.max_interval, 1.0 / self.min_interval)

    # -- planning --------------------------------------------------------------------------------

    def _update_group_priors(self, now: float) -> None:
        """Empirical-Bayes priors (Robbins 1956; Gamma–Poisson shrinkage): the pooled rate
        ``(Σ links + a) / (Σ exposure + a / prior)`` of every channel (prior ``prior_rate``) and
        of each host's channels (prior the global one), sums decayed to ``now``.

        Pooled sums, not the mean of the channels' own estimates: those are each shrunk to
        ``prior_rate`` with ``a / prior_rate`` seconds of pseudo-exposure (18 minutes at the
        defaults), which for a channel watched only minutes (a new monitor) drags every estimate
        to 1 link/hour and flattens the √ allocation towards round-robin.
        """
        sums: dict[Hashable, list[float]] = {}
        total_links = total_exposure = 0.0
        for key, st in self.channels.items():
            if st.exposure > 0:
                d = 1.0
                if st.updated is not None and now > st.updated:
                    d = 0.5 ** ((now - st.updated) / self.half_life)
                s = sums.setdefault(self.groups.get(key, key), [0.0, 0.0])
                s[0] += st.links * d
                s[1] += st.exposure * d
                total_links += st.links * d
                total_exposure += st.exposure * d
        a = self.prior_links
        self._global_prior = (total_links + a) / (total_exposure + a / self.prior_rate)
        self._group_prior = {g: (links + a) / (exposure + a / self._global_prior)
                             for g, (links, exposure) in sums.items()}

    def fit_profiles(self, now: float, hosts: Iterable[Hashable] | None = None) -> int:
        """Fit the daily profile of each host observed since its last fit (or of ``hosts``)
        to its channels' hour-of-day sums; returns how many profiles were fitted.

        The model is the multiplicative Poisson one, ``rate(channel i, bin b) = bᵢ · p_b``
        (a Poisson log-linear model with channel and hour effects), fitted by alternating
        the two sets of maximum-likelihood equations — iterative proportional fitting
        (Deming & Stephan 1940; Bishop, Fienberg & Holland, "Discrete Multivariate
        Analysis", 1975, ch. 3): ``bᵢ = Σ_b Lᵢb / Σ_b p_b Sᵢb``, then
        ``p_b = (Σᵢ Lᵢb + prior) / (Σᵢ bᵢ Sᵢb + prior)``, smoothed over neighbouring hours
        and normalised to mean 1 (:meth:`DailyProfile.shape`), ``profile_iterations`` rounds
        from the current shape. Every channel teaches its host from its first gap: each
        channel's own base cancels out, so a channel watched only in the busy morning does
        not make the morning look average (what an online update with an early base rate
        would do). A host whose channels carry fewer than ``profile_min_links`` links keeps
        its profile (flat, or as restored). At most every ``DailyProfile.refresh`` seconds
        per host.
        """
        todo = set(self._fit_due if hosts is None else hosts)
        fitted = 0
        for g in todo:
            prof = self.profile_of(g)
            if hosts is None and now - prof._fit_at < prof.refresh:
                continue
            self._fit_due.discard(g)
            sts = [st for k in self._members.get(g, ()) if (st := self.channels.get(k)) is not None
                   and self.groups.get(k, k) == g and len(st.bin_seconds) == prof.bins]
            n = prof.bins
            links_b = [0.0] * n
            for st in sts:
                d = 1.0
                if st.updated is not None and now > st.updated:
                    d = 0.5 ** ((now - st.updated) / self.profile_half_life)
                for b in range(n):
                    links_b[b] += st.bin_links[b] * d
            if sum(links_b) < self.profile_min_links:
                continue
            p = prof.shape(now)
            expected = [0.0] * n
            for _ in range(self.profile_iterations):
                expected = [0.0] * n
                for st in sts:
                    area = sum(pb * x for pb, x in zip(p, st.bin_seconds))
                    if area <= 0:
                        continue
                    base = sum(st.bin_links) / area
                    d = 1.0
                    if st.updated is not None and now > st.updated:
                        d = 0.5 ** ((now - st.updated) / self.profile_half_life)
                    for b in range(n):
                        expected[b] += base * st.bin_seconds[b] * d
                prof.links, prof.expected, prof.ref = list(links_b), expected, now
                prof._shape = None
                p = prof.shape(now)
            prof._fit_at = now
            self.profiles_dirty.add(g)
            fitted += 1
        return fitted

    def plan(self, now: float, budget_rate: float | None = None,
             keys: Iterable[Hashable] | None = None) -> dict[Hashable, float]:
        """Split the budget over the channels at ``now``; returns their intervals (seconds).

        Args:
            now: epoch seconds.
            budget_rate: channel visits per hour to split (replaces ``budget_per_hour``; None:
                keep it). 0: no budget, ``fᵢ = √(r̂ᵢ / reference_interval)``.
            keys: the channels to plan (default: every known one); others keep their interval.

        The plan's water level is kept, so :meth:`interval` of a channel whose estimate changed
        since is consistent with it until the next plan.
        """
        if budget_rate is not None:
            self.budget_per_hour = budget_rate if math.isfinite(budget_rate) and budget_rate > 0 else 0.0
        self._update_group_priors(now)
        self.fit_profiles(now)
        keys = list(self.channels) if keys is None else list(keys)
        shapes: dict[int, tuple[float, float]] = {}
        roots: list[float] = []
        los: list[float] = []
        for k in keys:
            prof = self.profile(k)
            m = shapes.get(id(prof))
            if m is None:
                m = shapes[id(prof)] = self._shapes(prof, now)
            s, lo = self._root_floor(k, now, m)
            roots.append(s)
            los.append(lo)
        hi = 1.0 / self.min_interval
        reference = Level(1.0 / math.sqrt(self.reference_interval), 1.0, hi)
        if self.budget_per_hour > 0 and not (
                self.budget_is_cap and sum(reference.frequency(s, lo) for s, lo in zip(roots, los))
                <= self.budget_per_hour / HOUR):
            level = water_level(roots, los, hi, self.budget_per_hour / HOUR)
        else:
            level = reference
        self._level = level
        self.planned_at = now
        out: dict[Hashable, float] = {}
        for k, s, lo in zip(keys, roots, los):
            st = self.channels.get(k)
            if st is None or st.last_visit is None:
                out[k] = _interval(level.frequency(s, lo), self.min_interval, self.max_interval)
                continue
            due = self.due_at[k] = self._due_after(k, st.last_visit, now)
            out[k] = float(min(max(due - st.last_visit, self.min_interval), self.max_interval))
        self.planned.update(out)
        return out

    def _due_after(self, key: Hashable, last: float, now: float) -> float:
        """Due time of channel ``key`` last visited at ``last``, under the current level.

        With the level ``c`` of the √ allocation, a channel of constant rate ``r`` is visited
        every ``1/(c·√r)``: when ``r·(t − last)² = 1/c²``. With a daily profile the rate is not
        constant: the channel is due when ``E[links since last]·(t − last) = 1/c²`` — the delay
        its pending articles accumulated (for a constant rate ``r(t − last)²/2``) reaches the
        same threshold — with ``E[links]`` the base rate times ``∫ profile`` over the gap, so a
        quiet night ahead pushes the visit later and a busy morning pulls it earlier. Also due
        when ``max_fill`` of its list is expected to be new (at the cautious rate), and within
        ``[last + min_interval, last + max_interval]``. Solved by bisection.
        """
        level = self._level
        lo_t, hi_t = last + self.min_interval, last + self.max_interval
        st = self.channels.get(key)
        if (self.explore_interval is not None and st is not None and st.visits <= 1
                and st.evidence <= 0):  # the listing told nothing: measure, do not assume
            return min(max(last + self.explore_interval, lo_t), hi_t)
        if level is None or math.isinf(level.c):
            return lo_t if level is not None else hi_t
        if level.c <= 0 or level.scale < 1:  # floors beyond the budget: their scaled share
            s, lo = self._root_floor(key, now)
            return last + _interval(level.frequency(s, lo), self.min_interval, self.max_interval)
        prof = self.profile(key)
        base = self.base_rate(key, now)
        fill = base if st is None else max(base, self._recent(st, now))
        listed = (st.listed if st is not None else None) or self.index_size
        threshold = 1.0 / (level.c * level.c)
        cap = self.max_fill * listed
        start = prof.cumulative(last, now)

        def reached(t: float) -> bool:
            area = prof.cumulative(t, now) - start
            return base * area * (t - last) >= threshold or fill * area >= cap

        if reached(lo_t):
            return lo_t
        if not reached(hi_t):
            return hi_t
        a, b = lo_t, hi_t
        for _ in range(40):
            if b - a <= 1.0:
                break
            mid = (a + b) / 2
            if reached(mid):
                b = mid
            else:
                a = mid
        return b

    def intervals(self, now: float, keys: Iterable[Hashable] | None = None) -> dict[Hashable, float]:
        """Budget-aware revisit interval (seconds) of every known channel (or of ``keys``):
        :meth:`plan` at ``now``."""
        return self.plan(now, keys=keys)

    def interval(self, key: Hashable, now: float) -> float:
        """Revisit interval (seconds) of channel ``key`` at ``now`` under the current plan
        (re-planned first when it is older than ``replan_every`` or there is none)."""
        if (self._level is None or self.planned_at is None or now < self.planned_at
                or now - self.planned_at >= self.replan_every):
            self.plan(now)
        st = self.channels.get(key)
        if st is None or st.last_visit is None:
            s, lo = self._root_floor(key, now)
            assert self._level is not None
            return _interval(self._level.frequency(s, lo), self.min_interval, self.max_interval)
        due = self.due_at[key] = self._due_after(key, st.last_visit, now)
        self.planned[key] = float(min(max(due - st.last_visit, self.min_interval), self.max_interval))
        return float(min(max(due - now, self.min_interval), self.max_interval))

    def next_interval(self, key: Hashable, now: float) -> float:
        """Alias of :meth:`interval`."""
        return self.interval(key, now)

    def next_due(self, key: Hashable, now: float | None = None) -> float:
        """When channel ``key`` should be visited next (epoch seconds): its last visit plus its
        planned interval. A channel never visited is due at once (``now``, or ``-inf``
        without one)."""
        st = self.channels.get(key)
        if st is None or st.last_visit is None:
            return -math.inf if now is None else now
        due = self.due_at.get(key)
        if due is None:
            self.interval(key, st.last_visit if now is None else now)
            due = self.due_at[key]
        return due

    def due(self, now: float) -> list[tuple[float, Hashable]]:
        """``(due time, key)`` of the channels due at ``now``, earliest first."""
        out = [(self.next_due(k, now), k) for k in self.channels]
        return sorted(((d, k) for d, k in out if d <= now), key=lambda x: x[0])

    def pick(self, now: float, keys: Iterable[Hashable] | None = None) -> Hashable | None:
        """The channel to fetch in a request slot free at ``now``: the earliest due one, even
        before it is due, but never one visited less than ``min_interval`` ago; None when every
        channel was (the slot stays idle)."""
        best: Hashable | None = None
        best_due = math.inf
        for k in (self.channels if keys is None else keys):
            st = self.channels.get(k)
            last = None if st is None else st.last_visit
            if last is not None and now - last < self.min_interval:
                continue
            d = -math.inf if last is None else self.next_due(k, now)  # never visited: first
            if d < best_due or best is None:
                best, best_due = k, d
        return best

    # -- serialisation ---------------------------------------------------------------------------

    def export(self, key: Hashable) -> dict[str, Any] | None:
        """Channel ``key``'s estimate as plain numbers (None when unknown)."""
        st = self.channels.get(key)
        return None if st is None else st.to_dict()

    def restore(self, key: Hashable, data: Mapping[str, Any] | None, *,
                group: Hashable | None = None) -> bool:
        """Take a channel's estimate stored by :meth:`export`; False (nothing taken) for data
        that is not a mapping of a known version."""
        if not isinstance(data, Mapping) or data.get("v") != STATE_VERSION:
            return False
        self.channels[key] = RateState.from_dict(data)
        if group is not None:
            self.groups[key] = group
        # the host's restored profile stands until new visits are observed (then refitted)
        self._members.setdefault(self.groups.get(key, key), set()).add(key)
        return True

    def export_profile(self, group: Hashable) -> dict[str, Any] | None:
        """Host ``group``'s daily profile as plain numbers (None when unknown)."""
        prof = self.profiles.get(group)
        return None if prof is None else prof.to_dict()

    def restore_profile(self, group: Hashable, data: Mapping[str, Any] | None) -> bool:
        """Take a host's profile stored by :meth:`export_profile`; False for junk."""
        prof = DailyProfile.from_dict(data, half_life=self.profile_half_life,
                                      prior=self.profile_prior, smooth=self.profile_smooth)
        if prof is None:
            return False
        self.profiles[group] = prof
        return True

    def drain_profiles(self) -> dict[Hashable, dict[str, Any]]:
        """The profiles changed since the last call, by host (for the ``hosts`` documents)."""
        out = {g: p.to_dict() for g in self.profiles_dirty if (p := self.profiles.get(g)) is not None}
        self.profiles_dirty.clear()
        return out
