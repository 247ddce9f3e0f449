"""Tests of the channel scheduler (``newscrawl/algorithms/channelsched.py``): √-rate budget split,
rate and daily-profile learning, the prior of new channels, due times, the monitor API, and the
estimates' round trip through plain data."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from newscrawl.algorithms.channelsched import ChannelScheduler, DailyProfile, sqrt_allocation
from newscrawl.algorithms.revisit import HOW_CONDITIONAL, HOW_FIRST, Observation
from tests.test_revisit import bounds, finite_time, observations

import json
import math

H = 3600.0


# --- √ allocation and the channel scheduler -----------------------------------------------


def test_sqrt_allocation_hand_values() -> None:
    # budget 0.3 visits/s; rates 1 and 4 -> frequencies ∝ 1 : 2 after the zero-rate page takes
    # its 1/max_interval
    out = sqrt_allocation({"a": 1.0, "b": 4.0, "c": 0.0}, 0.3, min_interval=1, max_interval=1000)
    fa, fb = 1 / out["a"], 1 / out["b"]
    assert out["c"] == 1000
    assert fb == pytest.approx(2 * fa)
    assert fa + fb + 1 / 1000 == pytest.approx(0.3)


def test_sqrt_allocation_floors_and_bounds() -> None:
    # a floor above the √ share is honoured, the rest re-split ∝ √rate
    out = sqrt_allocation({"a": 1.0, "b": 1.0, "c": 1.0}, 3 / 100, min_interval=1, max_interval=1e6,
                          floors={"a": 0.02})
    assert 1 / out["a"] == pytest.approx(0.02)
    assert 1 / out["b"] == pytest.approx(1 / out["c"]) == pytest.approx(0.005, rel=1e-3)
    # a budget beyond what the minimum interval allows is not spent
    out = sqrt_allocation({"a": 1.0, "b": 9.0}, 100.0, min_interval=10, max_interval=1000)
    assert out == {"a": 10, "b": 10}
    # floors above the budget are scaled down together
    out = sqrt_allocation({"a": 1.0, "b": 1.0}, 0.01, min_interval=1, max_interval=1e6,
                          floors={"a": 0.03, "b": 0.01})
    assert 1 / out["a"] == pytest.approx(0.0075) and 1 / out["b"] == pytest.approx(0.0025)
    assert sqrt_allocation({}, 1.0, min_interval=1, max_interval=2) == {}


def feed(sched: ChannelScheduler, key: str, *, per_hour: float, hours: int, start: float = 0.0,
         group: str = "host", step: float = 600.0) -> float:
    """Visit ``key`` every ``step`` seconds seeing ``per_hour`` new links per hour."""
    t = start
    sched.observe_visit(key, Observation(t, False, HOW_FIRST, None, None, 20), group=group)
    acc = 0.0
    for _ in range(int(hours * H / step)):
        t += step
        acc += per_hour * step / H
        k = int(acc)
        acc -= k
        sched.observe_visit(key, Observation(t, k > 0, "fingerprint", k, None, 20), group=group)
    return t


def test_channel_rate_converges_to_yield() -> None:
    sched = ChannelScheduler(budget_per_hour=100, min_interval=60, max_interval=86400)
    t = feed(sched, "busy", per_hour=12, hours=48)
    assert sched.rate("busy", t) * H == pytest.approx(12, rel=0.1)


def test_busier_channel_gets_shorter_interval_and_budget_is_spent() -> None:
    sched = ChannelScheduler(budget_per_hour=30, min_interval=60, max_interval=86400)
    feed(sched, "busy", per_hour=16, hours=24, group="h1")
    t = feed(sched, "quiet", per_hour=1, hours=24, group="h2")
    iv = sched.intervals(t)
    assert iv["busy"] < iv["quiet"]
    # √ rule: visits ∝ √rate, so about 4 : 1 here (within estimation noise)
    assert iv["quiet"] / iv["busy"] == pytest.approx(4, rel=0.25)
    # (intervals are solved over the learned daily profile: the budget is met to within 1 %)
    assert sum(1 / v for v in iv.values()) * H == pytest.approx(30, rel=0.01)


def test_drop_off_floor_protects_a_busy_channel_under_a_tiny_budget() -> None:
    # 100 quiet channels and one that publishes 60 links/hour; 20-link lists; budget 40 req/h
    sched = ChannelScheduler(budget_per_hour=40, min_interval=60, max_interval=86400, max_fill=0.35)
    for k in range(100):
        feed(sched, f"q{k}", per_hour=0.5, hours=12, group="h", step=3600)
    t = feed(sched, "busy", per_hour=60, hours=12, group="h", step=300)
    iv = sched.intervals(t)
    # at most 0.35 × 20 = 7 expected new links per visit -> interval <= 7 min
    assert iv["busy"] <= 7 * 60 * 1.15


def test_saturated_visit_raises_the_estimate() -> None:
    a = ChannelScheduler(budget_per_hour=10, min_interval=60, max_interval=86400)
    b = ChannelScheduler(budget_per_hour=10, min_interval=60, max_interval=86400)
    for s, listed in ((a, 20), (b, 40)):
        s.observe_visit("c", Observation(0, False, HOW_FIRST, None, None, listed))
        s.observe_visit("c", Observation(H, True, "fingerprint", 20, None, listed))
    assert a.rate("c", H) > 1.5 * b.rate("c", H)


def test_conditional_not_modified_counts_as_zero_links() -> None:
    sched = ChannelScheduler(budget_per_hour=10, min_interval=60, max_interval=86400)
    sched.observe_visit("c", Observation(0, False, HOW_FIRST))
    sched.observe_visit("c", Observation(H, False, HOW_CONDITIONAL, 0))
    before = sched.rate("c", H)
    sched.observe_visit("c", Observation(2 * H, False, HOW_CONDITIONAL, 0))
    assert sched.rate("c", 2 * H) < before


def test_daily_profile_is_learned() -> None:
    sched = ChannelScheduler(budget_per_hour=10, min_interval=60, max_interval=86400)
    t = 0.0
    for key in ("a", "b"):
        sched.observe_visit(key, Observation(t, False, HOW_FIRST), group="h")
    for step in range(1, 4 * 48 + 1):  # four days, visits every 30 min
        t = step * 1800.0
        hour = (t % 86400) / H
        k = 5 if 8 <= hour < 20 else 0  # publishes by day (UTC) only
        for key in ("a", "b"):
            sched.observe_visit(key, Observation(t, k > 0, "fingerprint", k), group="h")
    prof = sched.profiles["h"]
    assert prof.at(4 * 86400 + 12 * H) > 1.6
    assert prof.at(4 * 86400 + 2 * H) < 0.4
    assert sched.rate("a", 4 * 86400 + 12 * H) > 4 * sched.rate("a", 4 * 86400 + 2 * H)


def test_daily_profile_overlaps() -> None:
    p = DailyProfile()
    ov = p.overlaps(3000, 2 * H + 5)
    assert ov[0] == 600 and ov[1] == 3600 and ov[2] == 5 and sum(ov) == pytest.approx(2 * H + 5 - 3000)
    assert sum(p.overlaps(0, 2.5 * 86400)) == pytest.approx(2.5 * 86400)
    assert p.overlaps(10, 10) == [0.0] * 24


# --- properties ---------------------------------------------------------------------------


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    obs=st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["h1", "h2"]), observations), max_size=30),
    now=finite_time,
    budget=st.floats(min_value=0, max_value=1e5),
    b=bounds(),
)
def test_channel_scheduler_never_raises_and_stays_in_bounds(
    obs: list[tuple[str, str, Observation]], now: float, budget: float, b: tuple[float, float]
) -> None:
    lo, hi = b
    sched = ChannelScheduler(budget_per_hour=budget, min_interval=lo, max_interval=hi)
    for key, group, o in obs:
        sched.observe_visit(key, o, group=group)
    for v in sched.intervals(now, keys=["a", "b", "c", "never-seen"]).values():
        assert lo <= v <= hi
    assert sched.rate("a", now) >= 0


@settings(max_examples=200)
@given(
    rates=st.dictionaries(st.integers(0, 50), st.floats(min_value=0, max_value=1e3), max_size=30),
    budget=st.floats(min_value=0, max_value=100),
    b=bounds(),
)
def test_sqrt_allocation_bounds_and_budget(rates: dict[int, float], budget: float, b: tuple[float, float]) -> None:
    lo, hi = b
    out = sqrt_allocation(rates, budget, min_interval=lo, max_interval=hi)
    assert set(out) == set(rates)
    assert all(lo <= v <= hi for v in out.values())
    spent = sum(1 / v for v in out.values())
    floor = len(rates) / hi
    if rates and budget > floor:
        # spend the budget unless every positive-rate page already sits at the minimum interval
        if any(1 / v < 1 / lo * (1 - 1e-9) for k, v in out.items() if rates[k] > 0):
            assert spent == pytest.approx(budget, rel=1e-6)
        assert spent <= budget * (1 + 1e-6)
    # a higher rate never gets a longer interval
    keys = sorted(out, key=lambda k: rates[k])
    for k1, k2 in zip(keys, keys[1:]):
        if rates[k1] < rates[k2]:
            assert out[k2] <= out[k1] * (1 + 1e-9)


# --- the API a monitor loop and the crawl state use -----------------------------------------


def test_prior_of_a_new_channel_is_its_sites_mean_else_the_default() -> None:
    sched = ChannelScheduler(budget_per_hour=100, min_interval=60, max_interval=86400)
    # nothing known at all: the documented default, 1 link/hour
    sched.observe("first", 0.0, None, group="unknown.example")
    assert sched.base_rate("first", 0.0) * H == pytest.approx(1.0)
    feed(sched, "a", per_hour=10, hours=24, group="busy.example")
    feed(sched, "b", per_hour=30, hours=24, group="busy.example")
    t = feed(sched, "q", per_hour=2, hours=24, group="quiet.example")
    sched.plan(t)
    # never visited, on the busy host: starts near the host's pooled rate (20/h), not at 1/h
    sched.observe("new", t, None, group="busy.example")
    assert sched.base_rate("new", t) * H == pytest.approx(20, rel=0.2)
    # on the quiet host: near its 2/h
    sched.observe("calm", t, None, group="quiet.example")
    assert sched.base_rate("calm", t) * H == pytest.approx(2, rel=0.2)
    # a channel of a host never seen: the pooled rate of every channel (42 links / 3 h = 14/h)
    sched.observe("lone", t, None, group="other.example")
    assert sched.base_rate("lone", t) * H == pytest.approx(14, rel=0.2)
    # so the first interval after the first visit is short on the busy host, long on the quiet
    assert sched.interval("new", t) < sched.interval("calm", t) / 2


def test_prior_does_not_swamp_a_minute_of_data() -> None:
    """A monitor that started a minute ago: a channel's estimate is near what it showed, not
    pulled towards the 1 link/hour default (the host's pooled rate is the prior)."""
    sched = ChannelScheduler(budget_per_hour=3600, min_interval=2, max_interval=600)
    rates = {"fast": 4.0 / 60, "slow": 0.25 / 60}  # links per second
    for key in rates:
        sched.observe(key, 0.0, None, group="site.example")
    for step in range(1, 4):
        now = 20.0 * step
        for key, r in rates.items():
            sched.observe(key, now, round(r * now) - round(r * (now - 20.0)), listed=20,
                          group="site.example")
        sched.plan(now)
    assert sched.base_rate("fast", now) == pytest.approx(rates["fast"], rel=0.25)
    assert sched.base_rate("slow", now) < rates["fast"] / 8


def test_without_a_budget_visits_follow_the_reference_rule() -> None:
    sched = ChannelScheduler(budget_per_hour=0, min_interval=60, max_interval=7 * 86400)
    feed(sched, "one", per_hour=1, hours=48, group="h1", step=1800)
    t = feed(sched, "four", per_hour=4, hours=48, group="h2", step=1800)
    iv = sched.plan(t)
    # one link per hour: about hourly; four per hour: twice as often (√)
    assert iv["one"] == pytest.approx(H, rel=0.15)
    assert iv["one"] / iv["four"] == pytest.approx(2, rel=0.2)


def test_intervals_are_clamped() -> None:
    sched = ChannelScheduler(budget_per_hour=0, min_interval=300, max_interval=3000)
    feed(sched, "busy", per_hour=600, hours=6, step=300)
    t = feed(sched, "dead", per_hour=0, hours=6, step=300, group="h2")
    iv = sched.plan(t)
    assert iv["busy"] == 300 and iv["dead"] == 3000
    assert 300 <= sched.interval("busy", t) <= 3000


def test_next_due_due_and_pick() -> None:
    sched = ChannelScheduler(budget_per_hour=20, min_interval=60, max_interval=86400)
    feed(sched, "busy", per_hour=16, hours=24, group="h1")
    t = feed(sched, "quiet", per_hour=1, hours=24, group="h1")
    sched.plan(t)
    d_busy, d_quiet = sched.next_due("busy", t), sched.next_due("quiet", t)
    assert t < d_busy < d_quiet  # both just visited; the busy one comes back first
    assert sched.due(t) == []
    assert [k for _, k in sched.due(d_quiet + 1)] == ["busy", "quiet"]
    # a free slot just after the visits: none is allowed yet (minimum interval)
    assert sched.pick(t + 30) is None
    assert sched.pick(t + 61) == "busy"  # the earliest due one, even before it is due
    # a channel never visited is due at once and comes first
    assert sched.next_due("unknown", t) == t
    assert sched.pick(t + 61, ["busy", "quiet", "unknown"]) == "unknown"


def test_due_time_follows_the_daily_profile() -> None:
    """A quiet night ahead pushes the next visit later than a busy morning does."""
    sched = ChannelScheduler(budget_per_hour=4, min_interval=60, max_interval=86400)
    t = 0.0
    for key in ("a", "b"):
        sched.observe_visit(key, Observation(t, False, HOW_FIRST), group="h")
    for step in range(1, 6 * 48 + 1):  # six days, visits every 30 min; busy 8-20 UTC only
        t = step * 1800.0
        k = 5 if 8 <= (t % 86400) / H < 20 else 0
        for key in ("a", "b"):
            sched.observe_visit(key, Observation(t, k > 0, "fingerprint", k), group="h")
    day = 6 * 86400.0
    evening, morning = day + 19.75 * H, day + 7.75 * H
    sched.plan(evening)
    after_evening = sched._due_after("a", evening, evening) - evening
    sched.plan(morning)
    after_morning = sched._due_after("a", morning, morning) - morning
    assert after_evening > 1.4 * after_morning


def test_estimates_survive_a_round_trip_through_plain_data() -> None:
    sched = ChannelScheduler(budget_per_hour=30, min_interval=60, max_interval=86400)
    feed(sched, "busy", per_hour=16, hours=30, group="h1")
    t = feed(sched, "quiet", per_hour=1, hours=30, group="h1")
    before = sched.plan(t)
    # what the crawl state stores: each channel's ``sched``, each host's ``profile``, as JSON
    stored = json.loads(json.dumps({"channels": {k: sched.export(k) for k in ("busy", "quiet")},
                                    "profiles": {"h1": sched.export_profile("h1")}}))
    again = ChannelScheduler(budget_per_hour=30, min_interval=60, max_interval=86400)
    for key, data in stored["channels"].items():
        assert again.restore(key, data, group="h1")
    assert again.restore_profile("h1", stored["profiles"]["h1"])
    after = again.plan(t)
    assert after == pytest.approx(before)
    assert again.rate("busy", t + H) == pytest.approx(sched.rate("busy", t + H))
    assert again.next_due("busy", t) == pytest.approx(sched.next_due("busy", t))
    # junk is refused, never raised on
    assert not again.restore("x", {"v": 99}) and not again.restore("x", None)
    assert not again.restore_profile("h2", {"v": 1, "bins": 24, "links": [1], "expected": []})
    assert again.restore("y", {"v": 1, "links": "many", "exposure": -3, "last_visit": "yesterday"})
    assert again.export("y")["links"] == 0.0 and again.export("y")["last_visit"] is None


def test_verify_due_when_unchanged_answers_become_improbable() -> None:
    sched = ChannelScheduler(budget_per_hour=30, min_interval=60, max_interval=86400)
    t = feed(sched, "c", per_hour=12, hours=24)
    assert not sched.verify_due("c", t + 600)  # the last visit saw the page itself
    # 304s while about 12 links/hour are expected
    sched.observe("c", t + 60, None, changed=False)
    assert not sched.verify_due("c", t + 90)  # 0.3 links expected: unchanged is plausible
    sched.observe("c", t + 600, None, changed=False)
    assert sched.verify_due("c", t + 3600)  # about 8 links expected since: e^-8 < 1/2
    sched.observe("c", t + 3600, 4, listed=20)  # the full answer resets it
    assert not sched.verify_due("c", t + 3660)


def test_daily_profile_is_fitted_from_the_first_day() -> None:
    """The profile is fitted to every channel's hour-of-day counts from its first visit (each
    channel's own base cancels out), so one day of data already shows the day/night shape, also
    from a channel watched only in the busy hours."""
    sched = ChannelScheduler(budget_per_hour=10, min_interval=60, max_interval=86400)
    for key in ("a", "b"):
        sched.observe_visit(key, Observation(0.0, False, HOW_FIRST), group="h")
    for step in range(1, 48 + 1):  # one day, visits every 30 min
        t = step * 1800.0
        hour = (t % 86400) / H
        k = 5 if 8 <= hour < 20 else 0  # publishes by day (UTC) only
        sched.observe_visit("a", Observation(t, k > 0, "fingerprint", k), group="h")
        if 8 <= hour <= 12:  # watched in the morning only
            sched.observe_visit("b", Observation(t, k > 0, "fingerprint", 2 * k), group="h")
    sched.fit_profiles(t + 1, hosts=["h"])
    prof = sched.profiles["h"]
    assert prof.at(86400 + 12 * H) > 1.6
    assert prof.at(86400 + 2 * H) < 0.4
