"""Extraction quality of newscrawl.algorithms.extraction against the shared corpus ground truth.

Usage (from the repository root)::

    .venv/bin/python benchmarks/extraction_quality.py [--modes default,precision,recall,fast]
        [--jobs N] [--corpus ../shared/corpus] [--limit N]
    .venv/bin/python benchmarks/extraction_quality.py --quick   # default preset, 60 pages per set

Set 04 (``04_fundus_multilingual_articles_gt``, 258 fundus golden articles): each publisher's
``<Publisher>.json`` holds entries ``V1``, ``V1_1``, ``V2`` ... in the order of the publisher's
``<Publisher>_<YYYY_MM_DD>.html.gz`` pages sorted by date (checked: equal counts for every
publisher, and each entry's body best matches its own page); ``meta.info`` gives each page's URL.
Measured per preset: title exact match (whitespace-normalised) and lenient match (case, quotes,
dashes), body token F1 against the ground-truth sections, the share of pages passing
:func:`newscrawl.algorithms.textcompare.body_matches`, published-time matches (same instant to
the second, and same UTC calendar day), authors (same list), language found, µs/page.

Set 06 (``06_trafilatura_eval``): per page, snippets that must / must not occur in the text;
reported as trafilatura's evaluation does: precision, recall, F1 and accuracy over snippets.
Pages are decoded from bytes as the crawler decodes them: a Scrapy ``HtmlResponse``
(``Content-Type: text/html``, no charset: the corpus has no headers) passed through
:class:`middlewares.charset.CharsetMiddleware`, then ``response.text`` — what the ``news`` spider
hands :func:`~newscrawl.algorithms.extraction.extract_article`, whose ``default`` preset is the
one the spider uses.

The figures of the first preset print in the ``figure <name>: <value>`` format of
``benchmarks/_targets.py`` (no targets are set for them; the README has the last full run's).
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
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

from _targets import figure  # noqa: E402
from middlewares.charset import CharsetMiddleware  # noqa: E402
from newscrawl.algorithms.charset import decode_html  # noqa: E402
from newscrawl.algorithms.extraction import MODES, extract_article, parse_datetime  # noqa: E402
from newscrawl.algorithms.textcompare import (  # noqa: E402
    body_matches,
    gt_paragraphs,
    normalize_space,
    paragraph_prefixes_found,
    title_matches,
    token_f1,
)

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
SET04 = "04_fundus_multilingual_articles_gt"
SET06 = "06_trafilatura_eval"


def _version_key(key: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", key)]


def load_set04(corpus: Path) -> list[dict[str, Any]]:
    """Ground-truth entries of set 04 with their page path and URL (see module docstring)."""
    base = corpus / SET04
    urls: dict[Path, str] = {}
    for info in base.glob("*/meta.info"):
        for name, meta in json.loads(info.read_text(encoding="utf-8")).items():
            urls[info.parent / name] = meta["url"]
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


# UTC offsets in use (quarter hours from -12:00 to +14:00).
_OFFSETS = [timedelta(minutes=15 * q) for q in range(-48, 57)]


def date_match(ours: datetime | None, gt: datetime | None) -> tuple[bool, bool]:
    """(same instant to the second, same calendar day) of our UTC value and a GT value.

    An aware GT value is compared as an instant. A naive GT value is a local wall-clock time
    whose offset fundus did not know: it matches when some real UTC offset maps our instant
    onto it (a naive midnight is a bare date: only the day is compared).
    """
    if ours is None or gt is None:
        return False, False
    ours = ours.astimezone(timezone.utc).replace(microsecond=0)
    if gt.tzinfo is not None:
        gt_utc = gt.astimezone(timezone.utc)
        return ours == gt_utc.replace(microsecond=0), ours.date() == gt_utc.date()
    gt = gt.replace(microsecond=0)
    local = [(ours + off).replace(tzinfo=None) for off in _OFFSETS]
    day = any(t.date() == gt.date() for t in local)
    if gt.hour == gt.minute == gt.second == 0:
        return day, day
    return any(t == gt for t in local), day


def crawl_text(body: bytes, url: str) -> str:
    """The text the ``news`` spider extracts from: Scrapy's decoding after the charset middleware."""
    from scrapy.http import HtmlResponse, Request

    request = Request(url)
    response = HtmlResponse(url, body=body, headers={"Content-Type": "text/html"}, request=request)
    return CharsetMiddleware(stats=None).process_response(request, response).text


def _run(html: str, url: str, variant: str, details: dict[str, Any] | None = None
         ) -> tuple[dict[str, Any], float]:
    """``variant`` is a preset name of extraction.MODES."""
    t0 = time.perf_counter()
    res = extract_article(html, url, mode=variant, _details=details)
    return res, time.perf_counter() - t0


def eval04(args: tuple[dict[str, Any], str, bool]) -> dict[str, Any]:
    item, mode, with_trafilatura_date = args
    html = crawl_text(_read(item["path"]), item["url"])
    details: dict[str, Any] = {}
    res, elapsed = _run(html, item["url"], mode, details)
    gt = item["gt"]
    body = gt.get("body") or {}
    ok, f1 = body_matches(res["text"], body)
    prefixes_ok = not paragraph_prefixes_found(res["text"], gt_paragraphs(body))
    f1_with_summary = token_f1(res["text"], "\n".join(
        gt_paragraphs(body, headlines=True, summary=True)))[2]
    gt_dt = _gt_datetime(gt.get("publishing_date"))
    ours = res["published"]
    traf_dt = None
    if with_trafilatura_date:  # trafilatura's own date (htmldate, extensive search), for comparison
        from trafilatura import extract_metadata

        traf_date = extract_metadata(html, item["url"]).date
        traf_dt = parse_datetime(traf_date) if traf_date else None
    cand = details.get("title_candidates", {})
    return {
        "path": str(item["path"]),
        "seconds": elapsed,
        "title": title_matches(res["title"], gt.get("title")),
        "title_lenient": title_matches(res["title"], gt.get("title"), lenient=True),
        "title_sources": {k: title_matches(v, gt.get("title")) for k, v in cand.items()},
        "f1": f1,
        "f1_with_summary": f1_with_summary,
        "body_ok": ok,
        "prefixes_ok": prefixes_ok,
        "has_gt_date": gt_dt is not None,
        "date_second": date_match(ours, gt_dt)[0],
        "date_day": date_match(ours, gt_dt)[1],
        "traf_date_day": date_match(traf_dt, gt_dt)[1],
        "traf_date_second": date_match(traf_dt, gt_dt)[0],
        "aware": ours is None or (ours.tzinfo is not None and ours.utcoffset().total_seconds() == 0),
        "authors": [normalize_space(a) for a in res["authors"]]
        == [normalize_space(a) for a in gt.get("authors") or []],
        "language": res["language"] is not None,
    }


def eval06(args: tuple[dict[str, Any], str]) -> dict[str, Any]:
    item, mode = args
    html = crawl_text(_read(item["path"]), item["url"])
    res, elapsed = _run(html, item["url"], mode)
    text = normalize_space(res["text"])
    gt = item["gt"]
    with_ = [s for s in gt.get("with", []) if s]
    without = [s for s in gt.get("without", []) if s]
    tp = sum(normalize_space(s) in text for s in with_)
    fp = sum(normalize_space(s) in text for s in without)
    return {"seconds": elapsed, "tp": tp, "fn": len(with_) - tp, "fp": fp,
            "tn": len(without) - fp, "empty": not text}


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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--modes", default=",".join(MODES),
                    help="comma-separated presets (keys of extraction.MODES); the first one "
                    "also gets the title-source and trafilatura-date comparisons")
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes (timings are per page either way)")
    ap.add_argument("--limit", type=int, default=0, help="pages per set (0: all)")
    ap.add_argument("--quick", action="store_true",
                    help="the default preset on the first 60 pages of each set (make bench)")
    ap.add_argument("--details", action="store_true", help="list set-04 pages failing the rule")
    ap.add_argument("--charset", action="store_true",
                    help="also time charset.detect_encoding / decode_html on every corpus page")
    args = ap.parse_args(argv)
    if not (args.corpus / SET04).is_dir():
        print(f"corpus missing: {args.corpus / SET04}", file=sys.stderr)
        return 2
    if args.quick:
        args.modes, args.limit = "default", args.limit or 60
    items04 = load_set04(args.corpus)
    items06 = load_set06(args.corpus)
    if args.limit:
        items04, items06 = items04[: args.limit], items06[: args.limit]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    run = pool.map if pool else map
    rows = []
    sources_rows = []
    for mode in modes:
        r04 = list(run(eval04, [(it, mode, mode == modes[0]) for it in items04]))
        r06 = list(run(eval06, [(it, mode) for it in items06]))
        dated = [r for r in r04 if r["has_gt_date"]]
        tp = sum(r["tp"] for r in r06)
        fn = sum(r["fn"] for r in r06)
        fp = sum(r["fp"] for r in r06)
        tn = sum(r["tn"] for r in r06)
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        secs = [r["seconds"] for r in r04 + r06]
        rows.append({
            "mode": mode,
            "title": _pct([r["title"] for r in r04]),
            "title~": _pct([r["title_lenient"] for r in r04]),
            "F1 mean": f"{statistics.fmean(r['f1'] for r in r04):.3f}",
            "F1 med": f"{statistics.median(r['f1'] for r in r04):.3f}",
            "F1+sum": f"{statistics.fmean(r['f1_with_summary'] for r in r04):.3f}",
            "F1>=.9": _pct([r["f1"] >= 0.9 for r in r04]),
            "prefix": _pct([r["prefixes_ok"] for r in r04]),
            "rule": _pct([r["body_ok"] for r in r04]),
            "date=": _pct([r["date_second"] for r in dated]),
            "day=": _pct([r["date_day"] for r in dated]),
            "authors": _pct([r["authors"] for r in r04]),
            "lang": _pct([r["language"] for r in r04]),
            "06 P": f"{prec:.3f}",
            "06 R": f"{rec:.3f}",
            "06 F1": f"{2 * prec * rec / (prec + rec) if prec + rec else 0:.3f}",
            "06 acc": f"{(tp + tn) / (tp + tn + fp + fn):.3f}",
            "ms/page": f"{1000 * statistics.fmean(secs):.1f}",
        })
        if mode == modes[0]:
            first = (r04, r06, prec, rec)
            for src in ("ld", "og", "twitter", "h1", "title"):
                sources_rows.append((src, _pct([r["title_sources"].get(src, False) for r in r04])))
            traf_day = _pct([r["traf_date_day"] for r in dated])
            traf_sec = _pct([r["traf_date_second"] for r in dated])
            aware = all(r["aware"] for r in r04)
            failing = [r for r in r04 if not r["body_ok"]]
    if pool:
        pool.shutdown()
    print(f"set 04: {len(items04)} pages ({len([1 for r in r04 if r['has_gt_date']])} with a "
          f"GT date); set 06: {len(items06)} pages; corpus {args.corpus}")
    headers = list(rows[0])
    widths = [max(len(h), *(len(str(r[h])) for r in rows)) for h in headers]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths)))
    for r in rows:
        print("  ".join(str(r[h]).rjust(w) for h, w in zip(headers, widths)))
    print(f"\ntitle source alone, site suffixes stripped ({modes[0]}): "
          + ", ".join(f"{s} {v}" for s, v in sources_rows))
    print(f"trafilatura's own date ({modes[0]}): same UTC day {traf_day}, same second {traf_sec}; "
          f"ours: every published value UTC-aware: {aware}")
    r04, r06, prec, rec = first
    dated = [r for r in r04 if r["has_gt_date"]]
    size = f"({modes[0]}; {len(r04)} set-04 pages)"
    full = not args.limit  # the README's figures are of every page
    figure(f"extraction title exact {size}", 100 * sum(r["title"] for r in r04) / len(r04), digits=1,
           note="% (README: 83.7 %)" if full else "%")
    figure(f"extraction body token F1 mean {size}", statistics.fmean(r["f1"] for r in r04),
           note="(README: 0.945)" if full else "")
    figure(f"extraction pages with F1 >= 0.9 {size}", 100 * sum(r["f1"] >= 0.9 for r in r04) / len(r04),
           digits=1, note="% (README: 87.6 %)" if full else "%")
    if dated:
        figure(f"extraction published time equal {size}",
               100 * sum(r["date_second"] for r in dated) / len(dated), digits=1,
               note="% (README: 95.7 %)" if full else "%")
    figure(f"extraction set 06 snippet precision ({modes[0]}; {len(r06)} pages)", prec,
           note="(README: 0.892)" if full else "")
    figure(f"extraction set 06 snippet recall ({modes[0]}; {len(r06)} pages)", rec,
           note="(README: 0.934)" if full else "")
    if args.charset:
        charset_timing(args.corpus)
    if args.details:
        print(f"\nset-04 pages failing body_matches ({modes[0]}):")
        for r in sorted(failing, key=lambda r: r["f1"]):
            print(f"  F1 {r['f1']:.3f} prefixes {'ok' if r['prefixes_ok'] else 'MISSING'}  "
                  f"{Path(r['path']).relative_to(args.corpus)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
