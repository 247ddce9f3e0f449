"""Query latency of ``newscrawl search`` at 100,000 stored articles (issue 22).

Usage (from the repository root)::

    .venv/bin/python benchmarks/search_latency.py [--docs 100000] [--quick] [--trigram]

The articles are made of real texts: the 258 articles of corpus set 04 (fundus, 41 countries,
ground-truth title and body: German, English, Chinese, Japanese, Korean, Russian, …) and the
CJK texts of set 08. Article ``i`` takes the title and the paragraphs of corpus article
``i mod N`` and two paragraphs of other corpus articles drawn at random (seeded), shuffled, so
the vocabulary, the lengths and the word frequencies are those of real news, and frequent words
match thousands of articles (the hard case for a ranked query). Each article gets one of 40 sites and
a time over 30 days.

The index is :class:`newscrawl.search.index.SearchIndex` — the very class and file format the
crawl and the command use — filled through :func:`newscrawl.search.index.sync` in batches of 500
(the crawl's batch). The queries are what an analyst types: single German and English words,
a phrase, ``OR``, ``NOT``, two-character Chinese words, a word with ``--site``, a word with
``--since`` (the last 3 days), each run ``--repeat`` times (first run included: no warm-up is
hidden), 20 results per query as ``newscrawl search`` prints.

Target: p95 of the query latency ≤ 100 ms at 100,000 articles. ``--quick`` uses 20,000
articles (``make bench``). ``--trigram`` also builds an FTS5 ``trigram`` index of the raw texts
(the other tokenizer the issue names) and times the same queries on it; queries shorter than
three characters cannot use it (counted). Exit status 2 without ``../shared/corpus``.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests"), str(ROOT)]

from _targets import figure, target  # noqa: E402

from newscrawl.search.index import SearchIndex, sync  # noqa: E402

QUERIES: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("word de", "Bundesregierung", {}),
    ("word de frequent", "Polizei", {}),
    ("word en", "police", {}),
    ("word en frequent", "government", {}),
    ("phrase", '"European Union"', {}),
    ("or", "Euroleague OR Massenschlägerei OR Ukraine", {}),
    ("not", "Trump -Ukraine", {}),
    ("prefix", "Regierung*", {}),
    ("zh 2 chars", "中国", {}),
    ("zh 2 chars rare", "记者", {}),
    ("ja", "日本", {}),
    ("site filter", "police", {"site": "site7.example"}),
    ("since filter", "government", {"since_days": 3}),
)


def corpus_texts(shared: Path) -> list[tuple[str, list[str]]]:
    """(title, paragraphs) of the corpus articles (module docstring)."""
    from story_corpus import set04_docs

    out = [(d.title, [p for p in d.text.split("\n") if p.strip()])
           for d in set04_docs(shared / "corpus")]
    for path in sorted((shared / "corpus" / "08_newspaper4k_testdata" / "txt").glob("*.txt")):
        if path.name.startswith(("chinese", "japanese", "korean")):
            lines = [x for x in path.read_text(encoding="utf-8").split("\n") if x.strip()]
            if lines:
                out.append((lines[0][:80], lines))
    return [(t, ps) for t, ps in out if ps]


def articles(texts: list[tuple[str, list[str]]], n: int, *, seed: int = 22,
             now: float = 1_800_000_000.0):
    """``n`` article documents made of the corpus texts (module docstring)."""
    rnd = random.Random(seed)
    for i in range(n):
        title, paras = texts[i % len(texts)]
        mix = list(paras)
        for _ in range(2):
            mix.append(rnd.choice(rnd.choice(texts)[1]))
        rnd.shuffle(mix)
        yield {"fp": f"{i:016x}", "url": f"https://site{i % 40}.example/a/{i}",
               "site": f"site{i % 40}.example", "title": title, "text": "\n".join(mix),
               "first_seen": now - rnd.random() * 30 * 86400, "weight": rnd.random()}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(q * (len(ordered) - 1)))))
    return ordered[k]


def run_queries(index: SearchIndex, repeat: int, now: float) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for name, query, opts in QUERIES:
        since = now - float(opts["since_days"]) * 86400 if "since_days" in opts else None
        site = opts.get("site")
        for _ in range(repeat):
            t = time.perf_counter()
            hits = index.search(query, site=str(site) if site else None, since=since, limit=20)
            times.setdefault(name, []).append(time.perf_counter() - t)
        times[name + " hits"] = [float(len(hits))]
    return times


def trigram_compare(path: Path, texts, n: int, repeat: int) -> None:
    """Build an FTS5 trigram index of the raw title and text; time the same queries."""
    db = sqlite3.connect(str(path))
    db.execute("CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize='trigram')")
    t0 = time.perf_counter()
    batch = []
    for doc in articles(texts, n):
        batch.append((doc["title"], doc["text"]))
        if len(batch) >= 500:
            db.executemany("INSERT INTO t VALUES(?,?)", batch)
            db.commit()
            batch = []
    if batch:
        db.executemany("INSERT INTO t VALUES(?,?)", batch)
        db.commit()
    figure("search_latency trigram build s", round(time.perf_counter() - t0, 1))
    figure("search_latency trigram index MB", round(path.stat().st_size / 1e6, 1))
    all_times: list[float] = []
    unsupported = 0
    for name, query, _opts in QUERIES:
        words = [w.strip('"-*') for w in query.replace(" OR ", " ").split()]
        if any(len(w) < 3 for w in words):
            unsupported += 1  # a trigram index cannot match a term of fewer than 3 characters
            continue
        expr = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
        for _ in range(repeat):
            t = time.perf_counter()
            db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 20",
                       (expr,)).fetchall()
            all_times.append(time.perf_counter() - t)
    figure("search_latency trigram p95 ms", round(1000 * percentile(all_times, 0.95), 1))
    figure("search_latency trigram queries it cannot answer (terms < 3 chars)", unsupported)
    db.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="20,000 articles")
    parser.add_argument("--trigram", action="store_true", help="also time an FTS5 trigram index")
    parser.add_argument("--keep", default=None, help="build the index in this folder and keep it")
    args = parser.parse_args(argv)
    shared = Path(os.environ.get("NEWSCRAWL_SHARED", ROOT.parent / "shared"))
    if not (shared / "corpus").is_dir():
        print(f"search_latency: needs {shared / 'corpus'}", file=sys.stderr)
        return 2
    n = 20_000 if args.quick else args.docs
    texts = corpus_texts(shared)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="search-bench-"))
    now = 1_800_000_000.0
    path = folder / "bench.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    print(f"search_latency: {n} articles from {len(texts)} corpus texts into {path}", flush=True)
    index = SearchIndex(path)
    t0 = time.perf_counter()
    counts = sync(index, articles(texts, n, now=now))
    build = time.perf_counter() - t0
    assert counts["added"] == n, counts
    index.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    figure("search_latency articles", n)
    figure("search_latency build s", round(build, 1))
    figure("search_latency articles indexed per s", round(n / build))
    figure("search_latency index MB", round(path.stat().st_size / 1e6, 1))
    times = run_queries(index, args.repeat, now)
    every: list[float] = []
    for name, _query, _opts in QUERIES:
        t = times[name]
        every += t
        print(f"  {name:<18} hits {int(times[name + ' hits'][0]):>3}  p50 "
              f"{1000 * statistics.median(t):6.1f} ms  p95 {1000 * percentile(t, 0.95):6.1f} ms"
              f"  max {1000 * max(t):6.1f} ms", flush=True)
    figure("search_latency p50 ms", round(1000 * statistics.median(every), 1))
    index.close()
    if args.trigram:
        trigram_compare(folder / "trigram.sqlite", texts, n, args.repeat)
    met = target(f"search_latency p95 ms at {n} articles", 1000 * percentile(every, 0.95),
                 "<=", 100, digits=1)
    if not args.keep:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
