"""PageRank over the crawled link graph, and eviction by it (pure; seed 002 §1.2, seed 000).

Seed 002 §1.2 (after Brin & Page 1998): ``PR(A) = (1 − d) + d · Σ PR(Tᵢ)/C(Tᵢ)`` over the pages
``Tᵢ`` linking ``A``, ``C(T)`` the number of links out of ``T``, ``d = 0.85``. It ranks pages for
the update module: which known pages to revisit first and which to evict when the store is
bounded.

Computed with networkx's ``pagerank`` (power iteration on a scipy sparse matrix; Hagberg et al.,
"Exploring network structure, dynamics, and function using NetworkX", SciPy 2008), which solves
the normalised form ``pr(A) = (1 − d)/N + d · Σ pr(Tᵢ)/C(Tᵢ)`` (Σ pr = 1) and gives the rank of
pages without out-links (articles, whose links we do not store) to all pages evenly, as the
random surfer model does. We return ``N · pr``: the seed's scale, where the mean rank is 1 and
``(1 − d)`` is the rank of a page nobody links. On a graph without dangling pages the two are
the same fixed point; with dangling pages the seed's formula leaks rank and the normalised one
does not, which is why the well-kept implementation uses it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import networkx as nx

__all__ = ["DAMPING", "PageInfo", "eviction_order", "pagerank"]

#: The damping factor of seed 002 ("一般把d设定为0.85").
DAMPING = 0.85


def pagerank(
    edges: Iterable[tuple[str, str]],
    *,
    nodes: Iterable[str] = (),
    damping: float = DAMPING,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> dict[str, float]:
    """PageRank of every page of the graph, on the seed's scale (mean 1).

    Args:
        edges: ``(source, target)`` links; duplicates count once, self-links are dropped
            (a page does not vote for itself; the page is kept).
        nodes: pages to include even without links (they get the rank of an unlinked page).
        damping: ``d`` in (0, 1).
        tol: convergence tolerance of the power iteration (networkx: per-node L1 error × N).
        max_iter: iteration limit.

    Returns:
        page → rank ≥ 0; empty for an empty graph.

    Raises:
        ValueError: ``damping`` outside (0, 1).
        networkx.PowerIterationFailedConvergence: no convergence within ``max_iter`` (does not
            happen for ``d < 1`` with the default limit on real graphs: the error shrinks by
            ``d`` per iteration, 0.85²⁰⁰ ≈ 8e-15).
    """
    if not 0.0 < damping < 1.0:
        raise ValueError(f"damping must lie in (0, 1), got {damping}")
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    for source, target in edges:
        if source == target:
            graph.add_node(source)
        else:
            graph.add_edge(source, target)
    n = graph.number_of_nodes()
    if n == 0:
        return {}
    ranks = nx.pagerank(graph, alpha=damping, tol=tol, max_iter=max_iter)
    return {page: value * n for page, value in ranks.items()}


@dataclass(frozen=True, slots=True)
class PageInfo:
    """What eviction needs to know about one stored page.

    Attributes:
        pagerank: its PageRank (seed scale); None when not computed yet (ranked lowest).
        misses: consecutive failed visits (HTTP errors, timeouts).
        protected: never evicted (seed pages).
    """

    pagerank: float | None = None
    misses: int = 0
    protected: bool = False


def eviction_order(
    pages: Mapping[str, PageInfo], max_pages: int, *, miss_limit: int = 3
) -> list[str]:
    """The pages to evict so that at most ``max_pages`` remain, most evictable first.

    Seed 000: "淘汰算法可以有根据pagerank值,或根据最近连续未访问到的次数" — evict by PageRank or by
    the number of consecutive visits that failed. Pages with at least ``miss_limit`` consecutive
    misses go first (most misses first), then the rest by ascending PageRank; ties by key, so the
    order is deterministic. Protected pages are never chosen, even when they alone exceed the
    limit.

    Raises:
        ValueError: ``max_pages < 0``.
    """
    if max_pages < 0:
        raise ValueError(f"max_pages must be >= 0, got {max_pages}")
    excess = len(pages) - max_pages
    if excess <= 0:
        return []

    def key(item: tuple[str, PageInfo]) -> tuple[int, int, float, str]:
        fp, info = item
        gone = info.misses >= miss_limit
        rank = info.pagerank
        rank = -math.inf if rank is None or not math.isfinite(rank) else rank
        return (0 if gone else 1, -info.misses if gone else 0, rank, fp)

    candidates = sorted(((fp, i) for fp, i in pages.items() if not i.protected), key=key)
    return [fp for fp, _ in candidates[:excess]]
