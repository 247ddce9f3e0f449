"""Candidate channel scheduler: a visit budget split over channel pages ∝ √(rate of new links).

**Simulation only: not on the crawl path.** The crawler schedules channel pages with
:mod:`newscrawl.algorithms.revisitplan` (per-page estimator choice over new-article yield). This
module is run by ``benchmarks/revisit_sim.py`` (policy ``channel-scheduler``) and by
``tests/test_channel_scheduler.py``; the monitoring issue is to wire it into the crawler, and then
move it back into :mod:`newscrawl.algorithms`. Pure: plain data in, plain data out; every time is
seconds since the epoch (UTC), passed in.

What is here
------------
* :func:`sqrt_allocation` — split a visit budget over pages ∝ √rate, with per-page floors
  (exact water-filling).
* :class:`DailyProfile` — learned hour-of-day shape of a host's publishing.
* :class:`RateState` — decayed sums behind one channel's rate of new links.
* :class:`ChannelScheduler` — channel (node) pages, scheduled by their yield of new article
  links: a per-channel rate of new links learned from the visits, shaped by a learned daily
  profile of the channel's host, and a budget split over all channels in proportion to
  ``√rate`` — the optimum of Cho & Garcia-Molina for the expected discovery delay (below) — with
  a floor that keeps every channel from dropping articles off its list before a visit.

Why ``√rate``: a channel visited ``f`` times per unit time, whose new articles arrive at rate
``λ``, shows each new article after on average ``1/(2f)``; the article-weighted mean delay
``Σ λᵢ/(2fᵢ) / Σ λᵢ`` under the budget ``Σ fᵢ = B`` is smallest for ``fᵢ ∝ √λᵢ`` (Lagrange).
This is the square-root allocation of Cho & Garcia-Molina, "Synchronizing a database to improve
freshness", SIGMOD 2000 (there for a related objective); here the rates are *estimated from the
crawler's own observations*, never known.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from newscrawl.algorithms.revisit import Observation, check_bounds, clamp_interval

__all__ = ["ChannelScheduler", "DailyProfile", "RateState", "sqrt_allocation"]

DAY = 86400.0
HOUR = 3600.0


def sqrt_allocation(
    rates: Mapping[Hashable, float],
    budget: float,
    *,
    min_interval: float,
    max_interval: float,
    floors: Mapping[Hashable, float] | None = None,
) -> dict[Hashable, float]:
    """Split a visit budget over pages ∝ √rate; returns the revisit interval of each page.

    ``rates`` are new items per second, ``budget`` visits per second. Visit frequencies are
    ``fᵢ = clip(c·√rateᵢ, loᵢ, 1/min_interval)`` with ``loᵢ = max(1/max_interval, floorᵢ)``
    (``floors`` are visits per second a page needs, e.g. not to drop articles off its list) and
    ``c`` chosen so that ``Σ fᵢ = budget`` (exact water-filling over the sorted breakpoints).
    When even the floors exceed the budget they are scaled down together; when every page is at
    the minimum interval the budget is not spent. Cho & Garcia-Molina (2000) for the √ rule.
    """
    check_bounds(min_interval, max_interval)
    keys = list(rates)
    if not keys:
        return {}
    hi = 1.0 / min_interval
    roots: list[float] = []
    los: list[float] = []
    floor_of = floors or {}
    base_lo = 1.0 / max_interval
    for k in keys:
        r = rates[k]
        roots.append(math.sqrt(r) if 0 < r < math.inf else 0.0)  # NaN fails both comparisons
        f = floor_of.get(k, 0.0)
        los.append(min(f, hi) if base_lo < f < math.inf else base_lo)
    budget = budget if math.isfinite(budget) and budget > 0 else 0.0
    total_lo = sum(los)
    if total_lo >= budget:
        scale = budget / total_lo if total_lo > 0 else 0.0
        freqs = [lo * scale for lo in los]
    elif sum(hi if s > 0 else lo for s, lo in zip(roots, los)) <= budget:
        freqs = [hi if s > 0 else lo for s, lo in zip(roots, los)]
    else:
        # g(c) = Σ clip(c·sᵢ, loᵢ, hi) is piecewise linear and non-decreasing in c; walk its
        # breakpoints in order until it reaches the budget.
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
        c = (budget - fixed) / slope if slope > 0 else 0.0
        freqs = [min(max(c * s, lo), hi) for s, lo in zip(roots, los)]
    out: dict[Hashable, float] = {}
    for k, f in zip(keys, freqs):
        interval = 1.0 / f if f > 0 else max_interval
        out[k] = float(min(max(interval, min_interval), max_interval))
    return out


@dataclass(slots=True)
class DailyProfile:
    """Learned hour-of-day shape of a host's publishing, mean 1 (UTC hours, ``bins`` per day).

    Each channel visit that saw ``k`` new links over ``(t0, t1]`` spreads ``k`` over the hours
    it covers in proportion to the current profile (an online EM step) and adds the channel's
    flat-profile expectation (base rate × seconds) to the same hours; the profile is
    ``(links + prior) / (expected + prior)``, smoothed over neighbouring hours and normalised to
    mean 1. Sums decay with ``half_life`` so the shape follows schedule changes; a host with no
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

    def __post_init__(self) -> None:
        if len(self.links) != self.bins:
            self.links = [0.0] * self.bins
        if len(self.expected) != self.bins:
            self.expected = [0.0] * self.bins

    @property
    def width(self) -> float:
        return DAY / self.bins

    def _bin(self, t: float) -> int:
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
            if now is not None:
                self._shape_at = now
        return self._shape

    def at(self, t: float) -> float:
        return self.shape(t)[self._bin(t)]

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

    def add(self, t0: float, t1: float, links: float, base_rate: float,
            spans: list[tuple[int, float]] | None = None) -> None:
        """Record ``links`` new links seen over ``(t0, t1]`` of a channel with ``base_rate``."""
        sp = self.spans(t0, t1) if spans is None else spans
        shape = self.shape(t1)
        weights = [shape[b] * x for b, x in sp]
        total = sum(weights)
        if total <= 0 or not math.isfinite(t1):
            return
        if self.ref is None:
            self.ref = t1
        elif (t1 - self.ref) > 30 * self.half_life:  # rebase before the scale overflows
            f = 0.5 ** ((t1 - self.ref) / self.half_life)
            self.links = [a * f for a in self.links]
            self.expected = [e * f for e in self.expected]
            self.ref = t1
        g = 2.0 ** ((t1 - self.ref) / self.half_life)
        share = g * links / total
        expect = g * base_rate
        for (b, x), wgt in zip(sp, weights):
            self.links[b] += share * wgt
            self.expected[b] += expect * x


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


@dataclass
class ChannelScheduler:
    """Revisit intervals for channel pages from their yield of new article links.

    Observations (one per visit, with ``new_links``) feed per-channel :class:`RateState` and a
    per-host :class:`DailyProfile`. The estimated rate of new links of channel ``i`` at ``now``
    is ``r̂ᵢ(now) = b̂ᵢ · profile_host(now)`` with the base rate (a Gamma-Poisson posterior mean)
    ``b̂ᵢ = (Σ links + a) / (Σ ∫profile + a/prior_rate)`` over exponentially decayed sums; the
    first visit of a channel only starts its clock. A visit whose new links filled the whole
    list (``new_links ≥ listed``) is censored — more may have scrolled off — so it counts
    ``saturation_boost`` times.

    :meth:`intervals` splits ``budget_per_hour`` visits over the channels ∝ ``√r̂``
    (:func:`sqrt_allocation`), with a floor so that a channel is visited before its list of
    ``listed`` links (default ``index_size``) turns over: expected new links per visit at most
    ``max_fill × listed``, at the higher of the long-run and the recent (short half-life) rate
    and of this hour's and the next hour's profile. Intervals are clamped to
    ``[min_interval, max_interval]``.

    Use: call :meth:`observe` after every channel visit (a 304 is ``new_links=0``); every few
    minutes call :meth:`intervals` and fetch channels in order of ``last visit + interval``,
    earliest first, one per budget slot — what ``benchmarks/revisit_sim.py`` does. The state is
    plain numbers (:class:`RateState`, :class:`DailyProfile`) and can be stored with the page.
    Defaults (half-lives, priors, ``max_fill``) were chosen on that simulation; see its report.
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
    profile_warmup: float = DAY
    profile_min_links: float = 20.0
    prior_rate: float = 24.0 / DAY
    prior_links: float = 0.3
    saturation_boost: float = 2.0
    channels: dict[Hashable, RateState] = field(default_factory=dict)
    groups: dict[Hashable, Hashable] = field(default_factory=dict)
    profiles: dict[Hashable, DailyProfile] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_bounds(self.min_interval, self.max_interval)

    # -- learning --
    def profile(self, key: Hashable) -> DailyProfile:
        group = self.groups.get(key, key)
        prof = self.profiles.get(group)
        if prof is None:
            prof = self.profiles[group] = DailyProfile(
                half_life=self.profile_half_life, prior=self.profile_prior, smooth=self.profile_smooth
            )
        return prof

    def observe(self, key: Hashable, obs: Observation, *, group: Hashable | None = None) -> None:
        """Record one visit of channel ``key`` (``group``: its host, for the daily profile)."""
        if group is not None:
            self.groups[key] = group
        st = self.channels.get(key)
        if st is None:
            st = self.channels[key] = RateState()
        t = obs.time
        if not isinstance(t, (int, float)) or not math.isfinite(t):
            return
        st.visits += 1
        if obs.listed is not None and obs.listed > 0:
            st.listed = int(obs.listed)
        prev = st.last_visit
        if st.first_visit is None or t < st.first_visit:
            st.first_visit = t
        if prev is None or t <= prev:
            st.last_visit = t if prev is None else max(prev, t)
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
        base = self._base(st, prev)
        spans = prof.spans(prev, t)
        exposure = prof.integral(prev, t, spans)
        self._decay(st, t)
        st.links += links
        st.exposure += exposure
        st.recent_links += links
        st.recent_exposure += exposure
        # The profile's expectation uses the channel's base rate; until that estimate rests on
        # some data (a day of visits or profile_min_links links) it would bias the hours seen
        # first, so the channel does not teach the profile yet.
        if t - st.first_visit >= self.profile_warmup or st.links >= self.profile_min_links:
            prof.add(prev, t, links, base, spans=spans)

    def _decay(self, st: RateState, t: float) -> None:
        if st.updated is not None and t > st.updated:
            dt = t - st.updated
            d = 0.5 ** (dt / self.half_life)
            dr = 0.5 ** (dt / self.recent_half_life)
            st.links *= d
            st.exposure *= d
            st.recent_links *= dr
            st.recent_exposure *= dr
        if st.updated is None or t > st.updated:
            st.updated = t

    def _base(self, st: RateState, now: float) -> float:
        d = 1.0
        if st.updated is not None and now > st.updated:
            d = 0.5 ** ((now - st.updated) / self.half_life)
        a = self.prior_links
        return (st.links * d + a) / (st.exposure * d + a / self.prior_rate)

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
        b = prof._bin(now)
        here = shape[b]
        return here, max(here, shape[(b + 1) % prof.bins])

    # -- estimates --
    def rate(self, key: Hashable, now: float) -> float:
        """Estimated new article links per second of channel ``key`` at ``now``."""
        st = self.channels.get(key)
        base = self.prior_rate if st is None else self._base(st, now)
        return base * self._shapes(self.profile(key), now)[0]

    def fill_rate(self, key: Hashable, now: float) -> float:
        """A cautious rate for the drop-off floor: the higher of the long-run and the recent
        (short half-life) base rate, at the higher of this hour's and the next hour's profile."""
        st = self.channels.get(key)
        base = self.prior_rate if st is None else max(self._base(st, now), self._recent(st, now))
        return base * self._shapes(self.profile(key), now)[1]

    def intervals(self, now: float, keys: Iterable[Hashable] | None = None) -> dict[Hashable, float]:
        """Budget-aware revisit interval (seconds) of every known channel (or of ``keys``)."""
        keys = list(self.channels) if keys is None else list(keys)
        rates: dict[Hashable, float] = {}
        floors: dict[Hashable, float] = {}
        shapes: dict[int, tuple[float, float]] = {}
        for k in keys:
            prof = self.profile(k)
            m = shapes.get(id(prof))
            if m is None:
                m = shapes[id(prof)] = self._shapes(prof, now)
            st = self.channels.get(k)
            if st is None:
                base = fill = self.prior_rate
                listed = self.index_size
            else:
                base = self._base(st, now)
                fill = max(base, self._recent(st, now))
                listed = st.listed or self.index_size
            rates[k] = base * m[0]
            floors[k] = fill * m[1] / max(self.max_fill * listed, 1e-9)
        return sqrt_allocation(
            rates,
            self.budget_per_hour / HOUR,
            min_interval=self.min_interval,
            max_interval=self.max_interval,
            floors=floors,
        )

    def next_interval(self, key: Hashable, now: float) -> float:
        """Interval of one channel under the current allocation of all of them."""
        return self.intervals(now).get(
            key, clamp_interval(self.min_interval, min_interval=self.min_interval, max_interval=self.max_interval)
        )
