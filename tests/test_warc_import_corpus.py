"""``newscrawl import`` of the real WARC set ../shared/corpus/02_servo-warc_portal-homepages
(Webrecorder captures of www.sina.com.cn, www.sohu.com, www.qq.com, www.yahoo.com home pages with
their sub-resources): counts per record kind, the home pages stored as node pages with their
links, no traceback on any record."""

from __future__ import annotations

import pytest

from newscrawl.warc.reader import WarcArchive
from tests.conftest import shared_path
from tests.helpers import open_store, stats_of
from tests.test_crawl_warc import run_import

pytestmark = pytest.mark.slow

HOMES = {"https://www.sina.com.cn/": "sina.com.cn", "http://www.sohu.com/": "sohu.com",
         "https://www.qq.com/": "qq.com", "https://www.yahoo.com/": "yahoo.com"}


def corpus_warcs():
    folder = shared_path("corpus", "02_servo-warc_portal-homepages", "collections")
    if not folder.is_dir():
        pytest.skip(f"{folder} is missing (the shared corpus)")
    return sorted(folder.glob("*/archive/*.warc.gz"))


def test_the_archive_index_counts_every_record():
    files = corpus_warcs()
    archive = WarcArchive(files)
    assert archive.files == len(files) == 4
    assert archive.kinds == {"response": 489, "request": 489}
    assert not archive.skipped  # every record read, none cut short
    assert set(HOMES) <= set(archive.pages())
    qq = archive.answer("https://www.qq.com/")
    assert qq.status == 200 and qq.body.lstrip().lower().startswith((b"<!doctype", b"<html"))


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    files = corpus_warcs()
    data = tmp_path_factory.mktemp("corpus02") / "data"
    proc = run_import(files, data)
    return proc, stats_of(proc.stderr), data


def test_import_of_the_shared_warc_set_counts_per_kind_without_traceback(imported):
    proc, stats, _ = imported
    assert "Traceback" not in proc.stderr
    assert stats["finish_reason"] == "'finished'"
    assert int(stats["newscrawl/warcimport/files"]) == 4
    assert int(stats["newscrawl/warcimport/records/response"]) == 489
    assert int(stats["newscrawl/warcimport/records/request"]) == 489
    assert not [k for k in stats if k.startswith("newscrawl/warcimport/skipped/")]
    # the home pages are not newscrawl's: no entries in metadata, so they come in as archived
    # pages nobody linked (entry pages of their own), their links followed inside the archive
    assert int(stats["newscrawl/warcimport/unrequested"]) >= len(HOMES)
    assert int(stats["newscrawl/warcimport/answered"]) >= len(HOMES)


def test_the_home_pages_are_stored_as_node_pages_with_their_links(imported):
    _, _, data = imported
    with open_store(data) as store:
        for url, site in HOMES.items():
            node = store.nodes.find_one({"url": url})
            assert node is not None, url
            # an entry of its own, or a node link of another archived page of its site
            assert node["site"] == site and node["role"] in ("entry", "node") and node["title"]
            assert store.links.count_documents({"source_url": url}) > 20, url
        # captured 2018-03 / 2018-08: pages are dated by their WARC-Date, not the import's clock
        years = {d["fetched_at"].year for d in store.nodes.find({"url": {"$in": list(HOMES)}})}
    assert years == {2018}
