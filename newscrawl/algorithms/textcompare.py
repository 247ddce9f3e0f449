"""Compare an extracted article body with a ground-truth body (pure; no I/O).

Used by the extraction tests, ``benchmarks/extraction_quality.py`` and integration tests that
check crawled store data against the fundus golden files of the shared corpus (set 04).

Ground truth in fundus format: ``body = {"summary": [str], "sections": [{"headline": [str],
"paragraphs": [str]}]}``. :func:`body_matches` accepts that dict, its ``sections`` list, or a
plain list of paragraph strings.

Tokens: Unicode word characters, lower-cased after NFKC normalisation; Han ideographs, kana
and Thai characters count one token each (those scripts do not separate words with spaces),
so the same measure works for German, Chinese and Japanese. F1 is the multiset (bag of tokens)
overlap, as in the SQuAD / trafilatura-evaluation style token F1.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "BODY_MIN_F1",
    "PREFIX_CHARS",
    "body_matches",
    "gt_paragraphs",
    "normalize_space",
    "paragraph_prefixes_found",
    "title_matches",
    "token_f1",
    "tokenize",
]

#: Default F1 threshold of :func:`body_matches`. Measured with ``benchmarks/extraction_quality.py``
#: (default preset): the SZ and Zeit test articles score 1.000 and 0.988; over the 258 set-04
#: articles the median is 0.970, 87.6 % reach 0.9, 89.5 % have every paragraph start, and
#: 79.5 % pass both. 0.9 leaves room for a caption or trailer more or less and still fails on
#: a body that was missed, cut in half or doubled.
BODY_MIN_F1: Final = 0.9
#: Default number of leading characters of each ground-truth paragraph that must be found.
PREFIX_CHARS: Final = 40

# One token: a single ideograph / kana / Thai character, or a run of other word characters.
_TOKEN: Final = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f]|[^\W_]+"
)
_SPACE: Final = re.compile(r"\s+")
# Characters dropped before comparing: zero-width space/joiners, soft hyphen, BOM.
_INVISIBLE: Final = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\u00ad\ufeff"))
# Typographic quotes and dashes folded to ASCII for the lenient title comparison.
_QUOTES: Final = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
     "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
     "\u00ab": '"', "\u00bb": '"', "\u2039": "'", "\u203a": "'",
     "\u2013": "-", "\u2014": "-", "\u2212": "-"}
)


def normalize_space(text: str) -> str:
    """NFKC-normalise, drop zero-width characters and collapse whitespace runs to one space."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return _SPACE.sub(" ", text).strip()


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (see the module docstring for CJK handling)."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def token_f1(extracted: str, reference: str) -> tuple[float, float, float]:
    """Bag-of-tokens ``(precision, recall, f1)`` of ``extracted`` against ``reference``.

    Both empty: ``(1.0, 1.0, 1.0)``; one empty: zeros. Values are in [0, 1]; never raises.
    """
    got = Counter(tokenize(extracted))
    want = Counter(tokenize(reference))
    if not got and not want:
        return 1.0, 1.0, 1.0
    if not got or not want:
        return 0.0, 0.0, 0.0
    overlap = sum((got & want).values())
    precision = overlap / sum(got.values())
    recall = overlap / sum(want.values())
    f1 = 0.0 if overlap == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


def gt_paragraphs(
    body: Mapping[str, Any] | Sequence[Any], *, headlines: bool = False, summary: bool = False
) -> list[str]:
    """Paragraph strings of a fundus ground-truth body.

    :param body: the fundus ``body`` dict, its ``sections`` list, or a list of strings.
    :param headlines: include section headlines (sub-headings).
    :param summary: include the ``summary`` (teaser) paragraphs first.
    """
    if isinstance(body, Mapping):
        out: list[str] = list(body.get("summary") or []) if summary else []
        sections: Iterable[Any] = body.get("sections") or []
    else:
        out = []
        sections = body
    for section in sections:
        if isinstance(section, str):
            out.append(section)
            continue
        if headlines:
            out.extend(section.get("headline") or [])
        out.extend(section.get("paragraphs") or [])
    return [p for p in out if p and p.strip()]


def _prefix_tokens(paragraph: str, prefix_chars: int) -> list[str]:
    """Tokens lying wholly within the first ``prefix_chars`` characters of ``paragraph``."""
    text = unicodedata.normalize("NFKC", paragraph).translate(_INVISIBLE).lower().strip()
    tokens: list[str] = []
    for m in _TOKEN.finditer(text):
        if m.end() > prefix_chars and tokens:
            break
        tokens.append(m.group())
    return tokens


def paragraph_prefixes_found(
    extracted: str, paragraphs: Sequence[str], *, prefix_chars: int = PREFIX_CHARS
) -> list[str]:
    """The ground-truth paragraphs whose beginning is NOT found in ``extracted``.

    A paragraph's beginning is the sequence of its tokens (:func:`tokenize`) that end within its
    first ``prefix_chars`` characters; it is found when the same tokens occur consecutively in
    ``extracted``. Comparing tokens, not characters, ignores spacing and punctuation artefacts
    of the extractor ("Pakistan 's" for "Pakistan's", line breaks, non-breaking spaces).
    An empty list means every paragraph was found.
    """
    haystack = " " + " ".join(tokenize(extracted)) + " "
    missing = []
    for paragraph in paragraphs:
        tokens = _prefix_tokens(paragraph, prefix_chars)
        if tokens and " " + " ".join(tokens) + " " not in haystack:
            missing.append(paragraph)
    return missing


def body_matches(
    extracted: str,
    gt_sections: Mapping[str, Any] | Sequence[Any],
    *,
    min_f1: float = BODY_MIN_F1,
    prefix_chars: int = PREFIX_CHARS,
) -> tuple[bool, float]:
    """Does an extracted body match the ground truth? Returns ``(matches, f1)``.

    The rule: token F1 of ``extracted`` against the ground-truth section paragraphs (headlines
    included) is at least ``min_f1`` AND the first ``prefix_chars`` characters of every
    ground-truth paragraph occur in ``extracted`` (compared as token sequences, see
    :func:`paragraph_prefixes_found`).

    :param extracted: the extracted body text.
    :param gt_sections: fundus ``body`` dict, its ``sections`` list, or paragraph strings.
    :returns: ``(bool, f1)`` with ``f1`` in [0, 1]. Never raises on well-formed input.
    """
    paragraphs = gt_paragraphs(gt_sections, headlines=True)
    reference = "\n".join(paragraphs)
    f1 = token_f1(extracted or "", reference)[2]
    ok = f1 >= min_f1 and not paragraph_prefixes_found(
        extracted or "", gt_paragraphs(gt_sections), prefix_chars=prefix_chars
    )
    return ok, f1


def title_matches(extracted: str | None, expected: str | None, *, lenient: bool = False) -> bool:
    """Title equality after whitespace normalisation (``lenient``: also case, quotes, dashes)."""
    if not extracted or not expected:
        return not extracted and not expected
    a, b = normalize_space(extracted), normalize_space(expected)
    if lenient:
        a, b = a.translate(_QUOTES).casefold(), b.translate(_QUOTES).casefold()
    return a == b
