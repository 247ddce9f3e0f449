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

* :class:`CorrectionDecay` — article pages: re-checks at ``first × factor^k`` after publication
  (or after the last correction seen), then the maximum interval.

The crawler schedules channel pages with the budget-aware channel scheduler
(:mod:`newscrawl.algorithms.channelsched`: visits ∝ √rate of new links, learned daily
profiles) and article pages with :class:`CorrectionDecay`
(:mod:`newscrawl.algorithms.revisitplan`); the seed-000 estimators above remain the per-page
choice of :func:`choose_estimator` where no scheduler is given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "HOW_CONDITIONAL",
    "HOW_FINGERPRINT",
    "HOW_FIRST",
    "HOW_HEAD",
    "Auto",
    "CorrectionDecay",
    "EqualInterval",
    "Estimator",
    "ESTIMATORS",
    "HalveDouble",
    "NutchAdaptive",
    "Observation",
    "PoissonRate",
    "TimelyReturn",
    "check_bounds",
    "choose_estimator",
    "clamp_interval",
    "cho_poisson_rate",
    "lm_poisson_rate",
    "poisson_rate",
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

    @property
    def name(self) -> str: ...

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float: ...


# --- helpers -------------------------------------------------------------------------------


def check_bounds(min_interval: float, max_interval: float) -> None:
    """Check revisit bounds (seconds).

    Raises:
        ValueError: a bound is not finite, ``min_interval <= 0`` or ``max_interval < min_interval``.

    >>> check_bounds(60.0, 3600.0)
    >>> check_bounds(60.0, 30.0)
    Traceback (most recent call last):
    ...
    ValueError: need 0 < min_interval <= max_interval, got [60.0, 30.0]
    """
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
    check_bounds(min_interval, max_interval)
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


class _Replayed:
    """Base of the estimators that replay a page's history to a next due time.

    :meth:`next_interval` is the minimum interval for a page never visited, else the interval
    from ``now`` to :meth:`due`, clamped; subclasses give :meth:`due`.
    """

    __slots__ = ()

    def due(self, obs: list[Observation], *, min_interval: float, max_interval: float) -> float:
        """Absolute time of the next visit after the (cleaned, non-empty) visits ``obs``."""
        raise NotImplementedError

    def next_interval(
        self, history: History, now: float, *, min_interval: float, max_interval: float
    ) -> float:
        obs = _clean(history)
        if not obs:
            return clamp_interval(min_interval, min_interval=min_interval, max_interval=max_interval)
        due = self.due(obs, min_interval=min_interval, max_interval=max_interval)
        return _due_to_interval(due, now, min_interval, max_interval)


# --- the seed-000 estimators ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HalveDouble(_Replayed):
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

    def due(self, obs: list[Observation], *, min_interval: float, max_interval: float) -> float:
        return obs[-1].time + self.current(obs, min_interval=min_interval, max_interval=max_interval)


@dataclass(frozen=True, slots=True)
class TimelyReturn(_Replayed):
    """Timely return (及时返回法, seed 000).

    While the page stays unchanged the interval doubles, as in the proximity rule; once a change
    is seen the interval is reset to the minimum, so a page that has just started changing (a
    story being updated) is watched closely again at once.
    """

    initial_interval: float = HOUR
    increase: float = 2.0
    name: str = "timely_return"

    def due(self, obs: list[Observation], *, min_interval: float, max_interval: float) -> float:
        interval = clamp_interval(self.initial_interval, min_interval=min_interval, max_interval=max_interval)
        for o in obs[1:]:
            interval = min_interval if o.changed else interval * self.increase
            interval = clamp_interval(interval, min_interval=min_interval, max_interval=max_interval)
        return obs[-1].time + interval


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
class PoissonRate(_Replayed):
    """Poisson model (Cho & Garcia-Molina 2003): revisit when a change is ``p`` likely.

    With the estimated rate ``λ̂`` the probability of a change within ``I`` is ``1 − e^{−λ̂I}``;
    the interval is ``I = −ln(1 − p) / λ̂`` (``p = ½`` ⇒ ``I = ln 2 / λ̂``, the equilibrium the
    proximity rule reaches by trial and error). ``λ̂ = 0`` gives the maximum interval.
    """

    change_probability: float = 0.5
    window: int = 50
    name: str = "poisson"

    def due(self, obs: list[Observation], *, min_interval: float, max_interval: float) -> float:
        rate = poisson_rate(obs, window=self.window)
        if rate <= 0:
            return math.inf  # no change seen: the maximum interval
        p = min(max(self.change_probability, 1e-6), 1 - 1e-6)
        return obs[-1].time + -math.log(1.0 - p) / rate


@dataclass(frozen=True, slots=True)
class NutchAdaptive(_Replayed):
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

    def due(self, obs: list[Observation], *, min_interval: float, max_interval: float) -> float:
        interval = clamp_interval(self.initial_interval, min_interval=min_interval, max_interval=max_interval)
        modified = obs[0].time
        due = obs[0].time + interval
        for prev, cur in zip(obs, obs[1:]):
            lm = _usable_lm(prev, cur) if cur.changed else None
            interval, modified, due = self.step(
                interval, modified, cur.time, cur.changed,
                min_interval=min_interval, max_interval=max_interval, last_modified=lm,
            )
        return due


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
