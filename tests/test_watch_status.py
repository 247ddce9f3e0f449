"""A watch says what it is doing (issue 20), end to end: ``scrapy crawl news -a watch=1`` of a
slow live loopback site (tests/livesite.py). The first sweep ends with one ``First sweep done``
line naming the sources; the status line of a minute with requests says when the next visit is
and how many sources are not due; one without requests says it is idle, until when and why."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import REPO, crawl

pytestmark = pytest.mark.slow

HOST = "127.0.0.54"
SETTINGS = {
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": f"127.0.0.1,localhost,{HOST}",
    # nothing is revisited sooner than 15 s: after the first sweep the watch is idle a while
    "NEWSCRAWL_REVISIT_MIN_INTERVAL": 15,
    "NEWSCRAWL_REVISIT_MAX_INTERVAL": 15,
    "NEWSCRAWL_WATCH_MIN_INTERVAL": 15,  # sources: monitoring mode's own bounds
    "NEWSCRAWL_WATCH_MAX_INTERVAL": 15,
    # the re-checks due at 15 s go out at once (the default politeness budget, one request a
    # second for this one site, would spread them over the idle interval)
    "NEWSCRAWL_WATCH_SITE_RATE": 36000,
    "NEWSCRAWL_WATCH_LOG_INTERVAL": 4,
    "NEWSCRAWL_PAGERANK_ENABLED": False,
    "LOG_LEVEL": "INFO",
}
_TIME = r"(\d\d):(\d\d):(\d\d) UTC"
_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \[extensions\.watchlog\] INFO: (Watch: .*)$", re.M)
_SWEEP = re.compile(r"First sweep done: watching (\d+) sources, first revisits in (\d+)–(\d+) s, "
                    r"budget (.+)$", re.M)


@contextmanager
def live_site(tmp: Path):
    config = {"hosts": [HOST], "rates": [[0.2, 0.2, 0.2]], "duration": 120, "day": 600,
              "amplitude": 0.0, "index_size": 10, "initial": 3, "correct_share": 0.0,
              "correct_after": 600, "no_validators": "", "no_head": "", "seed": 11}
    (tmp / "site.json").write_text(json.dumps(config))
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"), str(tmp / "site.json"),
                             str(tmp / "site")], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        yield json.loads(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def _utc_seconds(text: str) -> int:
    h, m, s = (int(x) for x in re.fullmatch(_TIME, text).groups())
    return h * 3600 + m * 60 + s


def test_a_watch_says_what_comes_next_and_why_it_is_idle(tmp_path):
    with live_site(tmp_path) as ready:
        proc = crawl(["-a", f"start_urls={ready['hosts'][HOST]}", "-a", "depth=1", "-a", "watch=1",
                      "-a", "for=22s"], tmp_path / "data", settings=SETTINGS, timeout=180)
    log = proc.stderr
    sweeps = _SWEEP.findall(log)
    assert len(sweeps) == 1, log[-3000:]
    sources, low, high, budget = sweeps[0]
    assert int(sources) == 4  # the home page and its three channels
    assert 0 <= int(low) <= int(high) <= 16 and budget
    lines = [(stamp, text) for stamp, text in _LINE.findall(log)]
    assert len(lines) >= 4, log[-3000:]
    busy = [t for _, t in lines if not t.split(" request(s)")[0].endswith(", 0")]
    idle = [(stamp, t) for stamp, t in lines if t.split(" request(s)")[0].endswith(", 0")]
    assert busy and all(re.search(r"; next visit " + _TIME + r"; \d+ sources not due", t)
                        for t in busy), busy
    assert idle, "no idle interval although nothing may be revisited for 15 s"
    assert any(re.search(r"\(in \d+ s: http://\S+/, a source\); looking again then$", t)
               for _, t in idle), idle
    for stamp, text in idle:
        assert re.search(r"; idle: (nothing is due before \d\d:\d\d:\d\d UTC \(in \d+ s: \S+, "
                         r"(a source|an article re-check)\); looking again then"
                         r"|nothing is due before the watch ends at .*)$", text), text
    # the planned time of a "next visit" lies ahead of the line that says it (UTC clock)
    for stamp, text in lines:
        planned = re.search(r"(?:next visit|nothing is due before) (\d\d:\d\d:\d\d UTC)", text)
        if planned:
            said = time.gmtime(time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")))
            now = said.tm_hour * 3600 + said.tm_min * 60 + said.tm_sec
            ahead = (_utc_seconds(planned.group(1)) - now) % 86400
            assert ahead <= 17, (stamp, text)
