"""End to end: a crawl writes WARC files as received (gzip, chunked), revisits for unchanged
pages, metadata records; a crawl killed with ``kill -9`` leaves valid files; ``newscrawl import``
of the files stores the same articles and nodes (tests/mocksite_warc.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from newscrawl.warc.reader import WarcArchive
from newscrawl.warc.records import HEADERS_REMOVED, PROFILE_SERVER_NOT_MODIFIED, TRANSFER_DECODED, metadata_fields
from tests.conftest import _free_port
from tests.helpers import REPO, LOOPBACK_SITES, crawl, open_store, served, stats_of
from tests.mocksite_warc import article_path, article_wire_bytes
from tests.test_warc_writer import check, sha1_b32

pytestmark = pytest.mark.slow

COUNT = 8
#: The last two articles are listed by the feed only (not linked from the home page).
FEED_ONLY = 2
RUNS = ["2024-10-02T00:00:00Z", "2024-11-01T00:00:00Z"]
NEVER_VERIFY = {"NEWSCRAWL_HEADPROBE_VERIFY_START": 0, "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": 0}


def all_records(paths):
    out = []
    for path in paths:
        with open(path, "rb") as f:
            for r in ArchiveIterator(f):
                body = r.raw_stream.read() if r.rec_type in ("response", "metadata") else b""
                out.append((Path(path).name, r.rec_type, r.rec_headers, r.http_headers, body))
    return out


def run_import(files, data_dir, *, status=0):
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    cmd = [sys.executable, "-m", "newscrawl", "import", *map(str, files), "--data-dir", str(data_dir)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == status, proc.stderr[-4000:]
    return proc


def stored(data_dir):
    with open_store(data_dir) as store:
        articles = {d["url"]: d for d in store.articles.find()}
        nodes = {d["url"]: d for d in store.nodes.find()}
    return articles, nodes


@pytest.fixture(scope="module")
def warc_crawl(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("warccrawl")
    with served("tests/mocksite_warc.py", "--articles", str(COUNT), "--feed-only", str(FEED_ONLY)) as base:
        first = crawl(["-a", f"start_urls={base}", "-a", f"now={RUNS[0]}"], tmp / "data",
                      settings={"NEWSCRAWL_WARC_DIR": tmp / "warc1"})
        second = crawl(["-a", f"start_urls={base}", "-a", f"now={RUNS[1]}"], tmp / "data",
                       settings={"NEWSCRAWL_WARC_DIR": tmp / "warc2", **NEVER_VERIFY})
    # the second run reads the first run's captures from its folder: same folder for revisits
    return base.rstrip("/"), tmp, stats_of(first.stderr), stats_of(second.stderr)


def test_every_file_passes_warcio_check(warc_crawl):
    _, tmp, stats, _ = warc_crawl
    files = sorted((tmp / "warc1").glob("*.warc.gz")) + sorted((tmp / "warc2").glob("*.warc.gz"))
    assert files and check(files) == 0
    assert not list(tmp.glob("warc*/*.open"))
    assert int(stats["newscrawl/warc/errors"]) == 0
    assert int(stats["newscrawl/warc/records"]) == len(all_records(sorted((tmp / "warc1").glob("*"))))


def test_response_records_hold_the_bytes_on_the_wire(warc_crawl):
    base, tmp, _, _ = warc_crawl
    records = all_records(sorted((tmp / "warc1").glob("*.warc.gz")))
    responses = {h.get_header("WARC-Target-URI"): (h, http, body)
                 for _, kind, h, http, body in records if kind == "response"}
    requests = {h.get_header("WARC-Record-ID"): http for _, kind, h, http, _ in records
                if kind == "request"}
    for n in range(COUNT):
        h, http, body = responses[base + article_path(n)]
        assert body == article_wire_bytes(n), n  # the gzip stream, not the page
        assert h.get_header("WARC-Payload-Digest") == sha1_b32(article_wire_bytes(n))
        assert http.get_header("Content-Encoding") == "gzip"
        assert h.get_header("WARC-IP-Address") == "127.0.0.1"
        # Twisted keeps Transfer-Encoding to itself and de-chunks every third article (sent
        # chunked, no Content-Length): the record says so, its payload is still the gzip stream.
        assert "Transfer-Encoding" in h.get_header(HEADERS_REMOVED)
        assert http.get_header("Transfer-Encoding") is None
        if n % 3 == 2:
            assert h.get_header(TRANSFER_DECODED) == "chunked-or-close"
            assert http.get_header("Content-Length") is None
        else:
            assert h.get_header(TRANSFER_DECODED) is None
            assert http.get_header("Content-Length") == str(len(article_wire_bytes(n)))
        assert "gzip" in requests[h.get_header("WARC-Concurrent-To")].get_header("Accept-Encoding")
    assert {base + "/robots.txt", base + "/feed.xml", base + "/"} <= set(responses)


def test_metadata_records_carry_what_newscrawl_learned(warc_crawl):
    base, tmp, _, _ = warc_crawl
    records = all_records(sorted((tmp / "warc1").glob("*.warc.gz")))
    response_ids = {h.get_header("WARC-Target-URI"): h.get_header("WARC-Record-ID")
                    for _, kind, h, _, _ in records if kind == "response"}
    meta = {h.get_header("WARC-Target-URI"): (h, json.loads(metadata_fields(body)["newscrawl"]))
            for _, kind, h, _, body in records if kind == "metadata"}
    for n in range(COUNT):
        url = base + article_path(n)
        h, data = meta[url]
        assert h.get_header("WARC-Refers-To") == response_ids[url]
        assert data["kind"] == "article" and data["entry_url"] == base + "/"
        assert data["link_class"] and data["depth"] == 1
        assert 0 < data["weight"] <= 1 and data["story_id"]
        assert data["published"].startswith("2024-10-01T06:30:00")
        assert data["published_source"] and 0 < data["published_confidence"] <= 1
        kinds = {(s["kind"], s["url"]) for s in data["sources"]}
        if n >= COUNT - FEED_ONLY:  # named by the feed alone: its entry says so
            assert ("feed", base + "/feed.xml") in kinds
        else:
            assert ("channel", base + "/") in kinds
    assert meta[base + "/"][1]["link_class"] == "entry"
    assert meta[base + "/feed.xml"][1]["role"] == "feed" and meta[base + "/feed.xml"][1]["entries"] == COUNT


def test_unchanged_answers_of_a_second_run_are_revisits(warc_crawl):
    _, tmp, _, stats2 = warc_crawl
    revisits = [(h, http) for _, kind, h, http, _ in all_records(sorted((tmp / "warc2").glob("*")))
                if kind == "revisit"]
    unchanged = int(stats2.get("newscrawl/headprobe/skipped", 0)) + int(
        stats2.get("newscrawl/headprobe/not_modified", 0))
    assert unchanged > 0 and len(revisits) >= unchanged
    for h, http in revisits:
        assert h.get_header("WARC-Profile") == PROFILE_SERVER_NOT_MODIFIED
        assert http.get_header("ETag") or http.get_header("Last-Modified")


def test_revisits_refer_to_earlier_files_of_the_same_folder(tmp_path):
    with served("tests/mocksite_warc.py", "--articles", "4") as base:
        for now in RUNS:
            crawl(["-a", f"start_urls={base}", "-a", f"now={now}"], tmp_path / "data",
                  settings={"NEWSCRAWL_WARC_DIR": tmp_path / "warc", **NEVER_VERIFY})
    records = all_records(sorted((tmp_path / "warc").glob("*.warc.gz")))
    assert check(sorted((tmp_path / "warc").glob("*.warc.gz"))) == 0
    ids = {h.get_header("WARC-Record-ID"): h.get_header("WARC-Target-URI")
           for _, kind, h, _, _ in records if kind == "response"}
    revisits = [h for _, kind, h, _, _ in records if kind == "revisit"]
    article_revisits = [h for h in revisits if "/politik/" in h.get_header("WARC-Target-URI")]
    assert len(article_revisits) >= 4
    for h in article_revisits:
        assert ids[h.get_header("WARC-Refers-To")] == h.get_header("WARC-Target-URI")
        assert h.get_header("WARC-Refers-To-Date")


def test_import_stores_the_same_articles_and_nodes(warc_crawl, tmp_path):
    base, tmp, _, _ = warc_crawl
    crawled_articles, crawled_nodes = stored(tmp / "data")  # run 2 only re-checked them
    proc = run_import([tmp / "warc1"], tmp_path / "imported")
    stats = stats_of(proc.stderr)
    articles, nodes = stored(tmp_path / "imported")
    assert set(articles) == set(crawled_articles) and len(articles) == COUNT
    assert set(nodes) == set(crawled_nodes)
    for url, doc in articles.items():
        want = crawled_articles[url]
        for field in ("title", "text", "published", "weight", "role", "depth", "link_class"):
            assert doc[field] == want[field], (url, field)
    assert int(stats["newscrawl/warcimport/answered"]) > COUNT
    assert "newscrawl/warcimport/missing" not in stats  # nothing asked for that was not archived
    assert "Traceback" not in proc.stderr


def test_import_of_two_crawls_keeps_the_corrected_article_as_a_version(tmp_path):
    port = str(_free_port())  # one site, the same URLs, corrected between the two crawls
    for edition, now in ((1, RUNS[0]), (2, RUNS[1])):
        with served("tests/mocksite_warc.py", "--articles", "3", "--edition", str(edition),
                    "--port", port) as base:
            crawl(["-a", f"start_urls={base}", "-a", f"now={now}"], tmp_path / "data",
                  settings={"NEWSCRAWL_WARC_DIR": tmp_path / "warc", **NEVER_VERIFY})
    corrected = base.rstrip("/") + article_path(0)
    archive = WarcArchive(sorted((tmp_path / "warc").glob("*.warc.gz")))
    assert len(archive.full_captures(corrected)) == 2  # the other articles: HEAD said unchanged
    proc = run_import([tmp_path / "warc"], tmp_path / "imported")
    assert int(stats_of(proc.stderr)["newscrawl/warcimport/later_captures"]) >= 1
    for data in (tmp_path / "data", tmp_path / "imported"):
        with open_store(data) as store:
            versions = list(store.versions.find({"url": corrected}))
            article = store.articles.find_one({"url": corrected})
        assert len(versions) == 1, data
        assert "Korrektur" in article["text"] and "Korrektur" not in versions[0]["text"], data


def test_a_crawl_killed_with_kill_9_leaves_valid_files(tmp_path):
    warc = tmp_path / "warc"
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    env["NEWSCRAWL_DATA_DIR"] = str(tmp_path / "data")
    with served("tests/mocksite_warc.py", "--articles", "150", "--delay", "0.05") as base:
        cmd = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"start_urls={base}",
               "-s", f"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS={LOOPBACK_SITES}",
               "-s", f"NEWSCRAWL_WARC_DIR={warc}", "-s", "NEWSCRAWL_WARC_MAX_BYTES=20000",
               "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2"]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while len(list(warc.glob("*.warc.gz"))) < 3 and time.monotonic() < deadline:
                assert proc.poll() is None, "the crawl ended before it could be killed"
                time.sleep(0.1)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    closed = sorted(warc.glob("*.warc.gz"))
    opened = sorted(warc.glob("*.warc.gz.open"))
    assert len(closed) >= 3 and len(opened) == 1
    assert check(closed) == 0
    archive = WarcArchive(opened)
    assert set(archive.skipped) <= {"truncated_last_record"}
    assert archive.kinds["warcinfo"] == 1
    for url in archive.captures:
        assert archive.answer(url) is not None
