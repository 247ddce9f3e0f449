"""``newscrawl export``: the stored articles as JSON lines, CSV or Parquet, streamed.

    newscrawl export [--since 2026-12-01] [--site zeit.de] [--format jsonl|csv|parquet]
                     [--versions] [-o FILE] [--data-dir DIR | --uri URI]

Articles are read from the store (:mod:`newscrawl.readstore`) through a server cursor
(:meth:`NewsStore.iter_articles`, ``--batch`` documents per round trip) and written as they
come, so memory does not grow with the store. ``--since`` keeps the articles first stored
(``first_seen``) at or after that time (ISO 8601, UTC when no offset); ``--site`` takes a
registered domain (``zeit.de``, field ``site``) or a host name (``www.zeit.de``, field ``host``).

* ``jsonl`` (default; to stdout unless ``-o``): one article per line with every stored field
  (``_id`` left out), datetimes in ISO 8601 UTC;
* ``csv``: the columns :data:`COLUMNS` (lists and objects as JSON text) and ``extra``, a JSON
  object of any other field, so no field is lost; a text cell that starts with ``=``, ``+``,
  ``-``, ``@``, a tab or a carriage return gets a ``'`` in front (:func:`csv_safe`), so a
  spreadsheet does not run it as a formula (OWASP "CSV Injection");
* ``parquet``: the same columns (datetimes as UTC timestamps, numbers as numbers), written in
  row groups of ``--batch`` rows; needs pyarrow (optional: ``pip install pyarrow==26.0.1``,
  about 170 MB installed, so not a default requirement).

``--versions`` adds, after each batch of articles, the stored previous versions of those
articles (``article_versions``) as rows with ``record`` = ``version`` (articles have
``record`` = ``article``). Exit status: 0 done, 1 the store or the file failed, 2 usage or no
store.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack
from typing import IO, Any

from newscrawl import defaults
from newscrawl.algorithms.urls import registered_domain
from newscrawl.readstore import READ_ERRORS, read_failure, reading_store
from newscrawl.report import parse_time
from newscrawl.store import NewsStore

#: Columns of the csv and parquet formats, in order, with their parquet types.
COLUMN_TYPES: dict[str, str] = {
    "record": "string", "fp": "string", "url": "string", "site": "string", "host": "string",
    "title": "string", "published": "timestamp", "published_source": "string",
    "published_confidence": "float", "modified": "timestamp", "first_seen": "timestamp",
    "last_seen": "timestamp", "fetched_at": "timestamp", "weight": "float", "pagerank": "float",
    "authors": "json", "language": "string", "description": "string", "text": "string",
    "canonical_url": "string", "story_id": "string", "sources": "json", "entry_url": "string",
    "referer": "string", "depth": "int", "link_class": "string", "status": "int",
    "version": "int", "archived_at": "timestamp", "valid_from": "timestamp", "diff": "json",
}
COLUMNS = (*COLUMN_TYPES, "extra")
FORMATS = ("jsonl", "csv", "parquet")
PYARROW_PIN = "pyarrow==26.0.1"


def to_jsonable(value: Any) -> Any:
    """``value`` with datetimes as ISO 8601 UTC strings and other non-JSON values as strings."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def flat_row(doc: Mapping[str, Any]) -> dict[str, Any]:
    """One csv / parquet row of ``doc``: :data:`COLUMNS`; ``json`` columns and unknown fields
    as JSON text (unknown ones together in ``extra``), datetimes kept for the writer."""
    row: dict[str, Any] = {}
    for name, kind in COLUMN_TYPES.items():
        value = doc.get(name)
        if kind == "json" and value is not None:
            value = json.dumps(to_jsonable(value), ensure_ascii=False)
        elif kind in ("string", "float", "int") and isinstance(value, (dict, list, dt.datetime)):
            value = json.dumps(to_jsonable(value), ensure_ascii=False)
        row[name] = value
    extra = {k: v for k, v in doc.items() if k not in COLUMN_TYPES and k != "_id"}
    row["extra"] = json.dumps(to_jsonable(extra), ensure_ascii=False) if extra else None
    return row


def records(store: NewsStore, *, since: dt.datetime | None, site: str | None,
            versions: bool, batch: int) -> Iterator[dict[str, Any]]:
    """The articles (``record: "article"``) and, with ``versions``, after each batch of
    ``batch`` articles, their previous versions (``record: "version"``)."""
    host: str | None = None
    name = site.lower().strip() if site else None
    if name and registered_domain(name) != name:
        name, host = None, name
    pending: list[str] = []
    for doc in store.iter_articles(since=since, site=name, host=host, batch_size=batch):
        yield {"record": "article", **doc}
        if versions and doc.get("fp"):
            pending.append(str(doc["fp"]))
            if len(pending) >= batch:
                yield from ({"record": "version", **v} for v in store.versions_of(pending))
                pending = []
    if versions and pending:
        yield from ({"record": "version", **v} for v in store.versions_of(pending))


def write_jsonl(rows: Iterable[Mapping[str, Any]], out: IO[str]) -> int:
    """Write one JSON object per line; return the rows written."""
    n = 0
    for row in rows:
        out.write(json.dumps(to_jsonable(row), ensure_ascii=False) + "\n")
        n += 1
    return n


#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """``value`` with a ``'`` in front when it is a string starting with one of
    :data:`FORMULA_STARTS`, so a spreadsheet shows it as text instead of running it (OWASP
    "CSV Injection"); anything else unchanged. CSV only: JSON lines and Parquet keep the text.

    >>> csv_safe("=1+2"), csv_safe("-1 Grad"), csv_safe("Wetter"), csv_safe(-1)
    ("'=1+2", "'-1 Grad", 'Wetter', -1)
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(rows: Iterable[Mapping[str, Any]], out: IO[str]) -> int:
    """Write a header and one row per record (:func:`flat_row`, text cells through
    :func:`csv_safe`); return the rows written."""
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS))
    writer.writeheader()
    n = 0
    for row in rows:
        flat = flat_row(row)
        writer.writerow({k: csv_safe(to_jsonable(v) if isinstance(v, dt.datetime) else v)
                         for k, v in flat.items()})
        n += 1
    return n


def _arrow_schema(pa: Any) -> Any:
    types = {"string": pa.string(), "json": pa.string(), "float": pa.float64(),
             "int": pa.int64(), "timestamp": pa.timestamp("us", tz="UTC")}
    return pa.schema([(name, types[kind]) for name, kind in COLUMN_TYPES.items()]
                     + [("extra", pa.string())])


def _arrow_value(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "timestamp":
        if isinstance(value, dt.datetime):
            return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        return None
    if kind == "float":
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "int":
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
    return str(value)


def write_parquet(rows: Iterable[Mapping[str, Any]], path: str, *, batch: int) -> int:
    """Write the rows to a Parquet file in row groups of ``batch``; return the rows written.

    Raises:
        ImportError: pyarrow is not installed.
    """
    import pyarrow as pa  # optional dependency
    import pyarrow.parquet as pq

    schema = _arrow_schema(pa)
    kinds = {**COLUMN_TYPES, "extra": "string"}
    n = 0
    with pq.ParquetWriter(path, schema) as writer:
        chunk: list[dict[str, Any]] = []

        def flush() -> None:
            columns = {name: [_arrow_value(r[name], kinds[name]) for r in chunk] for name in COLUMNS}
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))
            chunk.clear()

        for row in rows:
            chunk.append(flat_row(row))
            n += 1
            if len(chunk) >= batch:
                flush()
        if chunk or n == 0:
            flush()
    return n


def make_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--since", type=parse_time, default=None,
                        help="articles first stored at or after this ISO 8601 date / time (UTC)")
    parser.add_argument("--site", default=None,
                        help="registered domain (zeit.de) or host name (www.zeit.de)")
    parser.add_argument("--format", choices=FORMATS, default="jsonl")
    parser.add_argument("--versions", action="store_true",
                        help="also the stored previous versions of the exported articles")
    parser.add_argument("-o", "--output", default="-",
                        help="file to write (default: stdout; parquet needs a file)")
    parser.add_argument("--batch", type=int, default=500, help="documents per round trip / row group")
    parser.add_argument("--uri", default="", help="MongoDB URI (default: env, else embedded store)")
    parser.add_argument("--data-dir", default=None, help="embedded store folder (default ./data)")
    parser.add_argument("--database", default=defaults.NEWSCRAWL_MONGO_DATABASE)
    return parser


def main(argv: list[str] | None = None, *, prog: str = "newscrawl export") -> int:
    """Run the command; return its exit status (0 done, 1 store / file error, 2 usage / no
    store)."""
    parser = make_parser(prog)
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error("--batch must be >= 1")
    if args.format == "parquet":
        if args.output == "-":
            parser.error("--format parquet needs -o FILE")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            print(f"{prog}: --format parquet needs pyarrow, which is not installed "
                  f"(pip install {PYARROW_PIN}; about 170 MB)", file=sys.stderr)
            return 2
    try:
        with reading_store(args.uri, args.data_dir, args.database) as (store, where), ExitStack() as files:
            rows = records(store, since=args.since, site=args.site, versions=args.versions,
                           batch=args.batch)
            if args.format == "parquet":
                n = write_parquet(rows, args.output, batch=args.batch)
            else:
                out: IO[str] = sys.stdout if args.output == "-" else files.enter_context(
                    open(args.output, "w", encoding="utf-8", newline=""))
                n = write_jsonl(rows, out) if args.format == "jsonl" else write_csv(rows, out)
                out.flush()
    except BrokenPipeError:  # `newscrawl export | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except READ_ERRORS as exc:
        return read_failure(prog, exc)
    except OSError as exc:
        print(f"{prog}: cannot write {args.output}: {exc}", file=sys.stderr)
        return 1
    target = "stdout" if args.output == "-" else args.output
    print(f"{prog}: {n} record(s) from {where} written to {target} ({args.format})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m newscrawl.export"))
