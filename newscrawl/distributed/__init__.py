"""Distributed crawling on scrapy-redis: N workers sharing one frontier (DESIGN §6, seed 001).

- :mod:`~newscrawl.distributed.mode` — is the crawl distributed? (``REDIS_URL``,
  ``NEWSCRAWL_DISTRIBUTED``; a leaf module every other one may ask).
- :mod:`~newscrawl.distributed.addon` — switches a crawl to Redis: sets the scheduler and the
  duplicate filter, adds the extension and the middleware below by import path.
- :mod:`~newscrawl.distributed.extension` — ``FrontierExtension``, owner of the crawl's one
  frontier (found with ``crawler.get_extension``).
- :mod:`~newscrawl.distributed.scheduler` — the scrapy-redis scheduler subclass.
- :mod:`~newscrawl.distributed.politeness` — the downloader middleware ending host leases with
  Mercator's pause.
- :mod:`~newscrawl.distributed.queue` — per-host queues with leases (``SCHEDULER_QUEUE_CLASS``).
- :mod:`~newscrawl.distributed.dupefilter` — 8-byte fingerprints in packed buckets.
- :mod:`~newscrawl.distributed.frontier` — the Lua scripts and Redis calls of the frontier.
- :mod:`~newscrawl.distributed.watchshare` — the schedule watch workers (``-a watch=1``) share:
  live workers, atomic channel claims, published channel estimates.
- :mod:`~newscrawl.distributed.keys` — every Redis key template and request-meta key.
- :mod:`~newscrawl.distributed.serializer` — pinned JSON / pickle-4 request serializers.

Only this package imports ``redis`` and ``scrapy_redis``.
"""
