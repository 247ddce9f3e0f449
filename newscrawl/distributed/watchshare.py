"""The shared schedule of watch workers in Redis: live workers, channel claims, estimates.

Several ``scrapy crawl news -a watch=1`` workers on one ``REDIS_URL`` share one schedule (the
pure rules are :mod:`newscrawl.algorithms.watchshare`; the Scrapy side is
:mod:`extensions.watchshare`). Each call is one atomic Lua script or one pipelined round trip:

* :meth:`SharedSchedule.heartbeat` — renew this worker in ``watch:workers`` (score = heartbeat
  expiry, Redis clock), drop workers whose heartbeat ran out, return the live ones (or leave);
* :meth:`SharedSchedule.take` — claim channels for a visit: a channel whose shared due time in
  ``watch:due`` has passed (or that has none) gets ``now + claim_ttl`` and this worker in
  ``watch:by``; the others come back with their due time. Two workers can never claim one
  channel before its due time (the guard against fetching a page twice within its interval);
* :meth:`SharedSchedule.unclaim` — hand back a claim whose request never went out;
* :meth:`SharedSchedule.visited` — after a visit: the scheduler's next due time in
  ``watch:due`` and the channel's estimate (the record's ``sched``, last visit, due) in
  ``watch:sched``, so the worker taking the channel over goes on from it.

Due times are the run clock's epoch seconds (stored as milliseconds): the workers' clocks must
agree to well within a revisit interval (NTP). Keys: :mod:`newscrawl.distributed.keys`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from redis.exceptions import RedisError

from newscrawl.distributed import keys as rk

__all__ = ["SharedSchedule", "ScheduleError"]

logger = logging.getLogger(__name__)

#: What the shared schedule's calls (and the frontier's) raise when Redis does not answer:
#: callers outside this package catch it without importing redis.
ScheduleError = RedisError

# KEYS: workers. ARGV: worker, heartbeat ttl ms, leaving ('1'/'0').
# Returns {now ms, live worker, ...}.
_SCRIPT_HEARTBEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
end
local out = {now}
for _, w in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do out[#out + 1] = w end
return out
"""

# KEYS: due, by, sched. ARGV: now ms, claim-until ms, worker, channel, channel, ...
# Returns {channel, 1, estimate or '', ...} for claimed channels and {channel, 0, due ms} for
# the others (twin of newscrawl.algorithms.watchshare.may_take).
_SCRIPT_TAKE = """
local now, claim_end = tonumber(ARGV[1]), ARGV[2]
local out = {}
for i = 4, #ARGV do
  local fp = ARGV[i]
  local due = redis.call('ZSCORE', KEYS[1], fp)
  if (not due) or tonumber(due) <= now then
    redis.call('ZADD', KEYS[1], claim_end, fp)
    redis.call('HSET', KEYS[2], fp, ARGV[3])
    out[#out + 1] = fp
    out[#out + 1] = 1
    out[#out + 1] = redis.call('HGET', KEYS[3], fp) or ''
  else
    out[#out + 1] = fp
    out[#out + 1] = 0
    out[#out + 1] = due
  end
end
return out
"""

# KEYS: due, by. ARGV: channel, worker, due ms. Only the holder of the claim hands it back.
_SCRIPT_UNCLAIM = """
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


class SharedSchedule:
    """The watch keys of one crawl namespace (see the module docstring).

    Args:
        server: a ``redis.Redis`` client (``decode_responses`` either way).
        namespace: key namespace (``news``).
        worker_id: this worker's id (unique over machines and restarts).
        worker_timeout: heartbeat lifetime (seconds, > 0).

    Raises:
        ValueError: a ``worker_timeout`` that is not > 0.
    """

    def __init__(self, server: Any, namespace: str, worker_id: str, *,
                 worker_timeout: float) -> None:
        if not worker_timeout > 0:
            raise ValueError(f"NEWSCRAWL_REDIS_WORKER_TIMEOUT must be > 0 seconds, got "
                             f"{worker_timeout!r}")
        self.server = server
        self.worker_id = worker_id
        self.worker_timeout_ms = int(worker_timeout * 1000)
        self.k_workers = rk.key(rk.WATCH_WORKERS_KEY, namespace)
        self.k_due = rk.key(rk.WATCH_DUE_KEY, namespace)
        self.k_by = rk.key(rk.WATCH_BY_KEY, namespace)
        self.k_sched = rk.key(rk.WATCH_SCHED_KEY, namespace)
        self._heartbeat = server.register_script(_SCRIPT_HEARTBEAT)
        self._take = server.register_script(_SCRIPT_TAKE)
        self._unclaim = server.register_script(_SCRIPT_UNCLAIM)

    def heartbeat(self, *, leaving: bool = False) -> list[str]:
        """Renew this worker (or remove it, ``leaving``); the live workers, sorted.

        Raises:
            redis.exceptions.RedisError: Redis does not answer.
        """
        result = self._heartbeat(keys=[self.k_workers],
                                 args=[self.worker_id, self.worker_timeout_ms,
                                       "1" if leaving else "0"])
        return sorted(_text(w) for w in result[1:])

    def take(self, channels: Iterable[str], *, now: float,
             until: float) -> tuple[dict[str, dict[str, Any] | None], dict[str, float]]:
        """Claim ``channels`` at run-clock ``now`` until ``until`` (epoch seconds).

        Returns:
            ``(claimed, refused)``: the claimed channels with the estimate another worker
            published (None when none or unreadable), and the others with their shared due
            time (epoch seconds).
        """
        fps = list(channels)
        if not fps:
            return {}, {}
        result = self._take(keys=[self.k_due, self.k_by, self.k_sched],
                            args=[int(now * 1000), int(until * 1000), self.worker_id, *fps])
        claimed: dict[str, dict[str, Any] | None] = {}
        refused: dict[str, float] = {}
        for i in range(0, len(result), 3):
            fp, ok, value = _text(result[i]), int(result[i + 1]), result[i + 2]
            if ok:
                claimed[fp] = _estimate(value)
            else:
                refused[fp] = float(value) / 1000.0
        return claimed, refused

    def unclaim(self, channel: str, *, due: float) -> bool:
        """Hand back this worker's claim of ``channel``: due again at ``due`` (epoch s)."""
        return bool(self._unclaim(keys=[self.k_due, self.k_by],
                                  args=[channel, self.worker_id, int(due * 1000)]))

    def visited(self, channel: str, *, due: float, estimate: Mapping[str, Any]) -> None:
        """Publish a visit of ``channel``: its next due time (epoch s) and its estimate."""
        pipe = self.server.pipeline(transaction=True)
        pipe.zadd(self.k_due, {channel: int(due * 1000)})
        pipe.hset(self.k_sched, channel, json.dumps(dict(estimate), separators=(",", ":")))
        pipe.execute()

    def due_before(self, until: float, *, limit: int = 1000) -> list[str]:
        """Channels whose shared due time is before ``until`` (epoch seconds), earliest first,
        at most ``limit``."""
        fps = self.server.zrangebyscore(self.k_due, "-inf", int(until * 1000), start=0,
                                        num=limit)
        return [_text(fp) for fp in fps]

    def estimates(self, channels: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The published estimates of ``channels`` (those with one)."""
        fps = list(channels)
        if not fps:
            return {}
        values = self.server.hmget(self.k_sched, fps)
        return {fp: est for fp, v in zip(fps, values) if (est := _estimate(v)) is not None}


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _estimate(value: Any) -> dict[str, Any] | None:
    """A published estimate (JSON object), None for nothing or junk (logged)."""
    if not value:
        return None
    try:
        data = json.loads(_text(value))
    except ValueError:
        logger.warning("Unreadable channel estimate in Redis: %.80r", value)
        return None
    return data if isinstance(data, dict) else None
