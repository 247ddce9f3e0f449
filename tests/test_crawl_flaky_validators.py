"""A host whose validators change on every request (tests/mocksite_changing.py, ``flaky``: a
random ETag and ``Last-Modified: now`` on every answer): its HEADs always claim a change the
text does not show, so the crawler moves it to conditional GETs, sees those answered 200 with
the same text too, and settles on plain GETs compared by content fingerprint."""

from __future__ import annotations

import pytest

from tests.helpers import crawl, open_store, stats_of
from tests.mocksite_changing import HOSTS
from tests.test_crawl_incremental import RUN_TIMES, changing_sites

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def flaky_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flaky")
    state_file = tmp / "version.txt"
    state_file.write_text("1")  # the content never changes
    results = []
    with changing_sites(state_file) as urls:
        for now in RUN_TIMES[:3]:
            proc = crawl(["-a", f"start_urls={urls['flaky']}", "-a", f"now={now}"], tmp / "data",
                         settings={"LOG_LEVEL": "INFO"})
            results.append(stats_of(proc.stderr))
    return tmp / "data", results


def _n(stats: dict, key: str) -> int:
    return int(stats.get(key, 0))


def test_lying_validators_are_learned_and_then_ignored(flaky_runs):
    data, (first, second, third) = flaky_runs
    assert _n(first, "newscrawl/revisit/first") == 6
    # run 2: the host's first HEAD (the entry page) claimed a change the text does not show, and
    # its validators disagreed with the GET's; the channel page skips the HEAD (a conditional
    # GET costs one request either way): its conditional GET answered 200, same text
    assert _n(second, "newscrawl/headprobe/head") == 1
    assert _n(second, "newscrawl/revisit/false_change/head") == 1
    assert _n(second, "newscrawl/revisit/false_change/conditional") >= 2  # then fingerprints
    assert _n(second, "newscrawl/revisit/unchanged/fingerprint") == 6
    assert _n(second, "newscrawl/revisit/unchanged/head") == 0
    assert _n(second, "newscrawl/revisit/changed/head") == 0
    assert _n(second, "newscrawl/headprobe/host/conditional") == 1
    assert _n(second, "newscrawl/headprobe/host/fingerprint") == 1
    assert _n(second, "item_scraped_count") == 0  # nothing changed: nothing stored
    with open_store(data) as store:
        host = store.hosts.find_one({"_id": HOSTS["flaky"]})
    assert host["mode"] == "fingerprint" and "200 with unchanged text" in host["reason"]
    assert host["counts"]["false_change_head"] == 1 and host["counts"]["disagree"] == 1
    # run 3: straight to plain GETs, every page found unchanged by its fingerprint
    assert _n(third, "downloader/request_method_count/HEAD") == 0
    assert _n(third, "newscrawl/headprobe/conditional") == 0
    assert _n(third, "newscrawl/headprobe/fingerprint") == 6
    assert _n(third, "newscrawl/revisit/unchanged/fingerprint") == 6
