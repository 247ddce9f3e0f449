"""Tests of newscrawl.algorithms.revisit (pure revisit estimators)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from newscrawl.algorithms.revisit import (
    ESTIMATORS,
    HOW_FIRST,
    Auto,
    CorrectionDecay,
    EqualInterval,
    HalveDouble,
    NutchAdaptive,
    Observation,
    PoissonRate,
    TimelyReturn,
    choose_estimator,
    cho_poisson_rate,
    clamp_interval,
    lm_poisson_rate,
    poisson_rate,
)

H = 3600.0
BOUNDS = {"min_interval": 60.0, "max_interval": 86400.0}


def visits(*spec: tuple[float, bool], lm: dict[int, float] | None = None) -> list[Observation]:
    """Observations from ``(time, changed)`` pairs; ``lm`` maps index -> Last-Modified."""
    lm = lm or {}
    return [Observation(t, c, HOW_FIRST if k == 0 else "fingerprint", None, lm.get(k)) for k, (t, c) in enumerate(spec)]


# --- clamping ------------------------------------------------------------------------------


def test_clamp_interval() -> None:
    assert clamp_interval(10, min_interval=60, max_interval=3600) == 60
    assert clamp_interval(600, min_interval=60, max_interval=3600) == 600
    assert clamp_interval(1e9, min_interval=60, max_interval=3600) == 3600
    assert clamp_interval(math.inf, min_interval=60, max_interval=3600) == 3600
    assert clamp_interval(math.nan, min_interval=60, max_interval=3600) == 3600
    assert clamp_interval(-5, min_interval=60, max_interval=3600) == 60


@pytest.mark.parametrize("lo,hi", [(0, 10), (-1, 10), (20, 10), (1, math.inf), (math.nan, 5)])
def test_bad_bounds_raise(lo: float, hi: float) -> None:
    with pytest.raises(ValueError):
        clamp_interval(5, min_interval=lo, max_interval=hi)


# --- halve / double (Risvik & Michelsen 2002) ----------------------------------------------


def test_halve_double_replays_history() -> None:
    est = HalveDouble(initial_interval=H)
    # 3600 -> changed: 1800 -> unchanged: 3600 -> unchanged: 7200
    h = visits((0, False), (3600, True), (5400, False), (9000, False))
    assert est.current(h, **BOUNDS) == 7200
    assert est.next_interval(h, 9000, **BOUNDS) == 7200
    # asked later than the last visit: the remaining time until due
    assert est.next_interval(h, 10000, **BOUNDS) == 6200


def test_halve_double_clamps_each_step() -> None:
    est = HalveDouble(initial_interval=H)
    many_changes = visits(*[(60.0 * k, k > 0) for k in range(20)])
    assert est.current(many_changes, **BOUNDS) == 60
    quiet = visits(*[(86400.0 * k, False) for k in range(20)])
    assert est.current(quiet, **BOUNDS) == 86400
    # one change after the clamp halves from the clamp, not from 2^19 hours
    assert est.current(quiet + visits((86400 * 20, False), (86400 * 21, True))[1:], **BOUNDS) == 43200


def test_halve_double_empty_history_visits_now() -> None:
    assert HalveDouble().next_interval([], 0, **BOUNDS) == 60


# --- timely return (seed 000) -------------------------------------------------------------


def test_timely_return_doubles_then_resets_to_minimum() -> None:
    est = TimelyReturn(initial_interval=H)
    h = visits((0, False), (3600, False), (10800, False))
    assert est.next_interval(h, 10800, **BOUNDS) == 4 * H  # 1 h -> 2 h -> 4 h
    h2 = h + [Observation(25200, True)]
    assert est.next_interval(h2, 25200, **BOUNDS) == 60  # reset to the minimum
    h3 = h2 + [Observation(25260, False)]
    assert est.next_interval(h3, 25260, **BOUNDS) == 120


# --- equal interval (seed 000) -------------------------------------------------------------


def test_equal_interval_mean_of_change_intervals_times_coefficient() -> None:
    est = EqualInterval(coefficient=0.5, window=5)
    # visits every 10 min; changes seen at 20 min, 80 min, 200 min -> intervals 60, 120 min
    times = [600.0 * k for k in range(21)]
    changed_at = {1200.0, 4800.0, 12000.0}
    h = visits(*[(t, t in changed_at) for t in times])
    assert est.mean_change_interval(h) == pytest.approx(5400.0)
    assert est.next_interval(h, times[-1], **BOUNDS) == pytest.approx(2700.0)


def test_equal_interval_uses_trusted_last_modified() -> None:
    est = EqualInterval(coefficient=1.0)
    # changes dated by Last-Modified at 1000, 4600, 8200 -> mean 3600
    h = visits((0, False), (1800, True), (5400, True), (9000, True), lm={1: 1000, 2: 4600, 3: 8200})
    assert est.mean_change_interval(h) == pytest.approx(3600.0)
    # an inconsistent Last-Modified (before the previous visit) falls back to the visit time
    h_bad = visits((0, False), (1800, True), (5400, True), lm={2: 100})
    assert est.mean_change_interval(h_bad) == pytest.approx(3600.0)


def test_equal_interval_falls_back_to_halve_double() -> None:
    h = visits((0, False), (3600, True))
    assert EqualInterval().next_interval(h, 3600, **BOUNDS) == HalveDouble().next_interval(h, 3600, **BOUNDS)


# --- Poisson (Cho & Garcia-Molina 2003) ---------------------------------------------------


def test_cho_estimator_hand_values() -> None:
    # n = 10, X = 5, I = 1 h: λ̂ = -ln(5.5 / 10.5) per hour = 0.646627...
    assert cho_poisson_rate(10, 5, H) * H == pytest.approx(math.log(10.5 / 5.5))
    assert cho_poisson_rate(10, 5, H) * H == pytest.approx(0.6466271649250525)
    # every visit saw a change: finite, ln(2n + 1) / I
    assert cho_poisson_rate(4, 4, 100.0) == pytest.approx(math.log(9) / 100)
    assert cho_poisson_rate(7, 0, 100.0) == 0.0
    assert cho_poisson_rate(0, 0, 100.0) == 0.0
    # the naive X / (n I) underestimates a page that changes on every visit
    assert cho_poisson_rate(10, 10, H) > 10 / (10 * H)


def test_poisson_rate_from_history_uses_mean_interval() -> None:
    # 11 visits (n = 10) irregularly spaced over 10 h, 5 changed -> mean interval 1 h
    times = [0, 1800, 3600, 9000, 10800, 18000, 21600, 25200, 28800, 32400, 36000]
    h = visits(*[(t, k in (1, 3, 5, 7, 9)) for k, t in enumerate(times)])
    assert poisson_rate(h) == pytest.approx(cho_poisson_rate(10, 5, H))
    est = PoissonRate(change_probability=0.5)
    assert est.next_interval(h, 36000, **BOUNDS) == pytest.approx(math.log(2) / cho_poisson_rate(10, 5, H))


def test_lm_poisson_rate_is_changes_over_change_free_time() -> None:
    # visits 0, 100, 200, 300; changed at 100 (LM 40) and 300 (LM 250); unchanged 100..200
    h = visits((0, False), (100, True), (200, False), (300, True), lm={1: 40, 3: 250})
    # change-free time = (100 - 40) + 100 + (300 - 250) = 210
    assert lm_poisson_rate(h) == pytest.approx(2 / 210)
    assert poisson_rate(h) == pytest.approx(2 / 210)
    # a Last-Modified at or before the previous visit is not trusted -> Cho's formula
    bad = visits((0, False), (100, True), (200, False), (300, True), lm={1: 40, 3: 150})
    assert lm_poisson_rate(bad) is None
    assert poisson_rate(bad) == pytest.approx(cho_poisson_rate(3, 2, 100.0))


def test_poisson_never_changed_goes_to_max() -> None:
    h = visits(*[(H * k, False) for k in range(12)])
    assert PoissonRate().next_interval(h, 11 * H, **BOUNDS) == 86400


# --- Nutch AdaptiveFetchSchedule ----------------------------------------------------------


def test_nutch_step_values() -> None:
    n = NutchAdaptive()
    # changed: ×0.8, modified = fetch, delta 0 -> next fetch = fetch + interval
    assert n.step(3600, 0, 10000, True, **BOUNDS) == (pytest.approx(2880), 10000, pytest.approx(12880))
    # unchanged, modified 1000 s ago: ×1.4 = 5040 > delta; next = fetch - 0.3·1000 + 5040
    interval, modified, due = n.step(3600, 9000, 10000, False, **BOUNDS)
    assert (interval, modified, due) == (pytest.approx(5040), 9000, pytest.approx(14740))
    # unchanged for longer than the interval: sync-delta raises the interval to delta
    interval, _, due = n.step(3600, 0, 20000, False, **BOUNDS)
    assert interval == pytest.approx(20000) and due == pytest.approx(20000 - 6000 + 20000)


# --- per-page choice ----------------------------------------------------------------------


def test_choose_few_visits_is_halve_double() -> None:
    name, reason = choose_estimator(visits((0, False), (60, True)))
    assert name == "halve_double" and "too few" in reason


def test_choose_regular_is_equal_interval() -> None:
    # visits every 10 min for 6 h, a change exactly every hour
    h = visits(*[(600.0 * k, k > 0 and k % 6 == 0) for k in range(37)])
    name, reason = choose_estimator(h)
    assert name == "equal_interval", reason
    assert "CV 0.00" in reason


def test_choose_bursty_is_timely_return() -> None:
    # quiet for a day, then a burst of edits 10 min apart, quiet again, another burst
    changed_at = {86400 + 600 * k for k in range(1, 4)} | {2 * 86400 + 600 * k for k in range(1, 4)}
    times = sorted({600.0 * k for k in range(0, 2 * 144 + 10)})
    h = visits(*[(t, t in changed_at) for t in times])
    name, reason = choose_estimator(h)
    assert name == "timely_return", reason


def test_choose_changes_on_every_visit_is_not_regular() -> None:
    # every visit sees a change: change intervals are just visit gaps -> Poisson, not equal interval
    h = visits(*[(600.0 * k, k > 0) for k in range(20)])
    assert choose_estimator(h)[0] == "poisson"


def test_choose_irregular_many_visits_is_poisson() -> None:
    flags = [False, True, False, False, True, True, False, False, False, True, False, True, False]
    h = visits(*[(1000.0 * k + (37 * k * k) % 500, f) for k, f in enumerate(flags)])
    assert choose_estimator(h)[0] == "poisson"


def test_choose_sparse_irregular_is_halve_double() -> None:
    h = visits((0, False), (500, True), (900, False), (4000, True), (4100, False))
    assert choose_estimator(h)[0] == "halve_double"


def test_auto_applies_the_chosen_estimator() -> None:
    h = visits(*[(600.0 * k, k > 0 and k % 6 == 0) for k in range(37)])
    assert Auto().next_interval(h, h[-1].time, **BOUNDS) == EqualInterval().next_interval(h, h[-1].time, **BOUNDS)


# --- articles: correction decay -----------------------------------------------------------


def test_correction_decay_checkpoints() -> None:
    d = CorrectionDecay(first=1200, factor=2, steps=6)
    assert d.checkpoints(0) == [1200, 2400, 4800, 9600, 19200, 38400]
    # discovered at 10 min: first re-check at 20 min after publication
    h = [Observation(600, False, HOW_FIRST)]
    assert d.next_interval(h, 600, published=0, **BOUNDS) == 600
    # after the 4800 check: next is 9600
    h.append(Observation(4800, False))
    assert d.next_interval(h, 4800, published=0, **BOUNDS) == 4800
    # a late crawler skips missed checkpoints instead of making them up
    assert d.next_due(h, 20000, published=0) == 38400
    # exhausted: the maximum interval, and exhausted() says so
    h.append(Observation(38400, False))
    assert d.next_interval(h, 38400, published=0, **BOUNDS) == 86400
    assert d.exhausted(h, 38400, published=0)


def test_correction_decay_restarts_after_a_correction() -> None:
    d = CorrectionDecay(first=1200, factor=2, steps=6)
    h = [Observation(600, False, HOW_FIRST), Observation(9600, True)]
    assert d.next_due(h, 9600, published=0) == 9600 + 1200
    assert not d.exhausted(h, 9600, published=0)


# --- properties ---------------------------------------------------------------------------

finite_time = st.floats(min_value=-1e11, max_value=1e11, allow_nan=False)
any_time = st.one_of(finite_time, st.just(math.nan), st.just(math.inf), st.just(-math.inf))
observations = st.builds(
    Observation,
    time=st.one_of(finite_time, finite_time, any_time),
    changed=st.booleans(),
    how=st.sampled_from(["first", "head", "conditional", "fingerprint", "??"]),
    new_links=st.one_of(st.none(), st.integers(min_value=-5, max_value=500)),
    last_modified=st.one_of(st.none(), any_time),
    listed=st.one_of(st.none(), st.integers(min_value=-1, max_value=200)),
)
histories = st.lists(observations, max_size=40)


@st.composite
def bounds(draw: st.DrawFn) -> tuple[float, float]:
    lo = draw(st.floats(min_value=1e-3, max_value=1e6))
    hi = draw(st.floats(min_value=lo, max_value=1e8))
    return lo, hi


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(history=histories, now=finite_time, b=bounds())
def test_every_estimator_stays_in_bounds(history: list[Observation], now: float, b: tuple[float, float]) -> None:
    lo, hi = b
    for est in list(ESTIMATORS.values()) + [CorrectionDecay()]:
        v = est.next_interval(history, now, min_interval=lo, max_interval=hi)
        assert lo <= v <= hi, est
    v = CorrectionDecay().next_interval(history, now, min_interval=lo, max_interval=hi, published=now - 100)
    assert lo <= v <= hi
    name, reason = choose_estimator(history)
    assert name in ESTIMATORS and reason
    assert poisson_rate(history) >= 0
