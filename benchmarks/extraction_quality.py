"""Extraction quality of the crawl path against the shared corpus ground truth.

Usage (from the repository root)::

    .venv/bin/python benchmarks/extraction_quality.py [--jobs N] [--corpus ../shared/corpus]
        [--limit N] [--mode default] [--details] [--charset] [--dump rows.json]
    .venv/bin/python benchmarks/extraction_quality.py --quick   # make bench: a sample of each set

What is measured is the crawl path's own objects: the raw page bytes go into a Scrapy
``HtmlResponse`` (``Content-Type: text/html``, no charset: the corpus has no headers), through
:class:`middlewares.charset.CharsetMiddleware`, and ``response.text`` into
:func:`newscrawl.algorithms.extraction.extract_article` with the time the crawl fetched the page
where the set records it (set 04's ``crawl_date``). Next to it, on the same bytes:
*trafilatura alone* (``trafilatura.bare_extraction`` of the raw bytes, its own decoding and
metadata, htmldate's extensive search included) and *htmldate alone* (``htmldate.find_date`` of
the raw bytes, ``extensive_search=True, original_date=True``).

Sets (ground truth read in place, never copied):

* 04 ``04_fundus_multilingual_articles_gt``: 258 fundus pages; title, body sections,
  ``publishing_date``; body = token F1 against the sections' paragraphs.
* 06 ``06_trafilatura_eval``: 131 pages; snippets that must / must not be in the text
  (body = snippet F1 pooled over the set, as trafilatura's evaluation does), title, date.
* 08 ``08_newspaper4k_testdata``: the article pages with ``metadata/*.json`` (title,
  ``publish_date``) and ``txt/*.txt`` (body); ``test_urls_pubdate.txt`` labels whether a URL
  carries its date (checked against the resolver's URL reading).
* 12 ``12_zh-content-extraction_gbk_raw``: raw GBK / UTF-8 Chinese pages (the corpus wrapper
  line removed), ``cleaned/`` body, ``date/`` publication time (year-only labels skipped).

Dates: *same day* compares the day as the page states it. A ground-truth value with a UTC offset
is compared in that offset (a date-only answer by its date); a value without offset is the local
wall clock of the page, compared with the local date of our answer (the offset the page gave),
or matched when some real UTC offset maps our instant onto it to the minute. *Wrong* = a date
given that is not the same day; *missing* = no date. Rates are over the pages with a day-precise
ground-truth date, except a ground-truth date more than one day after the set's own fetch time
of the page (set 04's ``crawl_date``): no page states a publication after it was fetched (two
fundus labels read ``05.04.2025`` month first), so these are listed and not scored.

Charset: every page of set 12 and of set 06's ``eval_selected/`` is decoded by the crawl path
with no HTTP charset and with each wrong one of ``iso-8859-1``, ``windows-1251``, ``utf-8``,
``gbk``; a page fails when its text holds more U+FFFD than the right decoding or misses a
ground-truth probe (non-ASCII snippets of 06, lines of 12's ``cleaned/``) that the right decoding
shows. The right decoding is the one of several candidate codecs that shows the most probes
(a benchmark oracle from the ground truth, never used by the product).

Feed dates (set 14 ``14_feeds_sitemaps``): every feed and Google News sitemap of the set is read
with the crawl path's parsers (:func:`newscrawl.algorithms.feeds.parse_feed`,
:func:`~newscrawl.algorithms.feeds.parse_sitemap`). *Date accuracy on articles with feed dates*:
the corpus articles of sets 04/06/08/12 whose URL (canonical, scheme and ``www.`` ignored) is an
entry with a date are extracted again with the entry's date passed to the date resolver
(``feed_date`` / ``sitemap_date``) and compared with the ground truth as above; the feed date
alone (the entry's UTC instant, as the parser gives it) is scored too. The shipped corpus has no such article (its feeds and articles come from
different years), so this prints ``0 articles`` until one is added. Next to it, on set 14 itself:
how often an entry's date names the day its own URL carries (``/2020/04/23/``): the publisher's
record of the day, a proxy ground truth that shows feeds re-dating old stories (rule 3 of
:mod:`newscrawl.algorithms.pubdate`).

Targets print as ``target <name>: <value> <op> <threshold>: met|NOT met`` (``benchmarks/_targets.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from _targets import figure, target  # noqa: E402
from middlewares.charset import CharsetMiddleware  # noqa: E402
from newscrawl.algorithms.charset import decode_html  # noqa: E402
from newscrawl.algorithms.extraction import MODES, extract_article, parse_datetime  # noqa: E402
from newscrawl.algorithms.pagekind import index_kind, page_kind  # noqa: E402
from newscrawl.algorithms.textcompare import (  # noqa: E402
    body_matches,
    normalize_space,
    title_matches,
    token_f1,
)

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
SET04 = "04_fundus_multilingual_articles_gt"
SET06 = "06_trafilatura_eval"
SET08 = "08_newspaper4k_testdata"
SET12 = "12_zh-content-extraction_gbk_raw"
SET14 = "14_feeds_sitemaps"
TOOLS = ("newscrawl", "trafilatura", "htmldate")
WRONG_HEADERS = ("", "iso-8859-1", "windows-1251", "utf-8", "gbk")
ORACLE_CODECS = ("utf-8", "gb18030", "cp1252", "cp1251", "koi8_r", "cp932", "euc_jp", "cp949",
                 "big5hkscs")


def _version_key(key: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", key)]


def load_set04(corpus: Path) -> list[dict[str, Any]]:
    """Ground-truth entries of set 04 with their page path and URL (see module docstring)."""
    base = corpus / SET04
    urls: dict[Path, str] = {}
    crawled: dict[Path, str] = {}
    for info in base.glob("*/meta.info"):
        for name, meta in json.loads(info.read_text(encoding="utf-8")).items():
            urls[info.parent / name] = meta["url"]
            crawled[info.parent / name] = meta.get("crawl_date") or ""
    items = []
    for gt_file in sorted(base.glob("*/*.json")):
        publisher = gt_file.stem
        pattern = re.compile(re.escape(publisher) + r"_\d{4}_\d\d_\d\d\.html\.gz")
        pages = sorted(p for p in gt_file.parent.glob(f"{publisher}_*.html.gz")
                       if pattern.fullmatch(p.name))
        entries = json.loads(gt_file.read_text(encoding="utf-8"))
        keys = sorted(entries, key=_version_key)
        if len(keys) != len(pages):
            raise SystemExit(f"{gt_file}: {len(keys)} entries but {len(pages)} pages")
        for key, page in zip(keys, pages):
            items.append({"path": page, "url": urls.get(page, ""), "key": key,
                          "crawl_date": crawled.get(page, ""),
                          "gt": entries[key], "country": gt_file.parent.name})
    return items


def load_set06(corpus: Path) -> list[dict[str, Any]]:
    base = corpus / SET06
    data = json.loads((base / "evaldata.json").read_text(encoding="utf-8"))
    files = {p.name: p for d in ("cache", "eval_selected") for p in (base / d).glob("*.html")}
    return [{"path": files[v["file"]], "url": url, "gt": v}
            for url, v in data.items() if v.get("file") in files]


def _read(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def _gt_datetime(value: str | None) -> datetime | None:
    """Ground-truth publishing date; naive values (no offset) keep no tzinfo."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return parse_datetime(value)


def load_set08(corpus: Path) -> list[dict[str, Any]]:
    """Article pages of set 08 that have ``metadata/<name>.json``."""
    base = corpus / SET08
    items = []
    for meta_file in sorted((base / "metadata").glob("*.json")):
        page = base / "html" / f"{meta_file.stem}.html"
        if not page.is_file():
            continue
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        txt = base / "txt" / f"{meta_file.stem}.txt"
        body = txt.read_text(encoding="utf-8") if txt.is_file() else (meta.get("text") or "")
        when = meta.get("publish_date")
        items.append({"set": "08", "path": page, "url": meta.get("url") or "",
                      "title": meta.get("title") or None, "body": body,
                      "date": None if when in (None, "None", "") else when})
    return items


def load_set12(corpus: Path) -> list[dict[str, Any]]:
    base = corpus / SET12
    urls = {}
    for line in (base / "url_map.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        parts = line.split("\t")
        if len(parts) >= 2:
            urls[parts[0]] = parts[1] if "://" in parts[1] else ""
    items = []
    for page in sorted((base / "original").glob("*.html")):
        stem = page.stem
        cleaned = base / "cleaned" / f"{stem}.txt"
        when_file = base / "date" / f"{stem}.txt"
        when = when_file.read_text(encoding="utf-8", errors="replace").strip() if when_file.is_file() else ""
        items.append({"set": "12", "path": page, "url": urls.get(f"original/{page.name}", ""),
                      "title": None,
                      "body": cleaned.read_text(encoding="utf-8", errors="replace")
                      if cleaned.is_file() else "",
                      "date": when if re.match(r"^\d{4}-\d{1,2}-\d{1,2}", when) else None})
    return items


def article_url_labels(corpus: Path) -> list[tuple[bool, str]]:
    """(URL is an article, URL) of set 08's ``test_urls.txt``."""
    path = corpus / SET08 / "test_urls.txt"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        label, _, url = line.strip().partition(" ")
        if url:
            out.append((label == "1", url.strip()))
    return out


def pubdate_url_labels(corpus: Path) -> list[tuple[bool, str]]:
    """(URL carries its date, URL) of set 08's ``test_urls_pubdate.txt``."""
    path = corpus / SET08 / "test_urls_pubdate.txt"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        label, _, url = line.strip().partition(" ")
        if url:
            out.append((label == "1", url.strip()))
    return out


def all_items(corpus: Path) -> dict[str, list[dict[str, Any]]]:
    items04 = [{"set": "04", "path": it["path"], "url": it["url"], "title": it["gt"].get("title"),
                "body04": it["gt"].get("body") or {}, "date": it["gt"].get("publishing_date"),
                "fetched_at": it.get("crawl_date")} for it in load_set04(corpus)]
    items06 = [{"set": "06", "path": it["path"], "url": it["url"], "title": it["gt"].get("title"),
                "with": [s for s in it["gt"].get("with", []) if s],
                "without": [s for s in it["gt"].get("without", []) if s],
                "date": it["gt"].get("date")} for it in load_set06(corpus)]
    return {"04": items04, "06": items06, "08": load_set08(corpus), "12": load_set12(corpus)}


def _read(path: Path) -> bytes:
    raw = path.read_bytes()
    raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
    if raw.startswith(b"<text id="):  # set 12 corpus wrapper line, not part of the page
        raw = raw.split(b"\n", 1)[1] if b"\n" in raw else b""
    return raw


def _gt_when(value: str | None) -> tuple[datetime | None, bool]:
    """(ground-truth value, date only) — naive values keep no tzinfo."""
    if not value:
        return None, False
    text = str(value).strip()
    m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
    if m:
        return datetime(int(m[1]), int(m[2]), int(m[3])), True
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        try:
            from dateutil import parser as du_parser

            dt = du_parser.parse(text)
        except (ValueError, OverflowError):
            return None, False
    only = dt.tzinfo is None and dt.hour == dt.minute == dt.second == 0
    return dt, only


_OFFSETS = [timedelta(minutes=15 * q) for q in range(-48, 57)]


def same_day(value: datetime | date | None, gt: datetime | None, *, value_date_only: bool) -> bool:
    """Does ``value`` name the day ``gt`` names (see the module docstring)?

    ``value``: an aware datetime in the offset the page gave, a naive local datetime, or a date
    (``value_date_only``).
    """
    if value is None or gt is None:
        return False
    if value_date_only or not isinstance(value, datetime):
        day = value.date() if isinstance(value, datetime) else value
        return day == gt.date()
    if gt.tzinfo is not None:
        if value.tzinfo is None:
            return value.date() == gt.date()
        return value.astimezone(gt.tzinfo).date() == gt.date()
    if value.date() == gt.date():
        return True
    if value.tzinfo is None or gt.hour == gt.minute == 0:
        return False
    instant = value.astimezone(timezone.utc).replace(second=0, microsecond=0, tzinfo=None)
    wall = gt.replace(second=0, microsecond=0)
    return any(instant + off == wall for off in _OFFSETS)


def crawl_text(body: bytes, url: str, content_type: str = "text/html") -> str:
    """The text the ``news`` spider extracts from: Scrapy's decoding after the charset middleware."""
    from scrapy.http import HtmlResponse, Request

    request = Request(url if url.startswith(("http://", "https://")) else "http://example.invalid/")
    response = HtmlResponse(request.url, body=body, headers={"Content-Type": content_type},
                            request=request)
    return CharsetMiddleware(stats=None).process_response(request, response).text


def _fetched_at(value: Any) -> datetime | None:
    if not value:
        return None
    dt = parse_datetime(str(value))  # fundus crawl_date: naive UTC
    return dt


def run_newscrawl(raw: bytes, item: dict[str, Any], mode: str) -> dict[str, Any]:
    html = crawl_text(raw, item["url"])
    details: dict[str, Any] = {}
    res = extract_article(html, item["url"], mode=mode, fetched_at=_fetched_at(item.get("fetched_at")),
                          _details=details)
    local = details.get("published_local", res["published"])
    kind = page_kind(item["url"], title=res["title"], text=res["text"],
                     article_markup=bool(details.get("article_markup")))
    return {"text": res["text"], "title": res["title"], "date": local,
            "date_only": bool(details.get("published_date_only")),
            "source": res.get("published_source"), "kind": kind}


def run_trafilatura(raw: bytes, item: dict[str, Any]) -> dict[str, Any]:
    from trafilatura import bare_extraction

    try:
        doc = bare_extraction(raw, url=item["url"] or None, with_metadata=True)
    except Exception:  # noqa: BLE001 - a failure of the library is its result
        doc = None
    if doc is None:
        return {"text": "", "title": None, "date": None, "date_only": True}
    d = doc if isinstance(doc, dict) else doc.as_dict()
    return {"text": d.get("text") or "", "title": d.get("title"), "date": _ymd(d.get("date")),
            "date_only": True}


def run_htmldate(raw: bytes, item: dict[str, Any]) -> dict[str, Any]:
    from htmldate import find_date

    try:
        found = find_date(raw, url=item["url"] or None, extensive_search=True, original_date=True)
    except Exception:  # noqa: BLE001
        found = None
    return {"text": None, "title": None, "date": _ymd(found), "date_only": True}


def _ymd(value: Any) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _body_score(item: dict[str, Any], text: str) -> dict[str, float]:
    if item["set"] == "04":
        return {"f1": body_matches(text, item["body04"])[1]}
    if item["set"] == "06":
        norm = normalize_space(text)
        tp = sum(normalize_space(s) in norm for s in item["with"])
        fp = sum(normalize_space(s) in norm for s in item["without"])
        return {"tp": tp, "fn": len(item["with"]) - tp, "fp": fp}
    return {"f1": token_f1(text, item["body"])[2]}


def evaluate(args: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """Every tool on one page: {tool: {body..., title, day, wrong, seconds}}."""
    item, mode = args
    raw = _read(item["path"])
    gt_date, _gt_only = _gt_when(item.get("date"))
    fetched = _fetched_at(item.get("fetched_at"))
    impossible = (gt_date is not None and fetched is not None
                  and gt_date.date() > fetched.date() + timedelta(days=1))
    out: dict[str, Any] = {"path": str(item["path"]), "set": item["set"],
                           "has_date": gt_date is not None and not impossible,
                           "gt_after_fetch": impossible, "has_title": bool(item.get("title"))}
    for tool in TOOLS:
        t0 = time.perf_counter()
        if tool == "newscrawl":
            res = run_newscrawl(raw, item, mode)
        elif tool == "trafilatura":
            res = run_trafilatura(raw, item)
        else:
            res = run_htmldate(raw, item)
        row: dict[str, Any] = {"seconds": time.perf_counter() - t0}
        if res["text"] is not None:
            row.update(_body_score(item, res["text"]))
            row["title"] = title_matches(res["title"], item.get("title")) if item.get("title") else None
        ok = same_day(res["date"], gt_date, value_date_only=res["date_only"])
        row["day"] = ok
        row["wrong"] = res["date"] is not None and not ok
        row["given"] = str(res["date"]) if res["date"] is not None else None
        row["source"] = res.get("source")
        if tool == "newscrawl":
            row["kind"] = res.get("kind")
        out[tool] = row
    out["gt_date"] = item.get("date")
    return out


def _set_summary(rows: list[dict[str, Any]], tool: str) -> dict[str, float]:
    dated = [r for r in rows if r["has_date"]]
    titled = [r for r in rows if r["has_title"] and r[tool].get("title") is not None]
    out = {"pages": len(rows), "dated": len(dated)}
    if dated:
        out["day"] = sum(r[tool]["day"] for r in dated) / len(dated)
        out["wrong"] = sum(r[tool]["wrong"] for r in dated) / len(dated)
        out["missing"] = sum(r[tool]["given"] is None for r in dated) / len(dated)
    if rows and "tp" in rows[0][tool]:
        tp = sum(r[tool]["tp"] for r in rows)
        fp = sum(r[tool]["fp"] for r in rows)
        fn = sum(r[tool]["fn"] for r in rows)
        p = tp / (tp + fp) if tp + fp else 0.0
        rc = tp / (tp + fn) if tp + fn else 0.0
        out["f1"] = 2 * p * rc / (p + rc) if p + rc else 0.0
    elif rows and "f1" in rows[0][tool]:
        out["f1"] = statistics.fmean(r[tool]["f1"] for r in rows)
    if titled:
        out["title"] = sum(r[tool]["title"] for r in titled) / len(titled)
    out["ms"] = 1000 * statistics.fmean(r[tool]["seconds"] for r in rows) if rows else 0.0
    return out


# --- charset -----------------------------------------------------------------------------------


def _page_text(html: str) -> str:
    from lxml import html as lxml_html

    try:
        tree = lxml_html.document_fromstring(html.replace("\x00", ""))
    except Exception:  # noqa: BLE001
        return normalize_space(html)
    for bad in tree.xpath("//script|//style"):
        bad.drop_tree()
    return normalize_space(tree.text_content())


def _probes(item: dict[str, Any]) -> list[str]:
    if item["set"] == "06":
        cands = item["with"]
    else:
        cands = [line[:16] for line in item["body"].splitlines()]
    out = []
    for s in cands:
        s = normalize_space(s)
        if any(ord(c) > 127 for c in s):
            out.append(s)
    return out[:8]


def charset_check(item: dict[str, Any]) -> dict[str, Any]:
    """Failures of the crawl path's decoding of one page under each header of WRONG_HEADERS."""
    raw = _read(item["path"])
    probes = _probes(item)
    best = None
    for codec in ORACLE_CODECS:
        text = raw.decode(codec, "replace")
        page = _page_text(text)
        found = [p for p in probes if p in page]
        key = (len(found), -page.count("\ufffd"))
        if best is None or key > best[0]:
            best = (key, codec, found, page.count("\ufffd"))
    assert best is not None
    _key, codec, valid, fffd = best
    fails = {}
    for header in WRONG_HEADERS:
        ctype = "text/html" + (f"; charset={header}" if header else "")
        text = crawl_text(raw, item["url"], ctype)
        page = _page_text(text)
        missing = [p for p in valid if p not in page]
        extra = page.count("\ufffd") - fffd
        if missing or extra > 0:
            fails[header or "none"] = f"{len(missing)} probes missing, {max(extra, 0)} extra U+FFFD"
    return {"path": str(item["path"]), "truth": codec, "probes": len(valid), "fails": fails}


def charset_timing(corpus: Path, repeat: int = 5) -> None:
    """µs/page of detect_encoding and decode_html (best of ``repeat``) on every corpus page."""
    from newscrawl.algorithms.charset import detect_encoding

    pages = []
    for path in sorted(corpus.rglob("*")):
        if path.suffix in (".html", ".htm", ".shtml") or path.name.endswith(".html.gz"):
            body = _read(path)
            if body.startswith(b"<text id="):  # set 12 corpus wrapper line
                body = body.split(b"\n", 1)[1] if b"\n" in body else b""
            pages.append((path, body))
    by_encoding: dict[str, list[float]] = {}
    detect_all, decode_all = [], []
    for path, body in pages:
        best_detect = min(_timed(detect_encoding, body) for _ in range(repeat))
        best_decode = min(_timed(decode_html, body) for _ in range(repeat))
        enc = detect_encoding(body, http_charset=None)
        by_encoding.setdefault(enc, []).append(best_detect)
        detect_all.append(best_detect)
        decode_all.append(best_decode)
    size = sum(len(b) for _, b in pages) / len(pages)
    print(f"\ncharset on {len(pages)} corpus pages (mean {size / 1024:.0f} KiB, http_charset=None, "
          f"best of {repeat}): detect_encoding mean {1e6 * statistics.fmean(detect_all):.0f} µs, "
          f"median {1e6 * statistics.median(detect_all):.0f} µs, max {1e6 * max(detect_all):.0f} µs; "
          f"decode_html mean {1e6 * statistics.fmean(decode_all):.0f} µs")
    for enc, times in sorted(by_encoding.items(), key=lambda kv: -len(kv[1])):
        print(f"  {enc:8s} {len(times):4d} pages  detect mean {1e6 * statistics.fmean(times):6.0f} µs"
              f"  median {1e6 * statistics.median(times):6.0f} µs")


def _timed(fn: Any, body: bytes) -> float:
    t0 = time.perf_counter()
    fn(body, http_charset=None)
    return time.perf_counter() - t0


def _pct(values: list[bool]) -> str:
    return f"{100 * sum(values) / len(values):5.1f}%" if values else "  n/a"


def _sample(items: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` items spread evenly over the list (every publisher / site kind gets a share)."""
    if not n or len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--mode", default="default", choices=sorted(MODES),
                    help="newscrawl's trafilatura preset (extraction.MODES)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--limit", type=int, default=0, help="pages per set, spread evenly (0: all)")
    ap.add_argument("--quick", action="store_true",
                    help="30 pages of each set, spread evenly (make bench)")
    ap.add_argument("--sets", default="04,06,08,12")
    ap.add_argument("--details", action="store_true", help="list the pages with a wrong or missing date")
    ap.add_argument("--dump", type=Path, default=None,
                    help="write every page's scores of every tool to this JSON file (per-page diffs)")
    ap.add_argument("--charset", action="store_true",
                    help="also time charset.detect_encoding / decode_html on every corpus page")
    args = ap.parse_args(argv)
    if not (args.corpus / SET04).is_dir():
        print(f"corpus missing: {args.corpus / SET04}", file=sys.stderr)
        return 2
    if args.quick:
        args.limit = args.limit or 30
    wanted = [s.strip() for s in args.sets.split(",") if s.strip()]
    sets = {k: _sample(v, args.limit) for k, v in all_items(args.corpus).items() if k in wanted}
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    run = pool.map if pool else map
    results: dict[str, list[dict[str, Any]]] = {}
    for name, items in sets.items():
        results[name] = list(run(evaluate, [(it, args.mode) for it in items]))
    every = all_items(args.corpus)
    charset_items = [it for k in ("06", "12") if k in wanted for it in every[k]
                     if k == "12" or "eval_selected" in str(it["path"])]
    checks = list(run(charset_check, charset_items))
    if pool:
        pool.shutdown()

    print(f"corpus {args.corpus}; newscrawl preset {args.mode}; "
          + ", ".join(f"set {k}: {len(v)} pages ({sum(r['has_date'] for r in v)} with a day-precise date)"
                      for k, v in results.items()))
    header = f"{'set':4s} {'tool':12s} {'body F1':>8s} {'title':>6s} {'day=':>6s} {'wrong':>6s} {'missing':>7s} {'ms/page':>8s}"
    print(header)
    summaries: dict[tuple[str, str], dict[str, float]] = {}
    all_rows = [r for rows in results.values() for r in rows]
    for name in [*results, "all"]:
        rows = all_rows if name == "all" else results[name]
        for tool in TOOLS:
            s = _set_summary(rows, tool) if name != "all" else _overall(results, tool)
            summaries[(name, tool)] = s
            print(f"{name:4s} {tool:12s} {_fmt(s.get('f1'), 3):>8s} {_fmt(s.get('title')):>6s} "
                  f"{_fmt(s.get('day')):>6s} {_fmt(s.get('wrong')):>6s} {_fmt(s.get('missing')):>7s} "
                  f"{s['ms']:8.1f}")
    src_counts: dict[str, int] = {}
    for r in all_rows:
        key = r["newscrawl"].get("source") or "none"
        src_counts[key] = src_counts.get(key, 0) + 1
    print("newscrawl published_source: " + ", ".join(f"{k} {v}" for k, v in sorted(src_counts.items())))

    size = "quick" if args.limit else "full"
    for name in results:
        ours = summaries[(name, "newscrawl")]
        if "day" in ours:
            best = max(summaries[(name, t)].get("day", 0.0) for t in ("trafilatura", "htmldate"))
            if name in ("04", "06", "08"):
                target(f"extraction_quality date same-day set {name} ({size})", ours["day"], ">=", 0.90)
            target(f"extraction_quality date same-day set {name} minus best of trafilatura/htmldate "
                   f"({size})", ours["day"] - best, ">=", 0.0)
        if "f1" in ours:
            target(f"extraction_quality body F1 set {name} ({size})", ours["f1"], ">=", 0.96, digits=3)
            target(f"extraction_quality body F1 set {name} minus trafilatura alone ({size})",
                   ours["f1"] - summaries[(name, "trafilatura")]["f1"], ">=", 0.0, digits=3)
        if "title" in ours:
            figure(f"extraction_quality title exact set {name} ({size})", ours["title"],
                   note=f"(trafilatura alone {summaries[(name, 'trafilatura')].get('title', 0):.3f})")
    overall = summaries[("all", "newscrawl")]
    if "wrong" in overall:
        target(f"extraction_quality wrong dates, all sets ({size})", overall["wrong"], "<=", 0.03, digits=3)
    # Page kinds (newscrawl/algorithms/pagekind.py): every page of these sets is an article, so
    # each kind given is a false positive (an article the crawl would store as a node).
    kinded = [r for r in all_rows if r["newscrawl"].get("kind")]
    target(f"extraction_quality article pages given a non-article page kind, all sets ({size})",
           len(kinded), "<=", 0)
    for r in kinded:
        print(f"  kind {r['newscrawl']['kind']} on article {r['set']} {Path(r['path']).name}")
    if (args.corpus / SET08 / "test_urls.txt").is_file():
        url_labels = article_url_labels(args.corpus)
        wrong = [u for lab, u in url_labels if lab and index_kind(u)]
        flagged = [f"{index_kind(u)} {u}" for lab, u in url_labels if not lab and index_kind(u)]
        target("extraction_quality article URLs of set 08 test_urls.txt named an index page",
               len(wrong), "<=", 0)
        figure("extraction_quality non-article URLs of set 08 test_urls.txt named an index page "
               "(the rest are other pages: home, sections, service)",
               f"{len(flagged)}/{sum(not lab for lab, _ in url_labels)}")
        for u in wrong + flagged:
            print(f"  index_kind {u}")
    labels = pubdate_url_labels(args.corpus)
    if labels:
        from newscrawl.algorithms.pubdate import date_from_url

        agree = sum((date_from_url(u) is not None) == lab for lab, u in labels)
        figure("extraction_quality URL date labels of test_urls_pubdate.txt", f"{agree}/{len(labels)}")
    if (args.corpus / SET14).is_dir():
        feed_date_figures(args.corpus, every, args.mode)
    if checks:
        failing = [c for c in checks if c["fails"]]
        target(f"extraction_quality charset pages with U+FFFD or mojibake ({len(checks)} pages of sets "
               f"12 and 06/eval_selected x {len(WRONG_HEADERS)} headers)", len(failing), "<=", 0)
        for c in failing:
            print(f"  charset {Path(c['path']).name} (right: {c['truth']}, {c['probes']} probes): {c['fails']}")
    after = [r for r in all_rows if r.get("gt_after_fetch")]
    if after:
        figure("extraction_quality ground-truth dates after the page was fetched (not scored)", len(after))
        for r in after:
            print(f"  gt {r['gt_date']} after fetch: ours {r['newscrawl']['given']} traf "
                  f"{r['trafilatura']['given']} htmldate {r['htmldate']['given']}  {Path(r['path']).name}")
    if args.details:
        for name, rows in results.items():
            for r in rows:
                if r["has_date"] and not r["newscrawl"]["day"]:
                    print(f"  date {name} gt {r['gt_date']!s:26s} ours {r['newscrawl']['given']!s:26s} "
                          f"({r['newscrawl']['source']}) traf {r['trafilatura']['given']} "
                          f"htmldate {r['htmldate']['given']}  {Path(r['path']).name}")
    if args.dump:
        args.dump.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    if args.charset:
        charset_timing(args.corpus)
    return 0


def _url_key(url: str) -> str:
    """Canonical URL without scheme and ``www.``: one article served over http and https."""
    from newscrawl.algorithms.urls import canonicalize_url

    rest = canonicalize_url(url or "").split("://", 1)[-1]
    return rest[4:] if rest.startswith("www.") else rest


def feed_dates(corpus: Path) -> list[dict[str, Any]]:
    """Every dated entry of set 14's feeds and news sitemaps: {url, link, kind, raw, when, file}.

    Read with the crawl path's own parsers; sitemaps without the Google News namespace are not
    read (they give no publication date).
    """
    from newscrawl.algorithms.feeds import parse_feed, parse_sitemap, sniff_kind

    out: list[dict[str, Any]] = []
    base = corpus / SET14
    for path in sorted(base.rglob("*")):
        if not path.is_file() or path.name in ("url_map.tsv", "captures.tsv") or path.suffix in (
                ".txt", ".md", ".tsv") or path.name.startswith(("LICENSE", "NOTICE", "COPYING")):
            continue
        body = path.read_bytes()
        kind = sniff_kind(body)
        name = str(path.relative_to(base))
        if kind in ("rss", "atom"):
            for e in parse_feed(body, "https://feed.invalid/").entries:
                if e.published is not None:
                    out.append({"url": e.url, "link": e.link, "kind": "feed", "raw": e.published_raw,
                                "when": e.published, "file": name})
        elif kind == "sitemap" and b"sitemap-news" in body[:4096]:
            for s in parse_sitemap(body, "https://feed.invalid/"):
                if s.news_publication_date is not None:
                    out.append({"url": s.url, "link": s.url, "kind": "sitemap",
                                "raw": s.news_publication_raw, "when": s.news_publication_date,
                                "file": name})
    return out


def feed_date_figures(corpus: Path, items: dict[str, list[dict[str, Any]]], mode: str) -> None:
    """Print the feed-date figures (see the module docstring)."""
    from newscrawl.algorithms.pubdate import date_from_url

    entries = feed_dates(corpus)
    index: dict[str, dict[str, Any]] = {}
    for e in entries:
        for u in (e["url"], e["link"]):
            index.setdefault(_url_key(u), e)
    every = [it for rows in items.values() for it in rows]
    matched = [(it, index[_url_key(it["url"])]) for it in every
               if it.get("url") and _url_key(it["url"]) in index]
    dated = [(it, e) for it, e in matched if _gt_when(it.get("date"))[0] is not None]
    with_feed: list[bool] = []
    feed_alone: list[bool] = []
    for it, e in dated:
        gt, _only = _gt_when(it.get("date"))
        html = crawl_text(_read(it["path"]), it["url"])
        details: dict[str, Any] = {}
        dates = {"feed_date": e["raw"]} if e["kind"] == "feed" else {"sitemap_date": e["raw"]}
        res = extract_article(html, it["url"], mode=mode, fetched_at=_fetched_at(it.get("fetched_at")),
                              _details=details, **dates)
        local = details.get("published_local", res["published"])
        with_feed.append(same_day(local, gt, value_date_only=bool(details.get("published_date_only"))))
        feed_alone.append(same_day(e["when"], gt, value_date_only=False))
    feeds = len({e["file"] for e in entries})
    if dated:
        figure("extraction_quality date same-day on corpus articles with a feed date",
               f"{sum(with_feed)}/{len(dated)}",
               note=f"(feed date alone {sum(feed_alone)}/{len(dated)}; {len(entries)} dated "
                    f"entries of {feeds} set-14 files)")
    else:
        figure("extraction_quality date same-day on corpus articles with a feed date",
               "0 articles", note=f"(none of the {len(every)} corpus articles of sets "
               f"{'/'.join(items)} is among the {len(entries)} dated entries of {feeds} set-14 "
               f"feeds and news sitemaps)")
    # proxy ground truth on set 14 itself: the day the entry's own URL carries
    same = near = later = earlier = 0
    for e in entries:
        day = date_from_url(e["url"])
        if day is None:
            continue
        diff = (e["when"].date() - day).days
        same += diff == 0
        near += abs(diff) == 1
        later += diff > 1
        earlier += diff < -1
    total = same + near + later + earlier
    if total:
        figure("extraction_quality feed date vs the day in the entry's URL (set 14)",
               f"{same}/{total} same day",
               note=f"({near} one day apart (UTC vs local day), {later} later by more than a day "
                    f"(re-dated: the resolver takes the URL's day), {earlier} earlier)")


def _overall(results: dict[str, list[dict[str, Any]]], tool: str) -> dict[str, float]:
    """Dates over every dated page; body F1 and title as the mean of the sets' figures."""
    rows = [r for v in results.values() for r in v]
    base = _set_summary([{**r, tool: {k: v for k, v in r[tool].items() if k not in ("tp", "fp", "fn", "f1")}}
                         for r in rows], tool)
    per_set = [_set_summary(v, tool) for v in results.values() if v]
    f1s = [s["f1"] for s in per_set if "f1" in s]
    if f1s:
        base["f1"] = statistics.fmean(f1s)
    return base


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


if __name__ == "__main__":
    raise SystemExit(main())
