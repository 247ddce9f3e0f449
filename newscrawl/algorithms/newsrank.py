"""NewsPageRank: prominence weights of news pages from link markup (seed 004 §3; DESIGN.md §3).

For a link P with binary features P_i (image, font_size, bold, html_tag) and the scoring matrix
W_i (default .5/.2/.1/.2), ``r0(P) = Σ W_i·P_i`` and ``r(P) = r0(P) · r(P_in)``, where P_in is the
page holding the link and an entry URL has ``r = 1``. A page with several in-links keeps the
maximum over them: its most prominent placement anywhere on the site.

Zero-weight degeneracy: the published formula gives ``r = 0`` to every page reached through a
featureless node link (a plain-text channel link has P = 0 on all four features), and then to
everything below it, so all deep articles tie at zero. Remedy (documented, configurable): r0 is
raised to at least ``floor`` (``NEWSCRAWL_NEWSRANK_FLOOR``, default 0.05). Because 0 < floor ≤ r0
≤ 1, the order of the formula is kept wherever it was defined, depth still lowers weight
geometrically, and the maximum over paths is a shortest-path problem with lengths −ln r0 ≥ 0,
solved with networkx's Dijkstra. ``floor=0`` gives the published formula unchanged.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

import networkx as nx

#: Feature names in the order of seed 004's table.
FEATURES = ("image", "font_size", "bold", "html_tag")
DEFAULT_WEIGHTS = {"image": 0.5, "font_size": 0.2, "bold": 0.1, "html_tag": 0.2}


def validate_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """Check a scoring matrix and return it as a plain dict.

    Raises:
        ValueError: a feature missing or unknown, a weight outside [0, 1], or a sum above 1
            (r0 must stay ≤ 1 so that weights never grow with depth).
    """
    unknown = set(weights) - set(FEATURES)
    missing = set(FEATURES) - set(weights)
    if unknown or missing:
        raise ValueError(f"scoring matrix needs exactly {FEATURES}; unknown={sorted(unknown)} "
                         f"missing={sorted(missing)}")
    out = {name: float(weights[name]) for name in FEATURES}
    if any(not 0.0 <= w <= 1.0 for w in out.values()):
        raise ValueError(f"scoring matrix weights must lie in [0, 1]: {out}")
    if sum(out.values()) > 1.0 + 1e-9:
        raise ValueError(f"scoring matrix weights must sum to at most 1: {out}")
    return out


def link_score(features: Mapping[str, int], weights: Mapping[str, float] = DEFAULT_WEIGHTS, *,
               floor: float = 0.0) -> float:
    """Return ``r0 = max(Σ W_i·P_i, floor)`` for one link.

    Args:
        features: feature name → 0/1 (missing features count 0).
        weights: the scoring matrix (see :func:`validate_weights`).
        floor: the zero-weight remedy, 0 ≤ floor ≤ 1.

    Returns:
        r0 in [floor, 1].
    """
    r0 = sum(weights[name] for name in FEATURES if features.get(name))
    return max(min(r0, 1.0), floor)


def propagate(edges: Iterable[tuple[str, str, float]], entries: Iterable[str]) -> dict[str, float]:
    """Return the NewsPageRank weight of every page reachable from the entries.

    ``r(v) = max over in-links (u → v) of r0(u → v) · r(u)``, with ``r(entry) = 1`` — the
    most prominent path from any entry, found by Dijkstra on lengths ``−ln r0``.

    Args:
        edges: ``(source, target, r0)`` with 0 ≤ r0 ≤ 1; edges with r0 = 0 carry no weight.
        entries: the entry pages (weight 1).

    Returns:
        page → weight in (0, 1]; pages reachable only through zero edges are absent.

    Raises:
        ValueError: an r0 outside [0, 1].
    """
    graph = nx.DiGraph()
    for source, target, r0 in edges:
        if not 0.0 <= r0 <= 1.0:
            raise ValueError(f"r0 must lie in [0, 1], got {r0!r} on {source} -> {target}")
        if r0 == 0.0 or source == target:
            continue
        length = -math.log(r0)
        old = graph.get_edge_data(source, target)
        if old is None or length < old["length"]:
            graph.add_edge(source, target, length=length)
    sources = [e for e in entries]
    graph.add_nodes_from(sources)
    if not sources:
        return {}
    lengths = nx.multi_source_dijkstra_path_length(graph, set(sources), weight="length")
    return {page: math.exp(-length) for page, length in lengths.items()}
