"""Every Redis key the distributed crawl spells, at a glance (scrapy-redis's ``defaults.py`` habit).

The request-meta keys this package sets (``newscrawl_lease``, ``newscrawl_sent_at``) live with
all the others in :mod:`newscrawl.meta`. No other module spells a Redis key: the frontier, the queue and the duplicate filter
fill these templates with :func:`key`.

Every Redis key is ``<namespace>:<name>``; the namespace is ``NEWSCRAWL_REDIS_NAMESPACE`` with
``%(spider)s`` replaced by the spider name (``news`` by default; :func:`crawl_namespace`). Settings
and their defaults are in :mod:`newscrawl.defaults`; this module only names keys and the values
stored in them, so that ``redis-cli`` users can read the crawl's state:

=======================  ======  ==================================================================
key                      type    content
=======================  ======  ==================================================================
``seen:<r>:<bucket>``    string  duplicate URL eliminator of round ``<r>``: packed fingerprint
                                 suffixes, fixed width (``8 - NEWSCRAWL_REDIS_DUPEFILTER_PREFIX_BYTES``
                                 bytes each); ``<bucket>`` is the fingerprint's first bytes in hex
``seen:<r>:count``       string  number of fingerprints in round ``<r>``'s buckets
``round``                string  the current round: a worker that starts on a drained frontier
                                 (nothing queued, leased or pending, no worker registered) starts
                                 a new round with an empty seen set, so known pages can be
                                 revisited (``NEWSCRAWL_REDIS_SEEN_PER_ROUND``); a restart within a
                                 round keeps it
``q:<host>``             zset    the host's queued requests; score = -priority, member =
                                 ``<12 hex digits sequence>:<serialized request>`` (FIFO within a
                                 priority, and identical requests never collapse)
``ready``                zset    hosts with queued requests and no lease; score = the earliest
                                 time (ms since the epoch, Redis clock) of their next request
``leases``               zset    leased hosts; score = lease expiry (ms)
``host:<host>``          hash    per-host state, see :data:`HOST_FIELDS`
``pending:<worker>``     hash    requests a worker took and has not finished; field = queue
                                 member, value = ``<host>\\t<score>\\t<lease token>``;
                                 requeued when the worker dies. A watch worker's own
                                 request has field ``lease:<token>`` and no score: its
                                 host lease is freed, nothing is requeued
``workers``              zset    live workers; score = heartbeat expiry (ms)
``size``                 string  number of queued requests over all hosts
``seq``                  string  sequence of queue members and lease tokens
``deadletter``           list    queue members that could not be decoded (newest first)
``run``                  string  the frontier's run marker: a random id set by the first worker
                                 on an empty frontier; the store keeps the marker it last saw,
                                 so a marker missing or changed tells a worker that Redis lost
                                 the frontier (restarted empty, flushed)
``watch:workers``        zset    live watch workers (``-a watch=1``); score = heartbeat expiry (ms,
                                 Redis clock); dropped after ``NEWSCRAWL_REDIS_WORKER_TIMEOUT``
``watch:due``            zset    channel fingerprint → shared due time (ms, run clock): the next
                                 visit the scheduler planned, or the end of a claim
                                 (``NEWSCRAWL_WATCH_CLAIM_TTL``) while a visit is under way
``watch:by``             hash    channel fingerprint → the worker that claimed it last
``watch:sched``          hash    channel fingerprint → JSON estimate of its last visit (``sched``,
                                 ``last_visit``, ``due``), for the worker taking it over
=======================  ======  ==================================================================

``<host>`` is the canonical host (:func:`newscrawl.algorithms.fingerprint.canonical_host`), so
aliases share one queue and one politeness state. Lua scripts touch keys they compute from these
templates: the layout needs a single Redis server (not Redis Cluster).
"""

from __future__ import annotations

# --- Redis keys ---------------------------------------------------------------------------------

SEEN_BUCKET_KEY = "%(ns)s:seen:%(round)s:%(bucket)s"
SEEN_COUNT_KEY = "%(ns)s:seen:%(round)s:count"
ROUND_KEY = "%(ns)s:round"
HOST_QUEUE_KEY = "%(ns)s:q:%(host)s"
READY_KEY = "%(ns)s:ready"
LEASES_KEY = "%(ns)s:leases"
HOST_STATE_KEY = "%(ns)s:host:%(host)s"
PENDING_KEY = "%(ns)s:pending:%(worker)s"
WORKERS_KEY = "%(ns)s:workers"
SIZE_KEY = "%(ns)s:size"
SEQ_KEY = "%(ns)s:seq"
DEAD_LETTER_KEY = "%(ns)s:deadletter"
RUN_KEY = "%(ns)s:run"
WATCH_WORKERS_KEY = "%(ns)s:watch:workers"
WATCH_DUE_KEY = "%(ns)s:watch:due"
WATCH_BY_KEY = "%(ns)s:watch:by"
WATCH_SCHED_KEY = "%(ns)s:watch:sched"
#: Every key of a namespace (a SCAN ``MATCH`` pattern once the namespace is glob-escaped).
NAMESPACE_KEYS = "%(ns)s:*"

#: Fields of ``host:<host>`` (all integers are milliseconds unless named otherwise).
HOST_FIELDS = {
    "lease": "lease token of the request holding the host (absent when free)",
    "leased_at": "Redis time the lease was taken",
    "inflight": "requests in flight on this host over all workers (0 or 1)",
    "next_ms": "earliest Redis time of the next request (last response + pause)",
    "rt_ms": "response time of the last request",
    "delay_ms": "pause applied after the last request",
    "crawl_delay_ms": "robots.txt Crawl-delay of the host",
    "fetched": "requests finished on this host (count)",
    "errors": "requests that ended in a download error (count)",
    "expired": "leases freed because they outlived NEWSCRAWL_REDIS_LEASE_TTL (count)",
}

#: Members of ``q:<host>``: a fixed-width hex sequence, a colon, the serialized request.
MEMBER_SEQ_DIGITS = 12


def key(template: str, namespace: str, **fields: str) -> str:
    """Fill a key template: ``key(HOST_QUEUE_KEY, "news", host="example.com")``.

    >>> key(HOST_QUEUE_KEY, "news", host="example.com")
    'news:q:example.com'
    """
    return template % {"ns": namespace, **fields}


def crawl_namespace(template: str, spider_name: str) -> str:
    """The key namespace of a crawl: ``NEWSCRAWL_REDIS_NAMESPACE`` with ``%(spider)s`` filled in.

    >>> crawl_namespace("%(spider)s", "news"), crawl_namespace("shared-%(spider)s", "news")
    ('news', 'shared-news')
    """
    return str(template) % {"spider": spider_name}


def glob_escape(text: str) -> str:
    r"""Escape Redis glob metacharacters in a key prefix for SCAN ``MATCH``.

    >>> print(glob_escape("ns[1]:q:*"))
    ns\[1\]:q:\*
    """
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
