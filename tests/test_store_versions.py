"""article_versions: one version per (article, content fingerprint), numbered without a race,
never the current text; the schema-3 upgrade that removes the duplicates of older code. Against
the embedded SecantusDB and, when MONGO_URI is set, a real MongoDB."""

from __future__ import annotations

import datetime as dt
import threading

from newscrawl.algorithms.changedetect import text_fingerprint
from newscrawl.store import SCHEMA_VERSION, NewsStore

UTC = dt.timezone.utc
T0 = dt.datetime(2024, 10, 1, 8, 0, tzinfo=UTC)


def article(fp: str, text: str) -> dict:
    return {"kind": "article", "fp": fp, "url": f"https://s.example/{fp}", "title": "Haushalt",
            "text": text, "weight": 0.5, "fetched_at": T0}


def new(text: str) -> dict:
    return {"title": "Haushalt", "text": text}


def test_the_same_old_text_is_kept_once(store: NewsStore) -> None:
    store.write_pages([article("x", "vier Milliarden")])
    first = store.archive_version("x", new("drei Milliarden"), archived_at=T0)
    assert first["version"] == 1 and first["content_fp"] == text_fingerprint("Haushalt", "vier Milliarden")
    # a second crawl that read the same stored text: nothing written
    assert store.archive_version("x", new("drei Milliarden"), archived_at=T0) is None
    assert store.versions.count_documents({"fp": "x"}) == 1


def test_the_current_text_is_never_archived(store: NewsStore) -> None:
    store.write_pages([article("x", "drei Milliarden")])  # another crawl wrote the new text
    assert store.archive_version("x", new("drei Milliarden"), archived_at=T0) is None
    assert store.archive_version("x", {"title": "haushalt", "text": "Drei  Milliarden"},
                                 archived_at=T0) is None  # same fingerprint: layout only
    assert store.versions.count_documents({}) == 0


def test_versions_are_numbered_in_order_without_gaps(store: NewsStore) -> None:
    texts = ["eins", "zwei", "drei", "vier"]
    for old, newer in zip(texts, texts[1:]):
        store.write_pages([article("x", old)])
        store.archive_version("x", new(newer), archived_at=T0)
        store.archive_version("x", new(newer), archived_at=T0)  # the twin crawl: nothing
    assert sorted((v["version"], v["text"]) for v in store.versions.find({"fp": "x"})) == \
        [(1, "eins"), (2, "zwei"), (3, "drei")]


def test_a_taken_number_is_read_again(store: NewsStore) -> None:
    store.write_pages([article("x", "eins")])
    stale = store._state.previous_version("x", new("zwei"), archived_at=T0)  # number 1
    store.versions.insert_one({"fp": "x", "content_fp": "other", "version": 1, "text": "?"})
    written = store._state.insert_version(stale)
    assert written["version"] == 2 and written["text"] == "eins"


def test_threads_archiving_at_once_write_each_text_once(store: NewsStore) -> None:
    fps = [f"a{i}" for i in range(20)]
    store.write_pages([article(fp, "alt") for fp in fps])
    results: list = []

    def crawl() -> None:
        for fp in fps:
            results.append(store.archive_version(fp, new("neu"), archived_at=T0))

    threads = [threading.Thread(target=crawl) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in results) == 20
    assert store.versions.count_documents({}) == 20
    assert {v["version"] for v in store.versions.find()} == {1}


def test_upgrade_to_schema_3_removes_duplicates_and_renumbers(store: NewsStore) -> None:
    assert SCHEMA_VERSION == 3
    store.versions.drop_indexes()  # as written before schema 3: no (fp, content_fp) index
    store.versions.create_index([("fp", 1), ("version", 1)], unique=True)
    store.db["meta"].insert_one({"_id": "schema", "version": 2,
                                 "fingerprints": [store_fp(u) for u in PROBES]})
    store.versions.insert_many([
        {"fp": "x", "version": 1, "title": "T", "text": "eins", "archived_at": T0},
        {"fp": "x", "version": 2, "title": "T", "text": "eins", "archived_at": T0},  # race twin
        {"fp": "x", "version": 3, "title": "T", "text": "zwei", "archived_at": T0},
        {"fp": "y", "version": 1, "archived_at": T0},  # no text: kept
        {"fp": "y", "version": 2, "archived_at": T0},
    ])
    counts = store.upgrade(store_fp)
    assert (counts["versions_removed"], counts["versions_renumbered"]) == (1, 1)
    assert sorted((v["fp"], v["version"], v.get("text")) for v in store.versions.find()) == \
        [("x", 1, "eins"), ("x", 2, "zwei"), ("y", 1, None), ("y", 2, None)]
    assert all(v["content_fp"] for v in store.versions.find())
    store.ensure_state_indexes()  # the unique (fp, content_fp) index now builds
    assert store.schema_version() == 3
    again = store.upgrade(store_fp)
    assert again["from_version"] == 3 and not again["versions_removed"]
    from newscrawl.store import versions
    assert versions.deduplicate(store.versions) == (0, 0)  # idempotent


def store_fp(url: str) -> str:
    from newscrawl.fingerprint import NewsRequestFingerprinter
    return NewsRequestFingerprinter().page_fp(url)


from newscrawl.store.upgrade import PROBE_URLS as PROBES  # noqa: E402
