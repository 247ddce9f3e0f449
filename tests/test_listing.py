"""The listing evidence of a source's first visit (newscrawl/algorithms/listing.py) and what the
channel scheduler makes of it (cold start, issue 20 item 1)."""

from __future__ import annotations

import math
import random
from datetime import datetime, timezone

import pytest

from newscrawl.algorithms.channelsched import ChannelScheduler
from newscrawl.algorithms.listing import DAY, links_evidence, listing_evidence

NOW = 1_790_000_000.0  # 2026-09-21, a fixed instant


def _poisson_list(rate: float, n: int, rng: random.Random) -> list[float]:
    t, out = NOW, []
    for _ in range(n):
        t -= rng.expovariate(rate)
        out.append(t)
    return out


@pytest.mark.parametrize("per_minute", [0.05, 0.5, 5.0])
def test_exact_times_recover_the_rate_of_a_poisson_listing(per_minute: float) -> None:
    rng = random.Random(7)
    ratios = []
    for _ in range(200):
        ev = listing_evidence(_poisson_list(per_minute / 60, 20, rng), [], NOW)
        assert ev is not None and ev.exact and not ev.lower_bound
        ratios.append(ev.rate / (per_minute / 60))
    mean = sum(ratios) / len(ratios)
    assert 0.85 < mean < 1.15, mean  # (k-1)/span is unbiased


def test_a_pinned_old_story_does_not_stretch_the_window() -> None:
    times = [NOW - 60.0 * i for i in range(1, 20)] + [NOW - 30 * DAY]
    ev = listing_evidence(times, [], NOW)
    assert ev is not None
    assert 0.8 / 60 < ev.rate < 1.2 / 60


def test_weight_is_capped_and_future_or_junk_times_are_ignored() -> None:
    times = [NOW - 3600.0 * i for i in range(1, 11)] + [NOW + 7200.0, math.nan, None, True]
    ev = listing_evidence(times, [], NOW, max_weight=1800.0)
    assert ev is not None and ev.items == 9 and ev.seconds == 1800.0
    assert listing_evidence([None, math.inf], [], NOW) is None
    assert listing_evidence([], [], NOW) is None


def test_day_only_dates_give_a_weaker_estimate_and_today_alone_is_a_lower_bound() -> None:
    today = math.floor(NOW / DAY) * DAY
    spread = [today - DAY * i for i in range(10)]  # one story a day for ten days
    ev = listing_evidence([], spread, NOW)
    assert ev is not None and not ev.exact and not ev.lower_bound
    assert 0.5 / DAY < ev.rate < 2.0 / DAY
    censored = listing_evidence([], [today] * 20, NOW)
    assert censored is not None and censored.lower_bound


def test_links_evidence_reads_published_then_url_days_and_drops_lower_bounds() -> None:
    links = [{"role": "content", "target_url": f"http://a.test/x/{i}", "published": NOW - 30.0 * i}
             for i in range(1, 21)]
    links.append({"role": "node", "target_url": "http://a.test/sec/", "published": NOW - 1e6})
    rate, seconds = links_evidence(links, NOW)
    assert 1.8 / 60 < rate < 2.2 / 60 and seconds > 0
    day = datetime.fromtimestamp(NOW, timezone.utc).strftime("%Y-%m-%d")
    today_only = [{"role": "content", "target_url": f"http://a.test/{day}/s{i}.html"} for i in range(20)]
    assert links_evidence(today_only, NOW) is None  # censored: explore instead
    assert links_evidence([{"role": "content", "target_url": "http://a.test/s"}], NOW) is None


def _sched(**kw) -> ChannelScheduler:
    return ChannelScheduler(budget_per_hour=0, min_interval=2.0, max_interval=3600.0,
                            reference_interval=60.0, **kw)


def test_first_revisit_is_planned_from_the_listing_not_the_prior() -> None:
    s = _sched()
    busy = listing_evidence([NOW - 20.0 * i for i in range(1, 21)], [], NOW)  # 3/min
    quiet = listing_evidence([NOW - 6 * 3600.0 * i for i in range(1, 21)], [], NOW)  # 4/day
    assert busy is not None and quiet is not None
    s.observe("busy", NOW, 20, listed=20, evidence=(busy.rate, busy.seconds))
    s.observe("quiet", NOW, 20, listed=20, evidence=(quiet.rate, quiet.seconds))
    s.observe("blind", NOW, 20, listed=20)
    i_busy, i_quiet, i_blind = (s.interval(k, NOW) for k in ("busy", "quiet", "blind"))
    assert i_busy < 60 < i_blind < i_quiet, (i_busy, i_blind, i_quiet)
    # √ rule at the reference interval: 1/√(r/60) seconds, r = 3/min -> about 35 s
    assert 20 < i_busy < 50
    assert s.base_rate("busy", NOW) * 60 > 2.0


def test_a_listing_that_tells_nothing_is_explored_at_the_explore_interval() -> None:
    s = _sched(explore_interval=45.0)
    s.observe("blind", NOW, 20, listed=20)
    assert s.interval("blind", NOW) == pytest.approx(45.0)
    s.observe("blind", NOW + 45.0, 3, listed=20)  # measured once: planned from the rate now
    assert s.interval("blind", NOW + 45.0) != pytest.approx(45.0)
    ev = listing_evidence([NOW - 600.0 * i for i in range(1, 21)], [], NOW)
    s.observe("dated", NOW, 20, listed=20, evidence=(ev.rate, ev.seconds))
    assert s.interval("dated", NOW) > 45.0  # evidence: no exploring needed


def test_evidence_survives_export_and_is_ignored_on_later_visits() -> None:
    s = _sched()
    s.observe("c", NOW, 20, listed=20, evidence=(0.05, 1800.0))
    data = s.export("c")
    assert data is not None and data["evidence"] == 1800.0
    t = _sched()
    assert t.restore("c", data)
    assert t.base_rate("c", NOW) == pytest.approx(s.base_rate("c", NOW))
    before = s.base_rate("c", NOW)
    s.observe("c", NOW + 10, 0, listed=20, evidence=(100.0, 3600.0))  # not a first visit
    assert s.base_rate("c", NOW + 10) <= before
    s.observe("d", NOW, 5, evidence=(math.nan, 10.0))  # junk evidence: ignored, no crash
    assert s.channels["d"].evidence == 0.0


def test_budget_as_a_cap_keeps_the_reference_rule_while_it_fits() -> None:
    capped = _sched(budget_is_cap=True)
    target = _sched()
    for s in (capped, target):
        for k in range(5):
            s.observe(f"c{k}", NOW, 10, listed=20, evidence=(1 / 600.0, 3600.0))
        s.plan(NOW, budget_rate=10_000.0)
    # as a cap, 10,000 visits/h is not spent: the √ rule at 60 s applies
    assert capped.interval("c0", NOW) == pytest.approx(1 / math.sqrt(1 / 600.0 / 60.0), rel=0.2)
    assert target.interval("c0", NOW) == pytest.approx(2.0)  # as a target: at the minimum
    capped.plan(NOW, budget_rate=30.0)  # a cap that binds: the water level of 30/h
    assert capped.interval("c0", NOW) == pytest.approx(600.0, rel=0.15)


# -- real pages ---------------------------------------------------------------------------------


def test_real_zeit_section_pages_give_teaser_times_and_a_rate() -> None:
    import lxml.html

    from newscrawl.algorithms.linkextract import extract_links
    from tests.conftest import shared_path

    folder = shared_path("corpus", "01_frontpage-archive_de_home-sections", "zeit.de_2023-05-01")
    root = lxml.html.fromstring((folder / "news.html").read_bytes())
    links = extract_links(root, "https://www.zeit.de/news/index")
    times = [link.published for link in links if link.published is not None]
    assert len(times) >= 100  # zeit.de's news list carries a <time datetime> per teaser
    ev = listing_evidence(times, [], max(times) + 60)
    assert ev is not None and ev.exact
    assert 1 / 3600 < ev.rate < 600 / 3600  # a news ticker: between 1 and 600 an hour


def test_real_feeds_of_set_14_give_a_rate_at_their_capture_time() -> None:
    import csv

    from newscrawl.algorithms.feeds import parse_feed
    from newscrawl.algorithms.listing import entry_time
    from newscrawl.algorithms.pubdate import parse_datetime
    from tests.conftest import shared_path

    folder = shared_path("corpus", "14_feeds_sitemaps")
    rows = list(csv.DictReader((folder / "captures.tsv").open(encoding="utf-8"), delimiter="\t"))
    rated = 0
    for row in rows:
        if row["kind"] not in ("rss2", "atom", "rss1", "rdf") or not row["captured"]:
            continue
        captured = parse_datetime(row["captured"])
        if captured is None:
            continue
        result = parse_feed((folder / row["path"]).read_bytes(), "https://example.org/feed")
        times = [entry_time(e) for e in result.entries]
        ev = listing_evidence(times, [], captured.timestamp())
        if ev is None:
            continue
        rated += 1
        assert ev.rate >= 0 and 0 < ev.seconds <= 3600.0, row["path"]
    assert rated >= 10, f"only {rated} real feeds gave a rate"
