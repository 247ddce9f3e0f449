"""Integration, the WARC round trip of issue 24 item 5 on the seven replay home pages: a crawl
through the pywb replay of ../shared/replay writes WARCs; pywb indexes them (``wb-manager add``)
and serves them; a crawl of the same entries through that second replay stores the same
articles and nodes; ``newscrawl import`` of the same files stores the same articles and nodes
too. Every written file passes ``warcio check``."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import SHARED, _free_port, _wayback
from tests.helpers import crawl, open_store, stats_of
from tests.test_crawl_warc import run_import
from tests.test_warc_writer import check

pytestmark = pytest.mark.integration

ENTRIES = ["https://www.sueddeutsche.de/", "https://www.zeit.de/index", "https://www.heise.de/",
           "https://www.sina.com.cn/", "https://www.qq.com/", "http://www.sohu.com/",
           "http://edition.cnn.com/"]
#: Entries and their channel pages (depth 1): the captured articles hang below the sections.
ARGS = ["-a", "start_urls=" + ",".join(ENTRIES), "-a", "depth=1"]


def stored(data_dir: Path):
    with open_store(data_dir) as store:
        articles = {d["url"]: (d.get("title"), d.get("published")) for d in store.articles.find()}
        nodes = {d["url"] for d in store.nodes.find()}
    return articles, nodes


def proxy_env(url: str) -> dict:
    return {"http_proxy": url, "https_proxy": url}


def start_pywb(workdir: Path, coll: str):
    config = (SHARED / "replay" / "config.yaml").read_text().replace("coll: news", f"coll: {coll}")
    (workdir / "config.yaml").write_text(config)
    port = _free_port()
    log = open(workdir / "pywb.log", "wb")
    proc = subprocess.Popen([_wayback(), "-b", "127.0.0.1", "-p", str(port)], cwd=workdir,
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, (workdir / "pywb.log").read_text()[-2000:]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, log, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.3)
    proc.kill()
    pytest.fail("pywb did not start within 60 s")


@pytest.fixture(scope="module")
def round_trip(replay_proxy, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("warcreplay")
    first = crawl(ARGS, tmp / "crawled", env=proxy_env(replay_proxy), timeout=1200,
                  settings={"NEWSCRAWL_WARC_DIR": tmp / "warc"})
    files = sorted((tmp / "warc").glob("*.warc.gz"))
    # pywb indexes and serves what the crawl wrote
    manager = Path(_wayback()).with_name("wb-manager")
    work = tmp / "pywb"
    work.mkdir()
    subprocess.run([str(manager), "init", "ours"], cwd=work, check=True, capture_output=True)
    subprocess.run([str(manager), "add", "ours", *map(str, files)], cwd=work, check=True,
                   capture_output=True)
    proc, log, ours = start_pywb(work, "ours")
    try:
        again = crawl(ARGS, tmp / "replayed", env=proxy_env(ours), timeout=1200)
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
    imported = run_import(files, tmp / "imported")
    return tmp, files, stats_of(first.stderr), stats_of(again.stderr), stats_of(imported.stderr)


def test_every_written_file_passes_warcio_check(round_trip):
    tmp, files, stats, _, _ = round_trip
    assert files and check(files) == 0
    assert int(stats["newscrawl/warc/errors"]) == 0 and int(stats["newscrawl/warc/files"]) == len(files)


def test_a_crawl_through_pywb_serving_our_warcs_stores_the_same(round_trip):
    tmp = round_trip[0]
    articles, nodes = stored(tmp / "crawled")
    again_articles, again_nodes = stored(tmp / "replayed")
    assert set(ENTRIES) <= nodes and articles
    print(f"crawled {len(articles)} articles, {len(nodes)} nodes; through pywb of our WARCs "
          f"{len(again_articles)} articles, {len(again_nodes)} nodes")
    assert set(again_articles) == set(articles)
    assert again_nodes == nodes
    assert again_articles == articles  # titles and publication dates too


def test_import_of_the_same_files_stores_the_same(round_trip):
    tmp, _, _, _, import_stats = round_trip
    articles, nodes = stored(tmp / "crawled")
    imported_articles, imported_nodes = stored(tmp / "imported")
    assert set(imported_articles) == set(articles)
    assert imported_nodes == nodes
    assert imported_articles == articles
    assert "newscrawl/warcimport/unrequested" not in import_stats  # all reached from the entries
