"""The analyst's guide's queries run (``docs/analysts.md``): every ``python`` block of the section
"Queries for analysts" is executed, in order, in one namespace, against an embedded store holding
the analysts' sample (:mod:`tests.analystdata`), and each result is checked against what the page
says it returns.
Every query has a mongosh form too (one ``js`` block per Python query block). The pandas block
runs with pandas of ``requirements-test.txt`` (not a runtime dependency).
"""

from __future__ import annotations

import datetime as dt
import re
import statistics
from collections.abc import Callable
from typing import Any

import pytest

from newscrawl.store import NewsStore
from tests import analystdata
from tests.helpers import REPO, require_installed

PAGE = "docs/analysts.md"
HEADING = "## Queries for analysts (mongosh and Python)"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def section() -> str:
    text = (REPO / PAGE).read_text(encoding="utf-8")
    assert HEADING in text, f"{PAGE} lost its section {HEADING!r}"
    rest = text.split(HEADING, 1)[1]
    end = re.search(r"^#{1,3} ", rest, re.M)
    return rest[: end.start()] if end else rest


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(section())]


ARTICLES = analystdata.articles()
ZEIT_MARATHON = "https://www.zeit.de/sport/2026-12/marathon-berlin"


def by(field: str, docs: list[dict[str, Any]]) -> list[Any]:
    return [d[field] for d in docs]


def _expect_delays(value: list[dict[str, Any]]) -> None:
    dated = [a for a in ARTICLES if a["published"] is not None]
    assert len(value) == len(dated)
    expected = sorted((a["fetched_at"] - a["published"]).total_seconds() / 60 for a in dated)
    assert [round(v["delay_min"], 6) for v in value] == [round(e, 6) for e in expected]
    assert value[0]["url"] == ZEIT_MARATHON


def _expect_per_hour(value: list[dict[str, Any]]) -> None:
    assert sum(v["n"] for v in value) == len(ARTICLES)
    hours = [v["_id"]["hour"] for v in value]
    assert hours == sorted(hours, reverse=True)
    assert hours[0] == analystdata.NOW.replace(minute=0)


#: Result name → its check (what the page's text before the block says it returns).
CHECKS: dict[str, Callable[[Any], None]] = {
    "newest": lambda v: (
        by("url", v) == [a["url"] for a in sorted((a for a in ARTICLES if a["site"] == "zeit.de"),
                                                  key=lambda a: a["published"] or dt.datetime.min.replace(
                                                      tzinfo=dt.timezone.utc), reverse=True)]
        or pytest.fail(f"newest: {by('url', v)}")),
    "prominent": lambda v: (
        by("weight", v) == sorted((a["weight"] for a in ARTICLES if a["published"] is not None
                                   and a["published"] >= dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)),
                                  reverse=True) or pytest.fail(f"prominent: {by('weight', v)}")),
    "found": lambda v: (sorted(by("title", v)) == sorted(
        a["title"] for a in ARTICLES if "marathon" in a["title"].lower()) or pytest.fail(f"found: {v}")),
    "per_class": lambda v: (v == {("zeit.de", "downward"): 3, ("zeit.de", "outward"): 1,
                                  ("sueddeutsche.de", "downward"): 2, ("sueddeutsche.de", "crosswise"): 1}
                            or pytest.fail(f"per_class: {v}")),
    "corrected": lambda v: (by("title", v) == ["Haushalt beschlossen"] and v[0]["version"] == 1
                            and v[0]["diff"]["title_changed"] or pytest.fail(f"corrected: {v}")),
    "linking": lambda v: (sorted(by("source_url", v)) == ["https://www.zeit.de/index"]
                          and v[0]["link_class"] == "downward" or pytest.fail(f"linking: {v}")),
    "delays": _expect_delays,
    "per_hour": _expect_per_hour,
    "stories": lambda v: ([(s["_id"], sorted(s["sites"]), s["articles"], s["n_sites"]) for s in v]
                         == [("s1", ["sueddeutsche.de", "zeit.de"], 2, 2)] or pytest.fail(f"stories: {v}")),
    "from_feeds": lambda v: (sorted(by("url", v)) == sorted(
        a["url"] for a in ARTICLES if any(s["kind"] == "feed" for s in a.get("sources", [])))
        or pytest.fail(f"from_feeds: {v}")),
    "busiest": lambda v: (by("rate", v) == sorted((s["rate"] for s in analystdata.sources()), reverse=True)
                          or pytest.fail(f"busiest: {v}")),
    "due": lambda v: (sorted(by("url", v)) == sorted(
        s["url"] for s in analystdata.sources() if s["due"] <= dt.datetime.now(dt.timezone.utc))
        and v or pytest.fail(f"due: {v}")),
}


@pytest.fixture(scope="module")
def sample_uri(embedded):
    """The embedded server of the module with the sample in database ``newscrawl`` (the name
    the page's connection block uses)."""
    with NewsStore.connect(embedded.uri, "newscrawl", timeout=5.0) as store:
        store.client.drop_database("newscrawl")
        analystdata.fill(store)
    yield embedded.uri
    with NewsStore.connect(embedded.uri, "newscrawl", timeout=5.0) as store:
        store.client.drop_database("newscrawl")


def test_every_query_has_a_mongosh_and_a_python_form():
    kinds = [kind for kind, _ in blocks()]
    python = [code for kind, code in blocks() if kind == "python"]
    queries = [code for code in python if "MongoClient(" not in code and "import pandas" not in code]
    js_queries = sum(code.count("db.") for kind, code in blocks() if kind == "js")
    py_queries = sum(code.count("db.") for code in queries)
    assert set(kinds) == {"js", "python"}
    assert js_queries == py_queries == len(CHECKS), (js_queries, py_queries, len(CHECKS))


def test_readme_python_queries_return_what_the_readme_says(sample_uri, monkeypatch):
    monkeypatch.setenv("NEWSCRAWL_MONGO_URI", sample_uri)
    namespace: dict[str, Any] = {}
    checked = set()
    for kind, code in blocks():
        if kind != "python" or "import pandas" in code:
            continue
        before = set(namespace)
        exec(compile(code, PAGE, "exec"), namespace)
        for name in sorted(set(namespace) - before):
            if name in CHECKS:
                CHECKS[name](namespace[name])
                checked.add(name)
    assert checked == set(CHECKS), f"results of the page not checked: {set(CHECKS) - checked}"
    namespace["db"].client.close()


def test_readme_pandas_block(sample_uri, monkeypatch):
    require_installed("pandas")
    monkeypatch.setenv("NEWSCRAWL_MONGO_URI", sample_uri)
    namespace: dict[str, Any] = {}
    for kind, code in blocks():
        if kind == "python" and ("MongoClient(" in code or "import pandas" in code):
            exec(compile(code, PAGE, "exec"), namespace)
    zeit = [(a["fetched_at"] - a["published"]).total_seconds() / 60 for a in ARTICLES
            if a["site"] == "zeit.de" and a["published"] is not None]
    assert namespace["by_site"]["zeit.de"] == pytest.approx(statistics.median(zeit))
    namespace["db"].client.close()
