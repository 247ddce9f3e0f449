"""``newscrawl search`` and ``newscrawl article``: find stored articles by their words, read one.

::

    newscrawl search 'Euroleague OR Massenschlägerei' [--site zeit.de] [--since 2026-12-01]
        [--until T] [--limit 20] [--format table|jsonl|csv] [--reindex]
    newscrawl article URL-or-fp [--versions] [--format text|json]

``search`` reads the full-text index in the data folder (:mod:`newscrawl.search.index`,
``<data>/search/<target>.sqlite``), which every crawl keeps current as it stores articles
(:class:`extensions.search.SearchExtension`) and catches up at its start. When the index is
missing or damaged, or with ``--reindex``, the command fills it from the store first
(:func:`catch_up`; the embedded server is started for that). With ``--uri`` (a MongoDB server)
and no index in the data folder, the server's own text index answers (``$text``; words only).

``article`` prints one stored article: title, URL, site, published and first/last stored, its
NewsPageRank weight and story, the text, and with ``--versions`` its previous versions with
their diffs.

Exit status: 0 (also for no hits), 1 the store or index cannot be read, 2 bad arguments or no
store / no such article.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import datetime as dt
import json
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from newscrawl import defaults
from newscrawl.embedded import resolve_data_dir
from newscrawl.readstore import READ_ERRORS, check_data_dir, configured_uri, read_failure, \
    reading_store
from newscrawl.report import parse_time
from newscrawl.search.index import INDEX_FIELDS, Hit, SearchIndex, epoch, index_path, sync, \
    sync_since
from newscrawl.search.query import QueryError
from newscrawl.store import NewsStore, spill_target

FORMATS = ("table", "jsonl", "csv")
HIT_FIELDS = ("rank", "time", "site", "weight", "title", "url", "fp", "story_id", "first_seen",
              "score")


def catch_up(store: NewsStore, index: SearchIndex, *, full: bool = False,
             on_changed: Callable[[list[str]], None] | None = None) -> dict[str, int]:
    """Index the articles ``store`` wrote since the index's ``synced_until`` (all of them for a
    new or damaged index, or with ``full``: then the index is emptied first).

    When the index then holds fewer articles than the store (articles written with a run clock
    older than the watermark, ``-a now=``), every article is read once more (an unchanged one
    is not re-indexed). ``on_changed`` gets the fingerprints whose title or text was new to the
    index, except in a build from nothing (history, which alerts nothing).

    Raises:
        StoreError / StoreUnavailable: reading the store failed (the index keeps what it had).
    """
    since = None if full else sync_since(index)
    if full:
        index.clear()
    seen = None if since is None else dt.datetime.fromtimestamp(since, dt.timezone.utc)
    alert = None if since is None else on_changed
    counts = sync(index, store.iter_articles(seen_since=seen, fields=INDEX_FIELDS),
                  on_changed=alert)
    if since is not None and index.count() < store.document_counts()["articles"]:
        more = sync(index, store.iter_articles(fields=INDEX_FIELDS), on_changed=alert)
        counts = {k: counts[k] + more[k] for k in counts}
    index.created = False
    return counts


def index_location(uri: str | None, data_dir: str | None, database: str) -> tuple[str, Path]:
    """``(configured URI or "", index file)`` of the store a command reads.

    Raises:
        NoStore: no URI and no embedded store in the data folder (see
            :func:`newscrawl.readstore.check_data_dir`).
    """
    given = configured_uri(uri)
    if given:
        folder = Path(resolve_data_dir(data_dir)).expanduser().resolve()
        return given, index_path(folder, spill_target(given, database, embedded=False))
    folder = check_data_dir(data_dir)
    return "", index_path(folder, spill_target("", database, embedded=True))


def _iso(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def hit_row(rank: int, hit: Hit) -> dict[str, Any]:
    """One output row of a hit (times as ISO 8601 UTC strings; ``score`` the BM25 relevance,
    higher is better: SQLite's ``bm25()`` negated)."""
    return {"rank": rank, "time": _iso(hit.time), "site": hit.site,
            "weight": None if hit.weight is None else round(hit.weight, 4), "title": hit.title,
            "url": hit.url, "fp": hit.fp, "story_id": hit.story_id,
            "first_seen": _iso(hit.first_seen), "score": round(-hit.score, 6) + 0.0}


def write_hits(rows: Sequence[dict[str, Any]], fmt: str, out: IO[str]) -> None:
    """Print ``rows`` as a table, JSON lines or CSV."""
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=list(HIT_FIELDS))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
        return
    if not rows:
        out.write("no matching article\n")
        return
    for row in rows:
        weight = "" if row["weight"] is None else f"{row['weight']:.3f}"
        title = (row["title"] or "(no title)").replace("\n", " ")
        out.write(f"{row['rank']:>3}. {row['time'][:16].replace('T', ' ')}  {row['site']:<18} "
                  f"{weight:>6}  {title[:90]}\n     {row['url']}\n")


def make_search_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=(
        "Full-text search over the stored articles' titles and texts: words, \"phrases\", "
        "prefix*, AND / OR / NOT (or -word), parentheses; CJK-aware. Best matches first."))
    parser.add_argument("query", nargs="+", help="the query (several arguments are joined)")
    parser.add_argument("--site", default=None, help="only this registered domain")
    parser.add_argument("--since", type=parse_time, default=None,
                        help="only articles published (else first stored) at or after this")
    parser.add_argument("--until", type=parse_time, default=None, help="... and before this")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument("--reindex", action="store_true",
                        help="rebuild the index from the store before searching")
    parser.add_argument("--uri", default="", help="MongoDB URI (default: env, else embedded store)")
    parser.add_argument("--data-dir", default=None, help="embedded store folder (default ./data)")
    parser.add_argument("--database", default=defaults.NEWSCRAWL_MONGO_DATABASE)
    return parser


def search_main(argv: list[str] | None = None, *, prog: str = "newscrawl search") -> int:
    """``newscrawl search`` (module docstring); returns the exit status."""
    args = make_search_parser(prog).parse_args(argv)
    query = " ".join(args.query)
    if args.limit < 1:
        print(f"{prog}: --limit must be at least 1", file=sys.stderr)
        return 2
    try:
        uri, path = index_location(args.uri, args.data_dir, args.database)
        if uri and not path.exists():
            return _server_search(args, query, prog)
        index = SearchIndex(path)
        with index:
            if index.created or args.reindex:
                with reading_store(args.uri, args.data_dir, args.database) as (store, where):
                    counts = catch_up(store, index, full=args.reindex)
                print(f"{prog}: indexed {counts['added'] + counts['changed']} article(s) of the "
                      f"{where} into {path}", file=sys.stderr)
            hits = index.search(query, site=args.site, since=epoch(args.since),
                                until=epoch(args.until), limit=args.limit)
    except QueryError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    except READ_ERRORS as exc:
        return read_failure(prog, exc)
    except (OSError, sqlite3.Error) as exc:
        print(f"{prog}: cannot read the search index: {exc}", file=sys.stderr)
        return 1
    write_hits([hit_row(i, h) for i, h in enumerate(hits, 1)], args.format, sys.stdout)
    return 0


def _server_search(args: argparse.Namespace, query: str, prog: str) -> int:
    """A MongoDB server without an index in the data folder: its ``$text`` index."""
    with reading_store(args.uri, args.data_dir, args.database) as (store, _where):
        docs = store.search(query, site=args.site, limit=args.limit)
    hits = [Hit(str(d.get("fp")), str(d.get("url") or ""), str(d.get("site") or ""),
                str(d.get("title") or ""), epoch(d.get("published")) or epoch(d.get("first_seen")),
                epoch(d.get("first_seen")), d.get("weight"), d.get("story_id"),
                -float(d.get("score") or 0.0)) for d in docs]
    since, until = epoch(args.since), epoch(args.until)
    hits = [h for h in hits if (since is None or (h.time or 0) >= since)
            and (until is None or (h.time or 0) < until)]
    write_hits([hit_row(i, h) for i, h in enumerate(hits, 1)], args.format, sys.stdout)
    return 0


# -- article ------------------------------------------------------------------------------------

def make_article_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=(
        "Print one stored article (by URL, canonical URL or fingerprint): title, times, weight, "
        "story, text, and with --versions its previous versions and their diffs."))
    parser.add_argument("key", help="the article's URL, canonical URL or 16-hex fingerprint")
    parser.add_argument("--versions", action="store_true", help="also the previous versions")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--uri", default="", help="MongoDB URI (default: env, else embedded store)")
    parser.add_argument("--data-dir", default=None, help="embedded store folder (default ./data)")
    parser.add_argument("--database", default=defaults.NEWSCRAWL_MONGO_DATABASE)
    return parser


#: Internal fields not shown by ``newscrawl article`` (``--format json`` keeps the rest).
_HIDDEN = frozenset({"minhash", "links", "link_counts", "role_counts"})


def _when(value: Any) -> str:
    seconds = epoch(value)
    return _iso(seconds) if seconds is not None else "unknown"


def format_article(doc: dict[str, Any], versions: Sequence[dict[str, Any]] | None) -> str:
    """The text view of an article and (when given) its versions, oldest first."""
    weight = doc.get("weight")
    lines = [
        str(doc.get("title") or "(no title)"),
        "=" * min(max(len(str(doc.get("title") or "")), 10), 100),
        f"url:        {doc.get('url')}",
    ]
    if doc.get("canonical_url") and doc.get("canonical_url") != doc.get("url"):
        lines.append(f"canonical:  {doc.get('canonical_url')}")
    lines += [
        f"site:       {doc.get('site')}    fp: {doc.get('fp')}",
        f"published:  {_when(doc.get('published'))}"
        + (f" (from {doc['published_source']})" if doc.get("published_source") else ""),
        f"stored:     first {_when(doc.get('first_seen'))}, last {_when(doc.get('last_seen'))}",
        f"weight:     {'n/a' if weight is None else format(float(weight), '.3f')} (NewsPageRank)"
        f"    story: {doc.get('story_id') or 'n/a'}",
    ]
    if doc.get("authors"):
        lines.append(f"authors:    {', '.join(map(str, doc['authors']))}")
    if doc.get("language"):
        lines.append(f"language:   {doc['language']}")
    lines += ["", str(doc.get("text") or "(no text stored)")]
    if versions is not None:
        lines += ["", f"previous versions: {len(versions)}"
                  + ("" if versions else " (the text was never seen to change)")]
        chain = sorted(versions, key=lambda v: int(v.get("version") or 0))
        for v, after in zip(chain, [*chain[1:], doc]):
            lines += ["", f"--- version {v.get('version')}: valid from "
                      f"{_when(v.get('valid_from'))}, replaced {_when(v.get('archived_at'))}"]
            summary = v.get("diff") if isinstance(v.get("diff"), dict) else {}
            if summary:
                lines.append(f"    body changed {summary.get('body_changed_pct')} %, "
                             f"+{summary.get('words_added')} / -{summary.get('words_removed')} "
                             f"words" + (", title changed" if summary.get("title_changed")
                                         else ""))
            if (v.get("title") or "") != (after.get("title") or ""):
                lines.append(f"    title: [-{v.get('title')}-] {{+{after.get('title')}+}}")
            lines.append("    text:  " + word_diff(str(v.get("text") or ""),
                                                  str(after.get("text") or "")))
    return "\n".join(lines) + "\n"


def word_diff(old: str, new: str, *, context: int = 8) -> str:
    """The change from ``old`` to ``new`` word by word (``difflib``), ``[-removed-]`` and
    ``{+added+}``, with ``context`` unchanged words around each change (``…`` between)."""
    a, b = old.split(), new.split()
    if a == b:
        return "(no change to the text)"
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            same = a[i1:i2]
            if len(same) > 2 * context:
                head = same[:context] if out else []
                tail = same[-context:] if i2 < len(a) else []
                same = [*head, "…", *tail]
            out.extend(same)
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(w for w in out if w)


def article_main(argv: list[str] | None = None, *, prog: str = "newscrawl article") -> int:
    """``newscrawl article`` (module docstring); returns the exit status."""
    args = make_article_parser(prog).parse_args(argv)
    from newscrawl.export import to_jsonable

    try:
        with reading_store(args.uri, args.data_dir, args.database) as (store, where):
            doc = store.find_article(args.key.strip())
            versions = (store.versions_of([str(doc["fp"])])
                        if doc is not None and args.versions else None)
    except READ_ERRORS as exc:
        return read_failure(prog, exc)
    if doc is None:
        print(f"{prog}: no article {args.key!r} in the {where} (give its URL or fingerprint; "
              f"`newscrawl search WORDS` finds it)", file=sys.stderr)
        return 2
    if args.format == "json":
        shown = {k: v for k, v in doc.items() if k not in _HIDDEN}
        if versions is not None:
            shown["versions"] = versions
        print(json.dumps(to_jsonable(shown), ensure_ascii=False, indent=1))
    else:
        sys.stdout.write(format_article(doc, versions))
    return 0
