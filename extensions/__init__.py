"""Scrapy extensions of newscrawl: the run-wide objects (``EXTENSIONS`` in the settings).

Scrapy builds extensions before the engine and its middlewares and pipelines, which reach them
with ``crawler.get_extension(Cls)`` in ``from_crawler`` and keep what they need as plain values:

* :class:`extensions.store.StoreExtension` — the store, its one writer thread, the embedded
  server's lease, spill and replay, the durability barrier, the closing summary;
* :class:`extensions.crawlstate.CrawlStateExtension` — the run's
  :class:`newscrawl.crawlstate.RunState` (clock, budget, known pages), loaded at open and written
  back through the store's writer, and the end-of-run work (shadow merge, PageRank, eviction).
"""
