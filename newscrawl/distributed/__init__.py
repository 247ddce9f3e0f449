"""Distributed crawling on scrapy-redis: N workers sharing one frontier (DESIGN §6, seed 001).

- :mod:`~newscrawl.distributed.addon` — switches a crawl to Redis (``REDIS_URL``).
- :mod:`~newscrawl.distributed.scheduler` — the scrapy-redis scheduler subclass.
- :mod:`~newscrawl.distributed.queue` — per-host queues with leases (``SCHEDULER_QUEUE_CLASS``).
- :mod:`~newscrawl.distributed.dupefilter` — 8-byte fingerprints in packed buckets.
- :mod:`~newscrawl.distributed.frontier` — the Redis keys and Lua scripts (the only Redis code).
- :mod:`~newscrawl.distributed.serializer` — pinned JSON / pickle-4 request serializers.

The politeness downloader middleware is :mod:`middlewares.politeness`; the key layout is
documented in :mod:`newscrawl.redis_defaults`.
"""
