"""A batch crawl says what it is doing and how it ended when interrupted (issue 20): a real
``scrapy crawl news`` of a loopback live site (tests/livesite.py, article answers held back so
the crawl lasts), progress lines every second (``NEWSCRAWL_PROGRESS_INTERVAL``), SIGINT once a
few items are stored; the run ends ``result: INTERRUPTED (SIGINT); saved: …`` with what the
store really holds."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.helpers import REPO, open_store

pytestmark = pytest.mark.slow

HOST = "127.0.0.53"
_PROGRESS = re.compile(r"Progress: (\d+) page\(s\) fetched \([\d.]+/s\), (\d+) item\(s\) stored, "
                       r"frontier (\d+) request\(s\) queued, (\d+) in flight")
_SAVED = re.compile(r"result: INTERRUPTED \(SIGINT\); saved: (\d+) article\(s\) and (\d+) "
                    r"crawl-state record\(s\) written to the store")


def test_sigint_ends_a_batch_crawl_with_interrupted_and_what_was_saved(tmp_path):
    config = {"hosts": [HOST], "rates": [[1.0, 1.0, 1.0]], "duration": 60, "day": 600,
              "amplitude": 0.0, "index_size": 20, "initial": 20, "correct_share": 0.0,
              "correct_after": 600, "no_validators": "", "no_head": "", "seed": 3,
              "article_delay": 1.0}
    (tmp_path / "site.json").write_text(json.dumps(config))
    site = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"),
                             str(tmp_path / "site.json"), str(tmp_path / "site")],
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    lines: list[str] = []
    try:
        ready = json.loads(site.stdout.readline())
        env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
        env["NEWSCRAWL_DATA_DIR"] = str(tmp_path / "data")
        cmd = [sys.executable, "-m", "scrapy", "crawl", "news",
               "-a", f"start_urls={ready['hosts'][HOST]}", "-a", "depth=1"]
        for key, value in {"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": f"127.0.0.1,{HOST}",
                           "NEWSCRAWL_PROGRESS_INTERVAL": 1, "NEWSCRAWL_PAGERANK_ENABLED": False,
                           "CONCURRENT_REQUESTS_PER_DOMAIN": 2, "LOG_LEVEL": "INFO"}.items():
            cmd += ["-s", f"{key}={value}"]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stderr=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, text=True)
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")),
                                  daemon=True)
        reader.start()
        try:
            deadline = time.time() + 120
            sent = False
            while time.time() < deadline and proc.poll() is None:
                progress = [m for m in map(_PROGRESS.search, list(lines)) if m]
                if progress and int(progress[-1].group(2)) >= 3:
                    proc.send_signal(signal.SIGINT)
                    sent = True
                    break
                time.sleep(0.2)
            assert sent, "no progress line with 3 items stored:\n" + "".join(lines[-40:])
            proc.wait(timeout=120)
            reader.join(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        site.kill()
        site.wait()
        site.stdout.close()
    out = "".join(lines)
    (tmp_path / "crawl.log").write_text(out)  # kept for a look after a failure
    assert proc.returncode == 0, out[-3000:]
    progress = [m for m in map(_PROGRESS.search, lines) if m]
    assert len(progress) >= 2  # one a second while it ran
    assert int(progress[0].group(3)) + int(progress[0].group(4)) > 0  # a frontier to show
    assert "Received SIGINT" in out and "'finish_reason': 'shutdown'" in out
    saved = _SAVED.search(out)
    assert saved, out[-3000:]
    articles, records = int(saved.group(1)), int(saved.group(2))
    with open_store(tmp_path / "data") as store:
        stored = store.articles.count_documents({})
    assert articles == stored >= 3 and records > 0
    assert stored < 60  # interrupted: not every listed article was fetched
