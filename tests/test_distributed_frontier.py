"""The Redis frontier (:class:`newscrawl.distributed.frontier.RedisFrontier`) against the real
Redis server: the duplicate URL eliminator, host queues and leases, worker recovery, rounds,
batched round trips, and the keyspace of :mod:`newscrawl.distributed.keys`."""

from __future__ import annotations

import ast
import doctest
import os
import time
from pathlib import Path

import pytest

from newscrawl.algorithms.fingerprint import (
    bucket_contains,
    split_fingerprint,
    url_fingerprint_bytes,
)
from newscrawl.distributed import keys
from newscrawl.distributed.frontier import Popped, RedisFrontier, Wait
from tests.redis_helpers import namespace, redis_server  # noqa: F401  (fixtures)


def _fp(i: int) -> bytes:
    return url_fingerprint_bytes(f"http://example.com/a/{i}.html")


# --- duplicate URL eliminator --------------------------------------------------------------------


def test_push_checks_and_adds_the_fingerprint_atomically(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    fp = _fp(1)
    assert frontier.push("example.com", b"{}", score=0, fingerprint=fp)
    assert not frontier.push("example.com", b"{}", score=0, fingerprint=fp)
    assert frontier.seen_count() == 1
    assert len(frontier) == 1
    bucket, suffix = split_fingerprint(fp, 1)
    stored = redis_server.get(frontier.bucket_key(bucket))
    assert stored == suffix and len(stored) == 7
    assert not frontier.add_seen(fp)
    assert frontier.add_seen(_fp(2))


def test_bucket_scan_only_matches_on_record_boundaries(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace, prefix_bytes=1)
    # two records whose concatenation contains a third, unaligned one
    a, b = bytes([7]) + b"ABCDEFG", bytes([7]) + b"HIJKLMN"
    straddling = bytes([7]) + b"DEFGHIJ"
    assert frontier.add_seen(a) and frontier.add_seen(b)
    assert redis_server.get(frontier.bucket_key("07")) == b"ABCDEFGHIJKLMN"
    assert not bucket_contains(b"ABCDEFGHIJKLMN", b"DEFGHIJ")
    assert frontier.add_seen(straddling)
    assert not frontier.add_seen(straddling)
    assert frontier.seen_count() == 3


def test_fingerprints_cost_at_most_16_bytes_per_url_in_redis(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace, prefix_bytes=1)
    n = 10_000
    frontier._load_scripts()
    pipe = redis_server.pipeline(transaction=False)
    for i in range(n):
        bucket, suffix = split_fingerprint(_fp(i), 1)
        pipe.evalsha(frontier._sha["add_seen"], 2, frontier.bucket_key(bucket),
                     frontier.k_seen_count, suffix)
    assert sum(pipe.execute()) == n
    per_url = frontier.seen_memory() / n
    assert per_url <= 16, per_url
    # scrapy-redis's default: a set of 40-character hex SHA-1 strings
    reference = f"{namespace}:scrapy-redis-default"
    pipe = redis_server.pipeline(transaction=False)
    for i in range(n):
        pipe.sadd(reference, _fp(i).hex() + "0" * 24)
    pipe.execute()
    assert redis_server.memory_usage(reference, samples=0) / n > 4 * per_url


# --- host queues and leases ----------------------------------------------------------------------


def test_one_lease_per_host_and_priority_then_fifo(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    frontier.heartbeat()
    for payload, score in ((b"a1", 0), (b"a2", 0), (b"a-urgent", -5)):
        frontier.push("a.example", payload, score=score)
    frontier.push("b.example", b"b1", score=0)
    frontier.push("b.example", b"b1", score=0)  # identical requests do not collapse
    first, second = frontier.pop(), frontier.pop()
    assert isinstance(first, Popped) and isinstance(second, Popped)
    assert {first.host, second.host} == {"a.example", "b.example"}
    assert {first.payload, second.payload} == {b"a-urgent", b"b1"}
    assert first.inflight == second.inflight == 1
    assert isinstance(frontier.pop(), Wait)  # both hosts are in flight
    assert frontier.activity() == (3, 2, 2)
    a = first if first.host == "a.example" else second
    released, _, pause_ms = frontier.release("a.example", a.token, pause=0.0, response_time=0.01)
    assert released and pause_ms == 0
    nxt = frontier.pop()
    assert isinstance(nxt, Popped) and nxt.payload == b"a1"
    assert frontier.host_state("a.example")["lease"] == nxt.token
    assert frontier.host_state("a.example")["fetched"] == "1"


def test_pop_many_takes_one_request_per_ready_host_in_one_round_trip(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    frontier.heartbeat()
    for host in ("a.example", "b.example", "c.example"):
        for i in range(2):
            frontier.push(host, f"{host}/{i}".encode(), score=i)
    frontier.release_later("x.example", "no-such-lease", pause=0, response_time=0)
    trips = frontier.round_trips
    taken = frontier.pop_many(2)
    assert frontier.round_trips == trips + 1 and frontier.queued_calls == 0
    assert isinstance(taken, list) and len(taken) == 2
    assert len({p.host for p in taken}) == 2 and all(p.payload.endswith(b"/0") for p in taken)
    assert len({p.token for p in taken}) == 2 and all(p.inflight == 1 for p in taken)
    rest = frontier.pop_many(8)  # only one host is still free: one request, not eight
    assert [p.payload for p in rest] == [b"c.example/0"]
    assert isinstance(frontier.pop_many(8), Wait)  # every host is leased
    assert frontier.pending_count() == 3 and len(frontier) == 3
    # A worker that leaves hands back what it took and frees the hosts.
    assert frontier.heartbeat(leaving=True)[:2] == (3, 3)
    again = frontier.pop_many(8)
    assert sorted(p.payload for p in again) == [b"a.example/0", b"b.example/0", b"c.example/0"]
    with pytest.raises(ValueError):
        frontier.pop_many(0)


def test_pause_and_crawl_delay_keep_the_host_waiting(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    for i in range(3):
        frontier.push("slow.example", b"s%d" % i, score=0)
    popped = frontier.pop()
    assert frontier.release("slow.example", popped.token, pause=0.3, response_time=0.03)[0]
    wait = frontier.pop()
    assert isinstance(wait, Wait) and 200 <= wait.wait_ms <= 300
    time.sleep(0.32)
    popped = frontier.pop()
    assert isinstance(popped, Popped)
    frontier.set_crawl_delay("slow.example", 0.5)
    released, _, pause_ms = frontier.release("slow.example", popped.token, pause=0.01,
                                             response_time=0.001)
    assert released and pause_ms == 500
    state = frontier.host_state("slow.example")
    assert state["crawl_delay_ms"] == "500" and state["delay_ms"] == "500"
    assert state["inflight"] == "0" and "lease" not in state


def test_a_dead_workers_requests_and_leases_come_back(redis_server, namespace):
    dying = RedisFrontier(redis_server, namespace, worker_timeout=0.2)
    survivor = RedisFrontier(redis_server, namespace, worker_timeout=5)
    dying.heartbeat()
    survivor.heartbeat()
    dying.push("h.example", b"page", score=-3)
    taken = dying.pop()
    assert isinstance(taken, Popped)
    assert isinstance(survivor.pop(), Wait)  # leased to the dying worker
    time.sleep(0.3)  # its heartbeat runs out (kill -9: no goodbye)
    requeued, freed, expired, dead = survivor.heartbeat()
    assert (requeued, freed, dead) == (1, 1, 1)
    again = survivor.pop()
    assert isinstance(again, Popped) and again.member == taken.member
    assert not dying.release("h.example", taken.token, pause=0, response_time=0)[0]
    assert dying.worker_id not in survivor.live_workers()


def test_leases_past_their_ttl_are_freed(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace, lease_ttl=0.1)
    frontier.heartbeat()
    frontier.push("h.example", b"1", score=0)
    frontier.push("h.example", b"2", score=0)
    held = frontier.pop()
    time.sleep(0.15)
    assert frontier.heartbeat()[2] == 1
    assert frontier.host_state("h.example")["expired"] == "1"
    assert isinstance(frontier.pop(), Popped)
    assert not frontier.release("h.example", held.token, pause=0, response_time=0)[0]


def test_acknowledged_requests_are_not_requeued(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    frontier.heartbeat()
    for i in range(2):
        frontier.push(f"h{i}.example", b"x", score=0)
    done, unfinished = frontier.pop(), frontier.pop()
    frontier.release(done.host, done.token, pause=0, response_time=0)
    assert frontier.ack([done.member]) == 1
    requeued, freed, _, _ = frontier.heartbeat(leaving=True)
    assert (requeued, freed) == (1, 1)
    assert len(frontier) == 1 and frontier.live_workers() == []


def test_a_drained_frontier_starts_a_new_round_of_the_seen_set(redis_server, namespace):
    first = RedisFrontier(redis_server, namespace)
    second = RedisFrontier(redis_server, namespace, worker_timeout=0.2)
    assert first.join() and first.round == 1
    assert not second.join() and second.round == 1  # joins the running round
    assert first.push("h.example", b"x", score=0, fingerprint=_fp(1))
    second.pop()  # second takes the request and dies (no leave, no ack)
    first.heartbeat(leaving=True)
    time.sleep(0.25)
    restarted = RedisFrontier(redis_server, namespace)
    assert not restarted.join()  # the dead worker is still registered: the round goes on
    assert restarted.heartbeat()[0] == 1  # its request comes back
    assert not restarted.add_seen(_fp(1))
    restarted.ack([restarted.pop().member])
    restarted.release("h.example", restarted.host_state("h.example").get("lease", ""),
                      pause=0, response_time=0)
    restarted.heartbeat(leaving=True)
    assert len(restarted) == 0
    nxt = RedisFrontier(redis_server, namespace)
    assert nxt.join() and nxt.round == 2  # drained: a new round, known pages may come again
    assert nxt.add_seen(_fp(1))
    assert not list(redis_server.scan_iter(match=f"{namespace}:seen:1:*"))
    keep = RedisFrontier(redis_server, namespace)
    nxt.heartbeat(leaving=True)
    assert not keep.join(new_round=False) and keep.round == 2


def test_queued_calls_go_out_in_order_with_the_next_pop(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    frontier.heartbeat()
    frontier.push("h.example", b"page", score=0)
    page = frontier.pop()
    outcomes = []
    frontier.push_later("h.example", b"link", score=0, fingerprint=_fp(1), callback=outcomes.append)
    frontier.push_later("h.example", b"link", score=0, fingerprint=_fp(1), callback=outcomes.append)
    frontier.release_later("h.example", page.token, pause=0, response_time=0.001,
                           callback=outcomes.append)
    frontier.ack_later([page.member], callback=outcomes.append)
    assert frontier.queued_calls == 4 and len(frontier) == 0  # nothing sent yet
    trips = frontier.round_trips
    link = frontier.pop()
    assert frontier.round_trips == trips + 1
    assert outcomes == [True, False, (True, outcomes[2][1], 0), 1]
    assert isinstance(link, Popped) and link.payload == b"link"
    assert frontier.pending_count() == 1  # the link; the page was acknowledged


def test_a_queued_release_pauses_from_the_end_of_the_exchange(redis_server, namespace):
    import time

    frontier = RedisFrontier(redis_server, namespace)
    frontier.push("h.example", b"a", score=0)
    frontier.push("h.example", b"b", score=1)
    page = frontier.pop()
    ended = time.monotonic() - 0.300  # the exchange ended 300 ms before the release goes out
    results = []
    frontier.release_later("h.example", page.token, pause=0.5, response_time=0.05, ended=ended,
                           callback=results.append)
    frontier.flush()
    (released, now_ms, pause_ms), = results
    assert released and 150 <= pause_ms <= 200  # 500 ms minus the ~300 ms already waited
    assert int(frontier.host_state("h.example")["next_ms"]) == now_ms + pause_ms
    # A release that waited longer than its pause makes the host ready at once, never "negative".
    second = None
    while second is None:
        popped = frontier.pop()
        second = popped if isinstance(popped, Popped) else time.sleep(0.05)
    frontier.release_later("h.example", second.token, pause=0.1, response_time=0.01,
                           ended=time.monotonic() - 1.0, callback=results.append)
    frontier.flush()
    assert results[-1][0] and results[-1][2] == 0


def test_scripts_are_reloaded_after_a_script_flush(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    frontier.push("h.example", b"x", score=0)
    redis_server.script_flush()
    frontier.push_later("h.example", b"y", score=0, fingerprint=_fp(2))
    assert isinstance(frontier.pop(), Popped)
    assert len(frontier) == 1 and frontier.seen_count() == 1


def test_queued_calls_survive_a_redis_outage(redis_server, namespace, monkeypatch):
    from redis.exceptions import ConnectionError as RedisConnectionError

    frontier = RedisFrontier(redis_server, namespace)
    frontier.push("h.example", b"page", score=0)
    page = frontier.pop()
    outcomes = []
    frontier.push_later("h.example", b"link", score=0, fingerprint=_fp(7), callback=outcomes.append)
    frontier.release_later("h.example", page.token, pause=0, response_time=0.001,
                           callback=outcomes.append)
    frontier.ack_later([page.member], callback=outcomes.append)
    real_pipeline = redis_server.pipeline

    class Broken:
        def __init__(self, *args, **kwargs):
            self.inner = real_pipeline(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def execute(self, *args, **kwargs):
            raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(redis_server, "pipeline", Broken)
    with pytest.raises(RedisConnectionError):
        frontier.flush()
    with pytest.raises(RedisConnectionError):
        frontier.pop_many(4)
    assert frontier.queued_calls == 3 and outcomes == []  # nothing lost, nothing doubled
    monkeypatch.setattr(redis_server, "pipeline", real_pipeline)
    link = frontier.pop()  # Redis is back: the queued calls go out first, in order
    assert outcomes == [True, (True, outcomes[1][1], 0), 1]
    assert isinstance(link, Popped) and link.payload == b"link"
    assert frontier.pending_count() == 1 and frontier.queued_calls == 0


# --- client, namespace, keyspace -----------------------------------------------------------------


def test_frontier_refuses_a_decoding_client(namespace):
    redis = pytest.importorskip("redis")
    from tests.redis_helpers import REDIS_URL, redis_client

    redis_client()
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    with pytest.raises(ValueError):
        RedisFrontier(client, namespace)


def test_clear_deletes_the_namespace_only(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    frontier.push("example.com", b"x", score=0, fingerprint=_fp(1))
    redis_server.set(f"{namespace}x:keep", 1)
    try:
        assert frontier.clear() >= 4
        assert list(redis_server.scan_iter(match=f"{namespace}:*")) == []
        assert redis_server.get(f"{namespace}x:keep") == b"1"
    finally:
        redis_server.delete(f"{namespace}x:keep")


def test_worker_ids_differ():
    assert RedisFrontier.__init__  # noqa: B018
    from newscrawl.distributed.frontier import new_worker_id

    assert new_worker_id() != new_worker_id()
    assert str(os.getpid()) in new_worker_id()


def test_the_keyspace_examples_hold():
    assert doctest.testmod(keys).failed == 0


def test_no_module_but_keys_spells_a_redis_key():
    """Code strings of the package (docstrings aside) hold no ``:<key name>`` of the keyspace."""
    names = {template.split(")s", 1)[1].split("%", 1)[0] for name, template in vars(keys).items()
             if name.endswith("_KEY")}
    assert ":q:" in names and ":deadletter" in names
    package = Path(keys.__file__).parent
    for path in package.glob("*.py"):
        if path.name == "keys.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and id(node) not in docstrings:
                assert not [n for n in names if n in node.value], (path.name, node.value[:80])


def test_frontier_keys_follow_the_templates(redis_server, namespace):
    frontier = RedisFrontier(redis_server, namespace)
    frontier.heartbeat()
    frontier.push("h.example", b"x", score=0, fingerprint=_fp(3))
    frontier.pop()
    expected = {keys.key(keys.HOST_STATE_KEY, namespace, host="h.example"),
                keys.key(keys.LEASES_KEY, namespace), keys.key(keys.WORKERS_KEY, namespace),
                keys.key(keys.SIZE_KEY, namespace), keys.key(keys.SEQ_KEY, namespace),
                keys.key(keys.SEEN_COUNT_KEY, namespace, round="0"),
                keys.key(keys.PENDING_KEY, namespace, worker=frontier.worker_id)}
    present = {k.decode() for k in redis_server.scan_iter(match=f"{namespace}:*")}
    assert expected <= present
    assert all(k.startswith(f"{namespace}:") for k in present)
