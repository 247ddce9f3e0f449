"""Change detection you can trust, end to end: four served sites (tests/mocksite_validators.py:
only Content-Length; a weak ETag only; a future / epoch Last-Modified; correct validators) whose
articles are edited between runs, with and without a change of the body's length.

Run 1 stores everything. Run 2 (no verification) lets HEAD decide where a validator exists
(weak and good) and GET plus the text fingerprint where none does (length, future: their
Content-Length and invalid Last-Modified prove nothing). Run 3 verifies every "unchanged"
answer with a full GET (the documented sample at rate 1). Every count of HEAD / 304 / GET /
unchanged is exact, per site too (the sites log each request and its conditional headers)."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO, crawl, open_store, stats_of
from tests.mocksite_validators import ARTICLES, HOSTS, article_body, article_path

pytestmark = pytest.mark.slow

RUN_TIMES = ["2024-10-02T00:00:00Z", "2024-11-01T00:00:00Z", "2024-12-01T00:00:00Z"]
SITES = ("length", "weak", "future", "good")
NEVER = {"NEWSCRAWL_HEADPROBE_VERIFY_START": 0, "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": 0}
ALWAYS = {"NEWSCRAWL_HEADPROBE_VERIFY_START": 1, "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": 1}
LOOPBACK = {"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": ",".join(["127.0.0.1", "localhost",
                                                         *HOSTS.values()])}


@contextmanager
def validator_sites(state_file: Path):
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "mocksite_validators.py"),
                             str(state_file)], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = proc.stdout.readline()
        if not line.startswith("{"):
            raise RuntimeError(f"mocksite_validators.py did not print its URLs (got {line!r})")
        yield json.loads(line)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("validators")
    state_file = tmp / "version.txt"
    log = Path(str(state_file) + ".log")
    results = []
    with validator_sites(state_file) as urls:
        seen = 0
        for version, now, verify in zip((1, 2, 3), RUN_TIMES, (NEVER, NEVER, ALWAYS)):
            state_file.write_text(str(version))
            proc = crawl(["-a", "start_urls=" + ",".join(urls[s] for s in SITES),
                          "-a", f"now={now}"], tmp / "data",
                         settings={"LOG_LEVEL": "INFO", **verify, **LOOPBACK})
            lines = log.read_text(encoding="utf-8").splitlines()
            results.append({"stats": stats_of(proc.stderr),
                            "requests": [json.loads(x) for x in lines[seen:]]})
            seen = len(lines)
    return urls, tmp / "data", results


def _n(stats: dict, key: str) -> int:
    return int(stats.get(key, 0))


def _count(requests: list, site: str, method: str, status: int | None = None) -> int:
    return sum(1 for r in requests if r["site"] == site and r["method"] == method
               and (status is None or r["status"] == status))


def test_run1_fetches_everything_and_learns_the_hosts_without_validators(runs):
    _, data, results = runs
    stats = results[0]["stats"]
    assert _n(stats, "downloader/request_method_count/GET") == 4 * 7
    assert _n(stats, "newscrawl/revisit/first") == 4 * 6
    assert _n(stats, "newscrawl/headprobe/host/fingerprint") == 2  # length and future


def test_run2_head_where_a_validator_exists_fingerprint_elsewhere(runs):
    _, _, results = runs
    stats, requests = results[1]["stats"], results[1]["requests"]
    # weak, good: the home page is the host's first HEAD (unchanged: no GET); once the host's
    # HEAD is learned the channel page skips it (the channel scheduler's rule) and is checked
    # with a conditional GET echoing its valid validators (304); a HEAD per article (4), the
    # two edited articles fetched (one kept its length). So 5 HEADs, 1 + 2 GETs, one 304.
    # length, future: no validator, so no HEAD: 6 GETs each, the text fingerprint decides.
    # Plus one robots.txt per site.
    assert _n(stats, "downloader/request_method_count/HEAD") == 2 * 5
    assert _n(stats, "downloader/request_method_count/GET") == 4 + 2 * (1 + 2) + 2 * 6
    assert _n(stats, "downloader/response_status_count/304") == 2
    # home + articles 3 and 4 of weak and good
    assert _n(stats, "newscrawl/headprobe/skipped") == _n(stats, "newscrawl/revisit/unchanged/head") == 6
    assert _n(stats, "newscrawl/revisit/unchanged/conditional") == 2
    assert _n(stats, "newscrawl/revisit/changed/head") == 4
    assert _n(stats, "newscrawl/revisit/unchanged/fingerprint") == 8
    assert _n(stats, "newscrawl/revisit/changed/fingerprint") == 4
    assert _n(stats, "newscrawl/headprobe/verify") == 0
    assert _n(stats, "newscrawl/crawlstate/versions") == 4 * 2
    for site in ("weak", "good"):
        assert (_count(requests, site, "HEAD"), _count(requests, site, "GET")) == (5, 1 + 1 + 2)
        assert _count(requests, site, "GET", 304) == 1
    for site in ("length", "future"):
        assert (_count(requests, site, "HEAD"), _count(requests, site, "GET")) == (0, 1 + 6)


def test_run3_verifies_every_unchanged_answer_with_one_get(runs):
    _, _, results = runs
    stats, requests = results[2]["stats"], results[2]["requests"]
    # weak, good: home and channel page answered "unchanged" in run 2 (HEAD / 304) although a
    # month's expected new links make that improbable: the channel scheduler fetches them with
    # an unconditional GET (``verify_due``; how = fingerprint, not a verification sample).
    # The 4 articles get a HEAD: the 2 edited ones are fetched, the 2 unchanged ones fetched
    # as verification samples (rate 1). length, future: 6 plain GETs as in run 2.
    assert _n(stats, "downloader/request_method_count/HEAD") == 2 * 4
    assert _n(stats, "downloader/request_method_count/GET") == 4 + 2 * (2 + 4) + 2 * 6
    assert _n(stats, "downloader/response_status_count/304") == 0
    assert _n(stats, "newscrawl/headprobe/verify") == _n(stats, "newscrawl/headprobe/verify_match") == 4
    assert _n(stats, "newscrawl/headprobe/verify_mismatch") == 0
    assert _n(stats, "newscrawl/headprobe/skipped") == 0
    assert _n(stats, "newscrawl/revisit/unchanged/verified") == 4
    assert _n(stats, "newscrawl/revisit/changed/head") == 4
    # length, future: 4 unchanged pages each; weak, good: home and channel page
    assert _n(stats, "newscrawl/revisit/unchanged/fingerprint") == 2 * 4 + 2 * 2
    assert _n(stats, "newscrawl/revisit/changed/fingerprint") == 4
    assert _n(stats, "newscrawl/crawlstate/versions") == 4 * 2
    for site in SITES:
        assert _count(requests, site, "GET") == 1 + 6
    for site in ("weak", "good"):
        assert _count(requests, site, "HEAD") == 4


def test_invalid_last_modified_is_never_echoed_nor_a_length_trusted(runs):
    _, _, results = runs
    for result in results:
        for r in result["requests"]:
            if r["site"] in ("length", "future"):
                assert r["method"] == "GET" and not r["if_modified_since"] and not r["if_none_match"]


def test_every_edit_is_stored_and_the_hosts_modes_say_why(runs):
    urls, data, _ = runs
    with open_store(data) as store:
        for site in SITES:
            base = urls[site].rstrip("/")
            for n in ARTICLES:
                live = store.articles.find_one({"url": base + article_path(n)})
                figure = article_body(site, n, 3).split("Kennziffer ")[1][:4]
                assert f"Meldung {n} von {site}: Der Haushaltsausschuss" in live["text"]
                assert f"Kennziffer {figure}" in live["text"]  # the last edit of every kind
                assert ("Nachtrag aus Fassung 3" in live["text"]) is (n == 1)
                kept = sorted(v["version"] for v in store.versions.find({"url": base + article_path(n)}))
                assert kept == {1: [1, 2], 2: [1], 3: [1], 4: []}[n], (site, n)
                texts = [v["text"] for v in store.versions.find({"url": base + article_path(n)})]
                assert live["text"] not in texts  # the current text is never an old version
            assert store.versions.count_documents({"url": {"$regex": "^" + base}}) == 4
        modes = {d["_id"]: (d["mode"], d["reason"]) for d in store.hosts.find()}
        assert modes[HOSTS["length"]][0] == modes[HOSTS["future"]][0] == "fingerprint"
        assert "Content-Length alone cannot prove unchanged" in modes[HOSTS["length"]][1]
        assert modes[HOSTS["weak"]][0] == modes[HOSTS["good"]][0] == "head"
        good = store.hosts.find_one({"_id": HOSTS["good"]})
        # the verification state survives runs: run 3's samples of articles 3 and 4 (home and
        # channel page were fetched by the channel scheduler, not sampled)
        assert good["counts"]["verify_match"] == 2
        # which validator decided each visit
        page = store.pages.find_one({"url": urls["good"] + "politik/"})
        assert [h["validator"] for h in page["history"]] == ["none", "etag", "fingerprint"]
        page = store.pages.find_one({"url": urls["length"] + "politik/"})
        assert [h["validator"] for h in page["history"]] == ["none", "fingerprint", "fingerprint"]
        edited = store.pages.find_one({"url": urls["weak"].rstrip("/") + article_path(1)})
        assert [(h["how"], h["validator"], h["changed"]) for h in edited["history"]] == [
            ("first", "none", False), ("head", "fingerprint", True), ("head", "fingerprint", True)]
        assert store.pages.find_one({"url": urls["future"] + "politik/"})["validators"][
            "last_modified"] is None


def test_a_sampled_304_is_fetched_again_in_full(tmp_path):
    """A host that refuses HEAD (tests/mocksite_changing.py ``nohead``) is checked with
    conditional GETs; with verification at rate 1 every 304 is followed by one full GET."""
    from tests.mocksite_changing import HOSTS as CHANGING
    from tests.test_crawl_incremental import changing_sites

    state_file = tmp_path / "version.txt"
    allowed = {"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": f"127.0.0.1,localhost,{CHANGING['nohead']}"}
    with changing_sites(state_file) as urls:
        stats = []
        for version, now, verify in ((1, RUN_TIMES[0], NEVER), (2, RUN_TIMES[1], ALWAYS)):
            state_file.write_text(str(version))
            proc = crawl(["-a", f"start_urls={urls['nohead']}", "-a", f"now={now}"],
                         tmp_path / "data", settings={"LOG_LEVEL": "INFO", **verify, **allowed})
            stats.append(stats_of(proc.stderr))
    second = stats[1]
    # one HEAD (405), 6 conditional GETs: 5 answered 304 and fetched again, article 3 changed
    assert _n(second, "downloader/request_method_count/HEAD") == 1
    assert _n(second, "downloader/response_status_count/304") == 5
    assert _n(second, "downloader/request_method_count/GET") == 1 + 6 + 5
    assert _n(second, "newscrawl/headprobe/verify") == _n(second, "newscrawl/headprobe/verify_match") == 5
    assert _n(second, "newscrawl/revisit/unchanged/verified") == 5
    assert _n(second, "newscrawl/revisit/unchanged/conditional") == 0
    assert _n(second, "newscrawl/revisit/changed/conditional") == 1
    assert _n(second, "newscrawl/crawlstate/versions") == 1


def test_a_host_whose_validators_lie_is_caught_by_a_verification_get(tmp_path):
    """``stale`` keeps one ETag and Last-Modified for every version of a page. Run 2 (article 1
    edited without a change of length, article 2 made longer) verifies every "unchanged"
    answer: article 1's GET finds new text under the old validators, the host is no longer
    trusted; run 3 (no verification) fetches its pages with GETs and stores its edits."""
    state_file = tmp_path / "version.txt"
    stats = []
    with validator_sites(state_file) as urls:
        for version, now, verify in zip((1, 2, 3), RUN_TIMES, (NEVER, ALWAYS, NEVER)):
            state_file.write_text(str(version))
            proc = crawl(["-a", f"start_urls={urls['stale']}", "-a", f"now={now}"],
                         tmp_path / "data", settings={"LOG_LEVEL": "INFO", **verify, **LOOPBACK})
            stats.append(stats_of(proc.stderr))
            if version == 2:
                assert proc.stderr.count("validators say unchanged but the body changed") == 1
    second, third = stats[1], stats[2]
    # every page is fetched once (a verification, a changed length, or a plain GET once the
    # host is distrusted), the channel page twice: its conditional GET (no HEAD, the channel
    # scheduler's rule) answered 304, then the verification GET of that 304; only article 1 lied
    assert _n(second, "downloader/request_method_count/GET") == 1 + 6 + 1
    assert _n(second, "downloader/response_status_count/304") == 1
    # (the HEADs of articles 3 and 4 race with article 1's mismatch: by a HEAD and a
    # verification GET, or by a plain GET once the host is distrusted — one GET either way)
    assert _n(second, "newscrawl/headprobe/verify_mismatch") == 1
    assert _n(second, "newscrawl/headprobe/host/fingerprint") == 1
    assert _n(second, "newscrawl/crawlstate/versions") == 2
    assert _n(third, "downloader/request_method_count/HEAD") == 0
    assert _n(third, "newscrawl/headprobe/fingerprint") == 6
    assert _n(third, "newscrawl/crawlstate/versions") == 2  # articles 1 and 3 of version 3
    with open_store(tmp_path / "data") as store:
        host = store.hosts.find_one({"_id": HOSTS["stale"]})
        assert host["mode"] == "fingerprint" and host["counts"]["verify_mismatch"] == 1
        assert "verification GET found changed text" in host["reason"]
        assert store.versions.count_documents({}) == 4
