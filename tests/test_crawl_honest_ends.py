"""Real crawls (``scrapy crawl news`` subprocesses) of loopback sites: URL hygiene and honest ends.

* session ids in links (``;jsessionid=``, ``?PHPSESSID=``, …): two articles stay two documents;
* a credentialed entry URL: the site is crawled with an ``Authorization`` header, and the
  secret is in no log line and no stored document;
* a crawl that cannot start (bad setting, argument or seed) exits 2 with one line, no traceback,
  and opens no store; one that fetched nothing (the README's first command in a network
  namespace with only loopback: no packet can leave) or could not write its store exits 1 with
  one line last;
* ``kill -9`` of the embedded store mid-crawl: the run gives up quickly, keeps its items and
  crawl-state records on disk, exits 1; the next run writes them back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import _free_port
from tests.helpers import REPO, crawl, open_store, served, stats_of

SITE = "tests/site_sessions.py"
LOOPBACK = {"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": "127.0.0.1,localhost", "LOG_LEVEL": "INFO"}


def _all_documents(store) -> str:
    return "\n".join(repr(doc) for name in store.db.list_collection_names()
                     for doc in store.db[name].find({}))


def test_session_ids_do_not_multiply_articles(tmp_path):
    with served(SITE) as base:
        proc = crawl(["-a", f"start_urls={base}"], tmp_path / "data", settings=LOOPBACK)
    stats = stats_of(proc.stderr)
    assert int(stats["newscrawl/store/new_articles"]) == 2
    with open_store(tmp_path / "data") as store:
        assert store.articles.count_documents({}) == 2
        stored = _all_documents(store).lower()
    for name in ("jsessionid", "phpsessid", "sid="):
        assert name not in stored


def test_a_credentialed_entry_is_crawled_and_its_secret_is_nowhere(tmp_path):
    secret = "Pw-7f3a9c1e"
    with served(SITE, "--auth", f"ann:{secret}") as base:
        entry = base.replace("http://", f"http://ann:{secret}@")
        proc = crawl(["-a", f"start_urls={entry}"], tmp_path / "data", settings=LOOPBACK)
        import urllib.request

        with urllib.request.urlopen(base + "_stats", timeout=10) as answer:  # loopback only
            counts = answer.read().decode()
    log = proc.stdout + proc.stderr
    assert secret not in log
    assert '"unauthorised": 0' in counts
    assert int(stats_of(proc.stderr)["newscrawl/credentials/sent"]) >= 3
    with open_store(tmp_path / "data") as store:
        assert store.articles.count_documents({}) == 2
        assert secret not in _all_documents(store)


@pytest.mark.parametrize("args, line", [
    (["-s", "NEWSCRAWL_DEPTH=abc"], "NEWSCRAWL_DEPTH must be a whole number, got 'abc'"),
    (["-a", "depth=x"], "depth must be a whole number, got 'x'"),
    (["-a", "budget=-1"], "budget must be >= 0, got -1"),
    (["-a", "start_urls=http://127.0.0.1:99999/"], "no valid entry URL (1 skipped; first: "
     "start_urls entry 1 'http://127.0.0.1:99999/': the port is not a number from 1 to 65535)"),
    (["-a", "start_urls=javascript:alert(1),mailto:x@example.org"], "no valid entry URL (2 skipped"),
])
def test_a_crawl_that_cannot_start_says_why_in_one_line(tmp_path, args, line):
    if not any(a.startswith("start_urls=") for a in args):
        args = ["-a", "start_urls=http://127.0.0.1:9/", *args]
    proc = crawl(args, tmp_path / "data", settings=LOOPBACK, status=2)
    last = proc.stderr.rstrip().splitlines()[-1]
    assert last.startswith("newscrawl: cannot start: ") and line in last
    assert "Traceback" not in proc.stderr
    assert "Started embedded" not in proc.stderr and not (tmp_path / "data").exists()


def _no_network_prefix() -> list[str]:
    """``unshare`` into a network namespace holding only loopback: nothing can leave the
    machine, names do not resolve (no route to any name server)."""
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)  # noqa: S607
    if probe.returncode != 0:
        pytest.skip(f"needs a network namespace (unshare -rn): {probe.stderr.decode().strip()}")
    return ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$0" "$@"']


def test_the_readme_command_without_network_fails_with_one_line(tmp_path):
    """The README's first command (``make crawl START_URLS=…`` runs ``bin/crawl -a
    start_urls=…``) on a machine without network, inside a namespace with only loopback."""
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    env.update({"NEWSCRAWL_DATA_DIR": str(tmp_path / "data"), "VENV": str(Path(sys.prefix))})
    proc = subprocess.run(
        [*_no_network_prefix(), str(REPO / "bin" / "crawl"),
         "-a", "start_urls=https://www.heise.de/,https://www.zeit.de/index"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1] == (
        "newscrawl: crawl FAILED: fetched nothing: 12 request(s) failed (CannotResolveHostError "
        "12: host name does not resolve (no network or DNS?))")
    assert "result: FAILED - fetched nothing" in proc.stderr  # the summary block says it too
    assert "open it:" not in proc.stdout  # no "where the results are" after a failed run


def test_an_unreachable_entry_is_one_error_line_per_failed_request(tmp_path):
    """An entry nobody answers (a closed loopback port: connection refused, retried): its
    robots.txt and its page failed, so two ERROR lines (and the summary), no "Gave up retrying"
    said again at ERROR, no traceback."""
    url = f"http://127.0.0.1:{_free_port()}/"
    proc = crawl(["-a", f"start_urls={url}"], tmp_path / "data", settings=LOOPBACK, status=1)
    errors = [line for line in proc.stderr.splitlines() if "] ERROR: " in line
              and "[extensions.outcome]" not in line]  # the summary block
    assert len(errors) == 2, "\n".join(errors)
    assert f"Error downloading robots.txt for <GET {url}>" in errors[0]
    assert f"Error downloading <GET {url}>" in errors[1]
    assert "Gave up retrying" not in "\n".join(errors) and "Traceback" not in proc.stderr
    assert stats_of(proc.stderr)["retry/max_reached"] == "2"  # both were retried


def test_an_unreachable_store_keeps_the_items_and_fails_the_run(tmp_path):
    uri = f"mongodb://bob:Mongo-pw-42@127.0.0.1:{_free_port()}/"
    with served(SITE) as base:
        proc = crawl(["-a", f"start_urls={base}"], tmp_path / "data", status=1,
                     settings={**LOOPBACK, "NEWSCRAWL_MONGO_URI": uri,
                               "NEWSCRAWL_MONGO_TIMEOUT": 0.5})
    assert "Mongo-pw-42" not in proc.stdout + proc.stderr
    last = proc.stderr.rstrip().splitlines()[-1]
    assert last.startswith("newscrawl: crawl FAILED: could not write to the store: it was "
                           "unreachable when the run opened it; 3 item(s) spilled to disk")
    assert "this run's visit history was not recorded" in last
    assert len(list((tmp_path / "data").glob("spill-news-mongo-*.jsonl"))) == 1


def _wait_for(path: Path, text: str, proc: subprocess.Popen, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        if text in log:
            return log
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not seen in the crawl log")


def test_kill_9_of_the_embedded_store_mid_crawl(tmp_path):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    env["NEWSCRAWL_DATA_DIR"] = str(data)
    settings = {**LOOPBACK, "NEWSCRAWL_MONGO_TIMEOUT": 2, "NEWSCRAWL_REVISIT_FLUSH_INTERVAL": 0.5}
    with served(SITE, "--delay", "1.5") as base:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"start_urls={base}"]
        for key, value in settings.items():
            cmd += ["-s", f"{key}={value}"]
        log_path = tmp_path / "crawl.log"
        with open(log_path, "w", encoding="utf-8") as log_file:
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log_file, stderr=log_file)
            try:
                log = _wait_for(log_path, "Crawl of 1 entry", proc)
                pid = int(log.split("Started embedded SecantusDB pid ", 1)[1].split()[0])
                os.kill(pid, 9)  # the server this crawl started
                killed = time.monotonic()
                assert proc.wait(timeout=120) == 1
                took = time.monotonic() - killed
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        log = log_path.read_text(encoding="utf-8")
        assert took < 40, f"closing took {took:.0f} s"
        last = log.rstrip().splitlines()[-1]
        assert last.startswith("newscrawl: crawl FAILED: could not write to the store: ")
        assert "crawl-state record(s) spilled to disk" in last
        assert list(data.glob("spill-news-embedded-*.jsonl"))
        assert list(data.glob("state-spill-news-embedded-*.jsonl"))
        # The same command again: everything kept is written back, the run is good.
        again = crawl(["-a", f"start_urls={base}"], data, settings=LOOPBACK)
    assert "Replayed" in again.stderr and "crawl-state record(s)" in again.stderr
    assert not list(data.glob("*spill-news-*.jsonl"))
    with open_store(data) as store:
        assert store.articles.count_documents({}) == 2
