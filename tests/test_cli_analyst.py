"""The ``newscrawl`` command from another directory: ``crawl``, ``report`` (terminal and
``--html``), ``export`` (jsonl, csv, parquet, and the analyst's guide's pandas lines reading them), and a
data folder that does not exist.

The commands run as subprocesses (``python -m newscrawl``) in a temporary working directory,
with the checkout on ``PYTHONPATH`` the way the installed console script finds it; the store is
an embedded one filled by :func:`tests.analystdata.fill` (or by a real crawl of the mock site).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from newscrawl.cli import crawl_args
from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore
from tests import analystdata
from tests.helpers import LOOPBACK_SITES, REPO, require_installed, served


def run(args: list[str], cwd: Path, *, timeout: float = 120,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m newscrawl ARGS`` in ``cwd`` (not the checkout), no configured MongoDB."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI", "NEWSCRAWL_DATA_DIR")}
    env.update(extra_env or {})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "newscrawl", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """An embedded data folder holding the analysts' sample store; its server keeps running for
    the module (the commands reuse it) and is stopped at the end."""
    folder = tmp_path_factory.mktemp("analyst-data")
    server = EmbeddedMongo(folder)
    uri = server.start()
    with NewsStore.connect(uri, "newscrawl", timeout=5.0) as store:
        analystdata.fill(store)
    yield folder
    server.stop()


@pytest.fixture
def elsewhere(tmp_path) -> Path:
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    return cwd


def test_crawl_args_translate_urls_watch_and_data_dir():
    args, data_dir = crawl_args(["https://a.example/", "--watch", "-a", "for=10m", "https://b.example/x",
                                 "--data-dir", "d", "-s", "NEWSCRAWL_DEPTH=1", "-O", "items.jsonl"])
    assert args == ["-a", "start_urls=https://a.example/,https://b.example/x", "-a", "watch=1",
                    "-a", "for=10m", "-s", "NEWSCRAWL_DEPTH=1", "-O", "items.jsonl"]
    assert data_dir == "d"
    with pytest.raises(ValueError):
        crawl_args(["https://a.example/", "-s"])


def test_missing_data_dir_is_a_clear_error_for_report_and_export(elsewhere):
    missing = elsewhere / "no-such-folder"
    for command in (["report"], ["export", "--format", "csv"]):
        proc = run([*command, "--data-dir", str(missing)], elsewhere)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert f"no store at {missing}" in proc.stderr and "does not exist" in proc.stderr
        assert not missing.exists()  # nothing created there


def test_data_dir_option_wins_over_the_env_variable(data_dir, elsewhere):
    """``--data-dir`` on the command line is read even when env ``NEWSCRAWL_DATA_DIR`` (set by a
    shell profile or an earlier ``export``) names another folder."""
    other = elsewhere / "env-folder"
    for command in (["report"], ["export", "--format", "jsonl"]):
        proc = run([*command, "--data-dir", str(data_dir)], elsewhere,
                   extra_env={"NEWSCRAWL_DATA_DIR": str(other)})
        assert proc.returncode == 0, proc.stderr
        assert str(other) not in proc.stderr
    assert not other.exists()
    proc = run(["export"], elsewhere, extra_env={"NEWSCRAWL_DATA_DIR": str(other)})
    assert proc.returncode == 2 and f"no store at {other}" in proc.stderr  # env still used alone


def test_crawl_without_entries_is_a_usage_error(elsewhere):
    proc = run(["crawl", "--watch"], elsewhere)
    assert proc.returncode == 2 and "give at least one entry URL" in proc.stderr
    assert "Traceback" not in proc.stderr


def _plain(text: str) -> str:
    """The words of a rich table's output, box characters and line breaks removed."""
    for ch in "│┃┏┓┗┛┡┩━─┳┻╇╈┼└┘┌┐├┤┴┬":
        text = text.replace(ch, " ")
    return " ".join(text.split())


def test_report_from_another_directory_shows_freshness_full_titles_stories_and_sources(data_dir, elsewhere):
    proc = run(["report", "--data-dir", str(data_dir)], elsewhere)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    words = _plain(out)
    # the long title is wrapped, never cut
    for word in analystdata.LONG_TITLE.split():
        assert word in words
    assert "…" not in out
    # freshness of zeit.de, computed here from the sample's own figures
    zeit = [a for a in analystdata.articles() if a["site"] == "zeit.de"]
    window_start = analystdata.NOW.timestamp() - 7 * 86400
    delays = [(a["fetched_at"] - a["published"]).total_seconds() / 60 for a in zeit
              if a["published"] is not None and a["published"].timestamp() >= window_start]
    assert f"{statistics.median(delays):.1f} min" in out
    line = next(l for l in out.splitlines() if "zeit.de" in l and " min" in l)
    assert f"{len(zeit)}" in line.split()
    # the story carried by both sites is the top story (listed once, not in a second table),
    # and the feed with its rate
    assert "sueddeutsche.de, zeit.de" in out and "carried by" not in out
    assert "https://newsfeed.zeit.de/index" in out and "6.00" in out
    # the newest articles, newest first
    in_window = [a for a in analystdata.articles()
                 if (analystdata.NOW - a["fetched_at"]).total_seconds() <= 7 * 86400]
    assert f"newest {min(len(in_window), 10)} articles" in out
    newest = out[out.index("newest "):]
    assert newest.index("2026-12-01 12:00") < newest.index("2026-12-01 11:00")


def test_report_site_and_hours(data_dir, elsewhere):
    proc = run(["report", "--site", "sueddeutsche.de", "--hours", "3", "--data-dir",
                str(data_dir)], elsewhere)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "zeit.de" not in out.replace("sueddeutsche.de", "")
    sz = [a for a in analystdata.articles() if a["site"] == "sueddeutsche.de"
          and (analystdata.NOW - a["fetched_at"]).total_seconds() <= 3 * 3600]
    assert f"newest {len(sz)} articles" in out
    assert "2026-12-01 09:00 – 2026-12-01 12:00 UTC" in out


class LoadingTags(HTMLParser):
    """Collects the tags of a page that make a browser fetch something (script / img / iframe
    with a ``src``, stylesheets); script bodies are not parsed as markup."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list]] = []

    def handle_starttag(self, tag, attrs):
        names = {name for name, _ in attrs}
        if (tag in ("script", "img", "iframe", "embed", "source", "video", "audio") and "src" in names) \
                or tag in ("link", "object", "base"):
            self.found.append((tag, attrs))


def test_report_html_is_one_page_without_network_references(data_dir, elsewhere):
    proc = run(["report", "--data-dir", str(data_dir), "--html", "r.html"], elsewhere)
    assert proc.returncode == 0, proc.stderr
    page = (elsewhere / "r.html").read_text(encoding="utf-8")
    assert page.count('class="plotly-graph-div"') == 5
    fetching = LoadingTags()
    fetching.feed(page)
    assert fetching.found == []  # no tag that would load anything; plotly.js is inline
    assert analystdata.LONG_TITLE in page


def test_export_csv_jsonl_filters_and_versions(data_dir, elsewhere):
    stored = analystdata.articles()
    proc = run(["export", "--data-dir", str(data_dir), "--format", "csv", "-o", "a.csv"], elsewhere)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO((elsewhere / "a.csv").read_text(encoding="utf-8"))))
    assert sorted(r["url"] for r in rows) == sorted(a["url"] for a in stored)
    assert {r["record"] for r in rows} == {"article"}
    marathon = next(r for r in rows if r["title"] == analystdata.LONG_TITLE)
    assert json.loads(marathon["sources"])[0]["kind"] == "feed"
    assert marathon["published"].endswith("Z") and marathon["story_id"] == "s1"

    since = "2026-12-01T06:00:00Z"
    proc = run(["export", "--data-dir", str(data_dir), "--site", "zeit.de", "--since", since,
                "--versions"], elsewhere)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(l) for l in proc.stdout.splitlines()]
    articles = [l for l in lines if l["record"] == "article"]
    expected = [a for a in stored if a["site"] == "zeit.de"
                and a["fetched_at"].isoformat().replace("+00:00", "Z") >= since]
    assert sorted(a["url"] for a in articles) == sorted(a["url"] for a in expected)
    assert all("text" in a and "first_seen" in a for a in articles)  # every stored field
    versions = [l for l in lines if l["record"] == "version"]
    assert [v["title"] for v in versions] == ["Haushalt beschlossen"]

    proc = run(["export", "--data-dir", str(data_dir), "--site", "www.sueddeutsche.de"], elsewhere)
    hosts = {json.loads(l)["host"] for l in proc.stdout.splitlines()}
    assert hosts == {"www.sueddeutsche.de"}


def test_export_parquet(data_dir, elsewhere):
    pq = require_installed("pyarrow.parquet")
    proc = run(["export", "--data-dir", str(data_dir), "--format", "parquet", "-o", "a.parquet",
                "--batch", "3"], elsewhere)
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(elsewhere / "a.parquet")
    assert table.num_rows == len(analystdata.articles())
    assert str(table.schema.field("first_seen").type) == "timestamp[us, tz=UTC]"


def test_crawl_from_another_directory_stores_into_its_data_dir(elsewhere):
    with served() as url:
        data = elsewhere / "store"
        proc = run(["crawl", url, "--data-dir", str(data), "-a", "depth=1",
                    "-s", f"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS={LOOPBACK_SITES}"], elsewhere, timeout=240)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert f"newscrawl report --data-dir {data}" in proc.stdout
        report = run(["report", "--data-dir", str(data)], elsewhere)
    assert report.returncode == 0, report.stderr
    assert "127.0.0.1" in report.stdout
    assert not (elsewhere / "data").exists()


def test_exports_load_with_the_readmes_pandas_lines(data_dir, elsewhere, monkeypatch):
    pd = require_installed("pandas")
    readme = (REPO / "docs" / "analysts.md").read_text(encoding="utf-8")
    lines = re.findall(r"`(pd\.read_(?:csv|json)\([^`]*\))`", readme)
    assert len(lines) == 2, lines  # the CSV line and the JSON lines line
    for fmt, name in (("csv", "articles.csv"), ("jsonl", "articles.jsonl")):
        proc = run(["export", "--data-dir", str(data_dir), "--format", fmt, "-o", name], elsewhere)
        assert proc.returncode == 0, proc.stderr
    stored = analystdata.articles()
    monkeypatch.chdir(elsewhere)
    frames = [eval(line, {"pd": pd}) for line in lines]  # the page's own lines
    for frame in frames:
        assert sorted(frame["url"]) == sorted(a["url"] for a in stored)
    csv_frame = next(f for line, f in zip(lines, frames) if "read_csv" in line)
    assert str(csv_frame["first_seen"].dtype).startswith("datetime64")
    dated = csv_frame.dropna(subset=["published"])
    assert len(dated) == sum(a["published"] is not None for a in stored)


def test_without_a_data_folder_the_checkouts_store_is_read(tmp_path, monkeypatch, capsys):
    """The README's first command stores into the checkout's data/; `newscrawl report` from
    another directory (no ./data there, no --data-dir) reads that store and says so."""
    from newscrawl.readstore import NoStore, check_data_dir

    checkout = tmp_path / "checkout"
    (checkout / "data" / "db").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("NEWSCRAWL_DATA_DIR", raising=False)
    with pytest.raises(NoStore):  # not a checkout (no setup.py): no fallback
        check_data_dir(None, checkout=checkout)
    (checkout / "setup.py").write_text("")
    assert check_data_dir(None, checkout=checkout) == checkout / "data"
    assert f"reading the store of the checkout, {checkout / 'data'}" in capsys.readouterr().err
    # a folder that is given (option or environment) is never replaced
    with pytest.raises(NoStore, match="does not exist"):
        check_data_dir(str(elsewhere / "typo"), checkout=checkout)
    monkeypatch.setenv("NEWSCRAWL_DATA_DIR", str(elsewhere / "typo"))
    with pytest.raises(NoStore, match="does not exist"):
        check_data_dir(None, checkout=checkout)
    monkeypatch.delenv("NEWSCRAWL_DATA_DIR")
    (elsewhere / "data" / "db").mkdir(parents=True)  # ./data of the working directory comes first
    assert check_data_dir(None, checkout=checkout) == elsewhere / "data"


def test_csv_cells_that_start_a_formula_are_quoted_jsonl_kept():
    """OWASP "CSV Injection": a text cell starting with = + - @ tab or CR gets a ' in CSV only."""
    from newscrawl.export import write_csv, write_jsonl
    titles = ['=HYPERLINK("http://evil.example/","x")', "+1 Tor", "-5 Grad", "@sum(A1)", "\tTab",
              "\rCR", "Wetter heute"]
    docs = [{"record": "article", "fp": str(n), "url": f"http://a.example/{n}", "title": t,
             "weight": -1.5} for n, t in enumerate(titles)]
    out = io.StringIO()
    assert write_csv(docs, out) == len(docs)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["title"] for r in rows] == ["'" + t for t in titles[:-1]] + ["Wetter heute"]
    assert {r["weight"] for r in rows} == {"-1.5"}  # numbers are no formula: kept
    lines = io.StringIO()
    write_jsonl(docs, lines)
    assert [json.loads(line)["title"] for line in lines.getvalue().splitlines()] == titles
