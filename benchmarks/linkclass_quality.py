"""Precision and recall of content-link detection on real pages (DESIGN.md §2).

Usage (from the repository root)::

    .venv/bin/python benchmarks/linkclass_quality.py [--errors] [--quick]

A link is *predicted content* when the classifier gives it the role ``content``; the labels say
whether it is an article (detail) page. Three variants of
:func:`newscrawl.algorithms.linkclass.classify_page`:

- ``default``: ``use_shape=True`` (URL shape first, then seed 004's directory groups, crosswise
  articles by shape);
- ``group-only``: ``use_shape=False``, seed 004's directory grouping alone (crosswise links are
  never content then);
- ``shape-only``: ``is_article_shaped(url)`` alone, for every link that is not outward or a frame.

Labelled data (``tests/linkclass_tables.py``, shared with ``tests/test_linkclass_real.py``):

- ``hand:<page>``: the hand-checked tables of the sueddeutsche, heise, sina and qq home pages
  (positive = expected role ``content``; outward articles count as negatives, since the crawl
  stays on the site);
- ``newspaper4k-urls``: set 08's ``test_urls.txt`` (40 URLs, 1 = article). A URL-only task: each
  URL is classified as the single link of a page at its site root (``scheme://host/``); raw
  values that are not http(s) links (``javascript:…``) count as predicted non-articles. A group
  of one link is below ``min_group``, so ``group-only`` can never say content here;
- ``gerapy-lists:<page>``: every labelled link of set 11's netease international, netease
  rolling and tencent list pages (positive = the link points at a detail page, by the sites'
  detail-URL schemes; see ``LIST_PAGES`` / ``DETAIL_SCHEMES``).

Pages are read in place from ``../shared/corpus`` (``NEWSCRAWL_SHARED`` overrides ``../shared``).
Fully labelled pages (issue 10): ``tests/linkclass_labels.tsv`` labels *every* link of ten real
home / channel pages ``article`` / ``channel`` / ``other`` (rules: ``tests/linkclass_labelling.py``).
They are classified the way the crawl does it (:func:`crawl_path_classify`: Scrapy's parser, the
middleware's ``classify_options`` under the default settings, ``PageClassification.node_requests``)
and scored per page and overall: content-link and channel-link precision / recall, with
``target …: met|NOT met`` lines (content ≥ 0.95, channel ≥ 0.90, on every page) and the time the
classification took (CPU ms, Scrapy's parse + ``extract_links`` + ``classify_page``).

``--errors`` lists the false positives and negatives of the default variant. ``--quick`` is
accepted for ``make bench`` and changes nothing (the whole run takes seconds). The default
variant's figures per dataset group print in the ``figure <name>: <value>`` format of
``benchmarks/_targets.py`` (no targets are set; the README has the last run's figures).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import linkclass_labelling as L  # noqa: E402
import linkclass_tables as T  # noqa: E402
from _targets import figure, target  # noqa: E402
from newscrawl.algorithms.linkclass import (  # noqa: E402
    CONTENT,
    LinkClass,
    classify_page,
    is_article_shaped,
)
from newscrawl.algorithms.linkextract import RawLink, resolve_link  # noqa: E402

VARIANTS = ("default", "group-only", "shape-only")
_KWARGS = {"default": {}, "group-only": {"use_shape": False}}
#: The README's default-variant P / R / F1 per dataset group (its last run).
README_FIGURES = {"hand:all-4": "1.000 / 1.000 / 1.000", "newspaper4k-urls": "1.000 / 0.950 / 0.974",
                  "gerapy-lists:all": "1.000 / 1.000 / 1.000"}


@dataclass
class Score:
    """Confusion counts of one dataset × variant; ``errors`` holds (kind, url) pairs."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)

    def add(self, url: str, label: bool, predicted: bool) -> None:
        if label and predicted:
            self.tp += 1
        elif predicted:
            self.fp += 1
            self.errors.append(("FP", url))
        elif label:
            self.fn += 1
            self.errors.append(("FN", url))
        else:
            self.tn += 1

    def merge(self, other: "Score") -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.tn += other.tn

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)


def _shape_content(link) -> bool:
    return (link.link_class not in (LinkClass.OUTWARD, LinkClass.FRAME)
            and is_article_shaped(link.url))


def _page_predictions(links_of_variant) -> dict[str, dict[str, bool]]:
    """variant → url → predicted content, from classified links of the default and group-only
    runs (``links_of_variant``: variant → list of ClassifiedLink)."""
    out = {}
    for variant in ("default", "group-only"):
        out[variant] = {link.url: link.role == CONTENT for link in links_of_variant[variant]}
    out["shape-only"] = {link.url: _shape_content(link) for link in links_of_variant["default"]}
    return out


def score_hand_table(name: str) -> dict[str, Score]:
    """Scores of one hand table (rows missing from the page count as predicted non-content)."""
    links = {variant: T.classify(name, **_KWARGS[variant])[0].links
             for variant in ("default", "group-only")}
    predicted = _page_predictions(links)
    scores = {variant: Score() for variant in VARIANTS}
    for url, label in T.table_labels(name):
        for variant in VARIANTS:
            scores[variant].add(url, label, predicted[variant].get(url, False))
    return scores


def score_newspaper4k() -> dict[str, Score]:
    """Scores of the URL-only task of set 08 (single-link classification at the site root)."""
    scores = {variant: Score() for variant in VARIANTS}
    for raw_url, label in T.newspaper4k_url_labels():
        url = resolve_link(raw_url.strip("'\""), "http://example.invalid/")
        if url is None or not raw_url.lower().startswith(("http://", "https://")):
            for variant in VARIANTS:
                scores[variant].add(raw_url, label, False)
            continue
        parts = urlsplit(url)
        start = f"{parts.scheme}://{parts.netloc}/"
        for variant in VARIANTS:
            if variant == "shape-only":
                predicted = is_article_shaped(url)
            else:
                page = classify_page(start, [RawLink(url, "", "a", {})], **_KWARGS[variant])
                predicted = page.links[0].role == CONTENT
            scores[variant].add(url, label, predicted)
    return scores


def score_list_page(name: str) -> dict[str, Score]:
    """Scores of one set-11 list page over its labelled links."""
    labelled = {variant: T.list_page_labels(name, **_KWARGS[variant])
                for variant in ("default", "group-only")}
    predicted = _page_predictions({v: [link for link, _ in pairs]
                                   for v, pairs in labelled.items()})
    scores = {variant: Score() for variant in VARIANTS}
    for link, label in labelled["default"]:
        for variant in VARIANTS:
            scores[variant].add(link.url, label, predicted[variant][link.url])
    return scores


@dataclass
class LabelledScore:
    """Content-link and channel-link scores of one fully labelled page (or all of them)."""

    content: Score = field(default_factory=Score)
    channel: Score = field(default_factory=Score)
    links: int = 0
    node_requests: int = 0
    excluded: int = 0
    seconds: float = 0.0

    def merge(self, other: "LabelledScore") -> None:
        self.content.merge(other.content)
        self.channel.merge(other.channel)
        self.links += other.links
        self.node_requests += other.node_requests
        self.excluded += other.excluded
        self.seconds += other.seconds


def crawl_path_classify(url: str, text: str):
    """Classify a page the way ``middlewares/linkclass.py`` does in a crawl: Scrapy's parser
    (``parsel.Selector(text).root``, what ``response.selector.root`` is), ``extract_links`` with
    the default ``NEWSCRAWL_LINKCLASS_MAX_LINKS``, ``classify_page`` with the middleware's own
    options read from the default settings (``classify_options``, service-link rules included).
    """
    from parsel import Selector

    from newscrawl import defaults
    from newscrawl.algorithms.linkextract import extract_links

    options = _crawl_options()
    raw = extract_links(Selector(text=text).root, url,
                        max_links=defaults.NEWSCRAWL_LINKCLASS_MAX_LINKS)
    return classify_page(url, raw, **options)


_OPTIONS: dict = {}


def _crawl_options() -> dict:
    """The middleware's ``classify_page`` options under the default settings (read once)."""
    if not _OPTIONS:
        from scrapy.settings import Settings

        from middlewares.linkclass import classify_options
        from newscrawl import defaults

        settings = Settings({name: getattr(defaults, name) for name in dir(defaults)
                             if name.startswith("NEWSCRAWL_")})
        _OPTIONS.update(classify_options(settings))
    return _OPTIONS


def score_labelled_page(name: str, labels: dict[str, tuple[str, str]]) -> LabelledScore:
    """Score the crawl path on one fully labelled page (``tests/linkclass_labels.tsv``).

    Content: every labelled link of the page (kind ``link``); predicted = the crawl path lists
    it with role ``content`` (a labelled link it does not see is predicted not content);
    positive = label ``article``.
    Channel: every labelled link plus every node request; predicted = a node request
    (``PageClassification.node_requests``: node links that are not frames, and crosswise host
    entries); positive = label ``channel``. The page's own ancestors (UPWARD links, dropped by
    seed 004 §2: the crawl reaches a channel page from above) are left out of both channel
    counts.
    """
    url, text = T.load_page(name)
    started = time.process_time()  # CPU time: the shared machine's load does not count
    page = crawl_path_classify(url, text)
    elapsed = time.process_time() - started
    result = LabelledScore(links=len(page.links), seconds=elapsed)
    nodes = set(page.node_requests())
    result.node_requests = len(nodes)
    by_url = {link.url: link for link in page.links}
    for link_url in by_url:
        if link_url not in labels:
            raise ValueError(f"{name}: {link_url} has no label (run tests/linkclass_labelling.py)")
    for node_url in nodes:
        if node_url not in labels:
            raise ValueError(f"{name}: node request {node_url} has no label")
    for link_url, (label, kind) in labels.items():
        link = by_url.get(link_url)
        if kind == "link":
            result.content.add(link_url, label == L.ARTICLE,
                               link is not None and link.role == CONTENT)
        if link is not None and link.link_class is LinkClass.UPWARD:
            result.excluded += 1
            continue
        if kind == "link" or link_url in nodes:
            result.channel.add(link_url, label == L.CHANNEL, link_url in nodes)
    return result


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--errors", action="store_true",
                        help="list false positives / negatives of the default variant")
    parser.add_argument("--quick", action="store_true", help="accepted for make bench; no change")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    jobs = [(f"hand:{name}", "hand:all-4", score_hand_table, (name,)) for name in T.HOME_PAGES]
    jobs.append(("newspaper4k-urls", None, score_newspaper4k, ()))
    jobs += [(f"gerapy-lists:{name.removesuffix('.html')}", "gerapy-lists:all", score_list_page,
              (name,)) for name in T.LIST_PAGES]
    results: list[tuple[str, dict[str, Score]]] = []
    missing = []
    total: dict[str, Score] | None = None
    for index, (label, group, func, func_args) in enumerate(jobs):
        try:
            scores = func(*func_args)
        except T.MissingCorpus as exc:
            missing.append(str(exc))
            scores = None
        if scores is not None:
            results.append((label, scores))
            if group:
                total = total or {v: Score() for v in VARIANTS}
                for variant in VARIANTS:
                    total[variant].merge(scores[variant])
        next_group = jobs[index + 1][1] if index + 1 < len(jobs) else None
        if group and next_group != group and total is not None:
            results.append((group, total))
            total = None

    header = f"{'dataset':<38} {'n':>5} {'pos':>5}  " + "  ".join(
        f"{v + ' P':>14} {'R':>5} {'F1':>5}" for v in VARIANTS)
    print(header)
    print("-" * len(header))
    for label, scores in results:
        first = scores["default"]
        cells = "  ".join(f"{_fmt(s.precision):>14} {_fmt(s.recall):>5} {_fmt(s.f1):>5}"
                          for s in (scores[v] for v in VARIANTS))
        print(f"{label:<38} {first.n:>5} {first.tp + first.fn:>5}  {cells}")
    for path in missing:
        print(f"skipped: {path} missing")
    print(f"({time.perf_counter() - started:.1f} s)")
    for label, scores in results:
        if label in README_FIGURES:
            d = scores["default"]
            figure(f"linkclass content links P / R / F1 {label} (default, {d.n} links)",
                   f"{_fmt(d.precision)} / {_fmt(d.recall)} / {_fmt(d.f1)}",
                   note=f"(README: {README_FIGURES[label]})")

    run_labelled(args.errors)

    if args.errors:
        for label, scores in results:
            if label.endswith((":all", ":all-4")):
                continue
            errors = scores["default"].errors
            if errors:
                print(f"\n{label} (default): {len(errors)} errors")
                for kind, url in errors:
                    print(f"  {kind} {url}")
    return 0


#: Targets of the fully labelled pages (issue: on every labelled page).
CONTENT_TARGET = 0.95
CHANNEL_TARGET = 0.90


def run_labelled(show_errors: bool) -> bool:
    """Print per-page and overall content / channel precision and recall with targets."""
    try:
        table = L.read_table()
    except FileNotFoundError:
        print("skipped: tests/linkclass_labels.tsv missing")
        return False
    print(f"\nfully labelled pages (tests/linkclass_labels.tsv): every link article / channel / other")
    header = (f"{'page':<20} {'links':>5} {'art':>4} {'chan':>4} {'nodeR':>5}  {'content P':>9} {'R':>5}"
              f"  {'channel P':>9} {'R':>5} {'cpu ms':>6}")
    print(header)
    print("-" * len(header))
    total = LabelledScore()
    scores: list[tuple[str, LabelledScore]] = []
    _crawl_options()  # settings and rules read once, outside the timed classification
    for name in L.LABELLED_PAGES:
        try:
            score = score_labelled_page(name, table.get(name, {}))
        except T.MissingCorpus as exc:
            print(f"skipped: {exc} missing")
            continue
        scores.append((name, score))
        total.merge(score)
    for name, sc in scores + [("all", total)]:
        print(f"{name:<20} {sc.links:>5} {sc.content.tp + sc.content.fn:>4} "
              f"{sc.channel.tp + sc.channel.fn:>4} {sc.node_requests:>5}  "
              f"{_fmt(sc.content.precision):>9} {_fmt(sc.content.recall):>5}  "
              f"{_fmt(sc.channel.precision):>9} {_fmt(sc.channel.recall):>5} {sc.seconds * 1000:>6.0f}")
    ok = True
    nan = float("nan")
    for name, sc in scores + [("all", total)]:
        for what, value, threshold in (
                ("content-link precision", sc.content.precision, CONTENT_TARGET),
                ("content-link recall", sc.content.recall, CONTENT_TARGET),
                ("channel-link precision", sc.channel.precision, CHANNEL_TARGET),
                ("channel-link recall", sc.channel.recall, CHANNEL_TARGET)):
            ok &= target(f"linkclass {what} {name}", nan if value is None else value, ">=",
                         threshold, digits=3)
    if show_errors:
        for name, sc in scores:
            for kind, errors in (("content", sc.content.errors), ("channel", sc.channel.errors)):
                if errors:
                    print(f"\n{name} {kind}: {len(errors)} errors")
                    for err, url in errors:
                        print(f"  {err} {url}")
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
