"""The shared URL frontier in Redis: host queues, host leases, and the duplicate URL eliminator.

The one module that talks to Redis. Its shape follows Mercator (seed 001, §4.1; Heydon & Najork
1999): per-host queues ("back queues") and a heap of hosts ordered by the time each may be
contacted again; at most one request per host in flight over all workers; the duplicate URL
eliminator holds 8-byte fingerprints. Every operation that must not be torn apart runs as one
Lua script (atomic on the server):

* :meth:`RedisFrontier.push` — check and add the fingerprint *and* queue the request in one step,
  so a crash can never leave a URL marked seen but not queued;
* :meth:`RedisFrontier.pop` — take the first host whose next-allowed time has passed, pop its
  best request, lease the host to the caller and record the request as pending for the worker;
* :meth:`RedisFrontier.release` — end the lease after the response and set the host's
  next-allowed time (``now + pause``, at least its robots.txt Crawl-delay);
* :meth:`RedisFrontier.heartbeat` — keep the worker alive; give back the leases and pending
  requests of workers whose heartbeat ran out (``kill -9``), and free leases past their TTL.

All times are the Redis server's clock (``TIME``), so workers on several machines agree.
The keys are listed in :mod:`newscrawl.redis_defaults`.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from dataclasses import dataclass

from newscrawl import redis_defaults as rk
from newscrawl.algorithms.fingerprint import split_fingerprint

logger = logging.getLogger(__name__)

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# Aligned search of a fixed-width record in a packed bucket (Python twin:
# newscrawl.algorithms.fingerprint.bucket_contains); adds it when absent. 1 = new, 0 = seen.
_SEEN_ADD = """
local function seen_add(bucket_key, count_key, suffix)
  local bucket = redis.call('GET', bucket_key)
  if bucket then
    local width = #suffix
    local start = string.find(bucket, suffix, 1, true)
    while start do
      if (start - 1) % width == 0 then return 0 end
      start = string.find(bucket, suffix, start + 1, true)
    end
    redis.call('SET', bucket_key, bucket .. suffix)
  else
    redis.call('SET', bucket_key, suffix)
  end
  redis.call('INCR', count_key)
  return 1
end
"""

# KEYS: bucket, count. ARGV: suffix.
_SCRIPT_ADD_SEEN = _SEEN_ADD + "return seen_add(KEYS[1], KEYS[2], ARGV[1])"

# KEYS: bucket, count, host queue, ready, host state, size, seq.
# ARGV: suffix ('' = do not filter), score, payload, host.
_SCRIPT_PUSH = _SEEN_ADD + """
if ARGV[1] ~= '' and seen_add(KEYS[1], KEYS[2], ARGV[1]) == 0 then return 0 end
local seq = redis.call('INCR', KEYS[7])
redis.call('ZADD', KEYS[3], ARGV[2], string.format('%012x', seq) .. ':' .. ARGV[3])
redis.call('INCR', KEYS[6])
if redis.call('HEXISTS', KEYS[5], 'lease') == 0 then
  redis.call('ZADD', KEYS[4], 'NX', redis.call('HGET', KEYS[5], 'next_ms') or '0', ARGV[4])
end
return 1
"""

# KEYS: ready, leases, size, pending, seq. ARGV: queue prefix, host prefix, lease ttl ms, tries.
# Returns {member, host, now, inflight, lease token} or {'', wait_ms (-1: none queued), now}.
# The lease token is a fresh sequence number: a requeued member gets a new one when popped again.
_SCRIPT_POP = _NOW + """
for i = 1, tonumber(ARGV[4]) do
  local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)
  if #hosts == 0 then
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    if #first == 0 then return {'', -1, now} end
    return {'', tonumber(first[2]) - now, now}
  end
  local host = hosts[1]
  redis.call('ZREM', KEYS[1], host)
  local popped = redis.call('ZPOPMIN', ARGV[1] .. host)
  if #popped > 0 then
    local member = popped[1]
    local hkey = ARGV[2] .. host
    local token = string.format('%x', redis.call('INCR', KEYS[5]))
    local inflight = redis.call('HINCRBY', hkey, 'inflight', 1)
    redis.call('HSET', hkey, 'lease', token, 'leased_at', now)
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), host)
    redis.call('DECR', KEYS[3])
    redis.call('HSET', KEYS[4], member, host .. '\\t' .. popped[2] .. '\\t' .. token)
    return {member, host, now, inflight, token}
  end
end
return {'', 0, now}
"""

# KEYS: host state, ready, leases, host queue. ARGV: token, host, pause ms, rt ms, error (0/1).
# Returns {1 released / 0 not the lease holder, now, pause ms applied}.
_SCRIPT_RELEASE = _NOW + """
if redis.call('HGET', KEYS[1], 'lease') ~= ARGV[1] then return {0, now, 0} end
local pause = tonumber(ARGV[3])
local crawl_delay = tonumber(redis.call('HGET', KEYS[1], 'crawl_delay_ms') or '0')
if crawl_delay > pause then pause = crawl_delay end
local nxt = now + pause
redis.call('HDEL', KEYS[1], 'lease', 'leased_at')
redis.call('HINCRBY', KEYS[1], 'inflight', -1)
redis.call('HSET', KEYS[1], 'next_ms', nxt, 'rt_ms', ARGV[4], 'delay_ms', pause)
if ARGV[5] == '1' then
  redis.call('HINCRBY', KEYS[1], 'errors', 1)
else
  redis.call('HINCRBY', KEYS[1], 'fetched', 1)
end
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('ZCARD', KEYS[4]) > 0 then redis.call('ZADD', KEYS[2], nxt, ARGV[2]) end
return {1, now, pause}
"""

# KEYS: workers, leases, ready, size. ARGV: namespace prefix, queue prefix, host prefix,
# pending prefix, worker ('' = none), heartbeat ttl ms, also recover this worker now ('1'/'0').
# Returns {requeued requests, freed leases of dead workers, expired leases, dead workers}.
_SCRIPT_HEARTBEAT = _NOW + """
local qp, hp, pp = ARGV[2], ARGV[3], ARGV[4]
local function make_ready(host, hkey)
  if redis.call('HEXISTS', hkey, 'lease') == 0 and redis.call('EXISTS', qp .. host) == 1 then
    redis.call('ZADD', KEYS[3], 'NX', redis.call('HGET', hkey, 'next_ms') or '0', host)
  end
end
local function free_host(host, hkey)
  redis.call('HDEL', hkey, 'lease', 'leased_at')
  redis.call('HSET', hkey, 'inflight', 0)
  redis.call('ZREM', KEYS[2], host)
  make_ready(host, hkey)
end
local requeued, freed, expired = 0, 0, 0
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 16)
if ARGV[7] == '1' and ARGV[5] ~= '' then table.insert(dead, ARGV[5]) end
for _, w in ipairs(dead) do
  local pkey = pp .. w
  local entries = redis.call('HGETALL', pkey)
  for i = 1, #entries, 2 do
    local member = entries[i]
    local host, score, token = string.match(entries[i + 1], '^(.*)\\t([^\\t]*)\\t([^\\t]*)$')
    if host then
      local hkey = hp .. host
      if redis.call('HGET', hkey, 'lease') == token then
        free_host(host, hkey)
        freed = freed + 1
      end
      redis.call('ZADD', qp .. host, score, member)
      redis.call('INCR', KEYS[4])
      make_ready(host, hkey)
      requeued = requeued + 1
    end
  end
  redis.call('DEL', pkey)
  redis.call('ZREM', KEYS[1], w)
end
if ARGV[5] ~= '' and ARGV[7] ~= '1' then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[6]), ARGV[5])
end
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 64)
for _, host in ipairs(stale) do
  local hkey = hp .. host
  redis.call('HINCRBY', hkey, 'expired', 1)
  free_host(host, hkey)
  expired = expired + 1
end
return {requeued, freed, expired, #dead}
"""

# KEYS: size, leases, workers. ARGV: pending prefix.
# Returns {queued, leased hosts, pending requests of live workers}.
_SCRIPT_ACTIVITY = """
local pending = 0
local workers = redis.call('ZRANGE', KEYS[3], 0, -1)
for _, w in ipairs(workers) do pending = pending + redis.call('HLEN', ARGV[1] .. w) end
return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('ZCARD', KEYS[2]), pending}
"""


def new_worker_id() -> str:
    """A worker id unique over machines and restarts: ``<hostname>-<pid>-<random>``."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class Popped:
    """A request taken from the frontier with its host lease."""

    member: bytes  #: the queue member (sequence + serialized request); the pending-set field
    host: str  #: canonical host, now leased to the caller
    token: str  #: lease token (unique per pop)
    now_ms: int  #: Redis time of the pop
    inflight: int  #: requests in flight on the host after this pop (1 unless a lease was broken)

    @property
    def payload(self) -> bytes:
        return self.member[rk.MEMBER_SEQ_DIGITS + 1:]


@dataclass(frozen=True)
class Wait:
    """No host may be contacted now; ``wait_ms`` until the first one may (``-1``: none queued)."""

    wait_ms: int
    now_ms: int


class RedisFrontier:
    """Redis keys and Lua scripts of one shared crawl.

    Args:
        server: a ``redis.Redis`` client with ``decode_responses=False`` (members are bytes).
        namespace: key namespace (``news``); see :mod:`newscrawl.redis_defaults`.
        prefix_bytes: fingerprint bytes naming a dupefilter bucket (1..4).
        lease_ttl: longest a host lease may be held (seconds).
        worker_timeout: heartbeat lifetime of a worker (seconds).
        worker_id: this worker's id (``None``: a new unique one).

    Raises:
        ValueError: a client that decodes responses, or a bad ``prefix_bytes``.
        redis.exceptions.RedisError: the server is unreachable (from the first command).
    """

    MAX_POP_TRIES = 8

    def __init__(self, server, namespace: str, *, prefix_bytes: int = 1, lease_ttl: float = 180.0,
                 worker_timeout: float = 30.0, worker_id: str | None = None):
        kwargs = getattr(getattr(server, "connection_pool", None), "connection_kwargs", {})
        if kwargs.get("decode_responses"):
            raise ValueError("the Redis client must not decode responses (REDIS_DECODE_RESPONSES)")
        if not 1 <= prefix_bytes <= 4:
            raise ValueError(f"prefix_bytes must be 1..4, got {prefix_bytes}")
        self.server = server
        self.namespace = namespace
        self.prefix_bytes = prefix_bytes
        self.lease_ttl_ms = int(lease_ttl * 1000)
        self.worker_timeout_ms = int(worker_timeout * 1000)
        self.worker_id = worker_id or new_worker_id()
        self.k_seen_count = self._key(rk.SEEN_COUNT_KEY)
        self.k_ready = self._key(rk.READY_KEY)
        self.k_leases = self._key(rk.LEASES_KEY)
        self.k_workers = self._key(rk.WORKERS_KEY)
        self.k_size = self._key(rk.SIZE_KEY)
        self.k_seq = self._key(rk.SEQ_KEY)
        self.k_dead = self._key(rk.DEAD_LETTER_KEY)
        self.k_pending = self._key(rk.PENDING_KEY, worker=self.worker_id)
        self.queue_prefix = self._key(rk.HOST_QUEUE_KEY, host="")
        self.host_prefix = self._key(rk.HOST_STATE_KEY, host="")
        self.pending_prefix = self._key(rk.PENDING_KEY, worker="")
        self._add_seen = server.register_script(_SCRIPT_ADD_SEEN)
        self._push = server.register_script(_SCRIPT_PUSH)
        self._pop = server.register_script(_SCRIPT_POP)
        self._release = server.register_script(_SCRIPT_RELEASE)
        self._heartbeat = server.register_script(_SCRIPT_HEARTBEAT)
        self._activity = server.register_script(_SCRIPT_ACTIVITY)

    def _key(self, template: str, **fields: str) -> str:
        return rk.key(template, self.namespace, **fields)

    def bucket_key(self, bucket: str) -> str:
        return self._key(rk.SEEN_BUCKET_KEY, bucket=bucket)

    def host_queue_key(self, host: str) -> str:
        return self._key(rk.HOST_QUEUE_KEY, host=host)

    def host_state_key(self, host: str) -> str:
        return self._key(rk.HOST_STATE_KEY, host=host)

    # --- duplicate URL eliminator ---------------------------------------------------------------

    def add_seen(self, fingerprint: bytes) -> bool:
        """Add an 8-byte fingerprint to the seen set; True when it was new."""
        bucket, suffix = split_fingerprint(fingerprint, self.prefix_bytes)
        return bool(self._add_seen(keys=[self.bucket_key(bucket), self.k_seen_count],
                                   args=[suffix]))

    def seen_count(self) -> int:
        return int(self.server.get(self.k_seen_count) or 0)

    def seen_keys(self) -> list[bytes]:
        """Names of the dupefilter's bucket keys (SCAN; the count key excluded)."""
        pattern = _glob_escape(self._key(rk.SEEN_BUCKET_KEY, bucket="")) + "*"
        return [k for k in self.server.scan_iter(match=pattern, count=1000)
                if k != self.k_seen_count.encode()]

    def seen_memory(self) -> int:
        """Bytes Redis uses for the seen set (``MEMORY USAGE`` of every bucket and the count)."""
        keys = self.seen_keys() + [self.k_seen_count.encode()]
        pipe = self.server.pipeline(transaction=False)
        for k in keys:
            pipe.memory_usage(k, samples=0)
        return sum(int(v or 0) for v in pipe.execute())

    # --- queue ----------------------------------------------------------------------------------

    def push(self, host: str, payload: bytes, *, score: float,
             fingerprint: bytes | None = None) -> bool:
        """Queue a serialized request on ``host``'s queue.

        Args:
            host: canonical host of the request.
            payload: the serialized request.
            score: sorted-set score; lower is popped first (``-priority``).
            fingerprint: 8-byte fingerprint; when given, the request is queued only if the
                fingerprint was not seen, and the fingerprint is added in the same atomic step.
                ``None`` queues unconditionally (``dont_filter``).

        Returns:
            True when queued, False when the fingerprint had been seen.
        """
        if fingerprint is None:
            bucket_key, suffix = self.bucket_key("-"), b""
        else:
            bucket, suffix = split_fingerprint(fingerprint, self.prefix_bytes)
            bucket_key = self.bucket_key(bucket)
        return bool(self._push(
            keys=[bucket_key, self.k_seen_count, self.host_queue_key(host), self.k_ready,
                  self.host_state_key(host), self.k_size, self.k_seq],
            args=[suffix, repr(float(score)), payload, host]))

    def pop(self) -> Popped | Wait:
        """Lease the first ready host and take its best request (see the module docstring)."""
        result = self._pop(keys=[self.k_ready, self.k_leases, self.k_size, self.k_pending,
                                 self.k_seq],
                           args=[self.queue_prefix, self.host_prefix, self.lease_ttl_ms,
                                 self.MAX_POP_TRIES])
        member = result[0]
        if not member:
            return Wait(wait_ms=int(result[1]), now_ms=int(result[2]))
        return Popped(member=member, host=result[1].decode("utf-8"),
                      token=result[4].decode("ascii"), now_ms=int(result[2]),
                      inflight=int(result[3]))

    def release(self, host: str, token: str, *, pause: float, response_time: float,
                error: bool = False) -> tuple[bool, int, int]:
        """End a host lease and schedule the host's next request ``pause`` seconds from now
        (or after its Crawl-delay, whichever is longer).

        Returns:
            ``(released, now_ms, pause_ms)``; ``released`` is False when the caller no longer
            holds the lease (it expired, or the request was requeued after a worker died).
        """
        result = self._release(
            keys=[self.host_state_key(host), self.k_ready, self.k_leases,
                  self.host_queue_key(host)],
            args=[token, host, int(round(pause * 1000)), int(round(response_time * 1000)),
                  "1" if error else "0"])
        return bool(result[0]), int(result[1]), int(result[2])

    def ack(self, members: list[bytes]) -> int:
        """Forget finished requests of this worker (they are no longer recovered); count."""
        if not members:
            return 0
        return int(self.server.hdel(self.k_pending, *members))

    def pending_count(self) -> int:
        return int(self.server.hlen(self.k_pending))

    def dead_letter(self, popped: Popped) -> None:
        """Move an undecodable popped entry to the dead-letter list and free its host."""
        pipe = self.server.pipeline(transaction=True)
        pipe.lpush(self.k_dead, popped.member)
        pipe.hdel(self.k_pending, popped.member)
        pipe.execute()
        self.release(popped.host, popped.token, pause=0.0, response_time=0.0, error=True)

    def heartbeat(self, *, leaving: bool = False) -> tuple[int, int, int, int]:
        """Renew this worker's heartbeat and recover what dead workers left behind.

        Args:
            leaving: this worker stops: requeue its own unfinished requests, free its leases and
                remove it from the worker set instead of renewing.

        Returns:
            ``(requeued requests, freed leases, expired leases, workers removed)``.
        """
        result = self._heartbeat(
            keys=[self.k_workers, self.k_leases, self.k_ready, self.k_size],
            args=[self.namespace, self.queue_prefix, self.host_prefix, self.pending_prefix,
                  self.worker_id, self.worker_timeout_ms, "1" if leaving else "0"])
        return tuple(int(v) for v in result)  # type: ignore[return-value]

    def live_workers(self) -> list[str]:
        return [w.decode("utf-8") for w in self.server.zrange(self.k_workers, 0, -1)]

    def activity(self) -> tuple[int, int, int]:
        """``(queued requests, leased hosts, pending requests of live workers)``."""
        result = self._activity(keys=[self.k_size, self.k_leases, self.k_workers],
                                args=[self.pending_prefix])
        return int(result[0]), int(result[1]), int(result[2])

    def __len__(self) -> int:
        return int(self.server.get(self.k_size) or 0)

    # --- per-host state -------------------------------------------------------------------------

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        """Record the host's robots.txt Crawl-delay (applied by every worker's release)."""
        self.server.hset(self.host_state_key(host), "crawl_delay_ms", int(round(seconds * 1000)))

    def host_state(self, host: str) -> dict[str, str]:
        """The ``host:<host>`` hash as text (see :data:`newscrawl.redis_defaults.HOST_FIELDS`)."""
        raw = self.server.hgetall(self.host_state_key(host))
        return {k.decode(): v.decode() for k, v in raw.items()}

    def dead_letters(self) -> list[bytes]:
        return list(self.server.lrange(self.k_dead, 0, -1))

    def clear(self) -> int:
        """Delete every key of the namespace (frontier, seen set, states); count of keys."""
        pattern = _glob_escape(self.namespace) + ":*"
        deleted = 0
        batch: list[bytes] = []
        for k in self.server.scan_iter(match=pattern, count=1000):
            batch.append(k)
            if len(batch) >= 500:
                deleted += self.server.delete(*batch)
                batch = []
        if batch:
            deleted += self.server.delete(*batch)
        return deleted


def _glob_escape(text: str) -> str:
    """Escape Redis glob metacharacters in a key prefix for SCAN MATCH."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
