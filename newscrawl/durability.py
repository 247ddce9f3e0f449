"""The durability barrier of a run: what a worker may acknowledge as done.

A distributed worker acknowledges a finished request to Redis only once everything the crawl
learned from it (the item, the crawl-state record) is stored or spilled to disk, so a ``kill -9``
never loses a page that the shared frontier already counts as done. The component that owns the
run's writes (the store extension) implements :class:`Durable`; the distributed scheduler finds it
with ``crawler.get_extension(Durable)`` without importing the extension's package.
"""

from __future__ import annotations

import abc


class Durable(abc.ABC):
    """A run-wide writer that can say how far its writes are durable."""

    @abc.abstractmethod
    def durable_time(self) -> float:
        """``time.monotonic()`` (seconds) before which every item and crawl-state observation
        received is stored or spilled; ``float("inf")`` when the run records nothing or the
        store refuses writes (acknowledgements must not wait for an outage)."""
