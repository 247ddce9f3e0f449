"""Stories across sites: near-duplicate articles (the same wire copy, lightly edited) get one
``story_id``, assigned incrementally as articles arrive (pure; no I/O).

Method. An article is the set of its *shingles*: every run of ``k`` consecutive tokens of its
title and text (tokens of :func:`newscrawl.algorithms.textcompare.tokenize`: NFKC, lower case,
Unicode words; every Han ideograph, kana and Thai character is a token of its own, so Chinese
and Japanese text is shingled by characters, other scripts by words). Two articles are the same
story when the *resemblance* (Jaccard similarity) of their shingle sets reaches a threshold.
Resemblance is estimated with MinHash signatures and candidates are found with banded
locality-sensitive hashing (LSH), so an arriving article is compared with a few candidates,
not with every article seen:

* A. Z. Broder, "On the resemblance and containment of documents", Compression and Complexity
  of Sequences 1997, pp. 21-29 (shingling, resemblance, min-wise hashing);
* J. Leskovec, A. Rajaraman, J. D. Ullman, *Mining of Massive Datasets*, ch. 3 "Finding
  Similar Items" (3.2 shingling, 3.3 minhash signatures, 3.4 LSH banding).

Both come from the maintained ``datasketch`` library (:class:`datasketch.MinHash`,
:class:`datasketch.MinHashLSH`); this module chooses the shingles and the clustering rule.

Clustering rule (incremental single link). A new article joins the story of the most similar
article already known whose estimated resemblance is at least ``threshold``; with none, it opens
a new story whose id is its own key (the page fingerprint in the crawl), so ids are stable
across restarts and need no counter. An article seen again keeps its story (a story id never
changes); its signature is replaced by the new text's.

State. :meth:`StoryClusterer.restore` takes ``(key, story_id, signature)`` triples (the
signature as stored: :func:`encode_signature`'s text, bytes or a list of ints) and rebuilds the
LSH index from them; nothing else needs saving. With ``num_perm = 128`` a signature is 512
bytes (684 characters of base64). Memory: about 18 KiB per article known (mostly the LSH's 59
bands; 10,000 articles ≈ 180 MB), so callers keep a window of recent articles
(:meth:`StoryClusterer.forget` drops one).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from datasketch import MinHash, MinHashLSH

from newscrawl import defaults
from newscrawl.algorithms.textcompare import tokenize

__all__ = [
    "DEFAULT_NUM_PERM",
    "DEFAULT_SHINGLE_SIZE",
    "DEFAULT_THRESHOLD",
    "Assignment",
    "StoryClusterer",
    "decode_signature",
    "encode_signature",
    "shingles",
]

logger = logging.getLogger(__name__)

#: Resemblance at or above which two articles are one story (0..1); measured with
#: ``benchmarks/story_quality.py``.
DEFAULT_THRESHOLD: Final = defaults.NEWSCRAWL_STORIES_THRESHOLD
#: Tokens per shingle (words; characters for Han / kana / Thai text).
DEFAULT_SHINGLE_SIZE: Final = defaults.NEWSCRAWL_STORIES_SHINGLE_SIZE
#: Hash functions of a MinHash signature (the estimate's standard error is about
#: sqrt(J(1-J)/num_perm): 0.04 at J = 0.5 with 128).
DEFAULT_NUM_PERM: Final = defaults.NEWSCRAWL_STORIES_NUM_PERM
#: Tokens of an article that are shingled (the first ones; ~1.8 ms of CPU per 900 tokens).
MAX_TOKENS: Final = 3000
#: Seed of the hash permutations: signatures are comparable only with the same seed.
SEED: Final = 1
#: Weights of false positives and false negatives when the LSH bands are chosen, and the
#: LSH's design threshold as a share of the clustering threshold.
LSH_WEIGHTS: Final = (0.1, 0.9)
LSH_MARGIN: Final = 0.75
#: datasketch's hashing scheme of the signatures (32-bit values; stored signatures name none).
SCHEME: Final = "affine32"


def shingles(title: str | None, text: str | None, *, k: int = DEFAULT_SHINGLE_SIZE,
             max_tokens: int = MAX_TOKENS) -> set[str]:
    """The ``k``-token shingles of ``title`` and ``text`` (module docstring).

    A document of fewer than ``k`` tokens (but at least one) is one shingle of all its tokens.
    Only the first ``max_tokens`` tokens count (bounds the work on endless live tickers; copies
    of one story agree most at their start). ``None`` counts as empty. Returns the empty set
    for a document without any word.

    Raises:
        ValueError: ``k < 1``.

    >>> sorted(shingles("Apple wirft Python raus", None, k=3))
    ['apple wirft python', 'wirft python raus']
    >>> sorted(shingles(None, "北京冬奥", k=3))
    ['京 冬 奥', '北 京 冬']
    """
    if k < 1:
        raise ValueError(f"shingle size must be at least 1, got {k}")
    tokens = tokenize(f"{title or ''}\n{text or ''}")[:max(max_tokens, 1)]
    if not tokens:
        return set()
    if len(tokens) < k:
        return {" ".join(tokens)}
    return {" ".join(tokens[i:i + k]) for i in range(len(tokens) - k + 1)}


def encode_signature(hashvalues: Sequence[int] | Any) -> str:
    """A signature as compact text: base64 of its 32-bit values, little-endian (512 bytes →
    684 characters for 128 values). Text, unlike bytes, survives JSON feed exports and CSV.

    Raises:
        ValueError: a value outside 0..2**32-1.
    """
    values = np.asarray(hashvalues, dtype=np.uint64)
    if values.size and int(values.max()) > 0xFFFFFFFF:
        raise ValueError("signature values must fit in 32 bits")
    return base64.b64encode(values.astype("<u4").tobytes()).decode("ascii")


def decode_signature(value: str | bytes | Sequence[int], num_perm: int) -> Any:
    """The 32-bit values (a numpy ``uint64`` array of length ``num_perm``) of a stored
    signature: :func:`encode_signature`'s text, raw little-endian bytes or a list of ints.

    Raises:
        ValueError: not decodable, or of another length than ``num_perm`` (a signature made
            with other settings).
    """
    if isinstance(value, str):
        try:
            value = base64.b64decode(value.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError) as exc:
            raise ValueError(f"not a base64 signature: {exc}") from exc
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) % 4:
            raise ValueError(f"signature of {len(raw)} bytes is not a multiple of 4")
        values = np.frombuffer(raw, dtype="<u4").astype(np.uint64)
    else:
        try:
            values = np.asarray([int(v) for v in value], dtype=np.uint64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueError(f"not a signature: {exc}") from exc
    if len(values) != num_perm:
        raise ValueError(f"signature has {len(values)} values, expected {num_perm}")
    return values


@dataclass(frozen=True)
class Assignment:
    """What :meth:`StoryClusterer.assign` decided for one article.

    Attributes:
        story_id: the article's story.
        signature: its MinHash signature, encoded for storage (:func:`encode_signature`).
        similarity: estimated resemblance to the article it joined (0..1); 1.0 for an article
            seen before, 0.0 when it opened a new story.
        new_story: it opened a new story.
        matched: key of the article it joined (None: new story or seen before).
    """

    story_id: str
    signature: str
    similarity: float
    new_story: bool
    matched: str | None = None


class StoryClusterer:
    """Incremental near-duplicate clustering of articles into stories (module docstring).

    Args:
        threshold: resemblance (Jaccard similarity of shingle sets, 0..1) at or above which an
            article joins a known article's story; also the LSH index's design threshold.
        num_perm: hash functions per signature.
        shingle_size: tokens per shingle.

    Raises:
        ValueError: ``threshold`` outside (0, 1), ``num_perm < 16`` or ``shingle_size < 1``.
    """

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD,
                 num_perm: int = DEFAULT_NUM_PERM,
                 shingle_size: int = DEFAULT_SHINGLE_SIZE) -> None:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"story threshold must lie in (0, 1), got {threshold}")
        if num_perm < 16:
            raise ValueError(f"num_perm must be at least 16, got {num_perm}")
        if shingle_size < 1:
            raise ValueError(f"shingle size must be at least 1, got {shingle_size}")
        self.threshold = float(threshold)
        self.num_perm = int(num_perm)
        self.shingle_size = int(shingle_size)
        # Bands designed for a lower threshold, weighing misses 9:1 over extra candidates: a
        # pair a little above the threshold is almost never missed (a pair of resemblance 0.3
        # is a candidate with probability 0.996 at the defaults), and every candidate's
        # resemblance is checked afterwards anyway.
        self._lsh = MinHashLSH(threshold=self.threshold * LSH_MARGIN, num_perm=self.num_perm,
                               weights=LSH_WEIGHTS)
        #: One MinHash made once: its permutations are reused by every signature (cheap).
        self._template = MinHash(num_perm=self.num_perm, seed=SEED, scheme=SCHEME)
        self._minhash: dict[str, Any] = {}
        self._story: dict[str, str] = {}

    def __len__(self) -> int:
        """Articles known."""
        return len(self._story)

    def __contains__(self, key: object) -> bool:
        return key in self._story

    def story_of(self, key: str) -> str | None:
        """The story of article ``key``, or None when it is not known."""
        return self._story.get(key)

    def stories(self) -> dict[str, list[str]]:
        """Story id → keys of its articles (in the order they became known)."""
        out: dict[str, list[str]] = {}
        for key, story in self._story.items():
            out.setdefault(story, []).append(key)
        return out

    # -- signatures -------------------------------------------------------------------------

    def _empty(self, hashvalues: Any = None) -> Any:
        return MinHash(num_perm=self.num_perm, seed=SEED, scheme=SCHEME,
                       permutations=self._template.permutations, hashvalues=hashvalues)

    def minhash(self, title: str | None, text: str | None) -> Any:
        """The :class:`datasketch.MinHash` of an article's shingles, or None when it has no
        words."""
        grams = shingles(title, text, k=self.shingle_size)
        if not grams:
            return None
        m = self._empty()
        m.update_batch([g.encode("utf-8") for g in grams])
        return m

    def signature(self, title: str | None, text: str | None) -> str | None:
        """The encoded signature of an article (:func:`encode_signature`), or None."""
        m = self.minhash(title, text)
        return None if m is None else encode_signature(m.hashvalues)

    def similarity(self, a: str, b: str) -> float:
        """Estimated resemblance of two known articles (0..1).

        Raises:
            KeyError: either is not known.
        """
        return float(self._minhash[a].jaccard(self._minhash[b]))

    # -- clustering -------------------------------------------------------------------------

    def _index(self, key: str, story_id: str, m: Any) -> None:
        if key in self._minhash:
            self._lsh.remove(key)
        self._lsh.insert(key, m)
        self._minhash[key] = m
        self._story[key] = story_id

    def best_match(self, m: Any, *, exclude: str | None = None) -> tuple[str | None, float]:
        """The known article most similar to MinHash ``m`` at or above the threshold, and its
        estimated resemblance; ``(None, 0.0)`` when there is none. Ties go to the smaller key
        (deterministic)."""
        best: str | None = None
        best_sim = 0.0
        for key in sorted(self._lsh.query(m)):
            if key == exclude:
                continue
            sim = float(m.jaccard(self._minhash[key]))
            if sim >= self.threshold and sim > best_sim:
                best, best_sim = key, sim
        return best, best_sim

    def assign(self, key: str, title: str | None, text: str | None) -> Assignment | None:
        """Give article ``key`` its story (module docstring: join the most similar known
        article's story at or above the threshold, else open story ``key``) and index it.

        An article already known keeps its story; its signature is replaced.

        Returns:
            The :class:`Assignment`, or None when the article has no words (nothing indexed).

        Raises:
            ValueError: an empty ``key``.
        """
        if not key:
            raise ValueError("an article needs a key")
        m = self.minhash(title, text)
        if m is None:
            return None
        signature = encode_signature(m.hashvalues)
        known = self._story.get(key)
        if known is not None:
            self._index(key, known, m)
            return Assignment(known, signature, 1.0, False)
        match, sim = self.best_match(m)
        if match is None:
            self._index(key, key, m)
            return Assignment(key, signature, 0.0, True)
        story = self._story[match]
        self._index(key, story, m)
        return Assignment(story, signature, sim, False, match)

    def forget(self, key: str) -> bool:
        """Drop article ``key`` from the index (its story lives on in the articles still known).
        Returns whether it was known."""
        if key not in self._story:
            return False
        self._lsh.remove(key)
        del self._minhash[key]
        del self._story[key]
        return True

    def restore(self, records: Iterable[tuple[str, str, str | bytes | Sequence[int]]]) -> int:
        """Index known articles from stored ``(key, story_id, signature)`` triples (their
        stories are kept as stored). A triple that cannot be used (empty key or story, a
        signature of other settings) is logged and skipped.

        Returns:
            The number of articles indexed.
        """
        done = 0
        for key, story_id, stored in records:
            if not key or not story_id:
                logger.warning("Story state: skipping a record without key or story (%r)", key)
                continue
            try:
                values = decode_signature(stored, self.num_perm)
            except ValueError as exc:
                logger.warning("Story state: skipping article %s: %s", key, exc)
                continue
            self._index(str(key), str(story_id), self._empty(values))
            done += 1
        return done

    def state(self) -> list[tuple[str, str, str]]:
        """Every known article as ``(key, story_id, signature)`` (:meth:`restore` reads it)."""
        return [(key, self._story[key], encode_signature(m.hashvalues))
                for key, m in self._minhash.items()]
