"""The real Redis server for tests: a client fixture, a fresh key namespace per test, and the
settings of a distributed crawler built in the test process.

Tests that need Redis are skipped with a reason naming Redis when it cannot be reached (set
``NEWSCRAWL_TEST_REDIS_URL``, default ``redis://127.0.0.1:6379/15``: a database of its own, never
the default database 0 a developer's crawls use); there is no mock.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest
import scrapy

REDIS_URL = os.environ.get("NEWSCRAWL_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def redis_client():
    """A ``redis.Redis`` client on the test server, or skip naming Redis."""
    redis = pytest.importorskip("redis")
    client = redis.Redis.from_url(REDIS_URL, socket_timeout=5, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.exceptions.RedisError as exc:
        pytest.skip(f"needs a Redis server at {REDIS_URL} ({exc}); start one with "
                    "redis-server --port 6379")
    return client


def delete_namespace(client, namespace: str) -> None:
    keys = list(client.scan_iter(match=f"{namespace}:*", count=1000))
    for start in range(0, len(keys), 500):
        client.delete(*keys[start:start + 500])


def distributed_settings(namespace: str, **settings: Any) -> dict[str, Any]:
    """Settings of a crawler built with ``get_crawler`` on the test Redis: the defaults and the
    distributed add-on (as the project settings enable them), this test's namespace, then
    ``settings``."""
    return {
        "ADDONS": {"newscrawl.addon.DefaultsAddon": 0,
                   "newscrawl.distributed.addon.DistributedAddon": 0},
        "REDIS_URL": REDIS_URL,
        "NEWSCRAWL_DISTRIBUTED": True,
        "NEWSCRAWL_REDIS_NAMESPACE": namespace,
        **settings,
    }


@pytest.fixture
def redis_server():
    client = redis_client()
    yield client
    client.close()


@pytest.fixture
def namespace(redis_server):
    name = f"nctest-{uuid.uuid4().hex[:10]}"
    yield name
    delete_namespace(redis_server, name)


class TestSpider(scrapy.Spider):
    """A spider for building distributed components in tests (its callbacks do nothing)."""

    __test__ = False
    name = "nctest"

    def parse(self, response):
        pass

    def parse_article(self, response):
        pass
