"""The per-host queue (:class:`newscrawl.distributed.queue.HostQueue`) and the pinned request
serializers against the real Redis server: round trips, batches, dead letters."""

from __future__ import annotations

import pickle

import pytest
import scrapy
from scrapy.utils.test import get_crawler

from newscrawl import meta
from newscrawl.distributed.queue import HostQueue
from newscrawl.distributed.serializer import (
    JsonSerializer,
    PickleSerializer,
    SerializationError,
    get_serializer,
)
from tests.redis_helpers import TestSpider as _Spider
from tests.redis_helpers import namespace, redis_server  # noqa: F401  (fixtures)


def _queue(redis_server, namespace, serializer="json"):
    crawler = get_crawler(_Spider)
    spider = _Spider()
    spider.crawler = crawler
    return HostQueue(redis_server, spider, namespace, get_serializer(serializer),
                     stats=crawler.stats), crawler


@pytest.mark.parametrize("serializer", ["json", "pickle"])
def test_requests_survive_the_round_trip(redis_server, namespace, serializer):
    queue, _ = _queue(redis_server, namespace, serializer)
    request = scrapy.Request(
        "http://www.example.com/a.html", callback=queue.spider.parse_article, method="POST",
        body=b"\x00\xffbinary", headers={"X-Test": "1"}, priority=7, cookies={"c": "v"},
        meta={"newscrawl_depth": 2, "newscrawl_features": {"image": 1}, "pair": (1, "b"),
              "by_int": {3: "three"}, "raw": b"\x01", "$odd": None, meta.LEASE: ["x", "y"]})
    assert queue.push(request)
    out = queue.pop()
    assert out.url == request.url and out.method == "POST" and out.body == request.body
    assert out.callback == queue.spider.parse_article and out.priority == 7
    assert out.headers.getlist("X-Test") == [b"1"]
    assert out.meta["pair"] == (1, "b") and out.meta["by_int"] == {3: "three"}
    assert out.meta["raw"] == b"\x01" and out.meta["$odd"] is None
    assert out.meta[meta.LEASE][0] == "example.com"  # the new lease, not the copied one


def test_the_queue_hands_out_a_batch_taken_in_one_round_trip(redis_server, namespace):
    queue, _ = _queue(redis_server, namespace)
    for i in range(4):
        assert queue.push(scrapy.Request(f"http://h{i}.example/page"))
    trips = queue.frontier.round_trips
    request, popped = queue.pop_entry(limit=3)
    assert queue.frontier.round_trips == trips + 1
    assert len(queue.taken) == 2 and len(queue) == 3  # taken but not handed out still counts
    urls = {request.url} | {queue.pop_entry(limit=3)[0].url for _ in range(2)}
    assert queue.frontier.round_trips == trips + 1  # the other two came from the batch
    assert len(urls) == 3 and request.meta[meta.LEASE] == [popped.host, popped.token]
    last, _ = queue.pop_entry(limit=3)
    assert last.url not in urls and queue.pop_entry(limit=3) is None


def test_serializers_are_pinned():
    obj = {"url": "http://example.com/", "headers": {b"A": [b"b"]}}
    assert PickleSerializer().dumps(obj)[1] == 4  # pickle protocol 4
    data = JsonSerializer().dumps(obj)
    assert data.startswith(b"{") and JsonSerializer().loads(data) == obj
    assert PickleSerializer().loads(data) == obj  # pickle workers read JSON entries
    with pytest.raises(SerializationError):
        JsonSerializer().loads(pickle.dumps(obj, protocol=5))
    with pytest.raises(SerializationError):
        JsonSerializer().dumps({"s": {1, 2}})
    with pytest.raises(ValueError):
        get_serializer("marshal")


def test_undecodable_entries_go_to_the_dead_letter_list(redis_server, namespace):
    queue, crawler = _queue(redis_server, namespace)
    queue.frontier.push("example.com", pickle.dumps({"url": "x"}, protocol=5), score=0)
    queue.frontier.push("example.com", b'{"url": "http://example.com/b", "callback": "nope"}',
                        score=1)
    queue.push(scrapy.Request("http://example.com/ok"))
    good = queue.pop()  # the pickle is a dead letter; its host is freed at once
    assert good.url == "http://example.com/ok"
    assert len(queue.frontier.dead_letters()) == 1
    queue.frontier.release(*good.meta[meta.LEASE], pause=0, response_time=0)
    assert queue.pop() is None  # the unknown callback is the second dead letter
    assert len(queue.frontier.dead_letters()) == 2 and len(queue) == 0
    assert crawler.stats.get_value("newscrawl/redis/dead_letter") == 2
