"""newscrawl.algorithms.changedetect: validators, per-host trust, fingerprints, version diffs."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from newscrawl.algorithms.changedetect import (
    CHANGED,
    CONDITIONAL,
    FINGERPRINT,
    HEAD,
    UNCHANGED,
    UNKNOWN,
    NO_VALIDATOR_REASON,
    HostPolicy,
    Validators,
    Verification,
    VerificationDraws,
    compare,
    compare_validators,
    conditional_headers,
    head_problem,
    learn_host,
    links_fingerprint,
    parse_http_date,
    text_fingerprint,
    validators_agree,
    verify_outcome,
    version_diff,
)
from newscrawl.algorithms.changedetect import _normal_text

LM1 = "Sat, 29 Jan 2022 00:42:26 GMT"
LM2 = "Sat, 29 Jan 2022 05:10:46 GMT"


def test_validators_from_headers_and_back():
    headers = {"ETag": b'W/"abc"', "Last-Modified": LM1.encode(), "Content-Length": b"740499"}
    v = Validators.from_headers(headers.get)
    assert v == Validators('W/"abc"', LM1, 740499)
    assert Validators.from_dict(v.to_dict()) == v
    assert Validators.from_headers({"Content-Length": b"-3"}.get) == Validators()
    assert Validators.from_headers({"Content-Length": "x"}.get).content_length is None
    assert Validators.from_dict({"etag": 5, "content_length": "7"}) == Validators()
    # Content-Length is no validator (it cannot prove "unchanged")
    assert not Validators().any and not Validators(content_length=3).any
    assert Validators(None, LM1).any and Validators('W/"a"').any
    assert not Validators(content_length=3).conditional
    assert (Validators('"a"', LM1).validator, Validators(None, LM1).validator,
            Validators(content_length=3).validator) == ("etag", "last-modified", "none")


@pytest.mark.parametrize("stored, fresh, verdict", [
    (Validators('"a"', LM1, 10), Validators('"a"', LM1, 10), UNCHANGED),
    (Validators('"a"'), Validators('W/"a"'), UNCHANGED),  # weak comparison, RFC 9110 §8.8.3.2
    (Validators('"a"', LM1), Validators('"b"', LM1), CHANGED),
    (Validators(None, LM1), Validators(None, LM2), CHANGED),
    (Validators(None, LM1), Validators(None, "Saturday, 29-Jan-22 00:42:26 GMT"), UNCHANGED),
    (Validators(content_length=10), Validators(content_length=11), CHANGED),
    (Validators(content_length=10), Validators(content_length=10), UNKNOWN),  # never proves
    (Validators(None, LM1, 10), Validators(None, LM1, 10), UNCHANGED),
    (Validators('"a"', None, 10), Validators('"a"', None, 12), CHANGED),  # all must agree
    (Validators('"a"'), Validators(None, LM1), UNKNOWN),  # nothing comparable
    (Validators(), Validators('"a"', LM1, 1), UNKNOWN),
])
def test_compare_validators(stored, fresh, verdict):
    assert compare_validators(stored, fresh) == verdict


def test_http_dates():
    assert parse_http_date(LM1) == 1643416946.0
    assert parse_http_date("Sun Nov  6 08:49:37 1994") == 784111777.0  # asctime form
    assert parse_http_date("") is None and parse_http_date("soon") is None


@pytest.mark.parametrize("status, v, problem", [
    (405, Validators(), "refused"),
    (501, Validators('"a"', LM1, 5), "refused"),
    (403, Validators(), "refused"),
    (200, Validators(), "no_validators"),
    (200, Validators('"a"', LM1, 0), "zero_length"),
    (200, Validators('"a"', LM1), "no_length"),
    (200, Validators(None, None, 5), "no_validators"),  # a length alone proves nothing
    (200, Validators('W/"a"', None, 5), None),
    (404, Validators(), None),  # about the page, not about HEAD
])
def test_head_problem(status, v, problem):
    assert head_problem(status, v) == problem


def test_validators_agree_ignores_lengths():
    assert validators_agree(Validators('"a"', LM1, 0), Validators('"a"', LM1, 900))
    assert not validators_agree(Validators('"a"'), Validators('"b"'))
    assert not validators_agree(Validators(None, LM1), Validators(None, LM2))
    assert validators_agree(Validators('"a"'), Validators(None, LM2))


def test_conditional_headers():
    assert conditional_headers(Validators(content_length=3)) == {}
    assert conditional_headers(Validators(None, LM1)) == {"If-Modified-Since": LM1}


def test_one_bad_head_answer_switches_the_host_to_conditional():
    for event in ("head_refused", "head_no_validators", "head_zero_length", "head_no_length"):
        policy = learn_host(HostPolicy(), event)
        assert policy.mode == CONDITIONAL and policy.learned and policy.reason.startswith("HEAD")
    ok = learn_host(HostPolicy(), "head_ok")
    assert ok.mode == HEAD and ok.learned and ok.counts == {"head_ok": 1}


def test_validators_that_change_on_every_request_need_repeated_evidence():
    policy = learn_host(HostPolicy(), "head_ok")
    policy = learn_host(policy, "false_change_head")
    assert policy.mode == HEAD
    policy = learn_host(policy, "disagree")
    assert policy.mode == CONDITIONAL and "every request" in policy.reason
    # a host whose pages really change as often keeps HEAD
    honest = HostPolicy()
    for event in ("true_change", "true_change", "false_change_head", "false_change_head"):
        honest = learn_host(honest, event)
    assert honest.mode == HEAD


def test_conditional_gets_answered_200_for_unchanged_text_lead_to_fingerprints():
    policy = learn_host(HostPolicy(), "head_refused")
    policy = learn_host(policy, "false_change_conditional", strikes=2)
    assert policy.mode == CONDITIONAL
    policy = learn_host(policy, "false_change_conditional", strikes=2)
    assert policy.mode == FINGERPRINT
    assert learn_host(policy, "head_refused").mode == FINGERPRINT  # final
    assert HostPolicy.from_dict(policy.to_dict()) == policy
    assert HostPolicy.from_dict({"mode": "bogus"}) == HostPolicy()
    with pytest.raises(ValueError):
        learn_host(policy, "nonsense")


def test_text_fingerprint_ignores_layout_not_words():
    a = text_fingerprint("Titel", "Erster Absatz.\n\nZweiter  Absatz.")
    assert a == text_fingerprint("titel", " Erster Absatz. Zweiter Absatz.\u200b")
    assert a != text_fingerprint("Titel", "Erster Absatz. Dritter Absatz.")
    assert text_fingerprint(None, None) == text_fingerprint("", "")


def test_links_fingerprint_is_a_set_fingerprint():
    assert links_fingerprint(["b", "a", "a"]) == links_fingerprint(["a", "b"])
    assert links_fingerprint(["a"]) != links_fingerprint(["a", "c"])


def _normal_text_reference(text: str) -> str:
    """The normalisation as first written (stored fingerprints depend on it)."""
    invisible = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\u00ad\ufeff"))
    text = unicodedata.normalize("NFKC", text).translate(invisible).casefold()
    return re.sub(r"\s+", " ", text).strip()


#: Whitespace, invisible characters and letters that case-fold or NFKC-normalise to several.
_LAYOUT = st.sampled_from(
    " \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000" "\u200b\u200c\u200d\u2060\u00ad\ufeff" "ß\ufb01Ǆ"
)


@given(st.text(st.one_of(st.characters(), _LAYOUT)))
def test_normal_text_is_unchanged(text):
    assert _normal_text(text) == _normal_text_reference(text)


def test_normal_text_examples():
    assert _normal_text("  Stra\u00dfe\u00a0\u200bund\u00ad\n\u3000\uff21BC\t") == "strasse und abc"
    assert _normal_text("") == _normal_text(" \u200b\n") == ""


@given(st.text(), st.text())
def test_fingerprints_are_16_hex_digits(title, text):
    fp = text_fingerprint(title, text)
    assert len(fp) == 16 and int(fp, 16) >= 0


def test_version_diff():
    old = {"title": "Haushalt", "text": " ".join(f"wort{i}" for i in range(200)), "authors": ["A"]}
    new = {"title": "Haushalt (aktualisiert)", "text": old["text"].replace("wort5 ", "korrektur "),
           "authors": ["A"]}
    diff = version_diff(old, new)
    assert diff["title_changed"] and diff["old_title"] == "Haushalt"
    assert 0 < diff["body_changed_pct"] < 2 and diff["words_added"] == diff["words_removed"] == 1
    assert not diff["authors_changed"] and not diff["published_changed"]
    same = version_diff(old, {**old, "title": " haushalt "})
    assert not same["title_changed"] and same["body_changed_pct"] == 0.0
    assert version_diff({"text": "a b"}, {"text": "c d"})["body_changed_pct"] == 100.0
    assert version_diff({}, {})["body_changed_pct"] == 0.0


# --- the validator model (RFC 9110 §8.8, §13.1) ---------------------------------------------

DATE = "Sun, 30 Jan 2022 00:00:00 GMT"
FUTURE = "Wed, 01 Jan 2031 00:00:00 GMT"
EPOCH = "Thu, 01 Jan 1970 00:00:00 GMT"


@pytest.mark.parametrize("headers, last_modified", [
    ({"Last-Modified": LM1, "Date": DATE}, LM1),
    ({"Last-Modified": FUTURE, "Date": DATE}, None),  # later than the answer's Date
    ({"Last-Modified": EPOCH, "Date": DATE}, None),  # the epoch means "unknown"
    ({"Last-Modified": "last tuesday", "Date": DATE}, None),  # not an HTTP date
    ({"Last-Modified": LM2, "Date": LM1}, None),  # later than Date, even by hours
    ({"Last-Modified": LM1}, LM1),  # no Date, no now: only parsed and after 1990
])
def test_last_modified_is_a_validator_only_when_valid_and_past(headers, last_modified):
    fresh = Validators.from_headers(headers.get)
    assert fresh.last_modified == last_modified
    assert ("If-Modified-Since" in conditional_headers(fresh)) is (last_modified is not None)


def test_without_date_now_decides_and_stored_junk_is_never_echoed():
    assert Validators.from_headers({"Last-Modified": FUTURE}.get, now=1643500000.0) == Validators()
    # a record written by older code may hold a future or epoch date: not echoed
    assert conditional_headers(Validators(None, FUTURE), now=1643500000.0) == {}
    assert conditional_headers(Validators('"x"', EPOCH)) == {"If-None-Match": '"x"'}


def test_compare_names_the_deciding_validator():
    assert compare(Validators('"a"', LM1, 9), Validators('W/"a"', LM1, 9)) == (UNCHANGED, "etag")
    assert compare(Validators(None, LM1, 9), Validators(None, LM1, 9)) == (UNCHANGED, "last-modified")
    assert compare(Validators(None, LM1, 9), Validators(None, LM1, 8)) == (CHANGED, "content-length")
    assert compare(Validators('"a"'), Validators('"b"')) == (CHANGED, "etag")
    assert compare(Validators(content_length=9), Validators(content_length=9)) == (UNKNOWN, "none")


def test_a_host_without_validators_is_a_fingerprint_host_until_one_appears():
    policy = learn_host(HostPolicy(), "no_validator")
    assert policy.mode == HEAD
    policy = learn_host(policy, "no_validator")
    assert policy.mode == FINGERPRINT and policy.reason.startswith(NO_VALIDATOR_REASON)
    assert "Content-Length" in policy.reason
    back = learn_host(policy, "has_validator")
    assert back.mode == HEAD and not back.learned and "no_validator" not in back.counts
    # one answer with a validator first: a few pages without do not change the host's mode
    mixed = learn_host(HostPolicy(), "has_validator")
    for _ in range(5):
        mixed = learn_host(mixed, "no_validator")
    assert mixed.mode == HEAD
    # a host in fingerprint mode for lying validators is not brought back by a validator
    liar = learn_host(learn_host(HostPolicy(), "head_ok"), "verify_mismatch")
    assert learn_host(liar, "has_validator").mode == FINGERPRINT


@pytest.mark.parametrize("start_mode_events", [(), ("head_refused",)])
def test_one_verify_mismatch_distrusts_the_validators(start_mode_events):
    policy = HostPolicy()
    for event in start_mode_events:
        policy = learn_host(policy, event)
    policy = learn_host(learn_host(policy, "verify_match"), "verify_mismatch")
    assert policy.mode == FINGERPRINT and "verification GET" in policy.reason
    assert policy.counts["verify_match"] == 1 and policy.counts["verify_mismatch"] == 1
    assert HostPolicy.from_dict(policy.to_dict()) == policy  # survives runs with the host record


def test_verification_rate_halves_per_confirmed_match_down_to_the_floor():
    verify = Verification(start=0.8, floor=0.05, trust_after=0)
    assert [verify.rate(m) for m in range(6)] == [0.8, 0.4, 0.2, 0.1, 0.05, 0.05]
    policy = HostPolicy()
    rates = []
    for _ in range(3):
        rates.append(verify.rate(int(policy.counts.get("verify_match", 0))))
        policy = learn_host(policy, "verify_match")
    assert rates == [0.8, 0.4, 0.2]
    with pytest.raises(ValueError):
        Verification(start=1.5)
    with pytest.raises(ValueError):
        Verification(floor=-0.1)
    with pytest.raises(ValueError):
        Verification(trust_after=-1)


def test_validators_earn_trust_an_unproven_host_is_verified_every_time_until_trust_after():
    verify = Verification(start=0.5, floor=0.01, trust_after=3)
    # unproven: 1.0 for the first three confirmed matches, then start, halving to the floor
    assert [verify.rate(m) for m in range(7)] == [1.0, 1.0, 1.0, 0.5, 0.25, 0.125, 0.0625]
    assert verify.rate(40) == 0.01
    pages = [f"{i:016x}" for i in range(200)]
    policy = HostPolicy()
    assert all(verify.sample(policy, p, 1) for p in pages)  # every draw of an unproven host
    for _ in range(3):
        policy = learn_host(policy, "verify_match")
    picked = sum(verify.sample(policy, p, 1) for p in pages)
    assert 60 < picked < 140  # trusted: about half at the start rate
    # off: start 0 means no verification, also for an unproven host
    assert not any(Verification(0.0, 0.0, trust_after=3).sample(HostPolicy(), p, 1) for p in pages)


def test_a_host_caught_lying_is_verified_every_time_whatever_its_matches():
    verify = Verification(start=0.5, floor=0.01, trust_after=3)
    policy = HostPolicy()
    for _ in range(30):  # long trusted: near the floor
        policy = learn_host(policy, "verify_match")
    pages = [f"{i:016x}" for i in range(200)]
    assert sum(verify.sample(policy, p, 1) for p in pages) < 10
    caught = learn_host(policy, "verify_mismatch")
    assert verify.rate(30, mismatches=1) == 1.0
    assert all(verify.sample(caught, p, 1) for p in pages)
    assert caught.mode == FINGERPRINT  # and the host's pages are fetched in full anyway


def test_a_lying_host_is_caught_within_three_revisits():
    """A host whose validators lie: HEAD / 304 keep ETag, Last-Modified and length while the
    page changed. Simulated revisits of its pages with the crawl's objects (the draws, the
    outcome, the host's learning): the first "unchanged" answer that hides a change is verified
    and catches it, however the host's earlier answers went (up to trust_after - 1 honest
    "unchanged" before it)."""
    stale = Validators('"v1"', "Tue, 01 Oct 2024 08:00:00 GMT", 5000)
    for honest_before in range(3):
        draws = VerificationDraws(Verification(0.5, 0.01, trust_after=3))
        policy = HostPolicy(mode=HEAD, learned=True)
        caught_at = None
        for revisit in range(1, 10):
            page_changed = revisit > honest_before  # the first ones really did not change
            assert compare(stale, stale)[0] == UNCHANGED  # what the lying HEAD says every time
            if not draws.sample("liar", policy, f"page{revisit % 2}", revisit):
                continue
            event = verify_outcome(stale, stale, page_changed)
            policy = learn_host(policy, event)
            if event == "verify_mismatch":
                caught_at = revisit
                break
        assert caught_at == honest_before + 1 <= 3
        assert policy.mode == FINGERPRINT


def test_a_verification_draw_taken_back_is_no_longer_pending():
    draws = VerificationDraws(Verification(0.5, 0.01, trust_after=3))
    policy = HostPolicy()
    assert draws.sample("h", policy, "p1", 1) and draws.pending("h", policy) == 1
    draws.cancel("h")
    assert draws.pending("h", policy) == 0
    draws.cancel("h")  # nothing to take back: no error, never negative
    assert draws.pending("h", policy) == 0


def test_a_full_answer_whose_length_changed_under_the_same_etag_is_a_lie():
    stored = Validators('"v1"', None, 5000)
    assert verify_outcome(stored, Validators('"v1"', None, 5123), True) == "verify_mismatch"
    assert verify_outcome(stored, Validators('"v2"', None, 5123), True) is None  # it changed since


def test_verification_draws_are_deterministic_uniform_and_seeded():
    verify = Verification(start=0.25, floor=0.25, trust_after=0)
    pages = [f"{i:016x}" for i in range(4000)]
    picked = [p for p in pages if verify.sample(HostPolicy(), p, 2)]
    assert picked == [p for p in pages if verify.sample(HostPolicy(), p, 2)]  # same draw again
    assert 900 < len(picked) < 1100  # about a quarter
    assert picked != [p for p in pages if Verification(0.25, 0.25, seed="x", trust_after=0).sample(
        HostPolicy(), p, 2)]
    assert picked != [p for p in pages if verify.sample(HostPolicy(), p, 3)]  # next visit
    assert all(0.0 <= verify.draw(p, 1) < 1.0 for p in pages[:100])
    always, never = Verification(1.0, 1.0), Verification(0.0, 0.0)
    assert all(always.sample(HostPolicy(), p, 1) for p in pages[:200])
    assert not any(never.sample(HostPolicy(), p, 1) for p in pages[:200])


def test_pending_verifications_count_as_matches_so_a_burst_of_unchanged_answers_draws_few():
    # a re-crawl has hundreds of "unchanged" answers of one host in flight at once: without
    # the pending count they would all draw at the start rate (0.5: about half verified)
    from newscrawl.algorithms.changedetect import HostPolicy, Verification, VerificationDraws

    draws = VerificationDraws(Verification(0.5, 0.01))
    policy = HostPolicy()
    picked = sum(draws.sample("h", policy, f"page{i}", 1) for i in range(1000))
    assert 3 <= picked <= 30  # start · 2^-k falls to the floor after a few draws, then ~1 %
    assert draws.pending("h", policy) == picked
    alone = sum(Verification(0.5, 0.01).sample(policy, f"page{i}", 1) for i in range(1000))
    assert alone > 400
