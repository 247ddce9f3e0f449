"""The real Redis server for tests: a client fixture and a fresh key namespace per test.

Tests that need Redis are skipped with a reason naming Redis when it cannot be reached (set
``NEWSCRAWL_TEST_REDIS_URL``, default ``redis://127.0.0.1:6379/0``); there is no mock.
"""

from __future__ import annotations

import os
import uuid

import pytest

REDIS_URL = os.environ.get("NEWSCRAWL_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


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
