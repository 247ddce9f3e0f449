"""The SQLite FTS5 index (newscrawl.search.index) over real articles of the shared corpus: CJK
queries of two characters, German words, OR / phrases / NOT, filters, changes, damage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from newscrawl.search.index import SearchIndex, index_path, sync, sync_since
from newscrawl.search.query import _fold, parse, tokenize
from tests.conftest import shared_path
from tests.story_corpus import set04_docs


@pytest.fixture(scope="module")
def corpus_docs() -> list[dict]:
    """Set 04 (258 articles of 41 countries, ground-truth title and body) and the Chinese,
    Japanese and Korean texts of set 08, as stored article documents."""
    docs = []
    for i, d in enumerate(set04_docs(shared_path("corpus"))):
        site = d.url.split("/")[2] if d.url.count("/") >= 2 else "unknown"
        docs.append({"fp": f"{i:016x}", "url": d.url or d.key, "site": site, "title": d.title,
                     "text": d.text, "first_seen": 1_700_000_000 + i * 60, "weight": 0.5})
    for path in sorted(shared_path("corpus", "08_newspaper4k_testdata", "txt").glob("*.txt")):
        if re.match(r"(chinese|japanese|korean)", path.name):
            text = path.read_text(encoding="utf-8")
            docs.append({"fp": f"f{len(docs):015x}", "url": f"https://np4k.test/{path.stem}",
                         "site": "np4k.test", "title": text.split("\n", 1)[0][:80], "text": text,
                         "first_seen": 1_700_100_000 + len(docs)})
    return docs


@pytest.fixture
def index(tmp_path, corpus_docs):
    ix = SearchIndex(index_path(tmp_path, "embedded-newscrawl"))
    counts = sync(ix, corpus_docs)
    assert counts["added"] == len(corpus_docs) and ix.count() == len(corpus_docs)
    yield ix
    ix.close()


def _holders(docs, needle: str) -> set[str]:
    """The documents whose folded title or text holds ``needle`` (a substring)."""
    n = _fold(needle)
    return {d["fp"] for d in docs if n in _fold(d["title"] or "") or n in _fold(d["text"] or "")}


def _cjk_pairs(docs) -> list[str]:
    """Two-character Han words taken from the Chinese texts themselves (the first two Han
    characters of a number of sentences), a real sample of what an analyst types."""
    pairs: list[str] = []
    for d in docs:
        for m in re.finditer(r"[。，]([\u4e00-\u9fff]{2})", d["text"] or ""):
            if m.group(1) not in pairs:
                pairs.append(m.group(1))
    return pairs[::7][:40]


def test_two_character_chinese_queries_find_exactly_the_articles_holding_them(index, corpus_docs):
    pairs = _cjk_pairs(corpus_docs)
    assert len(pairs) >= 20, "the corpus should hold Chinese texts"
    for pair in pairs:
        found = {h.fp for h in index.search(pair, limit=1000)}
        assert found == _holders(corpus_docs, pair), pair
        assert found  # taken from a text, so at least that one


def test_longer_cjk_and_japanese_korean_queries(index, corpus_docs):
    for needle in ("中国", "习近平", "日本", "한국"):
        found = {h.fp for h in index.search(needle, limit=1000)}
        assert found == _holders(corpus_docs, needle), needle


def test_words_or_phrases_and_not_match_like_tokens(index, corpus_docs):
    def token_holders(word: str) -> set[str]:
        t = tokenize(word)[0]
        return {d["fp"] for d in corpus_docs
                if t in tokenize(d["title"]) or t in tokenize(d["text"])}

    for word in ("Bundesregierung", "Trump", "police", "Ukraine"):
        found = {h.fp for h in index.search(word, limit=1000)}
        assert found == token_holders(word) and found, word
    either = {h.fp for h in index.search("Bundesregierung OR police", limit=1000)}
    assert either == token_holders("Bundesregierung") | token_holders("police")
    both = {h.fp for h in index.search("Trump Ukraine", limit=1000)}
    assert both == token_holders("Trump") & token_holders("Ukraine")
    without = {h.fp for h in index.search("Trump -Ukraine", limit=1000)}
    assert without == token_holders("Trump") - token_holders("Ukraine")
    # a phrase: adjacent, in order (checked against the token lists)
    phrase = ("european", "union")
    want = {d["fp"] for d in corpus_docs for toks in (tokenize(d["title"]), tokenize(d["text"]))
            if any(tuple(toks[i:i + 2]) == phrase for i in range(len(toks) - 1))}
    assert {h.fp for h in index.search('"European Union"', limit=1000)} == want and want


def test_title_matches_rank_first_and_filters_apply(index, corpus_docs):
    checked = 0
    for doc in corpus_docs:
        words = [w for w in tokenize(doc["title"]) if len(w) >= 6]
        rare = [w for w in words if len(index.search(w, limit=50)) <= 10]
        if not rare:
            continue
        hits = index.search(rare[0], limit=10)
        assert doc["fp"] in [h.fp for h in hits[:3]], (rare[0], doc["title"])
        checked += 1
        if checked >= 20:
            break
    assert checked == 20
    doc = next(d for d in corpus_docs if "np4k" not in d["url"] and tokenize(d["title"]))
    word = max(tokenize(doc["title"]), key=len)
    site_hits = index.search(word, site=doc["site"], limit=1000)
    assert doc["fp"] in {h.fp for h in site_hits} and {h.site for h in site_hits} == {doc["site"]}
    t = doc["first_seen"]
    assert all(h.time >= t for h in index.search(word, since=t, limit=1000))
    assert all(h.time < t for h in index.search(word, until=t, limit=1000))


def test_changed_text_is_reindexed_unchanged_is_not(index):
    counts, changed = index.upsert_changes([{"fp": "0000000000000000", "title": "Zanzibarwort",
                                             "text": "neu"}])
    assert counts["changed"] == 1 and changed == ["0000000000000000"]
    assert [h.fp for h in index.search("Zanzibarwort")] == ["0000000000000000"]
    counts, changed = index.upsert_changes([{"fp": "0000000000000000", "title": "Zanzibarwort",
                                             "text": "neu", "weight": 0.9}])
    assert counts["unchanged"] == 1 and changed == []
    assert index.search("Zanzibarwort")[0].weight == 0.9
    assert index.upsert([{"title": "no fp"}])["skipped"] == 1


def test_a_damaged_index_is_moved_aside_and_marked_for_a_rebuild(tmp_path: Path):
    path = index_path(tmp_path, "embedded-x")
    with SearchIndex(path) as ix:
        sync(ix, [{"fp": "a", "title": "eins", "text": "zwei", "last_seen": 100.0}])
    with SearchIndex(path) as ix:
        assert not ix.created and sync_since(ix) == 100.0 - 300.0
    path.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    with SearchIndex(path) as ix:
        assert ix.created and ix.count() == 0 and sync_since(ix) is None
    assert list(tmp_path.glob("search/*.damaged-*"))


def test_fts5_syntax_in_a_query_is_searched_as_words(index):
    from newscrawl.search.query import QueryError

    with pytest.raises(QueryError):
        index.search("NOT Trump")
    with pytest.raises(QueryError):
        index.search("(Trump")
    # FTS5 column filters, NEAR and a lone * are words to us, not syntax: no sqlite3 error
    assert index.search('title: "*" NEAR') == []
    hits = index.search("Trump title:", limit=1000)
    assert hits and len(hits) < len(index.search("Trump", limit=1000))


def test_first_seen_keeps_the_earliest_and_time_falls_back_to_it(tmp_path):
    import datetime as dt

    utc = dt.timezone.utc
    with SearchIndex(index_path(tmp_path, "embedded-x")) as ix:
        # a crawl's item: no first_seen yet, fetched_at and no publication time
        ix.upsert([{"fp": "a", "title": "Wort", "text": "eins",
                    "fetched_at": dt.datetime(2026, 12, 1, 10, tzinfo=utc), "weight": 0.2}])
        (hit,) = ix.search("Wort")
        assert hit.first_seen == hit.time == dt.datetime(2026, 12, 1, 10, tzinfo=utc).timestamp()
        # re-crawled later with a changed text and a publication time found
        ix.upsert([{"fp": "a", "title": "Wort", "text": "zwei",
                    "fetched_at": dt.datetime(2026, 12, 2, tzinfo=utc),
                    "published": dt.datetime(2026, 11, 30, tzinfo=utc)}])
        (hit,) = ix.search("Wort")
        assert hit.first_seen == dt.datetime(2026, 12, 1, 10, tzinfo=utc).timestamp()
        assert hit.time == dt.datetime(2026, 11, 30, tzinfo=utc).timestamp()
        assert hit.weight == 0.2  # not given this time: kept


class FakeStore:
    """The two reads :func:`newscrawl.searching.catch_up` makes, over a list of documents."""

    def __init__(self, docs):
        self.docs = docs
        self.reads = []

    def iter_articles(self, *, seen_since=None, fields=None):
        self.reads.append(seen_since)
        return iter([d for d in self.docs
                     if seen_since is None or d["last_seen"] >= seen_since])

    def document_counts(self):
        return {"articles": len(self.docs)}


def test_catch_up_follows_the_stores_clock_and_finds_articles_behind_it(tmp_path):
    import datetime as dt

    from newscrawl.searching import catch_up

    t = lambda d: dt.datetime(2024, 10, d, tzinfo=dt.timezone.utc)  # noqa: E731 - a run clock
    store = FakeStore([{"fp": "a", "title": "Alpha", "text": "x", "last_seen": t(1)},
                       {"fp": "b", "title": "Beta", "text": "y", "last_seen": t(3)}])
    alerted: list[str] = []
    with SearchIndex(index_path(tmp_path, "embedded-x")) as ix:
        assert catch_up(store, ix, on_changed=alerted.extend)["added"] == 2
        assert alerted == []  # a build from nothing is history: no alert
        assert ix.synced_until() == t(3).timestamp()  # the store's clock, not this machine's
        store.docs.append({"fp": "c", "title": "Gamma", "text": "z", "last_seen": t(4)})
        assert catch_up(store, ix, on_changed=alerted.extend)["added"] == 1
        assert store.reads[-1] == t(3) - dt.timedelta(seconds=300) and alerted == ["c"]
        # written later with an older run clock (-a now=2024-10-02): behind the watermark,
        # found by the count check
        store.docs.append({"fp": "d", "title": "Delta", "text": "w", "last_seen": t(2)})
        assert catch_up(store, ix, on_changed=alerted.extend)["added"] == 1
        assert alerted == ["c", "d"] and ix.count() == 4
