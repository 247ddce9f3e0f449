"""Pairwise precision and recall of story clustering on the labelled set (issue 13).

Usage (from the repository root)::

    .venv/bin/python benchmarks/story_quality.py [--extract] [--errors] [--sweep] [--quick]

The documents (``tests/story_corpus.py``): the 258 articles of set 04 (fundus, 181 publishers),
the distinct teaser wordings of heise.de's home page at four times of 2022-01-29 and of CNN's
edition feed items at six capture times (set 14), labelled by ``tests/data/story_labels.json``
(its ``note`` says how). They are clustered one by one, in
corpus order, by :class:`newscrawl.algorithms.stories.StoryClusterer` built from the crawl's
settings exactly as :class:`pipelines.stories.StoryPipeline` builds it
(:func:`pipelines.stories.clusterer_from_settings`, ``NEWSCRAWL_STORIES_*`` defaults), and
scored pairwise: a pair is predicted together when both documents got one ``story_id``.

Targets: precision ≥ 0.9 and recall ≥ 0.9. ``--extract`` takes set 04's title and text from the
crawl's extractor instead of the ground truth (slower: ~30 s). ``--sweep`` prints the figures
for other thresholds too. ``--errors`` lists the wrong and missed pairs. ``--quick`` changes
nothing (the run takes seconds). Exit status 2 without ``../shared/corpus``
(``NEWSCRAWL_SHARED`` overrides ``../shared``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "tests"), str(ROOT)]

import story_corpus as S  # noqa: E402
from _targets import figure, target  # noqa: E402
from scrapy.settings import Settings  # noqa: E402

from newscrawl import defaults  # noqa: E402
from newscrawl.algorithms.stories import StoryClusterer  # noqa: E402
from pipelines.stories import clusterer_from_settings  # noqa: E402

SHARED = Path(os.environ.get("NEWSCRAWL_SHARED", ROOT.parent / "shared"))


def crawl_settings(**overrides: object) -> Settings:
    """The crawl's settings: every ``NEWSCRAWL_*`` default, then ``overrides``."""
    values = {name: getattr(defaults, name) for name in dir(defaults)
              if name.startswith("NEWSCRAWL_")}
    values.update(overrides)
    return Settings(values)


def cluster(clusterer: StoryClusterer, docs: list[S.Doc]) -> tuple[dict[str, str], float]:
    """Assign every document in order; returns key → story id and the seconds taken."""
    started = time.perf_counter()
    predicted: dict[str, str] = {}
    for doc in docs:
        assignment = clusterer.assign(doc.key, doc.title, doc.text)
        predicted[doc.key] = assignment.story_id if assignment else doc.key
    return predicted, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--extract", action="store_true",
                        help="set 04 text from the crawl's extractor, not the ground truth")
    parser.add_argument("--errors", action="store_true", help="list wrong and missed pairs")
    parser.add_argument("--sweep", action="store_true", help="figures for other thresholds")
    parser.add_argument("--quick", action="store_true", help="accepted for make bench")
    args = parser.parse_args(argv)
    corpus = SHARED / "corpus"
    if not corpus.is_dir():
        print(f"story_quality: needs {corpus} (the shared corpus is not here)")
        return 2
    docs = S.load_docs(corpus, extract=args.extract)
    labels = S.load_labels()
    missing = sorted({d.url for d in docs} - set(labels))
    if missing:
        print(f"story_quality: {len(missing)} document URL(s) without a label, e.g. {missing[0]}")
        return 1
    truth = {d.key: labels[d.url] for d in docs}
    by_key = {d.key: d for d in docs}
    settings = crawl_settings()
    clusterer = clusterer_from_settings(settings)
    predicted, seconds = cluster(clusterer, docs)
    scores = S.pairwise_scores(predicted, truth)
    print(f"story_quality: {len(docs)} documents ({sum(d.source == '04' for d in docs)} set-04 "
          f"articles{' extracted' if args.extract else ''}, "
          f"{sum(d.source == 'heise' for d in docs)} heise teaser wordings, "
          f"{sum(d.source == 'cnn' for d in docs)} CNN feed item wordings), "
          f"{scores['labels']} labelled stories, {scores['true_pairs']} true pairs")
    print(f"clusterer: threshold {clusterer.threshold}, num_perm {clusterer.num_perm}, "
          f"shingle size {clusterer.shingle_size}; {scores['stories']} stories predicted, "
          f"{scores['predicted_pairs']} pairs predicted, {scores['correct_pairs']} correct; "
          f"{seconds * 1000 / max(len(docs), 1):.2f} ms per document")
    if args.errors:
        for name in ("false_pairs", "missed_pairs"):
            for a, b in scores[name]:
                sim = clusterer.similarity(a, b)
                print(f"  {name[:-6]} J≈{sim:.2f}: {by_key[a].title[:60]!r} | {by_key[b].title[:60]!r}")
    if args.sweep:
        for threshold in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
            other = clusterer_from_settings(crawl_settings(NEWSCRAWL_STORIES_THRESHOLD=threshold))
            s = S.pairwise_scores(cluster(other, docs)[0], truth)
            print(f"  threshold {threshold:.1f}: precision {s['precision']:.3f} "
                  f"recall {s['recall']:.3f} ({s['correct_pairs']}/{s['predicted_pairs']} "
                  f"predicted, {s['true_pairs']} true)")
    figure("story_quality ms per document", round(seconds * 1000 / max(len(docs), 1), 3))
    ok = target("story_quality pairwise precision", scores["precision"], ">=", 0.9, digits=3)
    ok &= target("story_quality pairwise recall", scores["recall"], ">=", 0.9, digits=3)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
