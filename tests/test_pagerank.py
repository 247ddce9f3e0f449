"""newscrawl.algorithms.pagerank: seed 002's PageRank scale and eviction order."""

from __future__ import annotations

import pytest

from newscrawl.algorithms.pagerank import PageInfo, eviction_order, pagerank


def test_seed_formula_on_a_graph_without_dangling_pages():
    # A <-> B, C -> A: PR(C) = 1-d; PR(A) = (1-d) + d(PR(B) + PR(C)); PR(B) = (1-d) + d PR(A)
    # (seed 002 §1.2, non-normalised). networkx redistributes nothing here (no dangling page).
    d = 0.85
    ranks = pagerank([("A", "B"), ("B", "A"), ("C", "A")], damping=d)
    c = 1 - d
    a = ((1 - d) + d * (1 - d) + d * c) / (1 - d * d)
    b = (1 - d) + d * a
    assert ranks["C"] == pytest.approx(c, rel=1e-6)
    assert ranks["A"] == pytest.approx(a, rel=1e-6)
    assert ranks["B"] == pytest.approx(b, rel=1e-6)
    assert sum(ranks.values()) == pytest.approx(3.0)


def test_linked_pages_outrank_unlinked_ones_and_mean_is_one():
    edges = [("home", f"a{i}") for i in range(5)] + [("chan", "a0"), ("a0", "home"), ("x", "x")]
    ranks = pagerank(edges, nodes=["lonely"])
    assert set(ranks) == {"home", "chan", "lonely", "x", *(f"a{i}" for i in range(5))}
    assert ranks["a0"] > ranks["a1"] > ranks["lonely"]
    assert sum(ranks.values()) / len(ranks) == pytest.approx(1.0)
    assert pagerank([]) == {}
    with pytest.raises(ValueError):
        pagerank([("a", "b")], damping=1.0)


def test_eviction_order():
    pages = {
        "seed": PageInfo(pagerank=0.01, protected=True),
        "low": PageInfo(pagerank=0.2),
        "high": PageInfo(pagerank=3.0),
        "dead": PageInfo(pagerank=5.0, misses=4),
        "unranked": PageInfo(pagerank=None),
        "mid": PageInfo(pagerank=1.0, misses=1),
    }
    assert eviction_order(pages, 6) == []
    assert eviction_order(pages, 3) == ["dead", "unranked", "low"]
    assert eviction_order(pages, 0) == ["dead", "unranked", "low", "mid", "high"]  # never the seed
    with pytest.raises(ValueError):
        eviction_order(pages, -1)
