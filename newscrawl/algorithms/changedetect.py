"""Change detection for re-visits: HTTP validators, per-host trust in them, content fingerprints
and version diffs (pure: plain data in, plain data out; DESIGN §5, seeds 002 §3.1 and 000).

Seed 002 §3.1: before fetching a known page again, request its metadata with ``HEAD`` and compare
it with what was stored (网页长度、最后修改日期); fetch the page only when it changed. Real hosts
defeat that in four ways, each of which this module names and :func:`learn_host` reacts to:

* HEAD is refused (405 Method Not Allowed, 501 Not Implemented, 403 Forbidden);
* the HEAD answer carries no validators (no ``ETag``, ``Last-Modified`` nor ``Content-Length``);
* its ``Content-Length`` is 0 or absent (a HEAD handler that does not render the page);
* its validators change on every request (a fresh ``ETag`` or ``Last-Modified: now`` per
  answer), which shows as a HEAD that says "changed" while the page text is the same, or as a
  HEAD whose validators disagree with those of the GET sent right after it.

A host whose HEAD cannot be trusted is switched to a *conditional GET* (RFC 9110 §13.1:
``If-None-Match`` with the stored ``ETag``, ``If-Modified-Since`` with the stored
``Last-Modified``; ``304 Not Modified`` means unchanged). A host whose conditional GETs also come
back ``200`` with the same text is switched to a plain GET plus comparison of the
*content fingerprint*: a hash of the extracted article text (title and body, whitespace and
case normalised) for articles, of the set of linked URLs for channel pages, so that rotating ad
blocks, clocks and session tokens in the HTML are not changes.

Validator comparison (:func:`compare_validators`) follows RFC 9110: ETags by the weak comparison
function (§8.8.3.2: ``W/"x"`` equals ``"x"``), ``Last-Modified`` as HTTP dates (§5.6.7), lengths as
integers. Every validator present on both sides must agree; one that differs means changed; no
validator on both sides means the comparison cannot tell (``unknown``). ``Content-Length`` alone
is a weak signal (an edit that keeps the length is missed); seed 002 compares it, and so do we.
"""

from __future__ import annotations

import datetime as dt
import difflib
import email.utils
import hashlib
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

__all__ = [
    "CHANGED",
    "CONDITIONAL",
    "FINGERPRINT",
    "HEAD",
    "HEAD_REFUSED_STATUSES",
    "UNCHANGED",
    "UNKNOWN",
    "HostPolicy",
    "Validators",
    "compare_validators",
    "conditional_headers",
    "head_problem",
    "learn_host",
    "links_fingerprint",
    "parse_http_date",
    "text_fingerprint",
    "validators_agree",
    "version_diff",
]

#: Verdicts of :func:`compare_validators`.
UNCHANGED: Final = "unchanged"
CHANGED: Final = "changed"
UNKNOWN: Final = "unknown"

#: Host modes of :class:`HostPolicy`: how a known page of the host is checked.
HEAD: Final = "head"  # HEAD first; GET only when the validators changed
CONDITIONAL: Final = "conditional"  # GET with If-None-Match / If-Modified-Since; 304 = unchanged
FINGERPRINT: Final = "fingerprint"  # plain GET; the content fingerprint decides
MODES: Final = (HEAD, CONDITIONAL, FINGERPRINT)

#: HEAD answers that mean "this server does not do HEAD" (RFC 9110 §15.5.6, §15.6.2; 403 from
#: servers and WAFs that allow GET only).
HEAD_REFUSED_STATUSES: Final = frozenset({403, 405, 501})

#: Zero-width characters and the soft hyphen: dropped before fingerprinting.
_INVISIBLE_CHARS: Final = "\u200b\u200c\u200d\u2060\u00ad\ufeff"
_INVISIBLE: Final = re.compile(f"[{_INVISIBLE_CHARS}]")
_TOKEN: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+")


# --- validators -------------------------------------------------------------------------------


def parse_http_date(value: str | None) -> float | None:
    """An HTTP date (RFC 9110 §5.6.7; IMF-fixdate and the obsolete forms) as epoch seconds.

    >>> parse_http_date("Sat, 29 Jan 2022 00:42:26 GMT")
    1643416946.0
    >>> parse_http_date("yesterday") is None
    True
    """
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:  # RFC 9110: HTTP dates are GMT
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    stamp = parsed.timestamp()
    return stamp if math.isfinite(stamp) else None


def _weak_etag(value: str) -> str:
    value = value.strip()
    return value[2:] if value[:2] in ("W/", "w/") else value


@dataclass(frozen=True, slots=True)
class Validators:
    """The metadata of one HTTP answer that tells whether a page changed.

    Attributes:
        etag: the ``ETag`` header as sent (with quotes, maybe ``W/``), or None.
        last_modified: the ``Last-Modified`` header as sent (an HTTP date), or None.
        content_length: the ``Content-Length`` header in bytes, or None when absent/invalid.
    """

    etag: str | None = None
    last_modified: str | None = None
    content_length: int | None = None

    @classmethod
    def from_headers(cls, get: Callable[[str], str | bytes | None]) -> Validators:
        """Read the three headers through ``get(name)`` (case-insensitive lookup is the caller's).

        Bytes are decoded as Latin-1 (RFC 9110 §5.5); an unparsable length counts as absent.
        """

        def text(name: str) -> str | None:
            value = get(name)
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            value = (value or "").strip()
            return value or None

        length: int | None
        try:
            raw = text("Content-Length")
            length = int(raw) if raw is not None else None
            if length is not None and length < 0:
                length = None
        except ValueError:
            length = None
        return cls(etag=text("ETag"), last_modified=text("Last-Modified"), content_length=length)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Validators:
        """The inverse of :meth:`to_dict`; junk values are dropped, never raised on."""
        if not data:
            return cls()
        length = data.get("content_length")
        return cls(
            etag=data.get("etag") if isinstance(data.get("etag"), str) else None,
            last_modified=data.get("last_modified")
            if isinstance(data.get("last_modified"), str)
            else None,
            content_length=int(length) if isinstance(length, int) and length >= 0 else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "etag": self.etag,
            "last_modified": self.last_modified,
            "content_length": self.content_length,
        }

    @property
    def any(self) -> bool:
        """True when at least one validator is present."""
        return bool(self.etag or self.last_modified or self.content_length is not None)

    @property
    def conditional(self) -> bool:
        """True when a conditional GET can be built (an ``ETag`` or a ``Last-Modified``)."""
        return bool(self.etag or self.last_modified)


def compare_validators(stored: Validators, fresh: Validators) -> str:
    """:data:`UNCHANGED`, :data:`CHANGED` or :data:`UNKNOWN` (see the module docstring).

    >>> old = Validators('"a1"', "Sat, 29 Jan 2022 00:42:26 GMT", 740499)
    >>> compare_validators(old, Validators('W/"a1"', None, 740499))
    'unchanged'
    >>> compare_validators(old, Validators(None, "Sat, 29 Jan 2022 05:10:46 GMT", 740499))
    'changed'
    >>> compare_validators(old, Validators())
    'unknown'
    """
    compared = 0
    if stored.etag and fresh.etag:
        compared += 1
        if _weak_etag(stored.etag) != _weak_etag(fresh.etag):
            return CHANGED
    if stored.last_modified and fresh.last_modified:
        a, b = parse_http_date(stored.last_modified), parse_http_date(fresh.last_modified)
        if a is not None and b is not None:
            compared += 1
            if a != b:
                return CHANGED
    if stored.content_length and fresh.content_length:
        compared += 1
        if stored.content_length != fresh.content_length:
            return CHANGED
    return UNCHANGED if compared else UNKNOWN


def validators_agree(head: Validators, get: Validators) -> bool:
    """Do a HEAD answer and the GET answer right after it carry the same ``ETag`` and
    ``Last-Modified``? False means the validators change on every request (or the page changed
    in between, which is rare; :func:`learn_host` needs repeated evidence). Lengths are not
    compared: a HEAD handler may legitimately not know the length of a compressed answer."""
    if head.etag and get.etag and _weak_etag(head.etag) != _weak_etag(get.etag):
        return False
    if head.last_modified and get.last_modified:
        a, b = parse_http_date(head.last_modified), parse_http_date(get.last_modified)
        if a is not None and b is not None and a != b:
            return False
    return True


def head_problem(status: int, validators: Validators) -> str | None:
    """Why a HEAD answer cannot be trusted, or None when it can be compared.

    Returns ``"refused"`` (403/405/501), ``"no_validators"`` (none of the three headers),
    ``"zero_length"`` (``Content-Length: 0``: the handler does not render the page) or
    ``"no_length"`` (no ``Content-Length``). Other error statuses (404, 5xx) are about the page,
    not about the host's HEAD support: None (the caller treats the page as gone or failing).
    """
    if status in HEAD_REFUSED_STATUSES:
        return "refused"
    if not 200 <= status < 300:
        return None
    if not validators.any:
        return "no_validators"
    if validators.content_length == 0:
        return "zero_length"
    if validators.content_length is None:
        return "no_length"
    return None


def conditional_headers(stored: Validators) -> dict[str, str]:
    """Request headers of a conditional GET (RFC 9110 §13.1.2, §13.1.3); empty when impossible.

    >>> conditional_headers(Validators('"a1"', "Sat, 29 Jan 2022 00:42:26 GMT", 10))
    {'If-None-Match': '"a1"', 'If-Modified-Since': 'Sat, 29 Jan 2022 00:42:26 GMT'}
    """
    headers: dict[str, str] = {}
    if stored.etag:
        headers["If-None-Match"] = stored.etag
    if stored.last_modified:
        headers["If-Modified-Since"] = stored.last_modified
    return headers


# --- per-host trust ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """How the known pages of one host are checked, and the evidence behind it.

    Attributes:
        mode: :data:`HEAD`, :data:`CONDITIONAL` or :data:`FINGERPRINT`.
        reason: why the host is in this mode (``""`` while it is in the initial ``head`` mode).
        learned: True once one HEAD answer was seen (or the host left ``head`` mode); until then
            the caller sends one probe at a time to the host, so the first answer decides for the
            others (no burst of refused HEADs).
        counts: evidence counters: ``head_ok``, ``head_<problem>``, ``false_change_head``,
            ``false_change_conditional``, ``disagree``, ``true_change``, ``not_modified``.
    """

    mode: str = HEAD
    reason: str = ""
    learned: bool = False
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "reason": self.reason, "learned": self.learned,
                "counts": dict(self.counts)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> HostPolicy:
        """The inverse of :meth:`to_dict`; an unknown mode gives the initial policy."""
        if not data or data.get("mode") not in MODES:
            return cls()
        counts = data.get("counts") or {}
        return cls(
            mode=str(data["mode"]),
            reason=str(data.get("reason") or ""),
            learned=bool(data.get("learned")),
            counts={str(k): int(v) for k, v in counts.items() if isinstance(v, int)},
        )


#: Events :func:`learn_host` understands.
HOST_EVENTS: Final = frozenset({
    "head_ok", "head_refused", "head_no_validators", "head_zero_length", "head_no_length",
    "false_change_head", "false_change_conditional", "disagree", "true_change", "not_modified",
})


def learn_host(policy: HostPolicy, event: str, *, strikes: int = 2) -> HostPolicy:
    """The host policy after one piece of evidence (a new object; ``policy`` is not changed).

    Rules (DESIGN §5, "learn this per host"):

    * in ``head`` mode, one HEAD answer with a problem (:func:`head_problem`) switches the host
      to ``conditional`` at once: the answer itself proves HEAD useless there;
    * in ``head`` mode, ``strikes`` pieces of evidence that the validators change on every
      request (a HEAD that said "changed" while the text was the same, or HEAD and GET
      validators that disagree) switch it to ``conditional``, unless as many true changes were
      seen (a page that really changes often is not a liar);
    * in ``conditional`` mode, ``strikes`` conditional GETs answered ``200`` with the same text
      switch it to ``fingerprint``;
    * ``fingerprint`` is final (a later run may start over by deleting the host's record).

    Raises:
        ValueError: an unknown event or ``strikes < 1``.
    """
    if event not in HOST_EVENTS:
        raise ValueError(f"unknown host event {event!r}; expected one of {sorted(HOST_EVENTS)}")
    if strikes < 1:
        raise ValueError(f"strikes must be >= 1, got {strikes}")
    counts = dict(policy.counts)
    counts[event] = counts.get(event, 0) + 1
    mode, reason = policy.mode, policy.reason
    learned = policy.learned or event.startswith("head_")
    if mode == HEAD and event.startswith("head_") and event != "head_ok":
        mode, reason = CONDITIONAL, f"HEAD {event[5:].replace('_', ' ')}"
    elif mode == HEAD and event in ("false_change_head", "disagree"):
        lies = counts.get("false_change_head", 0) + counts.get("disagree", 0)
        if lies >= strikes and lies > counts.get("true_change", 0):
            mode, reason = CONDITIONAL, f"HEAD validators change on every request ({lies} times)"
    elif mode == CONDITIONAL and event == "false_change_conditional":
        if counts[event] >= strikes:
            mode = FINGERPRINT
            reason = f"conditional GET answered 200 with unchanged text ({counts[event]} times)"
    if mode != HEAD:
        learned = True
    return replace(policy, mode=mode, reason=reason, learned=learned, counts=counts)


# --- content fingerprints ---------------------------------------------------------------------


def _normal_text(text: str) -> str:
    """NFKC, invisible characters dropped, case-folded, whitespace runs made one space, stripped.

    ``" ".join(text.split())`` is ``re.sub(r"\\s+", " ", text).strip()``: ``str.split`` splits at
    the characters ``\\s`` matches (``str.isspace``) and drops the ends; it is 5x faster. The
    invisible characters are rare: looked for first (``str.translate`` with a table costs more
    than everything else here together).
    """
    text = unicodedata.normalize("NFKC", text)
    if any(char in text for char in _INVISIBLE_CHARS):
        text = _INVISIBLE.sub("", text)
    return " ".join(text.casefold().split())


def text_fingerprint(title: str | None, text: str | None) -> str:
    """16 hex digits identifying an article's extracted title and body text.

    NFKC-normalised, zero-width characters dropped, case-folded, whitespace runs collapsed:
    re-wrapped or re-indented HTML gives the same fingerprint; so does any change outside the
    extracted text (ads, clocks, tokens, navigation), which is the point.

    >>> text_fingerprint("Title", "Body  text.") == text_fingerprint("title", "Body text.\\n")
    True
    """
    data = _normal_text(title or "") + "\n" + _normal_text(text or "")
    return hashlib.sha1(data.encode("utf-8")).hexdigest()[:16]


def links_fingerprint(urls: Iterable[str]) -> str:
    """16 hex digits identifying the *set* of URLs a channel page links (order and duplicates
    ignored): a channel page changed for a news crawler when its list of links changed."""
    joined = "\n".join(sorted(set(urls)))
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()[:16]


# --- article versions -------------------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize("NFKC", text or "").casefold())


def version_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Summary of the change from one stored version of an article to the next.

    Args:
        old, new: article dicts with ``title``, ``text`` and optionally ``published``,
            ``authors``.

    Returns:
        ``{"title_changed": bool, "old_title", "new_title", "body_changed_pct": float,
        "words_added": int, "words_removed": int, "published_changed": bool,
        "authors_changed": bool}``. ``body_changed_pct`` is ``100·(1 − r)`` rounded to 0.1,
        where ``r`` is difflib's similarity ratio of the two bodies as word sequences (words:
        Unicode word runs; one CJK character is one word), so a corrected figure in a 400-word
        text is about 0.3 %, a rewritten text near 100 %.
    """
    a, b = _tokens(str(old.get("text") or "")), _tokens(str(new.get("text") or ""))
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    added = removed = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    ratio = matcher.ratio() if (a or b) else 1.0
    old_title = old.get("title") or None
    new_title = new.get("title") or None
    return {
        "title_changed": _normal_text(old_title or "") != _normal_text(new_title or ""),
        "old_title": old_title,
        "new_title": new_title,
        "body_changed_pct": round(100.0 * (1.0 - ratio), 1),
        "words_added": added,
        "words_removed": removed,
        "published_changed": old.get("published") != new.get("published"),
        "authors_changed": list(old.get("authors") or []) != list(new.get("authors") or []),
    }
