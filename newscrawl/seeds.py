"""Entry URLs of a crawl: ``-a start_urls=`` (comma-separated) and seeds files.

The one parser of seeds files, used by the ``news`` spider (:mod:`spiders.news`) and by
``newscrawl schedule`` (:mod:`newscrawl.schedule`). Pure: reads a file, no Scrapy import.

A seeds file holds one URL per line, UTF-8 (a byte-order mark is dropped); blank lines and
``#`` comments (whole-line or trailing) are skipped; a URL without a scheme gets ``http://``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from newscrawl.algorithms.urls import host_of

logger = logging.getLogger(__name__)


def read_seeds_file(seeds: str | Path) -> list[str]:
    """The lines of a seeds file, decoded as UTF-8 (a byte-order mark is dropped).

    Raises:
        ValueError: the file cannot be read, or is not UTF-8 (one line naming the path, the
            byte offset and the line of the first undecodable byte).
    """
    try:
        data = Path(seeds).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read seeds file {str(seeds)!r}: {exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"seeds file {str(seeds)!r} is not UTF-8 text: undecodable byte "
            f"0x{data[exc.start]:02x} at byte offset {exc.start} (line {line}); save it as "
            f"UTF-8") from None
    return text.splitlines()


def entry_problem(url: str) -> tuple[str, str | None]:
    """``(normalised URL, None)`` for a usable entry, or ``(url, why it is skipped)``.

    >>> entry_problem("www.sina.com.cn/")
    ('http://www.sina.com.cn/', None)
    >>> entry_problem("ftp://files.example/")
    ('ftp://files.example/', 'only http and https URLs are crawled')
    """
    if any(ch.isspace() for ch in url):
        return url, "a URL has no spaces"
    if "://" not in url:
        url = "http://" + url
    scheme = url.split("://", 1)[0].lower()
    if scheme not in ("http", "https"):
        return url, "only http and https URLs are crawled"
    if not host_of(url):
        return url, "the URL has no host"
    return url, None


def read_entry_urls(start_urls: str | None = None, seeds: str | Path | None = None,
                    skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """Return the entry URLs given as ``-a start_urls=`` (comma-separated) and/or ``-a seeds=``.

    Duplicates are dropped, order kept (``start_urls`` first). A bad entry (a space in it, not
    http(s), no host) is skipped with a warning and appended to ``skipped`` as
    ``(entry, reason)`` when given.

    Raises:
        ValueError: no valid URL remains, or a seeds file that cannot be read or is not UTF-8.
    """
    urls: list[str] = []
    if start_urls:
        urls += [u.strip() for u in start_urls.split(",") if u.strip()]
    if seeds:
        urls += [line.split("#", 1)[0].strip() for line in read_seeds_file(seeds)]
    bad: list[tuple[str, str]] = []
    out: list[str] = []
    for entry in urls:
        if not entry:
            continue
        url, problem = entry_problem(entry)
        if problem:
            logger.warning("Skipping entry %r: %s", entry, problem)
            bad.append((entry, problem))
            continue
        if url not in out:
            out.append(url)
    if skipped is not None:
        skipped.extend(bad)
    if not out:
        if bad:
            first, why = bad[0]
            raise ValueError(f"news: no valid entry URL ({len(bad)} skipped; first: {first!r}: "
                             f"{why}); give http(s) URLs with -a start_urls=URL[,URL...] or "
                             f"-a seeds=FILE")
        raise ValueError("news: give entry URLs with -a start_urls=URL[,URL...] or -a seeds=FILE")
    return out
