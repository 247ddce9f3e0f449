"""Alerts during a live crawl: a watched crawl of the loopback news site (tests/livesite.py)
fires saved searches to a real loopback webhook receiver and a JSON-lines file — each story
once, within 5 s of the article being stored, HMAC-signed — and keeps the search index current
(``newscrawl search`` finds what was stored, without rebuilding)."""

from __future__ import annotations

import json
import statistics
import time

import pytest

from newscrawl.alerting import main as alert_main
from newscrawl.search.alerts import verify
from newscrawl.search.index import SearchIndex
from tests.helpers import crawl, open_store
from tests.test_watch import HOSTS, SETTINGS, _args, live_site
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.slow

LIVE = {**SETTINGS, "NEWSCRAWL_MONGO_FLUSH_INTERVAL": 1, "NEWSCRAWL_STORIES_ENABLED": False}


def test_alerts_fire_once_per_story_within_5s_of_storage_during_a_watch(tmp_path, capsys):
    data = tmp_path / "data"
    with Receiver() as receiver, live_site(tmp_path, correct_share=0.5, correct_after=8) as (
            ready, site_dir):
        assert alert_main(["--data-dir", str(data), "add", "budget", '"the council" budget',
                           "--webhook", receiver.url, "--jsonl", str(tmp_path / "budget.jsonl"),
                           "--secret", "k1"]) == 0
        assert alert_main(["--data-dir", str(data), "add", "fixes", "Correction",
                           "--jsonl", str(tmp_path / "fixes.jsonl")]) == 0
        capsys.readouterr()
        t0 = time.time()
        proc = crawl(_args(ready, "-a", "for=35s"), data, settings=LIVE, timeout=240)
        time.sleep(0.5)
        calls = receiver.ok_calls()
    assert "newscrawl/alerts/fired" in proc.stderr
    with open_store(data) as store:
        stored = {d["fp"]: d for d in store.articles.find({}, {"_id": 0, "fp": 1, "url": 1,
                                                               "text": 1, "published": 1})}
    assert len(stored) >= 10, "the crawl stored too little to test anything"
    # the webhook: every stored article (all of them hold the phrase) once, signed, in time
    notified = [a["fp"] for c in calls for a in c["json"]["articles"]]
    assert sorted(notified) == sorted(stored), "each stored article (its own story) exactly once"
    assert len({c["json"]["story_id"] for c in calls}) == len(calls)
    delays = [c["t"] - c["json"]["stored_at"] for c in calls]
    assert max(delays) <= 5.0, delays
    for c in calls:
        h = c["headers"]
        assert verify("k1", h["x-newscrawl-timestamp"], c["body"], h["x-newscrawl-signature"],
                      now=c["t"])
    # the file got the same notifications
    lines = [json.loads(x) for x in (tmp_path / "budget.jsonl").read_text().splitlines()]
    assert sorted(n["story_id"] for n in lines) == sorted(c["json"]["story_id"] for c in calls)
    # corrections are changed articles: the second alert fires for each corrected text stored
    corrected = {fp for fp, d in stored.items() if "Correction to story" in (d.get("text") or "")}
    fixes_file = tmp_path / "fixes.jsonl"
    fixes = [json.loads(x) for x in fixes_file.read_text().splitlines()] if fixes_file.exists() else []
    assert {a["fp"] for n in fixes for a in n["articles"]} == corrected
    # articles published during the watch: publication -> notification
    published = {}
    for fp, d in stored.items():
        p = d.get("published")
        if p is not None and p.timestamp() >= t0:
            published[fp] = p.timestamp()
    live = [c["t"] - published[a["fp"]] for c in calls for a in c["json"]["articles"]
            if a["fp"] in published]
    assert live, "no article published during the watch was alerted"
    print(f"\nalerts: {len(calls)} webhook notifications; stored->received max {max(delays):.2f} s,"
          f" median {statistics.median(delays):.2f} s; {len(live)} published during the watch: "
          f"published->received median {statistics.median(live):.1f} s, max {max(live):.1f} s; "
          f"{len(corrected)} corrected texts stored, {len(fixes)} correction alerts")
    # the index was kept current by the crawl: it holds every stored article
    index_file = data / "search" / "embedded-newscrawl.sqlite"
    with SearchIndex(index_file) as index:
        assert index.count() == len(stored) and not index.created
        assert {h.fp for h in index.search("council", limit=10_000)} == set(stored)
    assert HOSTS


def test_shadow_mode_indexes_and_alerts_after_the_merge(tmp_path, capsys):
    from tests.helpers import served

    data = tmp_path / "data"
    assert alert_main(["--data-dir", str(data), "add", "all", "a* OR e* OR i* OR o*",
                       "--jsonl", str(tmp_path / "all.jsonl")]) == 0
    capsys.readouterr()
    with served() as base:
        crawl(["-a", f"start_urls={base}"], data,
              settings={"NEWSCRAWL_UPDATE_MODE": "shadow", "NEWSCRAWL_STORIES_ENABLED": False})
    with open_store(data) as store:
        stored = {d["fp"] for d in store.articles.find({}, {"fp": 1})}
    assert stored
    with SearchIndex(data / "search" / "embedded-newscrawl.sqlite") as index:
        assert index.count() == len(stored)
    # staged pages reached the live store at the merge: the close step indexed and alerted them
    notes = [json.loads(x) for x in (tmp_path / "all.jsonl").read_text().splitlines()]
    alerted = {a["fp"] for n in notes for a in n["articles"]}
    with SearchIndex(data / "search" / "embedded-newscrawl.sqlite") as index:
        matching = {h.fp for h in index.search("a* OR e* OR i* OR o*", limit=10_000)}
    assert alerted == matching and matching
