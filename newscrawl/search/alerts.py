"""Saved searches that alert: once per story, to a signed webhook and / or a JSON-lines file.

Everything lives in one SQLite file, ``<data folder>/alerts.sqlite`` (:func:`alerts_path`),
shared by the ``newscrawl alert`` command and the crawls of that folder (WAL mode, so an alert
added while a crawl runs is used from its next stored batch on):

* ``alerts`` — ``name``, ``query`` (:mod:`newscrawl.search.query`), ``site``, ``webhook``,
  ``jsonl``, ``every`` (``now`` | ``hour`` | ``day``), ``secret`` (HMAC key), ``last_digest``;
* ``fired`` — ``(alert, story)``: the stories already alerted. The insert-if-absent on this
  primary key is the once-per-story guarantee, across batches, runs and processes;
* ``pending`` — matches of digest alerts waiting for their period to end;
* ``outbox`` — notifications to send (persisted before any attempt: a crash or a receiver that
  is down loses none), with their attempts and next try.

Flow: :meth:`AlertBook.match` takes the articles just stored whose title or text is new
(the search index's upsert tells), runs each alert's query over the index restricted to them
(:meth:`newscrawl.search.index.SearchIndex.search` with ``fps``: the very semantics of
``newscrawl search``), groups the hits by story (``story_id``, else the article's own ``fp``:
a wire story and its copies stored together make one notification listing them), keeps the
stories not yet in ``fired``, and puts one notification per story in ``outbox`` (``every=now``)
or in ``pending`` (digests, sent by :meth:`AlertBook.due_digests` once ``hour`` / ``day`` has
passed since the last one). :class:`Sender` sends the outbox on its own thread.

Webhook: ``POST`` of the JSON notification, ``Content-Type: application/json``, headers
``X-Newscrawl-Alert`` (name, percent-encoded), ``X-Newscrawl-Timestamp`` (epoch s) and ``X-Newscrawl-Signature:
sha256=<hex>`` — HMAC-SHA256 (RFC 2104) keyed by the alert's secret over ``timestamp + "." +
body`` (the scheme of Stripe's and Slack's webhooks: a receiver recomputes it and refuses an old
timestamp, so a captured request cannot be replayed later). A 2xx answer is delivered; a
connection failure, a timeout, 408, 429 or 5xx is retried after ``backoff · 2^(n−1)`` seconds
(exponential backoff), at most ``retries`` times; any other answer is a permanent failure. A
notification that could not be delivered stays in ``outbox`` with ``state = 'failed'`` (logged,
shown by ``newscrawl alert list``). JSON lines: one notification per line, appended.

Spike alerts (``spike`` = a ratio, e.g. 3): instead of one notification per story, one
``kind: "spike"`` notification when the query's matches over the last day reach ``spike`` times
its mean daily matches over the 14 days before (articles by publication time, else first
capture), and at least :data:`SPIKE_MIN_MATCHES`; at most once a day per alert
(:meth:`AlertBook.check_spikes`). With no match in the 14 days, the day's
:data:`SPIKE_MIN_MATCHES` are a spike.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from newscrawl.search.index import Hit, SearchIndex
from newscrawl.search.query import parse, to_fts5

logger = logging.getLogger(__name__)

#: Seconds between digests of ``every`` = hour / day; ``now`` sends at once.
PERIODS = {"now": 0.0, "hour": 3600.0, "day": 86400.0}
#: Most matching articles one search of an alert returns per stored batch.
MAX_HITS_PER_BATCH = 1000
#: Matches of the last day a spike needs at least (a single article is no spike).
SPIKE_MIN_MATCHES = 3
#: Days of the baseline a spike alert compares the last day with.
SPIKE_BASELINE_DAYS = 14
DAY = 86400.0
SIGNATURE_HEADER = "X-Newscrawl-Signature"
TIMESTAMP_HEADER = "X-Newscrawl-Timestamp"

_DDL = (
    "CREATE TABLE IF NOT EXISTS alerts(name TEXT PRIMARY KEY, query TEXT NOT NULL, site TEXT,"
    " webhook TEXT, jsonl TEXT, every TEXT NOT NULL DEFAULT 'now', secret TEXT NOT NULL,"
    " created REAL NOT NULL, last_digest REAL)",
    "CREATE TABLE IF NOT EXISTS fired(alert TEXT NOT NULL, story TEXT NOT NULL, fp TEXT,"
    " at REAL NOT NULL, PRIMARY KEY(alert, story))",
    "CREATE TABLE IF NOT EXISTS pending(id INTEGER PRIMARY KEY, alert TEXT NOT NULL,"
    " story TEXT NOT NULL, payload TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS outbox(id INTEGER PRIMARY KEY, alert TEXT NOT NULL,"
    " webhook TEXT, jsonl TEXT, secret TEXT NOT NULL, body TEXT NOT NULL, created REAL NOT NULL,"
    " attempts INTEGER NOT NULL DEFAULT 0, next_at REAL NOT NULL,"
    " state TEXT NOT NULL DEFAULT 'queued', error TEXT)",
    "CREATE INDEX IF NOT EXISTS outbox_due ON outbox(state, next_at)",
)
#: Columns added after the first version of the file (added to an older file at open).
_ADDED_COLUMNS = (("alerts", "spike", "REAL"), ("alerts", "last_spike", "REAL"))


def alerts_path(data_dir: str | Path) -> Path:
    """The alerts file of a data folder."""
    return Path(data_dir) / "alerts.sqlite"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Newscrawl-Signature`` value: ``sha256=`` + hex HMAC-SHA256 (RFC 2104) of
    ``timestamp + "." + body`` keyed by ``secret`` (UTF-8)."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body,
                   hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(secret: str, timestamp: str, body: bytes, signature: str, *,
           now: float, tolerance: float = 300.0) -> bool:
    """True when ``signature`` is :func:`sign`'s for this request and ``timestamp`` (epoch s) is
    within ``tolerance`` seconds of ``now``: what a receiver checks (constant-time compare)."""
    try:
        fresh = abs(now - float(timestamp)) <= tolerance
    except ValueError:
        return False
    return fresh and hmac.compare_digest(sign(secret, timestamp, body), signature)


@dataclass(frozen=True)
class Alert:
    """A saved search (see the module docstring); ``secret`` is the HMAC key."""
    name: str
    query: str
    site: str | None
    webhook: str | None
    jsonl: str | None
    every: str
    secret: str
    created: float
    last_digest: float | None
    spike: float | None = None
    last_spike: float | None = None


_ALERT_COLUMNS = ("name, query, site, webhook, jsonl, every, secret, created, last_digest, spike,"
                  " last_spike")


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    for statement in _DDL:
        db.execute(statement)
    for table, column, kind in _ADDED_COLUMNS:
        names = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in names:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    return db


def article_entry(hit: Hit, stored_at: float) -> dict[str, Any]:
    """One article of a notification (times epoch seconds)."""
    return {"fp": hit.fp, "url": hit.url, "site": hit.site, "title": hit.title,
            "time": hit.time, "first_seen": hit.first_seen, "weight": hit.weight,
            "story_id": hit.story_id, "stored_at": stored_at}


class AlertBook:
    """The saved searches of a data folder and their bookkeeping (module docstring).

    Args:
        path: the alerts file (created with its folder).
        clock: epoch seconds now (tests pass a fake one).

    Raises:
        sqlite3.Error / OSError: the file cannot be opened.
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.clock = clock
        self.db = _connect(self.path)
        self._lock = threading.RLock()

    def close(self) -> None:
        with self._lock:
            self.db.close()

    def __enter__(self) -> AlertBook:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- saved searches -------------------------------------------------------------------------

    def add(self, name: str, query: str, *, site: str | None = None, webhook: str | None = None,
            jsonl: str | None = None, every: str = "now", secret: str | None = None,
            spike: float | None = None) -> Alert:
        """Save an alert (replacing one of the same name; its fired stories are kept).

        Raises:
            ValueError: an empty name, no destination, an unknown ``every``, a webhook that is
                not http(s), or a query that cannot be searched (:class:`QueryError`).
        """
        name = name.strip()
        if not name:
            raise ValueError("an alert needs a name")
        if every not in PERIODS:
            raise ValueError(f"--every must be one of {', '.join(PERIODS)}, not {every!r}")
        if not webhook and not jsonl:
            raise ValueError("an alert needs a destination: --webhook URL and / or --jsonl FILE")
        if spike is not None and not spike > 1:
            raise ValueError(f"--spike must be a ratio above 1 (e.g. 3), not {spike!r}")
        if webhook and not webhook.lower().startswith(("http://", "https://")):
            raise ValueError(f"the webhook must be an http:// or https:// URL, not {webhook!r}")
        to_fts5(parse(query))  # raises QueryError (a ValueError) for a query that cannot run
        key = secret or secrets.token_hex(16)
        now = self.clock()
        with self._lock:
            self.db.execute("INSERT OR REPLACE INTO alerts(name, query, site, webhook, jsonl,"
                            " every, secret, created, last_digest, spike, last_spike)"
                            " VALUES(?,?,?,?,?,?,?,?,NULL,?,NULL)",
                            (name, query, site or None, webhook or None,
                             str(Path(jsonl).expanduser().resolve()) if jsonl else None,
                             every, key, now, spike))
        alert = self.get(name)
        assert alert is not None
        return alert

    def get(self, name: str) -> Alert | None:
        with self._lock:
            row = self.db.execute(f"SELECT {_ALERT_COLUMNS} FROM alerts WHERE name=?",
                                  (name,)).fetchone()
        return Alert(*row) if row else None

    def alerts(self) -> list[Alert]:
        with self._lock:
            rows = self.db.execute(f"SELECT {_ALERT_COLUMNS} FROM alerts ORDER BY name"
                                   ).fetchall()
        return [Alert(*row) for row in rows]

    def remove(self, name: str) -> bool:
        """Delete an alert, its fired stories and its pending digest; False when unknown."""
        with self._lock:
            cur = self.db.execute("DELETE FROM alerts WHERE name=?", (name,))
            self.db.execute("DELETE FROM fired WHERE alert=?", (name,))
            self.db.execute("DELETE FROM pending WHERE alert=?", (name,))
        return cur.rowcount > 0

    def stats(self, name: str) -> dict[str, int]:
        """``fired`` stories, ``pending`` digest entries, outbox ``queued`` / ``sent`` /
        ``failed`` notifications of an alert."""
        with self._lock:
            fired = self.db.execute("SELECT count(*) FROM fired WHERE alert=?", (name,)).fetchone()
            pend = self.db.execute("SELECT count(*) FROM pending WHERE alert=?", (name,)).fetchone()
            states = dict(self.db.execute("SELECT state, count(*) FROM outbox WHERE alert=?"
                                          " GROUP BY state", (name,)).fetchall())
        return {"fired": int(fired[0]), "pending": int(pend[0]),
                "queued": int(states.get("queued", 0)), "sent": int(states.get("sent", 0)),
                "failed": int(states.get("failed", 0))}

    # -- matching -------------------------------------------------------------------------------

    def match(self, index: SearchIndex, fps: Sequence[str], *,
              stored_at: float | None = None) -> int:
        """Fire the alerts for the articles ``fps`` just stored with a new title or text.

        Args:
            index: the search index already holding them.
            fps: their fingerprints.
            stored_at: epoch seconds they were stored (default: now).

        Returns:
            The number of (alert, story) notifications queued or added to a digest.
        """
        if not fps:
            return 0
        at = self.clock() if stored_at is None else stored_at
        made = 0
        for alert in self.alerts():
            if alert.spike is not None:  # a spike alert counts, it does not list stories
                continue
            try:
                hits = index.search(alert.query, site=alert.site, fps=list(fps),
                                    limit=MAX_HITS_PER_BATCH)
            except ValueError as exc:  # a query saved by other code that no longer parses
                logger.warning("Alert %r: query %r cannot run (%s): skipped", alert.name,
                               alert.query, exc)
                continue
            stories: dict[str, list[Hit]] = {}
            for hit in hits:
                stories.setdefault(hit.story_id or hit.fp, []).append(hit)
            for story, members in stories.items():
                made += self._fire(alert, story, members, at)
        return made

    def _fire(self, alert: Alert, story: str, members: list[Hit], at: float) -> int:
        payload = {"alert": alert.name, "query": alert.query, "site": alert.site,
                   "story_id": story, "articles": [article_entry(h, at) for h in members]}
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                cur = self.db.execute("INSERT OR IGNORE INTO fired VALUES(?,?,?,?)",
                                      (alert.name, story, members[0].fp, at))
                if cur.rowcount == 0:  # this story was alerted before
                    self.db.execute("COMMIT")
                    return 0
                if alert.every == "now":
                    self._enqueue(alert, {"kind": "match", **payload, "stored_at": at,
                                          "queued_at": self.clock()})
                else:
                    self.db.execute("INSERT INTO pending(alert, story, payload, at)"
                                    " VALUES(?,?,?,?)",
                                    (alert.name, story, json.dumps(payload, ensure_ascii=False),
                                     at))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return 1

    def _enqueue(self, alert: Alert, notification: Mapping[str, Any]) -> None:
        body = json.dumps(notification, ensure_ascii=False, sort_keys=True)
        now = self.clock()
        self.db.execute("INSERT INTO outbox(alert, webhook, jsonl, secret, body, created,"
                        " next_at) VALUES(?,?,?,?,?,?,?)",
                        (alert.name, alert.webhook, alert.jsonl, alert.secret, body, now, now))

    def due_digests(self) -> int:
        """Queue one digest per digest alert whose period has passed since its last digest (or
        since it was created) and that has pending matches; returns the digests queued."""
        now = self.clock()
        queued = 0
        for alert in self.alerts():
            period = PERIODS.get(alert.every, 0.0)
            if period <= 0 or now - (alert.last_digest or alert.created) < period:
                continue
            with self._lock:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    rows = self.db.execute("SELECT id, payload FROM pending WHERE alert=?"
                                           " ORDER BY id", (alert.name,)).fetchall()
                    if rows:
                        stories = [json.loads(r[1]) for r in rows]
                        self._enqueue(alert, {"kind": "digest", "alert": alert.name,
                                              "query": alert.query, "every": alert.every,
                                              "since": alert.last_digest or alert.created,
                                              "until": now, "stories": stories,
                                              "queued_at": now})
                        self.db.execute("DELETE FROM pending WHERE alert=? AND id<=?",
                                        (alert.name, rows[-1][0]))
                        queued += 1
                    self.db.execute("UPDATE alerts SET last_digest=? WHERE name=?",
                                    (now, alert.name))
                    self.db.execute("COMMIT")
                except BaseException:
                    self.db.execute("ROLLBACK")
                    raise
        return queued

    def check_spikes(self, index: SearchIndex) -> int:
        """Queue a ``kind: "spike"`` notification for each spike alert whose last day holds a
        spike (module docstring) and that did not fire in the last day; returns how many."""
        now = self.clock()
        fired = 0
        for alert in self.alerts():
            if alert.spike is None or (alert.last_spike and now - alert.last_spike < DAY):
                continue
            try:
                day = index.count_matches(alert.query, site=alert.site, since=now - DAY)
                if day < SPIKE_MIN_MATCHES:
                    continue
                before = index.count_matches(alert.query, site=alert.site,
                                             since=now - (SPIKE_BASELINE_DAYS + 1) * DAY,
                                             until=now - DAY)
                top = index.search(alert.query, site=alert.site, since=now - DAY, limit=10)
            except ValueError as exc:
                logger.warning("Spike alert %r cannot run (%s): skipped", alert.name, exc)
                continue
            baseline = before / SPIKE_BASELINE_DAYS
            if baseline > 0 and day < alert.spike * baseline:
                continue
            with self._lock:
                self._enqueue(alert, {
                    "kind": "spike", "alert": alert.name, "query": alert.query,
                    "site": alert.site, "day_matches": day,
                    "baseline_per_day": round(baseline, 3),
                    "ratio": None if baseline == 0 else round(day / baseline, 2),
                    "spike": alert.spike, "queued_at": now,
                    "articles": [article_entry(h, now) for h in top]})
                self.db.execute("UPDATE alerts SET last_spike=? WHERE name=?", (now, alert.name))
            fired += 1
        return fired

    def queue_test(self, alert: Alert, hits: Sequence[Hit]) -> int:
        """Queue a ``kind: "test"`` notification of ``alert`` listing ``hits`` (the current best
        matches; nothing is marked fired). Returns the outbox id."""
        now = self.clock()
        with self._lock:
            self._enqueue(alert, {"kind": "test", "alert": alert.name, "query": alert.query,
                                  "site": alert.site, "queued_at": now,
                                  "articles": [article_entry(h, now) for h in hits]})
            return int(self.db.execute("SELECT max(id) FROM outbox").fetchone()[0])

    # -- the outbox -----------------------------------------------------------------------------

    def due(self, limit: int = 50) -> list[tuple[Any, ...]]:
        """Queued notifications whose next try has come: ``(id, alert, webhook, jsonl, secret,
        body, attempts)``, oldest first."""
        with self._lock:
            return self.db.execute(
                "SELECT id, alert, webhook, jsonl, secret, body, attempts FROM outbox"
                " WHERE state='queued' AND next_at<=? ORDER BY id LIMIT ?",
                (self.clock(), limit)).fetchall()

    def next_due(self) -> float | None:
        with self._lock:
            row = self.db.execute("SELECT min(next_at) FROM outbox WHERE state='queued'"
                                  ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def settle(self, outbox_id: int, *, state: str, attempts: int, next_at: float | None = None,
               error: str | None = None, jsonl_done: bool = False) -> None:
        """Record an attempt: ``state`` sent / failed / queued (retry at ``next_at``);
        ``jsonl_done``: the file part is written (a retry only repeats the webhook)."""
        with self._lock:
            self.db.execute("UPDATE outbox SET state=?, attempts=?, next_at=coalesce(?, next_at),"
                            " error=?, jsonl=CASE WHEN ? THEN NULL ELSE jsonl END WHERE id=?",
                            (state, attempts, next_at, error, jsonl_done, outbox_id))

    def outbox_state(self, outbox_id: int) -> tuple[str, int, str | None] | None:
        with self._lock:
            row = self.db.execute("SELECT state, attempts, error FROM outbox WHERE id=?",
                                  (outbox_id,)).fetchone()
        return None if row is None else (str(row[0]), int(row[1]), row[2])


class PermanentFailure(Exception):
    """The receiver refused the notification in a way a retry will not change (4xx)."""


def post_webhook(url: str, body: bytes, *, alert: str, secret: str, timeout: float,
                 now: float) -> int:
    """POST ``body`` to ``url`` with the alert headers (module docstring); returns the status.

    Raises:
        PermanentFailure: a 4xx answer other than 408 and 429.
        OSError: connection failure, timeout or a retryable status (a ``urllib.error.HTTPError``
            for 408 / 429 / 5xx) — retry.
    """
    timestamp = str(int(now))
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json; charset=utf-8", "User-Agent": "newscrawl-alerts",
        "X-Newscrawl-Alert": urllib.parse.quote(alert, safe=""),
        TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: sign(secret, timestamp, body)})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as exc:
        if exc.code in (408, 429) or exc.code >= 500:
            raise
        raise PermanentFailure(f"HTTP {exc.code} {exc.reason}") from exc


class Sender:
    """Sends the outbox of an :class:`AlertBook` on its own thread (``newscrawl-alerts``).

    Args:
        book: the alerts (its own connection: :class:`Sender` opens ``book.path`` again).
        retries: retries after the first attempt; backoff: seconds before the first retry
            (doubled each time); timeout: seconds per webhook request.
        on_event: called with ``"sent"``, ``"retried"``, ``"failed"`` (for stats counters).
    """

    def __init__(self, path: str | Path, *, retries: int = 5, backoff: float = 1.0,
                 timeout: float = 10.0, on_event: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.book = AlertBook(path, clock=clock)
        self.retries, self.backoff, self.timeout = max(0, retries), max(0.0, backoff), timeout
        self.on_event = on_event or (lambda _event: None)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="newscrawl-alerts", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Look at the outbox now (called after new notifications were queued)."""
        self._wake.set()

    def stop(self, *, drain: float = 5.0) -> None:
        """Send what is due for up to ``drain`` seconds, then stop (what is left stays queued
        in the file, sent by the next crawl or ``newscrawl alert send``)."""
        if self._thread is None:
            return
        deadline = time.monotonic() + drain
        while time.monotonic() < deadline and self.book.due(1):
            time.sleep(0.05)
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=self.timeout + 1)
        self.book.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.book.due_digests()
                self.send_due()
            except Exception:  # noqa: BLE001 - the thread must survive a bad row or disk
                logger.exception("Alert sender failed; trying again")
            nxt = self.book.next_due()
            wait = 1.0 if nxt is None else min(1.0, max(0.0, nxt - self.book.clock()))
            self._wake.wait(wait)
            self._wake.clear()

    def send_due(self) -> int:
        """One pass over the due notifications; returns how many were delivered."""
        delivered = 0
        for oid, alert, webhook, jsonl, secret, body, attempts in self.book.due():
            if self._stop.is_set():
                break
            attempts += 1
            jsonl_done = False
            try:
                if jsonl:
                    with open(jsonl, "a", encoding="utf-8") as out:
                        out.write(body.replace("\n", " ") + "\n")
                    jsonl_done = True
                if webhook:
                    post_webhook(webhook, body.encode("utf-8"), alert=alert, secret=secret,
                                 timeout=self.timeout, now=self.book.clock())
            except PermanentFailure as exc:
                logger.error("Alert %r: %s refused the notification (%s); not retried",
                             alert, webhook, exc)
                self.book.settle(oid, state="failed", attempts=attempts, error=str(exc),
                                 jsonl_done=jsonl_done)
                self.on_event("failed")
                continue
            except OSError as exc:
                if attempts > self.retries:
                    logger.error("Alert %r: giving up after %d attempt(s): %s", alert,
                                 attempts, exc)
                    self.book.settle(oid, state="failed", attempts=attempts, error=str(exc),
                                     jsonl_done=jsonl_done)
                    self.on_event("failed")
                else:
                    delay = self.backoff * 2 ** (attempts - 1)
                    logger.warning("Alert %r: attempt %d failed (%s); retrying in %.1f s",
                                   alert, attempts, exc, delay)
                    self.book.settle(oid, state="queued", attempts=attempts,
                                     next_at=self.book.clock() + delay, error=str(exc),
                                     jsonl_done=jsonl_done)
                    self.on_event("retried")
                continue
            self.book.settle(oid, state="sent", attempts=attempts, jsonl_done=jsonl_done)
            self.on_event("sent")
            delivered += 1
        return delivered
