"""Saved-search alerts (newscrawl.search.alerts): once per story, digests, HMAC-signed webhooks
to a real loopback receiver with retries and backoff, JSON lines, and the ``alert`` command."""

from __future__ import annotations

import json
import time

import pytest

from newscrawl.alerting import main as alert_main
from newscrawl.search.alerts import AlertBook, Sender, alerts_path, sign, verify
from newscrawl.search.index import SearchIndex, index_path
from tests.webhook_receiver import Receiver


class Clock:
    def __init__(self, t: float = 1_800_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _art(fp: str, title: str, text: str, story: str | None = None, site: str = "a.test"):
    return {"fp": fp, "url": f"https://{site}/{fp}", "site": site, "title": title, "text": text,
            "story_id": story, "first_seen": 1_800_000_000.0}


@pytest.fixture
def index(tmp_path):
    with SearchIndex(index_path(tmp_path, "embedded-newscrawl")) as ix:
        yield ix


def _store(index, docs):
    _, changed = index.upsert_changes(docs)
    return changed


def _outbox(book):
    return [json.loads(r[0]) for r in book.db.execute("SELECT body FROM outbox ORDER BY id")]


def test_a_wire_story_and_its_copies_fire_once_listing_the_copies(tmp_path, index):
    book = AlertBook(alerts_path(tmp_path), clock=Clock())
    book.add("storm", "Sturm OR typhoon", jsonl=str(tmp_path / "a.jsonl"))
    batch = [_art("1", "Sturm über Hamburg", "dpa meldet Sturm", "S1"),
             _art("2", "Sturm in Hamburg", "Sturm, dpa", "S1", site="b.test"),
             _art("3", "Börse", "Kurse steigen", "S2"),
             _art("4", "Typhoon hits Manila", "Reuters", "S3")]
    assert book.match(index, _store(index, batch), stored_at=10.0) == 2
    notes = _outbox(book)
    assert sorted(n["story_id"] for n in notes) == ["S1", "S3"]
    s1 = next(n for n in notes if n["story_id"] == "S1")
    assert sorted(a["url"] for a in s1["articles"]) == ["https://a.test/1", "https://b.test/2"]
    assert s1["stored_at"] == 10.0 and s1["kind"] == "match"
    # a later copy of S1, and a correction of article 1: the story was alerted already
    later = [_art("5", "Sturm: Bilanz", "dpa Sturm", "S1"),
             _art("1", "Sturm über Hamburg (korrigiert)", "dpa meldet Sturm", "S1")]
    assert book.match(index, _store(index, later)) == 0
    # an unchanged re-crawl is no change to the index: nothing to match at all
    assert _store(index, [batch[3]]) == []
    # an article without story is its own story
    assert book.match(index, _store(index, [_art("6", "Sturm", "x")])) == 1
    assert book.stats("storm")["fired"] == 3 and len(_outbox(book)) == 3


def test_site_filter_and_a_second_alert_are_independent(tmp_path, index):
    book = AlertBook(alerts_path(tmp_path), clock=Clock())
    book.add("b-only", "Sturm", site="b.test", jsonl=str(tmp_path / "b.jsonl"))
    book.add("all", "Sturm", jsonl=str(tmp_path / "all.jsonl"))
    docs = [_art("1", "Sturm", "x", "S1"), _art("2", "Sturm", "y", "S2", site="b.test")]
    assert book.match(index, _store(index, docs)) == 3
    by_alert = {}
    for n in _outbox(book):
        by_alert.setdefault(n["alert"], set()).add(n["story_id"])
    assert by_alert == {"b-only": {"S2"}, "all": {"S1", "S2"}}


def test_digest_collects_until_its_period_ends(tmp_path, index):
    clock = Clock()
    book = AlertBook(alerts_path(tmp_path), clock=clock)
    book.add("daily", "Sturm", every="hour", jsonl=str(tmp_path / "d.jsonl"))
    assert book.match(index, _store(index, [_art("1", "Sturm", "x", "S1")])) == 1
    clock.t += 600
    assert book.match(index, _store(index, [_art("2", "Sturm", "y", "S2")])) == 1
    assert _outbox(book) == [] and book.due_digests() == 0 and book.stats("daily")["pending"] == 2
    clock.t += 3000
    assert book.due_digests() == 1
    (digest,) = _outbox(book)
    assert digest["kind"] == "digest" and [s["story_id"] for s in digest["stories"]] == ["S1", "S2"]
    assert book.stats("daily")["pending"] == 0 and book.due_digests() == 0


def test_add_refuses_what_cannot_work(tmp_path):
    book = AlertBook(alerts_path(tmp_path))
    for kwargs in ({"jsonl": None}, {"webhook": "ftp://x"}, {"every": "week", "jsonl": "f"}):
        with pytest.raises(ValueError):
            book.add("x", "Sturm", **kwargs)
    with pytest.raises(ValueError):
        book.add("x", "NOT Sturm", jsonl="f")
    assert book.alerts() == []


def test_signature_is_hmac_sha256_of_timestamp_and_body():
    import hashlib
    import hmac

    body = b'{"a": 1}'
    want = "sha256=" + hmac.new(b"k", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert sign("k", "1700000000", body) == want
    assert verify("k", "1700000000", body, want, now=1_700_000_100)
    assert not verify("k", "1700000000", body, want, now=1_700_001_000)  # too old: a replay
    assert not verify("other", "1700000000", body, want, now=1_700_000_000)


def _queue_one(tmp_path, index, hook: str | None, jsonl: str | None = None, fp: str = "1"):
    book = AlertBook(alerts_path(tmp_path))
    book.add("storm", "Sturm", webhook=hook, jsonl=jsonl, secret="s3cret")
    assert book.match(index, _store(index, [_art(fp, "Sturm", "x", "S" + fp)]),
                      stored_at=time.time()) == 1
    return book


def _drain(sender: Sender, book: AlertBook, seconds: float = 15.0) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and book.next_due() is not None:
        sender.send_due()
        time.sleep(0.05)


def test_webhook_is_signed_and_retried_after_5xx_with_backoff(tmp_path, index):
    with Receiver(statuses=[503, 500]) as receiver:
        book = _queue_one(tmp_path, index, receiver.url, str(tmp_path / "a.jsonl"))
        sender = Sender(book.path, retries=3, backoff=0.2)
        _drain(sender, book)
        calls = list(receiver.calls)
    assert [c["status"] for c in calls] == [503, 500, 200]
    assert calls[1]["t"] - calls[0]["t"] >= 0.18 and calls[2]["t"] - calls[1]["t"] >= 0.38
    for c in calls:
        h = c["headers"]
        assert verify("s3cret", h["x-newscrawl-timestamp"], c["body"], h["x-newscrawl-signature"],
                      now=time.time())
        assert h["content-type"].startswith("application/json") and h["x-newscrawl-alert"] == "storm"
    assert calls[-1]["json"]["story_id"] == "S1"
    # the file got the notification once, although the webhook needed three attempts
    assert len((tmp_path / "a.jsonl").read_text().splitlines()) == 1
    assert book.stats("storm") | {} == {"fired": 1, "pending": 0, "queued": 0, "sent": 1, "failed": 0}


def test_a_4xx_is_not_retried_and_a_dead_receiver_is_given_up_after_the_retries(tmp_path, index):
    with Receiver(statuses=[400]) as receiver:
        book = _queue_one(tmp_path, index, receiver.url)
        Sender(book.path, retries=3, backoff=0.05).send_due()
        assert [c["status"] for c in receiver.calls] == [400]
    assert book.stats("storm")["failed"] == 1
    dead = Receiver()
    url = dead.url
    dead.server.server_close()  # nothing listens on that port any more
    book2 = _queue_one(tmp_path / "two", index, url, fp="2")
    sender = Sender(book2.path, retries=2, backoff=0.05)
    _drain(sender, book2)
    (row,) = book2.db.execute("SELECT state, attempts FROM outbox").fetchall()
    assert row == ("failed", 3)


def test_sender_thread_delivers_within_a_second_of_the_match(tmp_path, index):
    with Receiver() as receiver:
        book = AlertBook(alerts_path(tmp_path))
        book.add("storm", "Sturm", webhook=receiver.url)
        sender = Sender(book.path)
        sender.start()
        try:
            stored_at = time.time()
            book.match(index, _store(index, [_art("1", "Sturm", "x", "S1")]), stored_at=stored_at)
            sender.wake()
            deadline = time.time() + 5
            while not receiver.calls and time.time() < deadline:
                time.sleep(0.02)
        finally:
            sender.stop(drain=1)
        assert receiver.calls and receiver.calls[0]["t"] - stored_at < 1.0


def test_alert_command_add_list_test_remove(tmp_path, capsys, index):
    data = tmp_path
    index.upsert([_art("1", "Sturm über Hamburg", "x", "S1")])
    with Receiver() as receiver:
        assert alert_main(["--data-dir", str(data), "add", "storm", "Sturm", "--webhook",
                           receiver.url, "--secret", "k"]) == 0
        out = capsys.readouterr().out
        assert "signing key" in out and "k" in out
        assert alert_main(["--data-dir", str(data), "list"]) == 0
        assert "storm: 'Sturm' every=now" in capsys.readouterr().out
        # `test` reads the index of the embedded store in the data folder
        (data / "db").mkdir(exist_ok=True)
        assert alert_main(["--data-dir", str(data), "test", "storm"]) == 0
        assert "test notification sent (1 matching article(s) listed" in capsys.readouterr().out
        (call,) = receiver.calls
        assert call["json"]["kind"] == "test" and call["json"]["articles"][0]["fp"] == "1"
    assert alert_main(["--data-dir", str(data), "add", "bad", "NOT x", "--jsonl", "f"]) == 2
    assert alert_main(["--data-dir", str(data), "remove", "storm"]) == 0
    assert alert_main(["--data-dir", str(data), "remove", "storm"]) == 2
    assert alert_main(["--data-dir", str(data), "test", "storm"]) == 2


def test_a_spike_alert_compares_the_last_day_with_the_14_before(tmp_path, index):
    clock = Clock()
    now = clock.t
    book = AlertBook(alerts_path(tmp_path), clock=clock)
    book.add("surge", "Hochwasser", spike=3, jsonl=str(tmp_path / "s.jsonl"))
    book.add("each", "Hochwasser", jsonl=str(tmp_path / "e.jsonl"))
    day = 86400.0
    # baseline: 14 matches over the 14 days before the last one (1 a day), and noise
    old = [_art(f"o{i}", "Hochwasser am Rhein", "x", f"O{i}") | {"first_seen": now - day * (1.5 + i)}
           for i in range(14)]
    old += [_art(f"n{i}", "Börse", "x") | {"first_seen": now - day * (2 + i)} for i in range(5)]
    index.upsert(old)
    fresh = [_art(f"f{i}", "Hochwasser in Köln", "y", f"F{i}") | {"first_seen": now - 3600 * i}
             for i in range(2)]
    changed = _store(index, fresh)
    # the spike alert takes no part in the per-story matching; the other alert does
    assert book.match(index, changed) == 2
    assert book.check_spikes(index) == 0  # 2 in the last day: below 3 x 1 a day
    index.upsert([_art("f2", "Hochwasser: Pegel steigt", "z", "F2") | {"first_seen": now - 60}])
    assert book.check_spikes(index) == 1
    spike = next(n for n in _outbox(book) if n["kind"] == "spike")
    assert spike["day_matches"] == 3 and spike["baseline_per_day"] == 1.0 and spike["ratio"] == 3.0
    assert {a["fp"] for a in spike["articles"]} == {"f0", "f1", "f2"}
    # once a day at most
    index.upsert([_art("f3", "Hochwasser", "w", "F3") | {"first_seen": now - 30}])
    assert book.check_spikes(index) == 0
    clock.t += day + 1
    assert book.check_spikes(index) == 0  # the day after: f0..f3 are a day old now
    with pytest.raises(ValueError):
        book.add("bad", "x", spike=0.5, jsonl="f")
