"""The report's figures (newscrawl/algorithms/analytics.py) on hand-made records."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from newscrawl.algorithms.analytics import ReportBuilder, format_seconds

UTC = dt.timezone.utc
NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def art(site: str, seen_h: float, delay_min: float | None, weight: float = 0.5, **extra):
    seen = NOW - dt.timedelta(hours=seen_h)
    published = None if delay_min is None else seen - dt.timedelta(minutes=delay_min)
    return {"site": site, "first_seen": seen, "published": published, "weight": weight,
            "title": f"{site} {seen_h}", "url": f"https://{site}/{seen_h}", "fp": f"{site}{seen_h}", **extra}


def test_rates_delays_and_window():
    b = ReportBuilder(NOW, days=1, top=5)
    for h, d in ((0, 10), (1, 20), (2, 30), (3, 40), (5, None)):
        assert b.add_article(art("a.de", h, d))
    assert not b.add_article(art("a.de", 30, 5))  # outside the window
    b.add_article(art("a.de", 4, -15))  # published after capture: a wrong date
    b.add_article(art("b.de", 0.5, 60 * 24 * 3))  # published before the window: no delay
    report = b.build()
    a = next(s for s in report.sites if s.site == "a.de")
    assert a.articles == 6 and a.future_dated == 1
    assert a.per_hour == pytest.approx(6 / 5)  # first capture 5 h before now
    assert a.median_delay == pytest.approx(25 * 60) and a.p90_delay == pytest.approx(37 * 60)
    bsite = next(s for s in report.sites if s.site == "b.de")
    # one capture says what a site holds, not how fast it publishes
    assert math.isnan(bsite.per_hour) and bsite.per_hour_note == "n/a (1 article)"
    assert math.isnan(bsite.median_delay)
    # the time axis starts at the earliest capture's hour (5 h before NOW), not a day before
    assert sum(report.per_hour["a.de"]) == 6 and len(report.hours) == 6
    assert report.hours[0] == NOW - dt.timedelta(hours=5)
    assert [a["title"] for a in report.newest] == ["a.de 0", "b.de 0.5", "a.de 1", "a.de 2",
                                                   "a.de 3"]
    assert b.skipped == 1


def test_a_single_sweep_is_no_rate_and_one_visit_is_no_channel_rate():
    b = ReportBuilder(NOW, days=7, top=5)
    for i in range(33):  # 33 articles captured within one minute
        b.add_article(art("a.de", i / 3600, 5))
    b.add_source({"url": "https://a.de/", "site": "a.de", "role": "entry", "rate": 140.0,
                  "visits": 1})
    report = b.build()
    site = report.sites[0]
    assert math.isnan(site.per_hour) and site.per_hour_note == "n/a (captured within 32 s)"
    assert math.isnan(site.channel_rate) and site.rated_channels == 0
    assert report.sources[0].rate_note == "n/a (1 visit)"
    # the minute before NOW and NOW itself (12:00): two hourly bins, not 7 days of them
    assert [h.hour for h in report.hours] == [11, 12]
    again = ReportBuilder(NOW, days=7, top=5)
    again.add_source({"url": "https://a.de/", "site": "a.de", "role": "entry", "rate": 3.0,
                      "visits": 4})
    assert again.build().sites[0].channel_rate == 3.0


def test_stories_group_by_story_id_else_by_article():
    b = ReportBuilder(NOW, days=1, top=10)
    b.add_article(art("a.de", 1, 5, weight=0.4, story_id="x"))
    b.add_article(art("b.de", 2, 5, weight=0.9, story_id="x"))
    b.add_article(art("b.de", 3, 5, weight=0.7))
    b.add_article(art("c.de", 3, 5, weight=0.8))
    report = b.build()
    assert report.clustered
    top = report.stories[0]
    assert top.sites == {"a.de", "b.de"} and top.weight == 0.9 and top.articles == 2
    assert top.title == "b.de 2"  # the heaviest article names the story
    assert [s.weight for s in report.stories] == [0.9, 0.8, 0.7]
    assert report.widest == []  # the multi-site story is listed already: no table twice
    b.add_article(art("c.de", 4, 5, weight=0.1, story_id="y"))
    b.add_article(art("d.de", 4, 5, weight=0.1, story_id="y"))
    b.top = 2
    widest = b.build().widest
    assert [(s.key, len(s.sites)) for s in widest] == [("story:y", 2)]


def test_sources_rates_and_kinds():
    b = ReportBuilder(NOW, days=1)
    b.add_source({"url": "https://a.de/feed", "site": "a.de", "role": "feed", "kind": "feed", "rate": 4.0})
    b.add_source({"url": "https://a.de/", "site": "a.de", "role": "entry", "rate": 1.0})
    b.add_source({"url": "https://a.de/x", "site": "a.de", "role": "content", "rate": 9.0})
    seen = NOW - dt.timedelta(hours=1)
    b.add_article(art("a.de", 1, 5, sources=[
        {"kind": "channel", "url": "https://a.de/", "seen_at": seen},
        {"kind": "feed", "url": "https://a.de/feed", "seen_at": seen - dt.timedelta(minutes=3)},
        "junk"]))
    report = b.build()
    assert [(s.kind, s.rate, s.articles) for s in report.sources] == [("feed", 4.0, 1), ("channel", 1.0, 1)]
    site = report.sites[0]
    assert site.channels == 2 and site.channel_rate == 5.0 and site.found_first_by == {"feed": 1}
    assert report.source_kinds == {"a.de": {"channel": 1, "feed": 1}}


def test_bad_arguments_and_formatting():
    with pytest.raises(ValueError):
        ReportBuilder(NOW, days=0)
    with pytest.raises(ValueError):
        ReportBuilder(NOW, top=-1)
    assert ReportBuilder(NOW.replace(tzinfo=None)).now == NOW  # naive is UTC
    assert [format_seconds(v) for v in (42, 450, 3 * 3600, 3 * 86400, math.nan)] == \
        ["42 s", "7.5 min", "3.0 h", "3.0 d", "-"]
