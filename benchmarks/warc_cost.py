"""CPU cost of WARC writing per page, in one process, on real pages (no network, little noise).

Usage (from the repository root)::

    .venv/bin/python benchmarks/warc_cost.py                 # real pages of ../shared/corpus
    .venv/bin/python benchmarks/warc_cost.py --level 1 --repeat 3

Drives the objects a crawl with ``NEWSCRAWL_WARC_DIR`` uses — the capture middleware
(``middlewares/warc.py``), the metadata pipeline (``pipelines/warc.py``) and the threaded
:class:`newscrawl.warc.writer.RotatingWarcWriter` — over the HTML pages of
``../shared/corpus/06_trafilatura_eval`` and ``04_fundus_multilingual_articles_gt`` (its
``.html.gz`` files decompressed; served gzip-encoded when ``--gzip``), and prints CPU ms per page: the crawl's thread (the middleware and
the pipeline handing plain data over), the writer thread (records, digests, gzip, write) and both,
with the bytes written. ``crawl_throughput.py`` with and without ``-s NEWSCRAWL_WARC_DIR=`` gives
the end-to-end figure on its synthetic site; this one isolates the writer's share, which a shared
machine's load hides in the end-to-end pages/s.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scrapy.http import HtmlResponse, Request  # noqa: E402

from middlewares.warc import WarcCaptureMiddleware  # noqa: E402
from newscrawl.warc.writer import RotatingWarcWriter  # noqa: E402
from pipelines.warc import WarcMetadataPipeline  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
SETS = ("06_trafilatura_eval", "04_fundus_multilingual_articles_gt")


class _Stats:
    def inc_value(self, *args: object, **kwargs: object) -> None:
        pass


class _Warc:
    """What the middleware and the pipeline need of ``extensions.warc.WarcExtension``."""

    def __init__(self, writer: RotatingWarcWriter) -> None:
        self.writer, self.stats = writer, _Stats()

    def inc(self, event: str) -> None:
        pass


def pages(limit: int) -> list[bytes]:
    out = []
    for name in SETS:
        for path in sorted((CORPUS / name).rglob("*.htm*")):
            data = path.read_bytes()
            out.append(gzip.decompress(data) if path.suffix == ".gz" else data)
            if len(out) >= limit:
                return out
    return out


def run(bodies: list[bytes], *, level: int, gzip_bodies: bool) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix="warc-cost-"))
    writer = RotatingWarcWriter(folder, level=level)
    warc = _Warc(writer)
    middleware, pipeline = WarcCaptureMiddleware(warc), WarcMetadataPipeline(warc)
    exchanges = []
    for n, body in enumerate(bodies):
        url = f"https://news.example/politik/2026-12-04/artikel-{n}.html"
        headers = {"Content-Type": "text/html; charset=utf-8", "ETag": f'"{n}"'}
        if gzip_bodies:
            body = gzip.compress(body, mtime=0)
            headers["Content-Encoding"] = "gzip"
        headers["Content-Length"] = str(len(body))
        request = Request(url, headers={"User-Agent": "newscrawl/0.1", "Accept-Encoding": "gzip"})
        exchanges.append((request, HtmlResponse(url, status=200, headers=headers, body=body,
                                                request=request)))
    item = {"kind": "article", "site": "news.example", "host": "news.example", "depth": 1,
            "entry_url": "https://news.example/", "start_url": "https://news.example/",
            "link_class": "downward", "role": "content", "features": {"image": 1, "bold": 0},
            "weight": 0.7, "title": "Haushalt geeinigt", "published": datetime.now(timezone.utc),
            "published_source": "og", "published_confidence": 0.9, "story_id": "0123456789abcdef",
            "sources": [{"kind": "feed", "url": "https://news.example/rss"}]}
    start = time.process_time()
    for request, response in exchanges:
        middleware.process_response(request, response)
        pipeline.process_item(dict(item, url=response.url))
    handed = time.process_time() - start
    writer.close()
    total = time.process_time() - start
    written = writer.bytes
    shutil.rmtree(folder)
    n = len(exchanges)
    return {"pages": n, "crawl_thread_ms": (total - writer.thread_cpu) / n * 1000,
            "writer_thread_ms": writer.thread_cpu / n * 1000, "total_ms": total / n * 1000,
            "handed_ms": handed / n * 1000, "bytes_per_page": written / n,
            "body_bytes": sum(len(r.body) for _, r in exchanges) / n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--level", type=int, default=6, help="NEWSCRAWL_WARC_GZIP_LEVEL")
    parser.add_argument("--gzip", action="store_true", help="bodies arrive gzip-encoded")
    parser.add_argument("--repeat", type=int, default=3, help="best of N")
    args = parser.parse_args(argv)
    bodies = pages(args.pages)
    if not bodies:
        print(f"no pages under {CORPUS}: the shared corpus is needed", file=sys.stderr)
        return 2
    best = min((run(bodies, level=args.level, gzip_bodies=args.gzip) for _ in range(args.repeat)),
               key=lambda r: r["total_ms"])
    print(f"{best['pages']} pages of {best['body_bytes'] / 1000:.1f} KB (gzip bodies: {args.gzip}), "
          f"level {args.level}: CPU {best['total_ms']:.3f} ms/page = crawl thread "
          f"{best['crawl_thread_ms']:.3f} + writer thread {best['writer_thread_ms']:.3f}; "
          f"{best['bytes_per_page'] / 1000:.1f} KB written per page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
