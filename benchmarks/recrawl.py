"""First crawl vs incremental re-crawl of an unchanged generated news site.

Usage (from the repository root)::

    .venv/bin/python benchmarks/recrawl.py               # >= 5,000 pages
    .venv/bin/python benchmarks/recrawl.py --quick       # ~1,000 pages, smoke run
    .venv/bin/python benchmarks/recrawl.py --pages 20000 --keep /tmp/recrawl   # keeps site, data, logs

The site is the static news site of ``benchmarks/crawl_throughput.py`` (home page, ten channels
with paginated indexes, articles of 3-6 KB of text, deterministic from ``--seed``), served by
Twisted's static ``File`` resource in a subprocess on 127.0.0.1 (it answers HEAD, sends
``Last-Modified`` and ``Content-Length``, and answers conditional GETs with 304).

Two ``scrapy crawl news`` runs with the project's settings, one data folder (the embedded
SecantusDB store, started beforehand with ``python -m newscrawl.embedded start`` so its start-up
is in neither run; ``--no-prestart`` puts it back):

1. *first crawl* (``-a now=2024-10-01T20:00:00Z``): every page is new: GET, extraction, link
   classification, storage of pages, links and crawl state, PageRank;
2. *re-crawl* (``-a now=`` 30 days later, so every known page is due and must be checked; the
   files are untouched): seeds and known pages are checked with HEAD, nothing has changed, so no
   page body is fetched again but the verification sample's (``NEWSCRAWL_HEADPROBE_VERIFY_*``:
   at the defaults about 6 GETs per host plus 1 % of its pages); the crawl state records one unchanged visit per page.

Measured per run: wall time of the subprocess (interpreter start to exit) and the bytes received
(Scrapy's ``downloader/response_bytes``: status lines, headers and bodies). The ratios:
``speedup = first wall / re-crawl wall`` (target >= 5) and ``bytes_ratio = re-crawl bytes / first
bytes`` (target <= 0.05). Both runs must visit the same pages (checked: pages fetched in run 1 =
pages checked in run 2). The re-crawl's time after "Closing spider" (the end-of-run work: crawl
state, PageRank, eviction; log times to the millisecond) is at most 10 % of its wall time. It is
printed in two parts: until "Spider closed" (the components' end-of-run work) and from there to
the exit (process shutdown: thread joins, ``atexit``, the teardown of every imported module,
which grows with the libraries loaded; e.g. ``datasketch`` loads ``scipy``).

``--floor`` also times a bare Scrapy spider (``benchmarks/_head_spider.py``: Scrapy's engine and
downloader with the project's concurrency, none of newscrawl's components) sending one HEAD to
each page the re-crawl checked, and prints the re-crawl's wall time against it: what one Scrapy
request per page costs on this machine, the floor of any re-crawl that checks every page with a
request of its own.

Targets in the format of ``benchmarks/_targets.py``; last line:
``recrawl speedup: X.X bytes_ratio: X.XXX``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "benchmarks"
sys.path.insert(0, str(BENCH_DIR))

from _targets import target  # noqa: E402
from crawl_throughput import StaticServer, generate_site  # noqa: E402

FIRST_AT = "2024-10-01T20:00:00Z"
AGAIN_AT = "2024-10-31T20:00:00Z"
STAT = re.compile(r"'([^']+)': (\d+)[,}]")
#: Log lines carry the epoch time to the millisecond (for the time after "Closing spider").
LOG_FORMAT = "%(created).3f [%(name)s] %(levelname)s: %(message)s"
CLOSING = re.compile(r"^(\d+\.\d+) \[scrapy\.core\.engine\] INFO: Closing spider", re.M)
CLOSED = re.compile(r"^(\d+\.\d+) \[scrapy\.core\.engine\] INFO: Spider closed", re.M)


def stats_of(log: str) -> dict[str, int]:
    """Integer stats of the last 'Dumping Scrapy stats' block of a crawl log."""
    start = log.rfind("Dumping Scrapy stats:")
    if start < 0:
        raise RuntimeError("no stats in the crawl log:\n" + log[-3000:])
    block = log[start: log.find("}", start) + 1]
    return {key: int(value) for key, value in STAT.findall(block)}


def after_closing(log: str, ended: float) -> float:
    """Seconds from the "Closing spider" log line to the process's exit (``ended``, epoch)."""
    found = CLOSING.findall(log)
    return ended - float(found[-1]) if found else float("nan")


def closing_split(log: str, ended: float) -> tuple[float, float]:
    """The time after "Closing spider" in two parts, seconds: ``(until "Spider closed", from
    there to the process's exit)``. The first is the end-of-run work of the components (their
    ``close_spider`` and ``spider_closed`` handlers: crawl state, NewsPageRank, store flush);
    the second is process shutdown (reactor and thread-pool stop, ``atexit`` handlers, the
    interpreter's teardown of every loaded module). NaN for a part whose log line is missing."""
    closing, closed = CLOSING.findall(log), CLOSED.findall(log)
    if not closed:
        return float("nan"), float("nan")
    work = float(closed[-1]) - float(closing[-1]) if closing else float("nan")
    return work, ended - float(closed[-1])


def run_crawl(label: str, url: str, depth: int, now: str, env: dict) -> tuple[float, dict, str, float]:
    """Run one crawl: ``(wall seconds, stats, log, exit time as epoch seconds)``."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"start_urls={url}",
           "-a", f"depth={depth}", "-a", f"now={now}", "-s", "LOG_LEVEL=INFO",
           "-s", f"LOG_FORMAT={LOG_FORMAT}",
           "-s", "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS=127.0.0.1"]  # the site (loopback is refused)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    wall, ended = time.perf_counter() - t0, time.time()
    if proc.returncode != 0:
        print(f"--- {label}: exit {proc.returncode}\n" + proc.stderr[-4000:], file=sys.stderr)
        raise SystemExit(1)
    return wall, stats_of(proc.stderr), proc.stderr, ended


def head_floor(base: str, site_dir: Path, work: Path, env: dict) -> float:
    """Wall seconds of ``benchmarks/_head_spider.py`` sending one HEAD per page of the site
    (run from ``work``, outside the project: Scrapy's defaults plus the project's concurrency)."""
    urls = work / "urls.txt"
    pages = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html"))
    urls.write_text("".join(f"{base}{rel.removesuffix('index.html')}\n" for rel in pages),
                    encoding="utf-8")
    cmd = [sys.executable, "-m", "scrapy", "runspider", str(BENCH_DIR / "_head_spider.py"),
           "-a", f"urls={urls}", "-s", "LOG_LEVEL=WARNING", "-s", "TELNETCONSOLE_ENABLED=False",
           "-s", "CONCURRENT_REQUESTS=32", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8"]
    floor_env = {k: v for k, v in env.items() if k not in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT")}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, env=floor_env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(f"--- head floor: exit {proc.returncode}\n" + proc.stderr[-4000:], file=sys.stderr)
        raise SystemExit(1)
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000, help="HTML pages of the site (at least)")
    parser.add_argument("--quick", action="store_true", help="about 1,000 pages")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep site and data in")
    parser.add_argument("--floor", action="store_true",
                        help="also time a bare Scrapy spider sending the same HEAD requests")
    parser.add_argument("--no-prestart", action="store_true",
                        help="let the first crawl start the embedded store (its start-up counts)")
    args = parser.parse_args(argv)
    pages = 1000 if args.quick else args.pages

    work = args.keep or Path(tempfile.mkdtemp(prefix="newscrawl-recrawl-"))
    site_dir, data_dir = work / "site", work / "data"
    for folder in (site_dir, data_dir):
        if folder.exists():
            shutil.rmtree(folder)
    site_dir.mkdir(parents=True)
    t0 = time.perf_counter()
    site = generate_site(site_dir, pages, seed=args.seed)
    size = sum(p.stat().st_size for p in site_dir.rglob("*.html"))
    print(f"site: {site.html_pages} HTML pages, {size / site.html_pages / 1024:.1f} KB/page on "
          f"average, generated in {time.perf_counter() - t0:.1f} s into {site_dir}")
    env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    env["NEWSCRAWL_DATA_DIR"] = str(data_dir)
    server = StaticServer(site_dir)
    embedded = [sys.executable, "-m", "newscrawl.embedded"]
    try:
        if not args.no_prestart:
            subprocess.run([*embedded, "start"], cwd=ROOT, env=env, check=True,
                           capture_output=True, timeout=120)
        depth = site.pages_per_channel + 2
        print(f"server: {server.url}; cpus: {os.cpu_count()}; load average "
              f"{os.getloadavg()[0]:.2f}; news -a depth={depth}")
        first_wall, first, first_log, _ = run_crawl("first crawl", server.url, depth, FIRST_AT, env)
        again_wall, again, again_log, again_end = run_crawl("re-crawl", server.url, depth, AGAIN_AT,
                                                            env)
        floor_wall = head_floor(server.url, site_dir, work, env) if args.floor else None
        if args.keep is not None:
            (work / "first.log").write_text(first_log, encoding="utf-8")
            (work / "recrawl.log").write_text(again_log, encoding="utf-8")
    finally:
        server.stop()
        if not args.no_prestart:
            subprocess.run([*embedded, "stop", "--force"], cwd=ROOT, env=env, capture_output=True,
                           timeout=120)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    fetched = first.get("newscrawl/revisit/first", 0)
    checked = (again.get("newscrawl/revisit/unchanged/head", 0)
               + again.get("newscrawl/revisit/unchanged/conditional", 0)
               + again.get("newscrawl/revisit/unchanged/fingerprint", 0)
               + again.get("newscrawl/revisit/unchanged/verified", 0)
               + sum(v for k, v in again.items() if k.startswith("newscrawl/revisit/changed/")))
    rows = [
        ("", "first crawl", "re-crawl"),
        ("wall time (s)", f"{first_wall:.1f}", f"{again_wall:.1f}"),
        ("bytes received", f"{first.get('downloader/response_bytes', 0):,}",
         f"{again.get('downloader/response_bytes', 0):,}"),
        ("GET requests", str(first.get("downloader/request_method_count/GET", 0)),
         str(again.get("downloader/request_method_count/GET", 0))),
        ("HEAD requests", str(first.get("downloader/request_method_count/HEAD", 0)),
         str(again.get("downloader/request_method_count/HEAD", 0))),
        ("pages fetched / checked", str(fetched), str(checked)),
        ("unchanged (HEAD)", "-", str(again.get("newscrawl/revisit/unchanged/head", 0))),
        ("unchanged (HEAD, then a verification GET)", "-",
         str(again.get("newscrawl/revisit/unchanged/verified", 0))),
        ("items stored", str(first.get("item_scraped_count", 0)), str(again.get("item_scraped_count", 0))),
        ("crawl-state records written", str(first.get("newscrawl/crawlstate/written", 0)),
         str(again.get("newscrawl/crawlstate/written", 0))),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    if checked != fetched:
        print(f"WARNING: the re-crawl checked {checked} pages, the first crawl fetched {fetched}")
    speedup = first_wall / again_wall
    ratio = again.get("downloader/response_bytes", 0) / max(first.get("downloader/response_bytes", 1), 1)
    closing = after_closing(again_log, again_end)
    work, shutdown = closing_split(again_log, again_end)
    print(f"re-crawl: {closing:.1f} s of {again_wall:.1f} s after \"Closing spider\" ({work:.2f} s "
          f"end-of-run work until \"Spider closed\", {shutdown:.2f} s process exit)")
    if floor_wall is not None:
        print(f"floor: a bare Scrapy spider sending the same {fetched} HEAD requests took "
              f"{floor_wall:.1f} s; re-crawl / floor: {again_wall / floor_wall:.2f}; first crawl / "
              f"floor: {first_wall / floor_wall:.1f}")
    target(f"recrawl speedup ({fetched} pages)", speedup, ">=", 5, digits=1)
    target(f"recrawl bytes_ratio ({fetched} pages)", ratio, "<=", 0.05, digits=3)
    target("recrawl re-crawl time after Closing spider / wall", closing / again_wall, "<=", 0.10)
    print(f"recrawl speedup: {speedup:.1f} bytes_ratio: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
