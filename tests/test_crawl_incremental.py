"""End-to-end incremental re-crawls of four served sites that change between runs
(tests/mocksite_changing.py): run 1 stores everything; run 2 (content version 2) sends HEADs
where they can be trusted, learns per host where they cannot (HEAD refused, HEAD lying with
Content-Length 0 and fresh validators, no validators at all), skips unchanged pages, re-fetches
changed ones and keeps the previous versions of corrected articles; run 3 (no change) uses what
run 2 learned. Every count of HEAD / GET / 304 / skipped GET is checked exactly, per host too
(the sites log each request)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO, crawl, open_store, stats_of
from tests.mocksite_changing import CHANGES, HOSTS, article_path

pytestmark = pytest.mark.slow

UTC = dt.timezone.utc
# The run clock of each run (-a now=): 30 days apart, so every known page is due again.
RUN_TIMES = ["2024-10-02T00:00:00Z", "2024-11-01T00:00:00Z", "2024-12-01T00:00:00Z",
             "2024-12-31T00:00:00Z"]
#: Run 4 may send this many requests (-a budget=).
BUDGET = 6
#: The four sites of the acceptance test (flaky has a test of its own).
SITES = ("good", "nohead", "liar", "ads")
#: No verification GETs of "unchanged" answers (tests/test_crawl_validators.py has them), so
#: every count below is exact.
NO_VERIFICATION = {"NEWSCRAWL_HEADPROBE_VERIFY_START": 0, "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": 0}


@contextmanager
def changing_sites(state_file: Path):
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "mocksite_changing.py"),
                             str(state_file)], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"mocksite_changing.py did not print its URLs (got {line!r})")
        yield json.loads(line)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def _requests(log: Path, start: int) -> tuple[Counter, int]:
    lines = log.read_text(encoding="utf-8").splitlines()
    entries = [json.loads(x) for x in lines[start:]]
    return Counter((e["site"], e["method"], e["status"]) for e in entries), len(lines)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("incremental")
    state_file = tmp / "version.txt"
    log = Path(str(state_file) + ".log")
    results = []
    with changing_sites(state_file) as urls:
        seen = 0
        for number, (version, now) in enumerate(zip((1, 2, 2, 2), RUN_TIMES), 1):
            state_file.write_text(str(version))
            budget = ["-a", f"budget={BUDGET}"] if number == 4 else []
            proc = crawl(["-a", "start_urls=" + ",".join(urls[site] for site in SITES), "-a",
                          f"now={now}", *budget],
                         tmp / "data", settings={"LOG_LEVEL": "INFO", **NO_VERIFICATION})
            requests, seen = _requests(log, seen)
            results.append({"stats": stats_of(proc.stderr), "requests": requests, "log": proc.stderr})
    return urls, tmp / "data", results


def _n(stats: dict, key: str) -> int:
    return int(stats.get(key, 0))


def per_site(requests: Counter, site: str, method: str, status: int | None = None) -> int:
    return sum(n for (s, m, st), n in requests.items()
               if s == site and m == method and (status is None or st == status))


def test_run1_stores_everything_with_gets_only(runs):
    urls, data, results = runs
    stats, requests = results[0]["stats"], results[0]["requests"]
    # per site: robots.txt, home, channel, four articles
    assert _n(stats, "downloader/request_method_count/GET") == 4 * 7
    assert _n(stats, "downloader/request_method_count/HEAD") == 0
    assert _n(stats, "newscrawl/revisit/first") == 4 * 6
    for site in SITES:
        assert per_site(requests, site, "GET") == 7
    assert _n(stats, "newscrawl/store/new_articles") == 16
    assert _n(stats, "newscrawl/store/new_nodes") == 8
    with open_store(data) as store:  # after all runs: article 5 of version 2 too
        assert store.articles.count_documents({}) == 17
        assert store.nodes.count_documents({}) == 8


def test_run2_counts_are_exact(runs):
    _, _, results = runs
    stats, requests = results[1]["stats"], results[1]["requests"]
    # good: HEAD for home and articles 1-4; the channel page skips the HEAD once the host's
    # first HEAD answered (a conditional GET costs one request either way, the channel
    # scheduler's rule); GET for the changed channel and article 2, and for the new article 5.
    # nohead and liar: one HEAD (405 / Content-Length 0), then conditional GETs of their 6
    # pages, 304 for the 5 unchanged. ads: no validators were ever sent, so 6 plain GETs
    # compared by fingerprint. Plus one robots.txt per site.
    assert _n(stats, "downloader/request_method_count/HEAD") == 5 + 1 + 1
    assert _n(stats, "downloader/request_method_count/GET") == 4 + 3 + 6 + 6 + 6
    assert _n(stats, "downloader/response_status_count/304") == 5 + 5
    assert _n(stats, "downloader/response_status_count/405") == 1
    assert _n(stats, "newscrawl/headprobe/head") == 7
    assert _n(stats, "newscrawl/headprobe/skipped") == 4
    assert _n(stats, "newscrawl/headprobe/get_after_head") == 1
    assert _n(stats, "newscrawl/headprobe/conditional") == 13
    assert _n(stats, "newscrawl/headprobe/not_modified") == 10
    assert _n(stats, "newscrawl/headprobe/fingerprint") == 6
    assert _n(stats, "newscrawl/headprobe/host/conditional") == 2
    assert _n(stats, "newscrawl/revisit/unchanged/head") == 4
    assert _n(stats, "newscrawl/revisit/unchanged/conditional") == 10
    assert _n(stats, "newscrawl/revisit/unchanged/fingerprint") == 6  # the ad blocks changed only
    assert _n(stats, "newscrawl/revisit/changed/head") == 1
    assert _n(stats, "newscrawl/revisit/changed/conditional") == 3
    assert _n(stats, "newscrawl/revisit/first") == 1  # article 5, new on the good channel page
    assert _n(stats, "newscrawl/crawlstate/versions") == 3
    assert (per_site(requests, "good", "HEAD"), per_site(requests, "good", "GET")) == (5, 1 + 3)
    assert (per_site(requests, "nohead", "HEAD", 405), per_site(requests, "nohead", "GET", 304)) == (1, 5)
    assert (per_site(requests, "liar", "HEAD"), per_site(requests, "liar", "GET", 304)) == (1, 5)
    assert (per_site(requests, "ads", "HEAD"), per_site(requests, "ads", "GET")) == (0, 1 + 6)


def test_run3_uses_what_run2_learned(runs):
    _, data, results = runs
    stats, requests = results[2]["stats"], results[2]["requests"]
    assert _n(stats, "newscrawl/crawlstate/hosts_loaded") == 4  # learned policies (ads: its lack of validators, learned in run 1)
    # good only: HEAD for its 5 articles; its channel page by a conditional GET (304) and its
    # home page, last seen in full a run before and expected (1 new link/hour, the prior of a
    # channel without history) to have changed, by an unconditional GET — as are the home
    # pages of nohead and liar; their channel pages and articles by conditional GETs
    assert _n(stats, "downloader/request_method_count/HEAD") == 5
    assert _n(stats, "newscrawl/headprobe/skipped") == 5
    assert _n(stats, "downloader/response_status_count/304") == 9
    assert _n(stats, "downloader/request_method_count/GET") == 4 + 6 + 7 + 7
    assert per_site(requests, "nohead", "HEAD") == per_site(requests, "liar", "HEAD") == 0
    assert _n(stats, "item_scraped_count") == 0  # nothing changed: nothing to store
    with open_store(data) as store:
        modes = {d["_id"]: d["mode"] for d in store.hosts.find() if "mode" in d}
    assert modes == {HOSTS["good"]: "head", HOSTS["nohead"]: "conditional",
                     HOSTS["liar"]: "conditional", HOSTS["ads"]: "fingerprint"}


def test_corrected_articles_keep_their_previous_version(runs):
    urls, data, _ = runs
    with open_store(data) as store:
        versions = {v["url"]: v for v in store.versions.find()}
        expected = {urls[site].rstrip("/") + article_path(n)
                    for site, change in CHANGES.items() for n in change["corrected"]}
        assert set(versions) == expected
        good = versions[urls["good"].rstrip("/") + article_path(2)]
        assert good["version"] == 1 and good["diff"]["title_changed"]
        assert "(aktualisiert)" in good["diff"]["new_title"] and "Korrektur" not in good["text"]
        assert 5 < good["diff"]["body_changed_pct"] < 30
        live = store.articles.find_one({"url": urls["good"].rstrip("/") + article_path(2)})
        assert "Korrektur" in live["text"] and live["title"].endswith("(aktualisiert)")
        nohead = versions[urls["nohead"].rstrip("/") + article_path(3)]
        assert not nohead["diff"]["title_changed"] and nohead["diff"]["body_changed_pct"] > 5


def test_crawl_state_records_and_page_sets(runs):
    urls, data, _ = runs
    run3 = dt.datetime.fromisoformat(RUN_TIMES[2].replace("Z", "+00:00"))
    with open_store(data) as store:
        assert store.pages.count_documents({}) == 25  # 4 x (home, channel, 4 articles) + 1 new
        assert store.pages.count_documents({"seed": True}) == 4
        assert store.pages.count_documents({"last_visit": {"$ne": None}}) == 25  # visited set
        # to-visit set five days after run 3: channel pages (the channel scheduler: a few new
        # links a month, visits every few days), not the articles (correction window over:
        # a week); run 4's budget left some channel pages due
        to_visit = list(store.pages.find({"due": {"$lte": run3 + dt.timedelta(days=5)}}))
        assert to_visit and {d["role"] for d in to_visit} <= {"entry", "node"}
        channel = store.pages.find_one({"url": urls["good"] + "politik/"})
        # channel pages: conditional GETs, no HEAD first (the channel scheduler's rule)
        assert [h["how"] for h in channel["history"][:3]] == ["first", "conditional", "conditional"]
        # new = first found on this page: articles 1-2 were found on the home page before it
        assert [h.get("new_links") for h in channel["history"][:3]] == [2, 1, None]
        assert channel["estimator"] and channel["estimator_reason"]
        assert channel["validators"]["etag"] and channel["pagerank"] > 0
        article = store.pages.find_one({"url": urls["ads"].rstrip("/") + article_path(1)})
        assert [h["how"] for h in article["history"][:3]] == ["first", "fingerprint", "fingerprint"]
        assert not any(h["changed"] for h in article["history"])
        assert article["estimator"] == "correction_decay" and article["role"] == "content"
        assert article["due"] > run3 + dt.timedelta(days=6)  # correction window long over


def test_run4_spends_its_budget_on_the_entry_pages_first(runs):
    urls, data, results = runs
    stats, requests = results[3]["stats"], results[3]["requests"]
    sent = sum(n for (site, method, status), n in requests.items()) - 4  # robots.txt is free
    assert sent == _n(stats, "newscrawl/budget/spent") == BUDGET
    assert _n(stats, "newscrawl/budget/refused") > 0
    assert _n(stats, "newscrawl/revisit/due_articles") == 0  # re-checks wait for budget left over
    run4 = dt.datetime.fromisoformat(RUN_TIMES[3].replace("Z", "+00:00"))
    with open_store(data) as store:
        entries = list(store.pages.find({"seed": True}))
        assert all(e["last_visit"] >= run4 for e in entries)  # every entry page was checked
        # what the budget did not reach is still due
        assert store.pages.count_documents({"due": {"$lte": run4}}) >= 25 - BUDGET
