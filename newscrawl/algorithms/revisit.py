"""Revisit-interval estimators and the news revisit policy (DESIGN §5; seeds 000 and 002).

Pure: plain data in, plain data out. Nothing here reads the clock: every function takes ``now``
(seconds since the epoch, UTC) and a page's visit history, and returns an interval in seconds.
The caller schedules the next visit at ``now + interval``.

What is here
------------
* :class:`Observation` — one visit of one page: when, whether the page changed since the visit
  before, how that was decided, how many new article links it showed, and the server's
  ``Last-Modified`` when the caller trusts the host's validators.
* Estimators, each ``next_interval(history, now, *, min_interval, max_interval) -> float``:

  - :class:`HalveDouble` — the proximity rule (邻近法) of seed 000, after Risvik & Michelsen,
    "Search engines and web dynamics", Computer Networks 39 (2002): the interval is halved after
    a change and doubled otherwise.
  - :class:`EqualInterval` — equal interval (等间隔) of seed 000: the mean of the last ``k``
    change intervals times a coefficient; the simplified form of the fixed-interval policy of
    Cho & Garcia-Molina (2003).
  - :class:`TimelyReturn` — timely return (及时返回法) of seed 000: double while unchanged,
    back to the minimum as soon as a change is seen.
  - :class:`PoissonRate` — Cho & Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3)
    (2003), named in seed 002: from ``n`` visits with ``X`` changes,
    ``λ̂ = −ln((n − X + 0.5)/(n + 0.5)) / mean interval``; when trusted ``Last-Modified`` dates are
    available, the maximum-likelihood rate given the last change time in each interval.
  - :class:`NutchAdaptive` — Apache Nutch ``AdaptiveFetchSchedule`` (×1.4 unchanged, ×0.8
    changed, sync-delta), kept as the reference baseline.
  - :class:`Auto` — per-page choice among the four seed estimators by
    :func:`choose_estimator` (seed 000: "根据不同网页的特点来选择不同的算法预测其网页更新时间").

* :class:`ChannelScheduler` — channel (node) pages, scheduled by their yield of new article links:
  a per-channel rate of new links learned from the visits, shaped by a learned daily profile of
  the channel's host, and a budget split over all channels in proportion to ``√rate`` — the
  optimum of Cho & Garcia-Molina for the expected discovery delay (below) — with a floor that
  keeps every channel from dropping articles off its list before a visit.
* :class:`CorrectionDecay` — article pages: re-checks at ``first × factor^k`` after publication
  (or after the last correction seen), then the maximum interval.

Why ``√rate``: a channel visited ``f`` times per unit time, whose new articles arrive at rate
``λ``, shows each new article after on average ``1/(2f)``; the article-weighted mean delay
``Σ λᵢ/(2fᵢ) / Σ λᵢ`` under the budget ``Σ fᵢ = B`` is smallest for ``fᵢ ∝ √λᵢ`` (Lagrange).
This is the square-root allocation of Cho & Garcia-Molina, "Synchronizing a database to improve
freshness", SIGMOD 2000 (there for a related objective); here the rates are *estimated from the
crawler's own observations*, never known.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "HOW_CONDITIONAL",
    "HOW_FINGERPRINT",
    "HOW_FIRST",
    "HOW_HEAD",
    "Auto",
    "ChannelScheduler",
    "CorrectionDecay",
    "DailyProfile",
    "EqualInterval",
    "Estimator",
    "ESTIMATORS",
    "HalveDouble",
    "NutchAdaptive",
    "Observation",
    "PoissonRate",
    "RateState",
    "TimelyReturn",
    "choose_estimator",
    "clamp_interval",
    "cho_poisson_rate",
    "lm_poisson_rate",
    "poisson_rate",
    "sqrt_allocation",
]

DAY = 86400.0
HOUR = 3600.0

#: How a visit decided ``changed`` (the ``how`` field of :class:`Observation`).
HOW_FIRST = "first"  # first fetch of the page: nothing to compare with
HOW_HEAD = "head"  # HEAD validators (ETag / Last-Modified / Content-Length) compared
HOW_CONDITIONAL = "conditional"  # conditional GET: 304 means unchanged
HOW_FINGERPRINT = "fingerprint"  # full GET, fingerprint of the extracted text compared


@dataclass(frozen=True, slots=True)
class Observation:
    """One visit of a page.

    ``changed`` says whether the page changed since the previous observation; on the first
    observation of a page it means nothing and is ignored. ``new_links`` is the number of article
    links not seen before (channel pages; ``None`` when not counted). ``last_modified`` is the
    server's ``Last-Modified`` (seconds since the epoch) and must be ``None`` unless the caller
    trusts the host's validators. ``listed`` is the number of article links the page listed, if
    known: ``new_links >= listed`` means every listed link was new, so more may have scrolled off.
    """

    time: float
    changed: bool
    how: str = HOW_FINGERPRINT
    new_links: int | None = None
    last_modified: float | None = None
    listed: int | None = None


History = Sequence[Observation]


class Estimator(Protocol):
    """The shape every estimator has: a name and a pure ``next_interval``."""

    name: str

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float: ...


# --- helpers -------------------------------------------------------------------------------


def _check_bounds(min_interval: float, max_interval: float) -> None:
    if not (math.isfinite(min_interval) and math.isfinite(max_interval)):
        raise ValueError(f"interval bounds must be finite: [{min_interval}, {max_interval}]")
    if min_interval <= 0 or max_interval < min_interval:
        raise ValueError(f"need 0 < min_interval <= max_interval, got [{min_interval}, {max_interval}]")


def clamp_interval(interval: float, *, min_interval: float, max_interval: float) -> float:
    """``interval`` clamped to ``[min_interval, max_interval]``; NaN becomes ``max_interval``.

    >>> clamp_interval(10.0, min_interval=60.0, max_interval=3600.0)
    60.0
    >>> clamp_interval(float("inf"), min_interval=60.0, max_interval=3600.0)
    3600.0
    """
    _check_bounds(min_interval, max_interval)
    if math.isnan(interval):
        return float(max_interval)
    return float(min(max(interval, min_interval), max_interval))


def _clean(history: Iterable[Observation]) -> list[Observation]:
    """Observations with a finite time, oldest first (stable for equal times).

    A history from storage may hold junk; estimators must never raise on it, so observations
    without a usable time are dropped and the rest sorted.
    """
    obs = [o for o in history if isinstance(o.time, (int, float)) and math.isfinite(o.time)]
    obs.sort(key=lambda o: o.time)
    return obs


def _due_to_interval(due: float, now: float, min_interval: float, max_interval: float) -> float:
    """Turn an absolute due time into an interval from ``now``, clamped."""
    return clamp_interval(due - now, min_interval=min_interval, max_interval=max_interval)


def _usable_lm(prev: Observation, cur: Observation) -> float | None:
    """The change time ``cur.last_modified`` tells, if it is consistent with the two visits.

    A ``Last-Modified`` after the visit (clock skew) is taken as the visit time; one at or before
    the previous visit while the page is said to have changed is inconsistent: ``None``.
    """
    lm = cur.last_modified
    if lm is None or not isinstance(lm, (int, float)) or not math.isfinite(lm):
        return None
    lm = min(float(lm), cur.time)
    if lm <= prev.time:
        return None
    return lm


def _change_times(obs: list[Observation]) -> list[float]:
    """Best-known times of the changes seen: ``Last-Modified`` when usable, else the visit time."""
    times: list[float] = []
    for prev, cur in zip(obs, obs[1:]):
        if cur.changed:
            lm = _usable_lm(prev, cur)
            times.append(cur.time if lm is None else lm)
    return times


def _mean_cv(values: Sequence[float]) -> tuple[float, float]:
    """Mean and coefficient of variation (population standard deviation / mean)."""
    n = len(values)
    mean = sum(values) / n
    if mean <= 0:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / n
    return mean, math.sqrt(var) / mean


# --- the seed-000 estimators ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HalveDouble:
    """Proximity rule (邻近法, seed 000), after Risvik & Michelsen 2002.

    Start at ``initial_interval``; after each visit, the interval is multiplied by ``decrease``
    (½) if the page changed and by ``increase`` (2) if not, clamped at every step. The rule is
    replayed over the history, so the state is the history alone. Seed 000: suits pages without a
    regular pattern; the worst detection delay is the last interval, the mean about half of it.
    In equilibrium a page is seen changed on half of the visits (½ᵖ·2¹⁻ᵖ = 1 ⇒ p = ½).
    """

    initial_interval: float = HOUR
    decrease: float = 0.5
    increase: float = 2.0
    name: str = "halve_double"

    def step(self, interval: float, changed: bool, *, min_interval: float, max_interval: float) -> float:
        """One update of the interval after a visit."""
        factor = self.decrease if changed else self.increase
        return clamp_interval(interval * factor, min_interval=min_interval, max_interval=max_interval)

    def current(self, history: History, *, min_interval: float, max_interval: float) -> float:
        """The interval after replaying the whole history."""
        obs = _clean(history)
        interval = clamp_interval(self.initial_interval, min_interval=min_interval, max_interval=max_interval)
        for o in obs[1:]:
            interval = self.step(interval, o.changed, min_interval=min_interval, max_interval=max_interval)
        return interval

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float:
        obs = _clean(history)
        if not obs:
            return clamp_interval(min_interval, min_interval=min_interval, max_interval=max_interval)
        interval = self.current(obs, min_interval=min_interval, max_interval=max_interval)
        return _due_to_interval(obs[-1].time + interval, now, min_interval, max_interval)


@dataclass(frozen=True, slots=True)
class TimelyReturn:
    """Timely return (及时返回法, seed 000).

    While the page stays unchanged the interval doubles, as in the proximity rule; once a change
    is seen the interval is reset to the minimum, so a page that has just started changing (a
    story being updated) is watched closely again at once.
    """

    initial_interval: float = HOUR
    increase: float = 2.0
    name: str = "timely_return"

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float:
        obs = _clean(history)
        if not obs:
            return clamp_interval(min_interval, min_interval=min_interval, max_interval=max_interval)
        interval = clamp_interval(self.initial_interval, min_interval=min_interval, max_interval=max_interval)
        for o in obs[1:]:
            interval = min_interval if o.changed else interval * self.increase
            interval = clamp_interval(interval, min_interval=min_interval, max_interval=max_interval)
        return _due_to_interval(obs[-1].time + interval, now, min_interval, max_interval)


@dataclass(frozen=True, slots=True)
class EqualInterval:
    """Equal interval (等间隔, seed 000), the simplified Cho & Garcia-Molina fixed-interval policy.

    "记录最近几次的变化时间，然后简单取其平均值，对平均值乘以某一系数": the mean of the last
    ``window`` intervals between seen changes, times ``coefficient``. A change is dated by a
    trusted ``Last-Modified`` when there is one, else by the visit that saw it. With fewer than
    two changes seen it falls back to :class:`HalveDouble`.
    """

    coefficient: float = 0.5
    window: int = 5
    fallback: HalveDouble = field(default_factory=HalveDouble)
    name: str = "equal_interval"

    def mean_change_interval(self, history: History) -> float | None:
        """Mean of the last ``window`` change intervals, or ``None`` with fewer than two changes."""
        times = _change_times(_clean(history))[-(self.window + 1) :]
        if len(times) < 2:
            return None
        gaps = [b - a for a, b in zip(times, times[1:])]
        return sum(gaps) / len(gaps)

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float:
        obs = _clean(history)
        mean = self.mean_change_interval(obs)
        if mean is None:
            return self.fallback.next_interval(obs, now, min_interval=min_interval, max_interval=max_interval)
        interval = clamp_interval(mean * self.coefficient, min_interval=min_interval, max_interval=max_interval)
        return _due_to_interval(obs[-1].time + interval, now, min_interval, max_interval)


def cho_poisson_rate(n: int, changes: int, mean_interval: float) -> float:
    """Cho & Garcia-Molina (2003) estimator for visits that only tell *whether* a page changed.

    ``λ̂ = −ln((n − X + 0.5) / (n + 0.5)) / I`` for ``n`` visit intervals of mean length ``I``
    in which ``X`` changes were seen. The ``+0.5`` terms make it finite when every visit saw a
    change (``X = n``) and reduce the bias of the naive ``X / (n·I)``, which cannot count two
    changes between visits. Changes per second.

    >>> round(cho_poisson_rate(10, 5, 3600.0) * 3600, 4)  # ln(10.5/5.5)
    0.6466
    """
    if n <= 0 or mean_interval <= 0 or not math.isfinite(mean_interval):
        return 0.0
    x = min(max(changes, 0), n)
    return -math.log((n - x + 0.5) / (n + 0.5)) / mean_interval


def lm_poisson_rate(history: History) -> float | None:
    """Rate of change from trusted ``Last-Modified`` dates (changes per second), or ``None``.

    The scenario "last date of change known" of Cho & Garcia-Molina (2003, §5). For an interval
    between visits in which the page did not change we know it was change-free for its whole
    length ``Iⱼ``; for one in which it changed, ``Last-Modified`` ``Lⱼ`` says it was change-free
    from ``Lⱼ`` to the visit. For a Poisson process the log-likelihood is
    ``Σ_changed (ln λ − λ(tⱼ − Lⱼ)) − λ Σ_unchanged Iⱼ``, maximised by
    ``λ̂ = X / (Σ_unchanged Iⱼ + Σ_changed (tⱼ − Lⱼ))``: changes over known change-free time.
    (This is the plain maximum-likelihood estimate, not the bias-reduced variant of the paper.)
    ``None`` when some changed interval lacks a usable date (validators absent or lying) or the
    change-free time is zero.
    """
    obs = _clean(history)
    changes = 0
    free = 0.0
    for prev, cur in zip(obs, obs[1:]):
        if cur.changed:
            lm = _usable_lm(prev, cur)
            if lm is None:
                return None
            changes += 1
            free += cur.time - lm
        else:
            free += cur.time - prev.time
    if free <= 0:
        return None
    return changes / free


def poisson_rate(history: History, *, window: int = 50) -> float:
    """Changes per second estimated from the last ``window`` visit intervals.

    Uses :func:`lm_poisson_rate` when every change in the window carries a usable
    ``Last-Modified``, else :func:`cho_poisson_rate` with the mean interval (DESIGN §5).
    0.0 with fewer than two visits.
    """
    obs = _clean(history)[-(window + 1) :]
    if len(obs) < 2:
        return 0.0
    lm_rate = lm_poisson_rate(obs)
    if lm_rate is not None:
        return lm_rate
    n = len(obs) - 1
    changes = sum(1 for o in obs[1:] if o.changed)
    mean = (obs[-1].time - obs[0].time) / n
    return cho_poisson_rate(n, changes, mean)


@dataclass(frozen=True, slots=True)
class PoissonRate:
    """Poisson model (Cho & Garcia-Molina 2003): revisit when a change is ``p`` likely.

    With the estimated rate ``λ̂`` the probability of a change within ``I`` is ``1 − e^{−λ̂I}``;
    the interval is ``I = −ln(1 − p) / λ̂`` (``p = ½`` ⇒ ``I = ln 2 / λ̂``, the equilibrium the
    proximity rule reaches by trial and error). ``λ̂ = 0`` gives the maximum interval.
    """

    change_probability: float = 0.5
    window: int = 50
    name: str = "poisson"

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float:
        obs = _clean(history)
        if not obs:
            return clamp_interval(min_interval, min_interval=min_interval, max_interval=max_interval)
        rate = poisson_rate(obs, window=self.window)
        if rate <= 0:
            return clamp_interval(max_interval, min_interval=min_interval, max_interval=max_interval)
        p = min(max(self.change_probability, 1e-6), 1 - 1e-6)
        interval = -math.log(1.0 - p) / rate
        return _due_to_interval(obs[-1].time + interval, now, min_interval, max_interval)


@dataclass(frozen=True, slots=True)
class NutchAdaptive:
    """Apache Nutch ``AdaptiveFetchSchedule`` with the ``nutch-default.xml`` values.

    Changed: ``interval ×= 1 − dec_rate`` (0.8) and the modified time becomes the fetch time;
    unchanged: ``interval ×= 1 + inc_rate`` (1.4). With ``sync_delta``, ``delta`` = fetch time −
    modified time; the interval is at least ``delta`` and the next fetch is at
    ``fetch − delta·sync_delta_rate + interval``. The modified time is the trusted
    ``Last-Modified`` when given, else the visit that saw the change. Baseline only.
    """

    initial_interval: float = HOUR
    inc_rate: float = 0.4
    dec_rate: float = 0.2
    sync_delta: bool = True
    sync_delta_rate: float = 0.3
    name: str = "nutch_adaptive"

    def step(
        self,
        interval: float,
        modified: float,
        fetch: float,
        changed: bool,
        *,
        min_interval: float,
        max_interval: float,
        last_modified: float | None = None,
    ) -> tuple[float, float, float]:
        """One ``setFetchSchedule``: returns ``(interval, modified, next_fetch_time)``."""
        if changed:
            interval *= 1.0 - self.dec_rate
            modified = fetch if last_modified is None else min(last_modified, fetch)
        else:
            interval *= 1.0 + self.inc_rate
        ref = fetch
        if self.sync_delta:
            delta = fetch - modified
            if delta > interval:
                interval = delta
            ref = fetch - delta * self.sync_delta_rate
        interval = clamp_interval(interval, min_interval=min_interval, max_interval=max_interval)
        return interval, modified, ref + interval

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float:
        obs = _clean(history)
        if not obs:
            return clamp_interval(min_interval, min_interval=min_interval, max_interval=max_interval)
        interval = clamp_interval(self.initial_interval, min_interval=min_interval, max_interval=max_interval)
        modified = obs[0].time
        due = obs[0].time + interval
        for prev, cur in zip(obs, obs[1:]):
            lm = _usable_lm(prev, cur) if cur.changed else None
            interval, modified, due = self.step(
                interval, modified, cur.time, cur.changed,
                min_interval=min_interval, max_interval=max_interval, last_modified=lm,
            )
        return _due_to_interval(due, now, min_interval, max_interval)


# --- per-page choice -----------------------------------------------------------------------

#: Fewer visits than this: not enough history to tell a pattern; use the proximity rule.
CHOOSE_MIN_VISITS = 4
#: Change intervals needed before the regular/bursty test is made.
CHOOSE_MIN_CHANGE_INTERVALS = 3
#: Coefficient of variation of the change intervals at or below which changes are "regular".
CHOOSE_REGULAR_CV = 0.35
#: Coefficient of variation at or above which changes come in bursts (a Poisson process has 1).
CHOOSE_BURSTY_CV = 1.5
#: Share of visits that saw a change above which change intervals are only visit gaps, so the
#: regularity test says nothing (it would otherwise push the interval down without end).
CHOOSE_MAX_CHANGE_SHARE = 0.5
#: Visit intervals needed for the Poisson estimate.
CHOOSE_POISSON_MIN_INTERVALS = 10


def choose_estimator(history: History) -> tuple[str, str]:
    """Pick an estimator for one page from its own history: ``(name, reason)``.

    Seed 000 runs several predictors and assigns each page the one that suits it. The rule,
    in order (``n`` = visit intervals, ``X`` = changes seen, CV = coefficient of variation of the
    intervals between seen changes, dated by trusted ``Last-Modified`` when present):

    1. ``n + 1 < 4`` visits → ``halve_double``: too little history; the proximity rule needs none.
    2. at least 3 change intervals, ``X/n ≤ ½`` (changes resolved, not one per visit) and
       CV ≤ 0.35 → ``equal_interval``: regular changes (hourly, half-daily, daily).
    3. at least 3 change intervals and CV ≥ 1.5 → ``timely_return``: changes come in bursts
       (quiet, then a series of edits); reset to the minimum when one is seen.
    4. ``n ≥ 10`` → ``poisson``: enough visits for the Cho & Garcia-Molina estimate.
    5. otherwise → ``halve_double``: sparse or irregular history.
    """
    obs = _clean(history)
    n = len(obs) - 1
    if n + 1 < CHOOSE_MIN_VISITS:
        return "halve_double", f"{max(n + 1, 0)} visit(s): too few for a pattern, proximity rule"
    changes = sum(1 for o in obs[1:] if o.changed)
    times = _change_times(obs)[-(EqualInterval().window + 1) :]
    gaps = [b - a for a, b in zip(times, times[1:])]
    if len(gaps) >= CHOOSE_MIN_CHANGE_INTERVALS:
        _, cv = _mean_cv(gaps)
        share = changes / n
        if cv <= CHOOSE_REGULAR_CV and share <= CHOOSE_MAX_CHANGE_SHARE:
            return "equal_interval", (
                f"regular changes: {len(gaps)} change intervals with CV {cv:.2f} <= {CHOOSE_REGULAR_CV}"
            )
        if cv >= CHOOSE_BURSTY_CV:
            return "timely_return", (
                f"bursty changes: {len(gaps)} change intervals with CV {cv:.2f} >= {CHOOSE_BURSTY_CV}"
            )
    if n >= CHOOSE_POISSON_MIN_INTERVALS:
        return "poisson", f"{n} visit intervals with {changes} change(s): Poisson rate estimate"
    return "halve_double", f"{n} visit intervals, no clear pattern: proximity rule"


ESTIMATORS: dict[str, Estimator] = {
    "halve_double": HalveDouble(),
    "equal_interval": EqualInterval(),
    "timely_return": TimelyReturn(),
    "poisson": PoissonRate(),
    "nutch_adaptive": NutchAdaptive(),
}


@dataclass(frozen=True, slots=True)
class Auto:
    """The estimator :func:`choose_estimator` picks for this page, applied to it."""

    estimators: Mapping[str, Estimator] = field(default_factory=lambda: dict(ESTIMATORS))
    name: str = "auto"

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float:
        chosen, _ = choose_estimator(history)
        return self.estimators[chosen].next_interval(
            history, now, min_interval=min_interval, max_interval=max_interval
        )


ESTIMATORS["auto"] = Auto()


# --- articles: correction decay -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CorrectionDecay:
    """Article pages: corrections come in the first hours after publication, then rarely.

    Re-check at ``anchor + first·factorᵏ`` for ``k < steps`` (default 20 min, 40 min, 80 min,
    2 h 40, 5 h 20, 10 h 40), where the anchor is the publication time, or the last visit that saw a correction
    (one correction makes another likely, as in timely return). After the last step the page
    gets ``max_interval`` (the caller may also stop, see :meth:`exhausted`). A checkpoint missed
    (the crawler was late) is skipped, not made up.
    """

    first: float = 1200.0
    factor: float = 2.0
    steps: int = 6
    name: str = "correction_decay"

    def anchor(self, history: History, published: float | None) -> float | None:
        obs = _clean(history)
        anchor = published if published is not None and math.isfinite(published) else None
        if anchor is None and obs:
            anchor = obs[0].time
        for o in obs[1:]:
            if o.changed:
                anchor = o.time if anchor is None else max(anchor, o.time)
        return anchor

    def checkpoints(self, anchor: float) -> list[float]:
        """Absolute re-check times after ``anchor``."""
        return [anchor + self.first * self.factor**k for k in range(max(self.steps, 0))]

    def next_due(self, history: History, now: float, *, published: float | None = None) -> float | None:
        """The next checkpoint after the last visit and after ``now``; ``None`` when exhausted."""
        obs = _clean(history)
        anchor = self.anchor(obs, published)
        if anchor is None:
            return None
        after = max(now, obs[-1].time) if obs else now
        for due in self.checkpoints(anchor):
            if due > after:
                return due
        return None

    def exhausted(self, history: History, now: float, *, published: float | None = None) -> bool:
        return self.next_due(history, now, published=published) is None

    def next_interval(
        self,
        history: History,
        now: float,
        *,
        min_interval: float,
        max_interval: float,
        published: float | None = None,
    ) -> float:
        obs = _clean(history)
        if not obs and published is None:
            return clamp_interval(min_interval, min_interval=min_interval, max_interval=max_interval)
        due = self.next_due(obs, now, published=published)
        if due is None:
            return clamp_interval(max_interval, min_interval=min_interval, max_interval=max_interval)
        return _due_to_interval(due, now, min_interval, max_interval)


# --- channels: yield of new article links ---------------------------------------------------


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
    _check_bounds(min_interval, max_interval)
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
        _check_bounds(self.min_interval, self.max_interval)

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
