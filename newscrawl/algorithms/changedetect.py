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
integers. Every validator present on both sides must agree; one that differs means changed. Only
a *validator* (RFC 9110 §8.8: an ``ETag``, strong or weak, or a valid ``Last-Modified``) can prove
"unchanged": ``Content-Length`` can only prove "changed" (an edit that keeps the length is common:
a corrected figure, a swapped word), so a comparison of lengths alone is ``unknown``, and a page
or host that sends no validator is checked by a GET and its content fingerprint. A
``Last-Modified`` is a validator only when it parses, is after 1990 (servers that send the epoch
mean "unknown") and is not later than the answer's ``Date`` (RFC 9110 §8.8.2.1, §13.1.3: a
future date is ignored); :meth:`Validators.from_headers` drops any other, so it is never stored
nor echoed as ``If-Modified-Since``.

"Unchanged" answers are verified (DESIGN §5, "trust, but verify"): :class:`Verification` decides
which HEAD- or 304-"unchanged" pages get a full GET anyway. Validators earn trust: a host's first
``trust_after`` "unchanged" answers are all verified, afterwards a rate that halves with every
further confirmed match down to a floor; a host caught once is verified every time. A GET whose
text changed while the validators said unchanged (``verify_mismatch``) ends the host's trust in
its validators (``fingerprint`` mode: every page of the host fetched in full from then on).
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
    "NO_VALIDATOR_REASON",
    "HostPolicy",
    "Validators",
    "Verification",
    "VerificationDraws",
    "compare",
    "compare_validators",
    "answer_events",
    "conditional_headers",
    "head_problem",
    "learn_host",
    "links_fingerprint",
    "parse_http_date",
    "text_fingerprint",
    "usable_last_modified",
    "validator_event",
    "validators_agree",
    "verify_outcome",
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

#: Names of what decided a visit (a page record's ``validator``; :func:`compare`).
V_ETAG: Final = "etag"
V_LAST_MODIFIED: Final = "last-modified"
V_LENGTH: Final = "content-length"  # can only decide "changed"
V_FINGERPRINT: Final = "fingerprint"  # the body was fetched and its content fingerprint decided
V_NONE: Final = "none"  # nothing was compared (a first visit, a failed one)

#: A ``Last-Modified`` before this (epoch seconds, 1990-01-01) is not a date but a placeholder
#: (``Thu, 01 Jan 1970 00:00:00 GMT``): ignored as a validator.
MIN_LAST_MODIFIED: Final = 631152000.0

#: Reason of a host switched to ``fingerprint`` because none of its answers had a validator
#: (undone by the first answer that has one).
NO_VALIDATOR_REASON: Final = "no ETag or valid Last-Modified"

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


def usable_last_modified(value: str | None, *, date: str | None = None,
                         now: float | None = None) -> float | None:
    """A ``Last-Modified`` value as epoch seconds when it can serve as a validator, else None.

    RFC 9110 §8.8.2.1 / §13.1.3: the value must be a valid HTTP date, and a date later than the
    answer's ``Date`` (the server's clock; ``now``, epoch seconds, when the answer has no valid
    ``Date``) is invalid. Dates before :data:`MIN_LAST_MODIFIED` (the epoch sent as "unknown")
    are ignored too.

    >>> usable_last_modified("Sat, 29 Jan 2022 00:42:26 GMT", date="Sun, 30 Jan 2022 00:00:00 GMT")
    1643416946.0
    >>> usable_last_modified("Wed, 01 Jan 2031 00:00:00 GMT", date="Sun, 30 Jan 2022 00:00:00 GMT")
    >>> usable_last_modified("Thu, 01 Jan 1970 00:00:00 GMT") is None
    True
    """
    stamp = parse_http_date(value)
    if stamp is None or stamp < MIN_LAST_MODIFIED:
        return None
    reference = parse_http_date(date)
    if reference is None:
        reference = now
    if reference is not None and stamp > reference:
        return None
    return stamp


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
    def from_headers(cls, get: Callable[[str], str | bytes | None], *,
                     now: float | None = None) -> Validators:
        """Read the three headers through ``get(name)`` (case-insensitive lookup is the caller's).

        Bytes are decoded as Latin-1 (RFC 9110 §5.5); an unparsable length counts as absent; a
        ``Last-Modified`` that is no validator (:func:`usable_last_modified` against the
        answer's ``Date``, or ``now`` in epoch seconds without one) is dropped.
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
        modified = text("Last-Modified")
        if usable_last_modified(modified, date=text("Date"), now=now) is None:
            modified = None
        return cls(etag=text("ETag"), last_modified=modified, content_length=length)

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
        """True when a validator that can prove "unchanged" is present (an ``ETag`` or a
        ``Last-Modified``); ``Content-Length`` is none (module docstring)."""
        return bool(self.etag or self.last_modified)

    @property
    def conditional(self) -> bool:
        """True when a conditional GET can be built (an ``ETag`` or a ``Last-Modified``)."""
        return bool(self.etag or self.last_modified)

    @property
    def validator(self) -> str:
        """The validator a conditional GET is decided by: :data:`V_ETAG` (``If-None-Match``
        takes precedence, RFC 9110 §13.2.2), :data:`V_LAST_MODIFIED` or :data:`V_NONE`."""
        if self.etag:
            return V_ETAG
        return V_LAST_MODIFIED if self.last_modified else V_NONE


def compare(stored: Validators, fresh: Validators) -> tuple[str, str]:
    """``(verdict, validator)``: :data:`UNCHANGED`, :data:`CHANGED` or :data:`UNKNOWN`, and
    what decided it (:data:`V_ETAG`, :data:`V_LAST_MODIFIED`, :data:`V_LENGTH`; :data:`V_NONE`
    for ``unknown``). Every validator present on both sides must agree; ``Content-Length``
    can decide "changed" but never "unchanged" (module docstring).

    >>> compare(Validators('"a1"', None, 10), Validators('W/"a1"', None, 10))
    ('unchanged', 'etag')
    >>> compare(Validators(content_length=10), Validators(content_length=10))
    ('unknown', 'none')
    """
    proved = V_NONE
    if stored.etag and fresh.etag:
        if _weak_etag(stored.etag) != _weak_etag(fresh.etag):
            return CHANGED, V_ETAG
        proved = V_ETAG
    if stored.last_modified and fresh.last_modified:
        a, b = parse_http_date(stored.last_modified), parse_http_date(fresh.last_modified)
        if a is not None and b is not None:
            if a != b:
                return CHANGED, V_LAST_MODIFIED
            if proved == V_NONE:
                proved = V_LAST_MODIFIED
    if stored.content_length and fresh.content_length:
        if stored.content_length != fresh.content_length:
            return CHANGED, V_LENGTH
    return (UNCHANGED, proved) if proved != V_NONE else (UNKNOWN, V_NONE)


def compare_validators(stored: Validators, fresh: Validators) -> str:
    """:data:`UNCHANGED`, :data:`CHANGED` or :data:`UNKNOWN` (the verdict of :func:`compare`).

    >>> old = Validators('"a1"', "Sat, 29 Jan 2022 00:42:26 GMT", 740499)
    >>> compare_validators(old, Validators('W/"a1"', None, 740499))
    'unchanged'
    >>> compare_validators(old, Validators(None, "Sat, 29 Jan 2022 05:10:46 GMT", 740499))
    'changed'
    >>> compare_validators(old, Validators())
    'unknown'
    """
    return compare(stored, fresh)[0]


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

    Returns ``"refused"`` (403/405/501), ``"no_validators"`` (no ``ETag`` nor valid
    ``Last-Modified``: a ``Content-Length`` alone cannot prove "unchanged"),
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


def conditional_headers(stored: Validators, *, now: float | None = None) -> dict[str, str]:
    """Request headers of a conditional GET (RFC 9110 §13.1.2, §13.1.3); empty when impossible.

    A stored ``Last-Modified`` is echoed only when it is still a validator
    (:func:`usable_last_modified`, against ``now`` in epoch seconds when given): records
    written by older code may hold a future or epoch date.

    >>> conditional_headers(Validators('"a1"', "Sat, 29 Jan 2022 00:42:26 GMT", 10))
    {'If-None-Match': '"a1"', 'If-Modified-Since': 'Sat, 29 Jan 2022 00:42:26 GMT'}
    >>> conditional_headers(Validators(None, "Thu, 01 Jan 1970 00:00:00 GMT", 10))
    {}
    """
    headers: dict[str, str] = {}
    if stored.etag:
        headers["If-None-Match"] = stored.etag
    if stored.last_modified and usable_last_modified(stored.last_modified, now=now) is not None:
        headers["If-Modified-Since"] = stored.last_modified
    return headers


def answer_events(how: str, changed: bool, head: Validators | None,
                  validators: Validators) -> list[str]:
    """The host-policy events (:func:`learn`) a GET's answer shows about the check before it.

    Args:
        how: how the GET came about (``head``, ``conditional``, ``fingerprint``, ``first``).
        changed: did the page's text / link set change.
        head: the validators of the HEAD just before the GET (None: no HEAD).
        validators: the validators of the GET's answer.

    Returns:
        ``disagree`` when HEAD and GET validators disagree (RFC 9110 §9.3.2: a HEAD should
        send the GET's header fields), then ``true_change`` or ``false_change_<head|
        conditional>`` for a GET after a HEAD / conditional GET that said "changed".

    >>> answer_events("head", False, None, Validators(None, None, 10))
    ['false_change_head']
    """
    events = []
    if head is not None and not validators_agree(head, validators):
        events.append("disagree")
    if how in ("head", "conditional"):
        events.append("true_change" if changed else f"false_change_{how}")
    return events


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
            ``false_change_conditional``, ``disagree``, ``true_change``, ``not_modified``,
            ``no_validator`` / ``has_validator`` (answers without / with a validator, counted
            until the first with one), ``verify_match`` / ``verify_mismatch`` (verification
            GETs, :class:`Verification`: ``verify_match`` sets the host's verification rate).
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
    "no_validator", "has_validator", "verify_match", "verify_mismatch",
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
    * ``strikes`` answers without a validator (``no_validator``: no ``ETag`` nor valid
      ``Last-Modified``, maybe a ``Content-Length``) and none with one switch it to
      ``fingerprint`` (reason :data:`NO_VALIDATOR_REASON`); a later answer with a validator
      (``has_validator``) undoes that and starts over in ``head`` mode;
    * one ``verify_mismatch`` (the validators said unchanged, a full GET showed changed text,
      :class:`Verification`) switches it to ``fingerprint`` from any mode: its validators lie;
    * otherwise ``fingerprint`` is final (a later run may start over by deleting the host's
      record).

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
    elif event == "verify_mismatch" and mode != FINGERPRINT:
        mode = FINGERPRINT
        reason = "validators said unchanged, a verification GET found changed text"
    elif event == "no_validator" and mode != FINGERPRINT and not counts.get("has_validator"):
        if counts[event] >= strikes:
            mode = FINGERPRINT
            reason = (f"{NO_VALIDATOR_REASON} in {counts[event]} answers (Content-Length alone "
                      "cannot prove unchanged)")
    elif event == "has_validator" and mode == FINGERPRINT and reason.startswith(NO_VALIDATOR_REASON):
        counts.pop("no_validator", None)
        return replace(policy, mode=HEAD, reason="", learned=False, counts=counts)
    if mode != HEAD:
        learned = True
    return replace(policy, mode=mode, reason=reason, learned=learned, counts=counts)


def validator_event(policy: HostPolicy, fresh: Validators) -> str | None:
    """The host event a 200 answer with validators ``fresh`` gives (``has_validator`` /
    ``no_validator``, :func:`learn_host`), or None once it would teach nothing (the host
    showed a validator before, or is a ``fingerprint`` host for another reason)."""
    if fresh.any:
        undo = policy.mode == FINGERPRINT and policy.reason.startswith(NO_VALIDATOR_REASON)
        return "has_validator" if undo or not policy.counts.get("has_validator") else None
    if policy.mode != FINGERPRINT and not policy.counts.get("has_validator"):
        return "no_validator"
    return None


def verify_outcome(stored: Validators, fresh: Validators, changed: bool) -> str | None:
    """The host event of a verification GET (:class:`Verification`): ``verify_match`` (the
    text confirms "unchanged"), ``verify_mismatch`` (the text changed while the validators of
    this very answer still say not), or None (the validators changed too: the page changed
    after the check, nobody lied).

    >>> verify_outcome(Validators('"a"'), Validators('"a"'), True)
    'verify_mismatch'
    >>> verify_outcome(Validators('"a"'), Validators('"b"'), True) is None
    True
    >>> verify_outcome(Validators('"a"', None, 100), Validators('"a"', None, 120), True)
    'verify_mismatch'
    """
    if not changed:
        return "verify_match"
    # Only a validator can lie about "unchanged": the length of the full answer may differ from
    # the one a HEAD reported (or stored) while its ETag / Last-Modified still say "same".
    stored, fresh = replace(stored, content_length=None), replace(fresh, content_length=None)
    return None if compare(stored, fresh)[0] == CHANGED else "verify_mismatch"


# --- verification of "unchanged" -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verification:
    """Which HEAD- or 304-"unchanged" pages get a full GET anyway ("trust, but verify";
    validators earn trust).

    A host's verification rate, from its verification GETs so far (``m`` that confirmed
    "unchanged", its ``verify_match`` count, and ``x`` that caught its validators lying,
    ``verify_mismatch``; both kept with its policy across runs):

    * ``start = 0``: verification is off, the rate is ``floor`` (0: never);
    * ``x > 0`` (caught lying): 1, every "unchanged" answer is verified;
    * ``m < trust_after`` (unproven): 1, so a host whose validators lie is caught at the
      first of its first ``trust_after`` "unchanged" answers that hides a change;
    * otherwise (trusted) ``max(floor, start · 2^−(m − trust_after))``: rarely, never less
      than ``floor``.

    Whether one page is verified is a deterministic draw (SHA-1 of ``seed``, the page
    fingerprint and its visit number, as a number in [0, 1)) below the rate, so a run can be
    replayed and a test knows its samples: ``start = floor = 1`` verifies every "unchanged"
    answer, ``start = floor = 0`` none.

    Attributes:
        start: the rate of a host once it earned trust (a probability, 0..1; 0: off).
        floor: the lowest rate (a probability, 0..1).
        seed: mixed into the draw (another seed, other samples).
        trust_after: "unchanged" answers verified (and confirmed) before a host is trusted
            (a count >= 0).

    Raises:
        ValueError: a rate outside [0, 1], a negative ``trust_after``.
    """

    start: float = 0.5
    floor: float = 0.01
    seed: str = ""
    trust_after: int = 3

    def __post_init__(self) -> None:
        for name in ("start", "floor"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"verification {name} must lie in [0, 1], got {value}")
        if self.trust_after < 0:
            raise ValueError(f"verification trust_after must be >= 0, got {self.trust_after}")

    def rate(self, matches: int, mismatches: int = 0) -> float:
        """The rate of a host with ``matches`` confirmed matches and ``mismatches`` caught lies
        (a probability).

        >>> [Verification(0.5, 0.1, trust_after=2).rate(m) for m in range(6)]
        [1.0, 1.0, 0.5, 0.25, 0.125, 0.1]
        >>> Verification(0.5, 0.1).rate(50, mismatches=1)
        1.0
        """
        if self.start <= 0.0:
            return self.floor
        if mismatches > 0 or matches < self.trust_after:
            return 1.0
        return max(self.floor, self.start * 0.5 ** max(0, matches - self.trust_after))

    def draw(self, page: str, visit: int) -> float:
        """The page's draw in [0, 1) for visit number ``visit`` (deterministic)."""
        digest = hashlib.sha1(f"{self.seed}|{page}|{visit}".encode()).hexdigest()
        return int(digest[:13], 16) / float(1 << 52)

    def sample(self, policy: HostPolicy, page: str, visit: int, *, pending: int = 0) -> bool:
        """True when the "unchanged" page ``page`` (its fingerprint) of a host with ``policy``
        gets a full GET at its visit number ``visit``; ``pending`` verification GETs of the
        host not answered yet count as matches (:class:`VerificationDraws`).

        >>> Verification(1.0, 1.0).sample(HostPolicy(), "fp", 3)
        True
        >>> Verification(0.0, 0.0).sample(HostPolicy(), "fp", 3)
        False
        """
        matches = int(policy.counts.get("verify_match", 0)) + max(0, pending)
        caught = int(policy.counts.get("verify_mismatch", 0))
        return self.draw(page, visit) < self.rate(matches, caught)


@dataclass
class VerificationDraws:
    """The verification draws of one run: a verification GET sent and not answered yet counts
    as a match of its host, so the many "unchanged" answers of a host that arrive together
    (a re-crawl has hundreds in flight) do not all draw at the host's start rate; an answer
    moves the count from pending to the host's ``verify_match`` / ``verify_mismatch``.

    >>> draws = VerificationDraws(Verification(1.0, 0.0))
    >>> draws.sample("h", HostPolicy(), "p0", 1), draws.pending("h", HostPolicy())
    (True, 1)
    >>> draws.cancel("h"); draws.pending("h", HostPolicy())
    0
    """

    verification: Verification
    #: host → [answered verifications when the run first drew for it, draws sent this run]
    _hosts: dict[str, list[int]] = field(default_factory=dict)

    @staticmethod
    def _answered(policy: HostPolicy) -> int:
        return int(policy.counts.get("verify_match", 0)) + int(policy.counts.get("verify_mismatch", 0))

    def pending(self, host: str, policy: HostPolicy) -> int:
        """Verification GETs of ``host`` sent this run and not answered yet."""
        base, drawn = self._hosts.get(host, (self._answered(policy), 0))
        return max(0, drawn - (self._answered(policy) - base))

    def sample(self, host: str, policy: HostPolicy, page: str, visit: int) -> bool:
        """:meth:`Verification.sample` with this run's pending draws of ``host``; a True draw
        is counted as pending."""
        picked = self.verification.sample(policy, page, visit, pending=self.pending(host, policy))
        if picked:
            self._hosts.setdefault(host, [self._answered(policy), 0])[1] += 1
        return picked

    def cancel(self, host: str) -> None:
        """Take back the last True draw of ``host``: its verification GET is not sent (no
        request of the budget left for it); the page is taken as "unchanged" this time."""
        entry = self._hosts.get(host)
        if entry is not None and entry[1] > 0:
            entry[1] -= 1


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
