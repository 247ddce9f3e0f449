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
The keys are listed in :mod:`newscrawl.distributed.keys`. A crawl's one frontier is owned by
:class:`newscrawl.distributed.extension.FrontierExtension`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redis.exceptions import NoScriptError, RedisError

from newscrawl.algorithms.fingerprint import split_fingerprint
from newscrawl.distributed import keys as rk

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

# KEYS: ready, leases, size, pending, seq. ARGV: queue prefix, host prefix, lease ttl ms, tries,
# most requests to take (one per host).
# Returns {member, host, now, inflight, lease token, member, host, ...} (5 values per request) or
# {'', wait_ms (-1: none queued, 0: try again), now} when nothing was taken.
# A lease token is a fresh sequence number: a requeued member gets a new one when popped again.
_SCRIPT_POP = _NOW + """
local out = {}
local want = tonumber(ARGV[5] or '1')
local empty = 0
while #out < 5 * want and empty < tonumber(ARGV[4]) do
  local hosts = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1)
  if #hosts == 0 then break end
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
    for _, v in ipairs({member, host, now, inflight, token}) do out[#out + 1] = v end
  else
    empty = empty + 1
  end
end
if #out > 0 then return out end
if empty >= tonumber(ARGV[4]) then return {'', 0, now} end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #first == 0 then return {'', -1, now} end
return {'', tonumber(first[2]) - now, now}
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
      if score ~= '' then  -- '' : a lease of a request the worker sent itself, no queue entry
        redis.call('ZADD', qp .. host, score, member)
        redis.call('INCR', KEYS[4])
        make_ready(host, hkey)
        requeued = requeued + 1
      end
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

# KEYS: host state, leases, ready, pending, seq. ARGV: host, lease ttl ms, pending member prefix.
# Leases a free host whose pause has passed for a request the worker sends itself (no queue
# entry); the pending entry (score '') lets a dead worker's lease be freed by the others.
# Returns {token, now} or {'', wait ms (-1: leased by a request in flight)}.
_SCRIPT_LEASE_HOST = _NOW + """
if redis.call('HEXISTS', KEYS[1], 'lease') == 1 then return {'', -1} end
local nxt = tonumber(redis.call('HGET', KEYS[1], 'next_ms') or '0')
if nxt > now then return {'', nxt - now} end
local token = string.format('%x', redis.call('INCR', KEYS[5]))
redis.call('HINCRBY', KEYS[1], 'inflight', 1)
redis.call('HSET', KEYS[1], 'lease', token, 'leased_at', now)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[3] .. token, ARGV[1] .. '\\t\\t' .. token)
return {token, now}
"""

# KEYS: workers, size, leases, round. ARGV: worker, heartbeat ttl ms, may start a round ('1'/'0').
# Registers the worker; starts a new round when the frontier is drained and nobody is registered.
# Returns {round, 1 when this call started it}.
_SCRIPT_JOIN = _NOW + """
local fresh = 0
if ARGV[3] == '1' and tonumber(redis.call('GET', KEYS[2]) or '0') <= 0
    and redis.call('ZCARD', KEYS[3]) == 0 and redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('INCR', KEYS[4])
  fresh = 1
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return {tonumber(redis.call('GET', KEYS[4]) or '0'), fresh}
"""

# KEYS: size, leases, workers. ARGV: pending prefix.
# Returns {queued, leased hosts, pending requests of live workers}.
_SCRIPT_ACTIVITY = """
local pending = 0
local workers = redis.call('ZRANGE', KEYS[3], 0, -1)
for _, w in ipairs(workers) do pending = pending + redis.call('HLEN', ARGV[1] .. w) end
return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('ZCARD', KEYS[2]), pending}
"""


class _PauseSince:
    """A pause (ms) that started at ``ended`` (``time.monotonic()``): what is left of it when
    the queued release is finally sent."""

    __slots__ = ("pause_ms", "ended")

    def __init__(self, pause_ms: int, ended: float) -> None:
        self.pause_ms = pause_ms
        self.ended = ended

    def remaining_ms(self) -> int:
        waited_ms = (time.monotonic() - self.ended) * 1000.0
        return max(0, int(round(self.pause_ms - waited_ms)))


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

    Calls either run at once (:meth:`push`, :meth:`release`, :meth:`ack`, ...) or are queued
    with :meth:`push_later`, :meth:`release_later` and :meth:`ack_later` and sent together, in
    order, by the next :meth:`flush` or :meth:`pop` (one pipelined round trip: a busy worker
    then pays one round trip per page instead of four). Queued calls are sent in the order they
    were queued, so the links of a page always reach Redis before the page's acknowledgement.

    Args:
        server: a ``redis.Redis`` client with ``decode_responses=False`` (members are bytes).
        namespace: key namespace (``news``); see :mod:`newscrawl.distributed.keys`.
        prefix_bytes: fingerprint bytes naming a dupefilter bucket (1..4).
        lease_ttl: longest a host lease may be held (seconds).
        worker_timeout: heartbeat lifetime of a worker (seconds).
        worker_id: this worker's id (``None``: a new unique one).

    Raises:
        ValueError: a client that decodes responses, a bad ``prefix_bytes``, a non-positive
            ``lease_ttl`` or ``worker_timeout``.
        redis.exceptions.RedisError: the server is unreachable (from the first command).
    """

    MAX_POP_TRIES = 8
    SCRIPTS = {"add_seen": _SCRIPT_ADD_SEEN, "push": _SCRIPT_PUSH, "pop": _SCRIPT_POP,
               "release": _SCRIPT_RELEASE, "heartbeat": _SCRIPT_HEARTBEAT,
               "activity": _SCRIPT_ACTIVITY, "join": _SCRIPT_JOIN,
               "lease_host": _SCRIPT_LEASE_HOST}
    #: Prefix of the pending-set member of a request sent with :meth:`lease_host`.
    OWN_MEMBER_PREFIX = "lease:"

    def __init__(self, server, namespace: str, *, prefix_bytes: int = 1, lease_ttl: float = 180.0,
                 worker_timeout: float = 30.0, worker_id: str | None = None):
        kwargs = getattr(getattr(server, "connection_pool", None), "connection_kwargs", {})
        if kwargs.get("decode_responses"):
            raise ValueError("the Redis client must not decode responses (REDIS_DECODE_RESPONSES)")
        if not 1 <= prefix_bytes <= 4:
            raise ValueError(f"prefix_bytes must be 1..4, got {prefix_bytes}")
        if lease_ttl <= 0 or worker_timeout <= 0:
            raise ValueError("lease_ttl and worker_timeout must be > 0 seconds")
        self.server = server
        self.namespace = namespace
        self.prefix_bytes = prefix_bytes
        self.lease_ttl_ms = int(lease_ttl * 1000)
        self.worker_timeout_ms = int(worker_timeout * 1000)
        self.worker_id = worker_id or new_worker_id()
        self.round = 0
        self.k_round = self._key(rk.ROUND_KEY)
        self.k_ready = self._key(rk.READY_KEY)
        self.k_leases = self._key(rk.LEASES_KEY)
        self.k_workers = self._key(rk.WORKERS_KEY)
        self.k_size = self._key(rk.SIZE_KEY)
        self.k_seq = self._key(rk.SEQ_KEY)
        self.k_dead = self._key(rk.DEAD_LETTER_KEY)
        self.k_run = self._key(rk.RUN_KEY)
        #: The run marker this worker holds (:meth:`claim_run_marker`), None before.
        self.run_marker: str | None = None
        self.k_pending = self._key(rk.PENDING_KEY, worker=self.worker_id)
        self.queue_prefix = self._key(rk.HOST_QUEUE_KEY, host="")
        self.host_prefix = self._key(rk.HOST_STATE_KEY, host="")
        self.pending_prefix = self._key(rk.PENDING_KEY, worker="")
        self._sha = {name: hashlib.sha1(src.encode()).hexdigest() for name, src in
                     self.SCRIPTS.items()}
        self._batch: list[tuple[str, tuple, tuple, Callable | None]] = []
        self.round_trips = 0

    def _key(self, template: str, **fields: str) -> str:
        return rk.key(template, self.namespace, **fields)

    @property
    def k_seen_count(self) -> str:
        return self._key(rk.SEEN_COUNT_KEY, round=str(self.round))

    def bucket_key(self, bucket: str) -> str:
        return self._key(rk.SEEN_BUCKET_KEY, round=str(self.round), bucket=bucket)

    def host_queue_key(self, host: str) -> str:
        return self._key(rk.HOST_QUEUE_KEY, host=host)

    def host_state_key(self, host: str) -> str:
        return self._key(rk.HOST_STATE_KEY, host=host)

    # --- script calls ---------------------------------------------------------------------------

    def _load_scripts(self) -> None:
        for name, source in self.SCRIPTS.items():
            self._sha[name] = self.server.script_load(source)

    def _eval(self, name: str, keys, args):
        """Run one script now (EVALSHA, loading the scripts once when Redis lacks them)."""
        self.round_trips += 1
        try:
            return self.server.evalsha(self._sha[name], len(keys), *keys, *args)
        except NoScriptError:
            self._load_scripts()
            return self.server.evalsha(self._sha[name], len(keys), *keys, *args)

    def _run(self, ops: list, then: tuple | None = None) -> Any:
        """Send queued ops (and ``then``, a script call whose result is returned) in one
        pipelined round trip; hand each op's result to its callback."""
        pipe = self.server.pipeline(transaction=False)
        for kind, keys, args, _ in ops:
            self._add(pipe, kind, keys, args)
        if then is not None:
            self._add(pipe, then[0], then[1], then[2])
        self.round_trips += 1
        try:
            results = pipe.execute(raise_on_error=False)
        except RedisError:
            # Redis is unreachable: keep the queued calls (first, in their order) for the next
            # round trip instead of losing the pushes, releases and acknowledgements. Some may
            # have run before the connection broke; sending them again is harmless (a push
            # finds its fingerprint seen, a release its lease gone, an ack nothing to delete).
            self._batch[:0] = ops
            raise
        if any(isinstance(r, NoScriptError) for r in results):
            # Redis lost its scripts (restart, SCRIPT FLUSH): load them and send again what
            # did not run; the plain commands before did run and are not repeated.
            self._load_scripts()
            redo = [i for i, r in enumerate(results) if isinstance(r, NoScriptError)]
            pipe = self.server.pipeline(transaction=False)
            every = ops + ([(then[0], then[1], then[2], None)] if then is not None else [])
            for i in redo:
                self._add(pipe, *every[i][:3])
            self.round_trips += 1
            for i, result in zip(redo, pipe.execute(raise_on_error=False)):
                results[i] = result
        for (kind, _, _, callback), result in zip(ops, results):
            if isinstance(result, Exception):
                logger.error("Redis %s failed: %s", kind, result)
            elif callback is not None:
                callback(result)
        if then is None:
            return None
        if isinstance(results[-1], Exception):
            raise results[-1]
        return results[-1]

    def _add(self, pipe, kind: str, keys, args) -> None:
        if kind == "hdel":
            pipe.hdel(keys[0], *args)
        else:
            args = [a.remaining_ms() if isinstance(a, _PauseSince) else a for a in args]
            pipe.evalsha(self._sha[kind], len(keys), *keys, *args)

    def flush(self) -> int:
        """Send every queued call; return how many there were."""
        if not self._batch:
            return 0
        ops, self._batch = self._batch, []
        self._run(ops)
        return len(ops)

    @property
    def queued_calls(self) -> int:
        return len(self._batch)

    # --- duplicate URL eliminator ---------------------------------------------------------------

    def add_seen(self, fingerprint: bytes) -> bool:
        """Add an 8-byte fingerprint to the seen set; True when it was new."""
        bucket, suffix = split_fingerprint(fingerprint, self.prefix_bytes)
        return bool(self._eval("add_seen", [self.bucket_key(bucket), self.k_seen_count],
                               [suffix]))

    def seen_count(self) -> int:
        return int(self.server.get(self.k_seen_count) or 0)

    def seen_keys(self) -> list[bytes]:
        """Names of the dupefilter's bucket keys (SCAN; the count key excluded)."""
        pattern = rk.glob_escape(self.bucket_key("")) + "*"
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

    def _push_call(self, host: str, payload: bytes, score: float, fingerprint: bytes | None):
        if fingerprint is None:
            bucket_key, suffix = self.bucket_key("-"), b""
        else:
            bucket, suffix = split_fingerprint(fingerprint, self.prefix_bytes)
            bucket_key = self.bucket_key(bucket)
        keys = (bucket_key, self.k_seen_count, self.host_queue_key(host), self.k_ready,
                self.host_state_key(host), self.k_size, self.k_seq)
        return keys, (suffix, repr(float(score)), payload, host)

    def push(self, host: str, payload: bytes, *, score: float,
             fingerprint: bytes | None = None) -> bool:
        """Queue a serialized request on ``host``'s queue, now.

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
        self.flush()
        keys, args = self._push_call(host, payload, score, fingerprint)
        return bool(self._eval("push", keys, args))

    def push_later(self, host: str, payload: bytes, *, score: float,
                   fingerprint: bytes | None = None,
                   callback: Callable[[bool], None] | None = None) -> None:
        """:meth:`push` at the next flush; ``callback(queued)`` receives the outcome."""
        keys, args = self._push_call(host, payload, score, fingerprint)
        self._batch.append(("push", keys, args,
                            (lambda r: callback(bool(r))) if callback else None))

    def _pop_call(self, limit: int):
        return ("pop", (self.k_ready, self.k_leases, self.k_size, self.k_pending, self.k_seq),
                (self.queue_prefix, self.host_prefix, self.lease_ttl_ms, self.MAX_POP_TRIES,
                 limit))

    def pop(self) -> Popped | Wait:
        """Send queued calls, then lease the first ready host and take its best request (see
        the module docstring), in one round trip."""
        result = self.pop_many(1)
        return result[0] if isinstance(result, list) else result

    def pop_many(self, limit: int) -> list[Popped] | Wait:
        """Like :meth:`pop`, taking up to ``limit`` requests of ``limit`` different ready hosts
        (the best request of each, hosts in order of their next-allowed time) in the same single
        round trip. Each comes with its own host lease, so the caller should ask for no more
        than it can send now: a host stays leased, and idle for every worker, until the
        request's release.

        Args:
            limit: most requests to take, >= 1.

        Returns:
            The requests taken (at least one), or :class:`Wait` when no host is ready.

        Raises:
            ValueError: ``limit < 1``.
        """
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        ops, self._batch = self._batch, []
        result = self._run(ops, then=self._pop_call(int(limit)))
        if not result[0]:
            return Wait(wait_ms=int(result[1]), now_ms=int(result[2]))
        return [Popped(member=result[i], host=result[i + 1].decode("utf-8"),
                       token=result[i + 4].decode("ascii"), now_ms=int(result[i + 2]),
                       inflight=int(result[i + 3])) for i in range(0, len(result), 5)]

    def _release_call(self, host, token, pause, response_time, error):
        keys = (self.host_state_key(host), self.k_ready, self.k_leases, self.host_queue_key(host))
        args = (token, host, int(round(pause * 1000)), int(round(response_time * 1000)),
                "1" if error else "0")
        return keys, args

    def release(self, host: str, token: str, *, pause: float, response_time: float,
                error: bool = False) -> tuple[bool, int, int]:
        """End a host lease and schedule the host's next request ``pause`` seconds from now
        (or after its Crawl-delay, whichever is longer).

        Returns:
            ``(released, now_ms, pause_ms)``; ``released`` is False when the caller no longer
            holds the lease (it expired, or the request was requeued after a worker died).
        """
        self.flush()
        result = self._eval("release", *self._release_call(host, token, pause, response_time,
                                                           error))
        return bool(result[0]), int(result[1]), int(result[2])

    def release_later(self, host: str, token: str, *, pause: float, response_time: float,
                      error: bool = False, ended: float | None = None,
                      callback: Callable[[tuple[bool, int, int]], None] | None = None) -> None:
        """:meth:`release` at the next flush.

        Args:
            ended: ``time.monotonic()`` when the exchange ended. The pause then runs from that
                moment, as Mercator's rule says, not from the flush: the pause sent is
                ``pause`` minus the seconds the release waited in this worker (never below 0;
                a robots.txt Crawl-delay still counts from the release's arrival). ``None``:
                the whole pause from the arrival.
        """
        keys, args = self._release_call(host, token, pause, response_time, error)
        if ended is not None:
            args = (args[0], args[1], _PauseSince(args[2], ended), *args[3:])
        self._batch.append(("release", keys, args, (lambda r: callback(
            (bool(r[0]), int(r[1]), int(r[2])))) if callback else None))

    def lease_host(self, host: str) -> tuple[bytes, str] | Wait:
        """Lease ``host`` for a request this worker sends itself (a watched page it owns), when
        no request holds the host and its politeness pause has passed: the request then holds
        the lease as a popped one does (meta :data:`newscrawl.meta.LEASE`), the politeness
        middleware releases it, and the pending member returned is acknowledged like a popped
        one (a dead worker's lease is freed by the others' heartbeat, nothing is requeued).

        Returns:
            ``(pending member, lease token)``, or :class:`Wait` (``wait_ms`` until the pause
            ends; -1 while a request holds the host).
        """
        self.flush()
        result = self._eval("lease_host",
                            [self.host_state_key(host), self.k_leases, self.k_ready,
                             self.k_pending, self.k_seq],
                            [host, self.lease_ttl_ms, self.OWN_MEMBER_PREFIX])
        if not result[0]:
            return Wait(wait_ms=int(result[1]), now_ms=0)
        token = result[0].decode("ascii") if isinstance(result[0], bytes) else str(result[0])
        return (self.OWN_MEMBER_PREFIX + token).encode("ascii"), token

    def ack(self, members: list[bytes]) -> int:
        """Forget finished requests of this worker (they are no longer recovered); count."""
        if not members:
            return 0
        self.flush()
        return int(self.server.hdel(self.k_pending, *members))

    def ack_later(self, members: list[bytes], callback: Callable[[int], None] | None = None):
        """:meth:`ack` at the next flush, after every call queued before it."""
        if members:
            self._batch.append(("hdel", (self.k_pending,), tuple(members), callback))

    def pending_count(self) -> int:
        return int(self.server.hlen(self.k_pending))

    def dead_letter(self, popped: Popped) -> None:
        """Move an undecodable popped entry to the dead-letter list and free its host."""
        self.flush()
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
        self.flush()
        result = self._eval(
            "heartbeat", [self.k_workers, self.k_leases, self.k_ready, self.k_size],
            [self.namespace, self.queue_prefix, self.host_prefix, self.pending_prefix,
             self.worker_id, self.worker_timeout_ms, "1" if leaving else "0"])
        return tuple(int(v) for v in result)  # type: ignore[return-value]

    def join(self, *, new_round: bool = True) -> bool:
        """Register this worker and take the current round of the seen set.

        Args:
            new_round: start a new round (an empty seen set) when the frontier is drained —
                nothing queued or leased and no worker registered (a crashed worker stays
                registered until recovered, so a restart after a crash continues its round).

        Returns:
            True when this call started a new round; the previous round's seen set is then
            deleted.
        """
        self.flush()
        current, fresh = self._eval("join", [self.k_workers, self.k_size, self.k_leases,
                                             self.k_round],
                                    [self.worker_id, self.worker_timeout_ms,
                                     "1" if new_round else "0"])
        self.round = int(current)
        if fresh:
            pattern = rk.glob_escape(self._key(rk.SEEN_BUCKET_KEY, round="", bucket=""))[:-1] + "*"
            stale = [k for k in self.server.scan_iter(match=pattern, count=1000)
                     if not k.decode().startswith(self._key(rk.SEEN_BUCKET_KEY, round=str(
                         self.round), bucket=""))]
            for start in range(0, len(stale), 500):
                self.server.unlink(*stale[start:start + 500])
        return bool(fresh)

    def current_round(self) -> int:
        """Read the current round (for users of the seen set that do not :meth:`join`)."""
        self.round = int(self.server.get(self.k_round) or 0)
        return self.round

    def read_run_marker(self) -> str | None:
        """The run marker Redis holds now (None: none, Redis lost or never had the frontier)."""
        value = self.server.get(self.k_run)
        return value.decode("ascii") if value is not None else None

    def claim_run_marker(self) -> str:
        """Set a new random run marker unless Redis holds one; take the one Redis holds as
        this worker's (:attr:`run_marker`) and return it."""
        self.flush()
        pipe = self.server.pipeline(transaction=True)
        pipe.set(self.k_run, uuid.uuid4().hex, nx=True)
        pipe.get(self.k_run)
        self.run_marker = pipe.execute()[1].decode("ascii")
        return self.run_marker

    def live_workers(self) -> list[str]:
        return [w.decode("utf-8") for w in self.server.zrange(self.k_workers, 0, -1)]

    def activity(self) -> tuple[int, int, int]:
        """``(queued requests, leased hosts, pending requests of live workers)``."""
        self.flush()
        result = self._eval("activity", [self.k_size, self.k_leases, self.k_workers],
                            [self.pending_prefix])
        return int(result[0]), int(result[1]), int(result[2])

    def __len__(self) -> int:
        return int(self.server.get(self.k_size) or 0)

    # --- per-host state -------------------------------------------------------------------------

    def set_crawl_delay(self, host: str, seconds: float) -> None:
        """Record the host's robots.txt Crawl-delay (applied by every worker's release)."""
        self.server.hset(self.host_state_key(host), "crawl_delay_ms", int(round(seconds * 1000)))

    def host_state(self, host: str) -> dict[str, str]:
        """The ``host:<host>`` hash as text (see :data:`newscrawl.distributed.keys.HOST_FIELDS`)."""
        raw = self.server.hgetall(self.host_state_key(host))
        return {k.decode(): v.decode() for k, v in raw.items()}

    def dead_letters(self) -> list[bytes]:
        return list(self.server.lrange(self.k_dead, 0, -1))

    def clear(self) -> int:
        """Delete every key of the namespace (frontier, seen set, states); count of keys."""
        self._batch = []
        pattern = rk.glob_escape(self._key(rk.NAMESPACE_KEYS)[:-1]) + "*"
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
