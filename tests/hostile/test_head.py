"""Hostile cases of servers refusing HEAD (tests/hostile/cases_head.py): on the re-run the
refused HEAD is counted and logged, the host switches to conditional GETs, and the page is
still checked (304: unchanged)."""

from __future__ import annotations

from tests.hostile.cases_head import HEAD_REFUSALS


def test_first_run_stores_every_page(hostile_rerun):
    first, _ = hostile_rerun
    for name, (host, _) in HEAD_REFUSALS.items():
        node = first.store.nodes.find_one({"url": first.url(f"/{name}/", host)})
        assert node is not None and node["title"] == "Kanal"


def test_refused_head_switches_the_host_to_conditional_get(hostile_rerun):
    _, second = hostile_rerun
    assert second.stat("newscrawl/headprobe/head") == len(HEAD_REFUSALS)
    assert second.stat("newscrawl/headprobe/head_refused") == len(HEAD_REFUSALS)
    for name, (host, status) in HEAD_REFUSALS.items():
        methods = [(method, path) for _, method, path, _ in second.site.requests_to(f"/{name}/", host)]
        # run 1: GET; run 2: the refused HEAD, then the GET with the stored validators
        assert methods == [("GET", f"/{name}/"), ("HEAD", f"/{name}/"), ("GET", f"/{name}/")]
        assert second.log_lines(rf"Host {second.site.servers[host].server_address[0]}\S*: change "
                                r"detection switched from head to conditional")
    assert second.stat("newscrawl/revisit/unchanged/conditional") == len(HEAD_REFUSALS)
