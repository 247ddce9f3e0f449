"""WARC (ISO 28500, WARC/1.1) archives of what a crawl fetched, and WARCs read back as a source.

Plain Python over warcio (no Scrapy, Twisted, pymongo or redis import), so both halves are
testable and benchmarkable alone:

* :mod:`newscrawl.warc.records` — one HTTP exchange as plain data (:class:`Exchange`) and the
  WARC records it becomes (``request``, ``response``, ``revisit``, ``metadata``, ``warcinfo``);
* :mod:`newscrawl.warc.writer` — :class:`RotatingWarcWriter`: files named
  ``newscrawl-<UTC time>-<serial>-<host>.warc.gz``, one gzip member per record, written as
  ``.open`` and renamed on close, rotated by size and age, written by one thread of its own;
* :mod:`newscrawl.warc.reader` — :class:`WarcArchive`: an index of the captures in WARC files
  (newscrawl's own, CC-NEWS, any ISO 28500 file), their HTTP answers as received, counts of the
  records skipped and why.

The Scrapy side is thin: ``extensions/warc.py`` owns the writer, ``middlewares/warc.py`` hands it
the exchanges, ``pipelines/warc.py`` the metadata records; ``middlewares/warcreplay.py`` and
``extensions/warcimport.py`` answer an import crawl's requests from an archive. See
``docs/warc.md`` for the record layout.
"""

from newscrawl.warc.records import Exchange
from newscrawl.warc.writer import RotatingWarcWriter

__all__ = ["Exchange", "RotatingWarcWriter"]
