"""``newscrawl search`` and ``newscrawl article`` on an embedded store (tests/analystdata.py),
run as the analyst runs them: subprocesses in another directory."""

from __future__ import annotations

import csv
import io
import json

import pytest

from newscrawl.embedded import EmbeddedMongo
from newscrawl.search.index import SearchIndex
from newscrawl.store import NewsStore
from tests import analystdata
from tests.test_cli_analyst import run


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("search-data")
    server = EmbeddedMongo(folder)
    uri = server.start()
    with NewsStore.connect(uri, "newscrawl", timeout=5.0) as store:
        analystdata.fill(store)
    yield folder
    server.stop()


@pytest.fixture
def elsewhere(tmp_path):
    return tmp_path


def test_search_builds_the_index_then_answers_from_it(data_dir, elsewhere):
    first = run(["search", "Marathon", "--data-dir", str(data_dir)], elsewhere)
    assert first.returncode == 0, first.stderr
    assert "indexed 10 article(s)" in first.stderr
    assert "Marathon: Rekord in Berlin" in first.stdout
    assert "https://www.zeit.de/sport/2026-12/marathon-berlin" in first.stdout
    again = run(["search", "Marathon", "--data-dir", str(data_dir)], elsewhere)
    assert again.returncode == 0 and "indexed" not in again.stderr
    assert again.stdout == first.stdout
    assert (data_dir / "search" / "embedded-newscrawl.sqlite").is_file()


def test_search_or_filters_and_formats(data_dir, elsewhere):
    out = run(["search", "Marathon OR Haushalt", "--format", "jsonl", "--data-dir",
               str(data_dir)], elsewhere)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    titles = {r["title"] for r in rows}
    assert {"Marathon: Rekord in Berlin", "Haushalt: Einigung"} <= titles
    assert all("marathon" in r["title"].lower() or "haushalt" in r["title"].lower() for r in rows)
    site = run(["search", "Marathon OR Haushalt", "--site", "zeit.de", "--format", "csv",
                "--data-dir", str(data_dir)], elsewhere)
    table = list(csv.DictReader(io.StringIO(site.stdout)))
    assert table and {r["site"] for r in table} == {"zeit.de"}
    since = run(["search", "Marathon OR Haushalt", "--since", "2026-12-01T10:00:00Z",
                 "--format", "jsonl", "--data-dir", str(data_dir)], elsewhere)
    later = [json.loads(line) for line in since.stdout.splitlines()]
    assert later and len(later) < len(rows)
    assert all(r["time"] >= "2026-12-01T10:00:00Z" for r in later)
    none = run(["search", "Zyxwvut", "--data-dir", str(data_dir)], elsewhere)
    assert none.returncode == 0 and "no matching article" in none.stdout
    bad = run(["search", "NOT Marathon", "--data-dir", str(data_dir)], elsewhere)
    assert bad.returncode == 2 and "not negated" in bad.stderr


def test_reindex_rebuilds_and_a_missing_store_is_exit_2(data_dir, elsewhere):
    out = run(["search", "Haushalt", "--reindex", "--data-dir", str(data_dir)], elsewhere)
    assert out.returncode == 0 and "indexed 10 article(s)" in out.stderr
    with SearchIndex(data_dir / "search" / "embedded-newscrawl.sqlite") as index:
        assert index.count() == 10
    missing = run(["search", "x", "--data-dir", str(elsewhere / "nothing")], elsewhere)
    assert missing.returncode == 2 and "no store" in missing.stderr


def test_article_shows_text_times_weight_and_versions_with_a_diff(data_dir, elsewhere):
    url = "https://www.zeit.de/politik/2026-12/haushalt"
    out = run(["article", url, "--versions", "--data-dir", str(data_dir)], elsewhere)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("Haushalt beschlossen (korrigiert)\n")
    assert "weight:     0.800" in text and "published:  2026-12-01T09:30:00Z" in text
    assert "previous versions: 1" in text
    assert "[-Haushalt beschlossen-] {+Haushalt beschlossen (korrigiert)+}" in text
    assert "Body [-text.-] {+text, corrected.+}" in text
    as_json = json.loads(run(["article", url, "--format", "json", "--data-dir", str(data_dir)],
                             elsewhere).stdout)
    assert as_json["url"] == url and "minhash" not in as_json and "versions" not in as_json
    by_fp = run(["article", as_json["fp"], "--data-dir", str(data_dir)], elsewhere)
    assert by_fp.returncode == 0 and "previous versions" not in by_fp.stdout
    missing = run(["article", "https://nowhere.test/x", "--data-dir", str(data_dir)], elsewhere)
    assert missing.returncode == 2 and "no article" in missing.stderr
