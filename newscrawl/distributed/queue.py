"""scrapy-redis queue class over the host-aware Redis frontier (``SCHEDULER_QUEUE_CLASS``).

Replaces scrapy-redis's ``PriorityQueue`` (one sorted set of pickled requests: identical requests
collapse into one member, order within a priority is the order of the pickled bytes, and every
worker may take any host at any time). :class:`HostQueue` keeps one queue per canonical host in
:class:`~newscrawl.distributed.frontier.RedisFrontier`, pops only hosts that nobody is fetching
and whose politeness pause is over, and gives each popped request its host lease in
request meta :data:`newscrawl.meta.LEASE` = ``[host, token]`` (released by
:class:`newscrawl.distributed.politeness.PolitenessMiddleware`).

Entries that do not decode (another serializer, a truncated value, a callback the spider no
longer has) are moved to the dead-letter list ``<namespace>:deadletter`` and counted in
``newscrawl/redis/dead_letter`` instead of vanishing.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.utils.request import request_from_dict
from scrapy_redis.queue import Base

from newscrawl.algorithms.fingerprint import canonical_host
from newscrawl.distributed.frontier import Popped, RedisFrontier, Wait
from newscrawl import meta
from newscrawl.distributed.serializer import SerializationError, get_serializer

logger = logging.getLogger(__name__)

_UNKNOWN = object()


def url_host(url: str, *, aliases: Mapping[str, str] | None = None, fold_www: bool = True) -> str:
    """Canonical host of ``url``: its queue and politeness unit in the frontier (``""`` if
    none; :func:`newscrawl.algorithms.fingerprint.canonical_host`)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    return canonical_host(host, aliases=aliases, fold_www=fold_www)


class HostQueue(Base):
    """Per-host queues with leases, in scrapy-redis's queue interface.

    Args:
        server: Redis client (``decode_responses=False``).
        spider: the spider (callbacks are resolved on it).
        key: key namespace (``NEWSCRAWL_REDIS_NAMESPACE``, ``%(spider)s`` filled in).
        serializer: object with ``dumps``/``loads`` (default: the pinned JSON serializer).
        frontier: the :class:`RedisFrontier` to use (default: one built on ``server``/``key``).
        aliases, fold_www: how a URL's host maps to its queue (canonical host).
        stats: Scrapy stats collector or ``None``.
    """

    def __init__(self, server, spider, key, serializer=None, *, frontier: RedisFrontier | None = None,
                 aliases: Mapping[str, str] | None = None, fold_www: bool = True, stats=None):
        super().__init__(server, spider, key, serializer or get_serializer("json"))
        self.frontier = frontier if frontier is not None else RedisFrontier(server, self.key)
        self.aliases = dict(aliases or {})
        self.fold_www = fold_www
        self.stats = stats
        self.last_wait: Wait | None = None
        self.on_dead_letter: Callable[[Popped, Exception], None] | None = None
        #: Requests taken from Redis (leased, in this worker's pending set) not handed out yet.
        self.taken: deque[Popped] = deque()

    def host_of(self, url: str) -> str:
        """Canonical host of ``url`` (the queue and politeness unit); ``""`` if none."""
        return url_host(url, aliases=self.aliases, fold_www=self.fold_www)

    def __len__(self) -> int:
        return len(self.frontier) + len(self.taken)

    def push(self, request, fingerprint: bytes | None = None) -> bool:
        """Queue ``request``; with a fingerprint, only when it was not seen (atomically).

        Raises:
            SerializationError: the request's meta cannot be serialized.
        """
        if request.meta.get(meta.LEASE) is not None:
            # A redirect or retry copies meta; its lease belongs to the original request.
            del request.meta[meta.LEASE]
        payload = self._encode_request(request)
        return self.frontier.push(self.host_of(request.url), payload, score=-request.priority,
                                  fingerprint=fingerprint)

    def push_later(self, request, fingerprint: bytes | None = None, callback=None) -> None:
        """:meth:`push` with the frontier's next round trip; ``callback(queued: bool)``.

        Raises:
            SerializationError: the request's meta cannot be serialized.
        """
        if request.meta.get(meta.LEASE) is not None:
            del request.meta[meta.LEASE]
        payload = self._encode_request(request)
        self.frontier.push_later(self.host_of(request.url), payload, score=-request.priority,
                                 fingerprint=fingerprint, callback=callback)

    def _encode_request(self, request):
        """Serialize ``request.to_dict()`` with callback/errback names found without
        ``inspect.getmembers`` over the spider (Scrapy's way, slow on every push)."""
        data = {"url": request.url, "callback": self._method_name(request.callback),
                "errback": self._method_name(request.errback), "headers": dict(request.headers)}
        if data["callback"] is _UNKNOWN or data["errback"] is _UNKNOWN:
            return super()._encode_request(request)
        for attr in request.attributes:
            data.setdefault(attr, getattr(request, attr))
        if type(request) is not Request:  # noqa: E721 - exactly what Request.to_dict checks
            data["_class"] = request.__module__ + "." + request.__class__.__name__
        return self.serializer.dumps(data)

    def _method_name(self, func):
        if func is None or not callable(func):
            return func
        name = getattr(func, "__name__", None)
        own = getattr(self.spider, name, None) if name else None
        if own is not None and getattr(own, "__func__", None) is getattr(func, "__func__", object()):
            return name
        return _UNKNOWN

    def pop(self, timeout=0):
        """Return the next request of a ready host with its lease in meta, or ``None``.

        ``timeout`` is ignored (the frontier never blocks); :attr:`last_wait` tells how long
        until a host becomes ready.
        """
        entry = self.pop_entry()
        return entry[0] if entry else None

    def pop_entry(self, limit: int = 1):
        """Like :meth:`pop`, returning ``(request, Popped)`` (the scheduler acknowledges the
        entry when the request is finished), or ``None``.

        Args:
            limit: when nothing taken is left, take up to this many requests (of different
                ready hosts) from Redis in one round trip; the rest are returned by the next
                calls, without a round trip. Ask for no more than can be sent now (each holds
                its host's lease).
        """
        for _ in range(RedisFrontier.MAX_POP_TRIES):
            if not self.taken:
                result = self.frontier.pop_many(max(1, limit))
                if isinstance(result, Wait):
                    self.last_wait = result
                    return None
                self.taken.extend(result)
            self.last_wait = None
            popped = self.taken.popleft()
            try:
                request = self._decode_request(popped.payload)
            except Exception as exc:  # noqa: BLE001 - whatever fails to decode is a dead letter
                self._dead_letter(popped, exc)
                continue
            request.meta[meta.LEASE] = [popped.host, popped.token]
            return request, popped
        return None

    def _decode_request(self, encoded_request):
        obj = self.serializer.loads(encoded_request)
        if not isinstance(obj, dict) or "url" not in obj:
            raise SerializationError("entry is not a serialized request")
        return request_from_dict(obj, spider=self.spider)

    def _dead_letter(self, popped: Popped, exc: Exception) -> None:
        self.frontier.dead_letter(popped)
        if self.stats is not None:
            self.stats.inc_value("newscrawl/redis/dead_letter")
        logger.warning("Moved an undecodable frontier entry of %s to %s: %s", popped.host,
                       self.frontier.k_dead, exc)
        if self.on_dead_letter is not None:
            self.on_dead_letter(popped, exc)

    def clear(self) -> None:
        """Delete the whole namespace: queues, seen set, host states."""
        self.taken.clear()
        self.frontier.clear()
