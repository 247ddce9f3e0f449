"""NewsRankPipeline as a Scrapy component: online weights, the end-of-run maximum, and the one
hand-over of final weights to the store's writer."""

import pytest
from scrapy.exceptions import NotConfigured

from newscrawl.fingerprint import NewsRequestFingerprinter
from pipelines.newsrank import NewsRankPipeline
from tests.conftest import component_crawler

E, N, A = "https://s.example/", "https://s.example/politik/", "https://s.example/politik/a-b-c-d-1.html"
fp = NewsRequestFingerprinter().page_fp


def _pipeline(settings=None, extensions=("crawlstate",)):
    return NewsRankPipeline.from_crawler(component_crawler(settings, extensions=extensions))


def _link(source, target, **features):
    return {"source_fp": fp(source), "target_fp": fp(target), "features": features}


def test_online_weight_and_final_maximum_over_in_links():
    p = _pipeline()
    entry = p.process_item({"fp": fp(E), "role": "entry", "kind": "node",
                            "links": [_link(E, N), _link(E, A, image=1, html_tag=1)]})
    assert entry["weight"] == 1.0
    node = p.process_item({"fp": fp(N), "role": "node", "kind": "node", "referer": E,
                           "features": {}, "parent_weight": 1.0, "links": [_link(N, A, html_tag=1)]})
    assert node["r0"] == pytest.approx(0.05) and node["weight"] == pytest.approx(0.05)
    # The article arrives first through the channel (low weight) ...
    art = p.process_item({"fp": fp(A), "role": "content", "kind": "article", "referer": N,
                          "features": {"html_tag": 1}, "parent_weight": node["weight"]})
    assert art["weight"] == pytest.approx(0.2 * 0.05)
    # ... and the end-of-run propagation gives it its home-page teaser weight (image + html_tag).
    final = p.final_weights()
    assert final == {fp(A): pytest.approx(0.7)}  # only the improvement is returned


def test_configurable_matrix_and_validation():
    p = _pipeline({"NEWSCRAWL_NEWSRANK_WEIGHTS": {"image": 0.1, "font_size": 0.1, "bold": 0.1,
                                                  "html_tag": 0.7}, "NEWSCRAWL_NEWSRANK_FLOOR": 0})
    item = p.process_item({"fp": "x", "role": "content", "features": {"html_tag": 1}, "parent_weight": 1.0,
                           "referer": E})
    assert item["r0"] == pytest.approx(0.7)
    with pytest.raises(ValueError):
        _pipeline({"NEWSCRAWL_NEWSRANK_WEIGHTS": {"image": 1.0}})
    with pytest.raises(NotConfigured):
        _pipeline({"NEWSCRAWL_NEWSRANK_ENABLED": False})


def test_final_weights_go_to_the_writer_once():
    p = _pipeline(extensions=("store", "crawlstate"))
    store = p.writer
    assert store is not None
    handed = []
    store.update_weights = handed.append  # the writer writes them after the last page
    p.process_item({"fp": fp(E), "role": "entry", "kind": "node",
                    "links": [_link(E, A, image=1, html_tag=1)]})
    p.process_item({"fp": fp(A), "role": "content", "kind": "article", "referer": N,
                    "features": {}, "parent_weight": 0.05})
    state = p.state
    state.ensure(fp(A), A, role="content", weight=0.05)
    p.close_spider()
    assert handed == [{fp(A): pytest.approx(0.7)}]
    assert state.get(fp(A))["weight"] == pytest.approx(0.7)  # the record's one weight follows
    assert _pipeline().writer is None  # no store: computed, not written
