"""A DNS resolver for the hostile crawl: a fixed map of test names to loopback addresses.

Installed with ``-s TWISTED_DNS_RESOLVER=tests.hostile.resolver.MapResolver``; the map comes from the
environment variable ``HOSTILE_DNS`` (``name=address,...``). Any other name fails to resolve,
so the hostile crawl never asks a real DNS server anything.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.error import DNSLookupError

#: Test host names → host key of :data:`tests.hostile.site.HOSTS`.
NAMES = {
    "news.hostile.test": "main",
    "www.xn--bcher-kva.test": "main",  # www.bücher.test
    "metadata.hostile.test": "trap",
}


def _parse(text: str) -> dict[str, str]:
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {name.strip().lower(): address.strip() for name, address in pairs}


class MapResolver(CachingThreadedResolver):
    """Answer the names of ``HOSTILE_DNS``; IP literals as themselves; nothing else."""

    def __init__(self, reactor: Any, cache_size: int, timeout: float) -> None:
        super().__init__(reactor, cache_size, timeout)
        self.names = _parse(os.environ.get("HOSTILE_DNS", ""))

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred:  # noqa: N802
        address = self.names.get(name.lower().rstrip("."))
        if address is not None:
            return defer.succeed(address)
        if name.replace(".", "").isdigit():
            return defer.succeed(name)
        return defer.fail(DNSLookupError(f"{name} is not in the hostile test map"))
