"""Story clustering on real pages of the shared corpus (skips without ../shared): the labelled
set of tests/story_corpus.py through the crawl's pipeline, and the taz article captured twice
(2023, 2024) extracted by the crawl's extractor."""

from __future__ import annotations

import pytest

import tests.story_corpus as S
from newscrawl.items import ArticleItem
from pipelines.stories import StoryPipeline
from tests.conftest import component_crawler, shared_path


def test_the_labelled_set_through_the_pipeline():
    corpus = shared_path("corpus")
    docs = S.load_docs(corpus)
    labels = S.load_labels()
    assert {d.url for d in docs} <= set(labels)
    crawler = component_crawler()
    p = StoryPipeline.from_crawler(crawler)
    predicted = {}
    for d in docs:
        item = p.process_item(ArticleItem(kind="article", fp=d.key, url=d.url, title=d.title,
                                          text=d.text))
        predicted[d.key] = item["story_id"]
    scores = S.pairwise_scores(predicted, {d.key: labels[d.url] for d in docs})
    assert scores["true_pairs"] >= 10
    assert scores["precision"] >= 0.9 and scores["recall"] >= 0.9, scores


def test_a_recaptured_article_extracted_by_the_crawl_joins_its_first_capture():
    corpus = shared_path("corpus")
    base = corpus / S.SET04 / "de"
    from newscrawl.algorithms.extraction import extract_article
    import gzip

    pages = sorted(base.glob("Taz_*.html.gz")) + [base / "SZ_2024_09_30.html.gz"]
    if len(pages) != 3 or not all(p.exists() for p in pages):
        pytest.skip(f"the taz and SZ pages of set 04 are not in {base}")
    p = StoryPipeline.from_crawler(component_crawler())
    stories = []
    for page in pages:
        with gzip.open(page, "rb") as fh:
            result = extract_article(fh.read(), "https://taz.de/")
        assert len(result["text"]) > 500, page
        item = p.process_item(ArticleItem(kind="article", fp=page.name, title=result["title"],
                                          text=result["text"]))
        stories.append(item["story_id"])
    taz_2023, taz_2024, sz = stories
    assert taz_2023 == taz_2024 != sz
