"""Crawl-order strategies as request priorities (seed 003: breadth-first, depth-first,
best-first with a value function).

Scrapy's scheduler pops the highest priority first and, within one priority, first in first out
(``SCHEDULER_MEMORY_QUEUE = FifoMemoryQueue`` in the project settings). A strategy is therefore a
priority function of the request's node depth, its NewsPageRank weight and its URL.
"""

from __future__ import annotations

from urllib.parse import urlsplit

STRATEGIES = ("bfs", "dfs", "best")


def url_depth(url: str) -> int:
    """Number of non-empty path segments of ``url`` (``/a/b/c.html`` → 3)."""
    return sum(1 for part in urlsplit(url).path.split("/") if part)


def request_priority(strategy: str, *, depth: int, weight: float, url: str) -> int:
    """Return the Scrapy request priority for a strategy.

    Args:
        strategy: ``"bfs"`` (shallower node depth first), ``"dfs"`` (deeper first) or
            ``"best"`` (higher NewsPageRank weight first, then shallower URL directory depth —
            seed 003's early importance signal).
        depth: node-link depth below the entry URL (entry = 0).
        weight: NewsPageRank weight in [0, 1] (used by ``best``).
        url: the request URL (used by ``best``).

    Returns:
        An int priority (higher is scheduled first).

    Raises:
        ValueError: an unknown strategy.
    """
    if strategy == "bfs":
        return -depth
    if strategy == "dfs":
        return depth
    if strategy == "best":
        return int(round(max(0.0, min(weight, 1.0)) * 10_000)) * 100 - min(url_depth(url), 99)
    raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
