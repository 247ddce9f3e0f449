"""NewsPageRank scores and propagation (newscrawl.algorithms.newsrank), on fixtures and on a
real portal home page."""

import pytest
from lxml import html

from newscrawl.algorithms.linkclass import CONTENT, classify_page
from newscrawl.algorithms.linkextract import extract_links
from newscrawl.algorithms.newsrank import DEFAULT_WEIGHTS, link_score, propagate, validate_weights
from tests.conftest import shared_path


def test_link_score_is_the_weighted_sum():
    assert link_score({"image": 1, "font_size": 1, "bold": 1, "html_tag": 1}) == pytest.approx(1.0)
    assert link_score({"image": 1, "html_tag": 1}) == pytest.approx(0.7)
    assert link_score({"bold": 1}) == pytest.approx(0.1)
    assert link_score({}) == 0.0
    assert link_score({}, floor=0.05) == 0.05


def test_validate_weights_rejects_bad_matrices():
    assert validate_weights(DEFAULT_WEIGHTS) == DEFAULT_WEIGHTS
    with pytest.raises(ValueError):
        validate_weights({"image": 0.5})
    with pytest.raises(ValueError):
        validate_weights({"image": 0.9, "font_size": 0.2, "bold": 0.1, "html_tag": 0.2})
    with pytest.raises(ValueError):
        validate_weights({"image": -0.1, "font_size": 0.2, "bold": 0.1, "html_tag": 0.2})


def test_propagate_keeps_the_maximum_over_in_links():
    edges = [("E", "N", 0.2), ("N", "A", 0.7), ("E", "A", 0.3), ("E", "B", 0.0), ("A", "E", 1.0)]
    weights = propagate(edges, ["E"])
    assert weights["E"] == 1.0
    assert weights["N"] == pytest.approx(0.2)
    assert weights["A"] == pytest.approx(0.3)  # max(0.2*0.7, 0.3)
    assert "B" not in weights  # zero edge: the published formula's degeneracy


def test_floor_remedy_keeps_order_below_featureless_node_links():
    floor = 0.05
    node = link_score({}, floor=floor)
    headline = link_score({"image": 1, "font_size": 1, "html_tag": 1}, floor=floor)
    plain = link_score({"html_tag": 1}, floor=floor)
    weights = propagate([("E", "N", node), ("N", "H", headline), ("N", "P", plain)], ["E"])
    assert weights["H"] > weights["P"] > 0
    assert weights["H"] == pytest.approx(node * headline)


def test_propagate_rejects_out_of_range_scores():
    with pytest.raises(ValueError):
        propagate([("a", "b", 1.5)], ["a"])
    assert propagate([("a", "b", 0.5)], []) == {}


def _page_edges(name, url):
    path = shared_path("corpus", "01_frontpage-archive_de_home-sections", "sueddeutsche.de_2024-10-01", name)
    page = classify_page(url, extract_links(html.fromstring(path.read_bytes()), url))
    return page, [(url, link.url, link_score(link.features, floor=0.05)) for link in page.links]


def test_front_page_headlines_outrank_deep_items_on_a_real_home_page():
    """sueddeutsche.de home and sport pages (2024-10-01): every article teased on the home page
    outweighs every article reachable only through the sport channel page, the sport channel's
    own articles keep distinct non-zero weights (the floor remedy), and an article on both pages
    keeps its larger (home page) weight."""
    home_url, sport_url = "https://www.sueddeutsche.de/", "https://www.sueddeutsche.de/sport"
    home, home_edges = _page_edges("index.html", home_url)
    sport, sport_edges = _page_edges("sport.html", sport_url)
    weights = propagate(home_edges + sport_edges, [home_url])
    on_home = {link.url for link in home.by_role(CONTENT)}
    sport_only = {link.url for link in sport.by_role(CONTENT)} - on_home
    assert len(on_home) > 100 and len(sport_only) > 30
    assert min(weights[u] for u in on_home) > max(weights[u] for u in sport_only)
    hendel = "https://www.sueddeutsche.de/sport/berlin-marathon-hendel-lux.GoPAarjxoHNezv1hVvgdhr"
    assert hendel in sport_only and 0 < weights[hendel] < 0.5
    both = on_home & {link.url for link in sport.by_role(CONTENT)}
    assert both, "some sport articles are teased on both pages"
    for url in both:
        direct = max(r0 for s, t, r0 in home_edges if t == url)
        assert weights[url] == pytest.approx(direct)
    # Without the floor remedy, articles under a featureless node link would all be zero.
    zero = propagate([(s, t, link_score(dict(features), floor=0.0)) for s, t, features in [
        (home_url, "channel", {}), ("channel", "article", {"image": 1, "html_tag": 1})]], [home_url])
    assert "article" not in zero
