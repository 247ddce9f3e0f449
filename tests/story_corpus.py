"""The labelled set of story clustering, read from the shared corpus (used by
``benchmarks/story_quality.py`` and ``tests/test_stories_real.py``).

Documents (``title``, ``text``), read in place from ``../shared/corpus`` (never copied):

* ``04``: the 258 articles of set 04 (fundus), title and body from the ground-truth JSON
  (``summary`` paragraphs included) or, with ``extract=True``, extracted from the page by the
  crawl's extractor (:func:`newscrawl.algorithms.extraction.extract_article`);
* ``heise``: the article teasers of the heise.de home page at the four capture times of
  2022-01-29 (set 01, ``heise.de_2022-01-29_intraday/*/index.html``): kicker and headline as
  title, the synopsis as text. Each *distinct* wording of a teaser is one document (a teaser
  shown unchanged at four times is one document): the editors rewrote headlines and leads of
  the same article during the day (``"Apple wirft Python 2.7 raus"`` →
  ``"Apple wirft mitgeliefertes Python 2.7 raus"``), the lightly edited copies the clustering
  must join. Only heise's own articles (paths ending in the article id) with a headline and a
  synopsis count: download, shop, event and partner teasers are left out.

* ``cnn``: the article items of CNN's edition feed (``rss.cnn.com/rss/edition.rss``) at its
  six capture times of set 14 (2020-04-21 to 2021-10-17): title and description. As for heise,
  each distinct wording is one document: CNN rewrote headlines during the day ("Trial for
  potential Covid-19 vaccine starts" → "Covid-19 vaccine trial on humans starts as UK warns
  …"), among dozens of other coronavirus stories of the same days — hard negatives. Only
  dated article URLs with a description count (no collections, live pages or short links).

Labels: ``tests/data/story_labels.json`` maps every document URL to its story label (how it was
made: its ``note``). Pairs are scored the usual way for clusterings: a pair of documents is
*predicted together* when both got one ``story_id``, *truly together* when both have one label;
precision = |predicted ∧ true| / |predicted|, recall = |predicted ∧ true| / |true|.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

LABELS_FILE = Path(__file__).resolve().parent / "data" / "story_labels.json"
SET04 = "04_fundus_multilingual_articles_gt"
HEISE = "01_frontpage-archive_de_home-sections/heise.de_2022-01-29_intraday"
HEISE_BASE = "https://www.heise.de"
CNN_FEED = "14_feeds_sitemaps/gesab001_headlines_gitscrape/cnn_edition"
#: CNN's article paths carry the date: ``/2020/04/23/health/<slug>/index.html``.
_CNN_ARTICLE = re.compile(r"^https?://(www|edition)\.cnn\.com/\d{4}/\d\d/\d\d/")
#: heise's article paths end in the article id: ``/news/<slug>-6341999.html``.
_HEISE_ARTICLE = re.compile(r"-\d{6,}(\.html)?$")


@dataclass(frozen=True)
class Doc:
    """One document of the labelled set: ``key`` unique, ``url`` names its label."""

    key: str
    url: str
    title: str
    text: str
    source: str  # "04" | "heise"


def _norm(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _version_key(key: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", key)]


def set04_docs(corpus: Path, *, extract: bool = False) -> list[Doc]:
    """Set 04's articles (module docstring); pages and ground-truth entries are paired as in
    ``benchmarks/extraction_quality.py`` (entries sorted by version, pages by date)."""
    from newscrawl.algorithms.textcompare import gt_paragraphs

    base = corpus / SET04
    urls: dict[Path, str] = {}
    for info in base.glob("*/meta.info"):
        for name, meta in json.loads(info.read_text(encoding="utf-8")).items():
            urls[info.parent / name] = meta["url"]
    docs = []
    for gt_file in sorted(base.glob("*/*.json")):
        publisher = gt_file.stem
        pattern = re.compile(re.escape(publisher) + r"_\d{4}_\d\d_\d\d\.html\.gz")
        pages = sorted(p for p in gt_file.parent.glob(f"{publisher}_*.html.gz")
                       if pattern.fullmatch(p.name))
        entries = json.loads(gt_file.read_text(encoding="utf-8"))
        for key, page in zip(sorted(entries, key=_version_key), pages):
            url = urls.get(page, "")
            if extract:
                title, text = _extract(page, url)
            else:
                gt = entries[key]
                title = gt.get("title") or ""
                text = "\n".join(gt_paragraphs(gt.get("body") or {}, summary=True))
            docs.append(Doc(f"04/{page.relative_to(base)}", url, _norm(title), text, "04"))
    return docs


def _extract(page: Path, url: str) -> tuple[str, str]:
    from newscrawl.algorithms.extraction import extract_article

    with gzip.open(page, "rb") as fh:
        raw = fh.read()
    result = extract_article(raw, url)
    return result.get("title") or "", result.get("text") or ""


def heise_docs(corpus: Path) -> list[Doc]:
    """The distinct teaser wordings of the heise home page captures (module docstring)."""
    import lxml.html

    docs: list[Doc] = []
    seen: set[tuple[str, str, str]] = set()
    for page in sorted((corpus / HEISE).glob("*/index.html")):
        root = lxml.html.parse(str(page)).getroot()
        for article in root.xpath("//article"):
            hrefs = article.xpath(".//a/@href")
            if not hrefs or "${" in hrefs[0]:
                continue  # the page's client-side templates

            def part(cls: str) -> str:
                return _norm(" ".join(article.xpath(f'.//*[contains(@class,"{cls}")]//text()')))

            kicker, headline = part("a-article-teaser__kicker"), part("a-article-teaser__title-text")
            synopsis = part("a-article-teaser__synopsis")
            href = hrefs[0].split("?")[0]
            if not href.startswith("/") or not _HEISE_ARTICLE.search(href):
                continue  # downloads, shop, events, partner sites: not heise's articles
            if not synopsis or not headline:
                continue  # a headline alone is not an article's text
            url = HEISE_BASE + href
            title = f"{kicker}: {headline}" if kicker else headline
            if (url, title, synopsis) in seen:
                continue
            seen.add((url, title, synopsis))
            docs.append(Doc(f"heise/{page.parent.name}/{url}", url, title, synopsis, "heise"))
    return docs


def cnn_docs(corpus: Path) -> list[Doc]:
    """The distinct (title, description) wordings of the articles in CNN's edition feed at its
    six capture times of set 14 (module docstring)."""
    import lxml.etree

    docs: list[Doc] = []
    seen: set[tuple[str, str, str]] = set()
    for feed in sorted((corpus / CNN_FEED).glob("*.xml")):
        for item in lxml.etree.parse(str(feed)).iter("item"):
            url = (item.findtext("link") or "").split("?")[0]
            title = _norm(item.findtext("title"))
            description = _norm(re.sub(r"<[^>]+>", " ", item.findtext("description") or ""))
            if not _CNN_ARTICLE.match(url) or not title or not description:
                continue  # collections, live pages, short links, items without a description
            if (url, title, description) in seen:
                continue
            seen.add((url, title, description))
            docs.append(Doc(f"cnn/{feed.stem}/{url}", url, title, description, "cnn"))
    return docs


def load_docs(corpus: Path, *, extract: bool = False) -> list[Doc]:
    """Every document of the labelled set, set 04 first, then the heise teasers and the CNN
    feed items in capture order (the order they are clustered in)."""
    return set04_docs(corpus, extract=extract) + heise_docs(corpus) + cnn_docs(corpus)


def load_labels(path: Path = LABELS_FILE) -> dict[str, str]:
    """URL → story label (``labels`` of the labels file)."""
    return dict(json.loads(path.read_text(encoding="utf-8"))["labels"])


def pairs(groups: Iterable[Iterable[str]]) -> set[frozenset[str]]:
    """Every unordered pair of keys within each group."""
    out: set[frozenset[str]] = set()
    for group in groups:
        out.update(frozenset(p) for p in combinations(sorted(set(group)), 2))
    return out


def pairwise_scores(predicted: Mapping[str, str], truth: Mapping[str, str]
                    ) -> dict[str, Any]:
    """Pairwise precision, recall and counts of a clustering ``predicted`` (key → story id)
    against ``truth`` (key → label), over the keys of ``truth``. A measure without pairs
    (nothing predicted together, no true pair) is 1.0."""
    def grouped(assign: Mapping[str, str]) -> list[list[str]]:
        groups: dict[str, list[str]] = {}
        for key in truth:
            groups.setdefault(assign[key], []).append(key)
        return list(groups.values())

    pred, true = pairs(grouped(predicted)), pairs(grouped(truth))
    both = pred & true
    return {
        "precision": len(both) / len(pred) if pred else 1.0,
        "recall": len(both) / len(true) if true else 1.0,
        "predicted_pairs": len(pred), "true_pairs": len(true), "correct_pairs": len(both),
        "false_pairs": sorted(tuple(sorted(p)) for p in pred - true),
        "missed_pairs": sorted(tuple(sorted(p)) for p in true - pred),
        "stories": len(Counter(predicted[k] for k in truth)),
        "labels": len(Counter(truth.values())),
    }
