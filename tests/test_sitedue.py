"""Which sites are due (newscrawl/algorithms/sitedue.py): pure, every ``now`` explicit."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from newscrawl.algorithms.revisit import HalveDouble, NutchAdaptive, Observation
from newscrawl.algorithms.sitedue import (
    HOW_NEW_ARTICLES,
    due_sites,
    group_sites,
    next_due,
    run_observation,
    trim_history,
)

HOUR = 3600.0
BOUNDS = {"min_interval": 900.0, "max_interval": 86400.0}
T0 = 1_700_000_000.0


def test_sites_are_registered_domains_with_their_entry_urls_in_order():
    sites = group_sites([
        "https://www.zeit.de/index", "https://news.sina.com.cn/", "https://zeit.de/",
        "https://www.zeit.de/index", "http://127.0.0.1:8080/", "http://localhost:1/",
    ])
    assert sites == {
        "zeit.de": ["https://www.zeit.de/index", "https://zeit.de/"],
        "sina.com.cn": ["https://news.sina.com.cn/"],
        "127.0.0.1": ["http://127.0.0.1:8080/"],
        "localhost": ["http://localhost:1/"],
    }
    assert group_sites(["not a url"]) == {}


def test_a_run_is_a_visit_changed_when_it_stored_new_articles():
    assert run_observation(T0, 3) == Observation(time=T0, changed=True, how=HOW_NEW_ARTICLES,
                                                 new_links=3)
    assert run_observation(T0, 0).changed is False
    assert run_observation(T0, -2).new_links == 0


def test_a_site_never_crawled_has_no_due_time():
    assert next_due([], estimator=HalveDouble(), **BOUNDS) is None


def test_halve_double_after_one_two_three_runs():
    est = HalveDouble()  # initial interval one hour
    first = [run_observation(T0, 20)]
    assert next_due(first, estimator=est, **BOUNDS) == T0 + HOUR
    changed = first + [run_observation(T0 + HOUR, 2)]
    assert next_due(changed, estimator=est, **BOUNDS) == T0 + HOUR + HOUR / 2
    unchanged = first + [run_observation(T0 + HOUR, 0)]
    assert next_due(unchanged, estimator=est, **BOUNDS) == T0 + HOUR + 2 * HOUR


def test_due_time_is_clamped_to_the_interval_bounds():
    quiet = [run_observation(T0 + k * 86400, 0) for k in range(12)]
    due = next_due(quiet, estimator=HalveDouble(), min_interval=900.0, max_interval=7200.0)
    assert due == quiet[-1].time + 7200.0
    busy = [run_observation(T0 + k * 900, 5) for k in range(12)]
    due = next_due(busy, estimator=HalveDouble(), min_interval=900.0, max_interval=7200.0)
    assert due == busy[-1].time + 900.0


def test_due_time_ignores_history_order_and_junk_times():
    runs = [run_observation(T0 + HOUR, 0), run_observation(T0, 4),
            Observation(time=math.nan, changed=True)]
    assert next_due(runs, estimator=HalveDouble(), **BOUNDS) == T0 + HOUR + 2 * HOUR
    assert next_due(runs, estimator=NutchAdaptive(), **BOUNDS) > T0 + HOUR


def test_bad_interval_bounds_raise():
    with pytest.raises(ValueError):
        next_due([run_observation(T0, 1)], estimator=HalveDouble(), min_interval=0, max_interval=10)
    with pytest.raises(ValueError):
        next_due([], estimator=HalveDouble(), min_interval=100, max_interval=10)


def test_due_sites_never_crawled_first_then_most_overdue():
    now = T0
    due_at = {"late.de": now - 50, "later.de": now - 500, "soon.de": now + 1, "exact.de": now,
              "junk.de": math.nan}
    sites = ["soon.de", "late.de", "new.de", "exact.de", "later.de", "junk.de", "new.de"]
    assert due_sites(sites, due_at, now) == ["new.de", "junk.de", "later.de", "late.de", "exact.de"]


def test_busy_sites_are_never_due():
    assert due_sites(["a.de", "b.de"], {}, T0, busy={"a.de"}) == ["b.de"]


def test_trim_history_keeps_the_newest():
    runs = [run_observation(T0 + k, k) for k in (3, 1, 2, 0)]
    assert [o.time for o in trim_history(runs, 2)] == [T0 + 2, T0 + 3]
    assert len(trim_history(runs, 0)) == 1
    assert trim_history([], 5) == []


@given(st.dictionaries(st.sampled_from("abcdefgh"), st.one_of(st.none(), st.floats(allow_nan=True))),
       st.lists(st.sampled_from("abcdefgh")), st.sets(st.sampled_from("abcdefgh")),
       st.floats(-1e12, 1e12))
def test_due_sites_returns_each_due_site_once_and_only_those(due_at, sites, busy, now):
    out = due_sites(sites, due_at, now, busy=busy)
    assert len(out) == len(set(out))
    assert set(out) <= set(sites) - busy
    for site in set(sites) - busy:
        due = due_at.get(site)
        expected = due is None or not math.isfinite(due) or due <= now
        assert (site in out) == expected
