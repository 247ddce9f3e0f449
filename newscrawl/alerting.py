"""``newscrawl alert``: saved searches that notify a webhook and / or a JSON-lines file.

::

    newscrawl alert add NAME QUERY [--site S] [--webhook URL] [--jsonl FILE]
                                   [--every now|hour|day | --spike RATIO] [--secret KEY]
    newscrawl alert list
    newscrawl alert remove NAME
    newscrawl alert test NAME      # send the current best matches now, marked "kind": "test"
    newscrawl alert send           # send what is queued (left by a crawl that ended meanwhile)

The alerts live in ``<data folder>/alerts.sqlite`` (:mod:`newscrawl.search.alerts`); every crawl
of that folder fires them as it stores articles (:mod:`extensions.search`), once per story. The
webhook's HMAC key is printed by ``add`` (generated unless ``--secret`` or env
``NEWSCRAWL_ALERT_SECRET`` gives one); ``list`` shows its first 4 characters only.

Exit status: 0, 1 a notification could not be delivered (``test``, ``send``) or a file could
not be read, 2 bad arguments or an unknown alert.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sqlite3
import sys
import time
from pathlib import Path

from newscrawl import defaults
from newscrawl.embedded import resolve_data_dir
from newscrawl.search.alerts import PERIODS, AlertBook, Sender, alerts_path
from newscrawl.search.index import SearchIndex
from newscrawl.searching import index_location
from newscrawl.readstore import READ_ERRORS, read_failure

SECRET_ENV_VAR = "NEWSCRAWL_ALERT_SECRET"


def make_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=(
        "Saved searches: each new or changed article that matches fires once per story, to a "
        "signed webhook and / or a JSON-lines file, during every crawl of the data folder."))
    parser.add_argument("--data-dir", default=None, help="data folder (default ./data)")
    parser.add_argument("--uri", default="", help="MongoDB URI (for `test`: whose index)")
    parser.add_argument("--database", default=defaults.NEWSCRAWL_MONGO_DATABASE)
    sub = parser.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="save an alert (replaces one of the same name)")
    add.add_argument("name")
    add.add_argument("query", help="a `newscrawl search` query")
    add.add_argument("--site", default=None, help="only this registered domain")
    add.add_argument("--webhook", default=None, help="POST notifications to this URL")
    add.add_argument("--jsonl", default=None, help="append notifications to this file")
    add.add_argument("--every", choices=tuple(PERIODS), default="now",
                     help="now: one notification per story; hour / day: a digest")
    add.add_argument("--secret", default=None, help="HMAC key of the webhook signature")
    add.add_argument("--spike", type=float, default=None, metavar="RATIO",
                     help="a spike alert: fire (at most daily) when the last day's matches reach "
                          "RATIO times the daily mean of the 14 days before")
    sub.add_parser("list", help="the saved alerts and what they sent")
    remove = sub.add_parser("remove", help="delete an alert")
    remove.add_argument("name")
    test = sub.add_parser("test", help="send the current best matches of an alert now")
    test.add_argument("name")
    test.add_argument("--limit", type=int, default=5)
    sub.add_parser("send", help="send the queued notifications now")
    return parser


def _when(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def main(argv: list[str] | None = None, *, prog: str = "newscrawl alert") -> int:
    """``newscrawl alert`` (module docstring); returns the exit status."""
    args = make_parser(prog).parse_args(argv)
    folder = Path(resolve_data_dir(args.data_dir)).expanduser().resolve()
    try:
        with AlertBook(alerts_path(folder)) as book:
            return _run(args, book, prog)
    except (OSError, sqlite3.Error) as exc:
        print(f"{prog}: cannot use {alerts_path(folder)}: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, book: AlertBook, prog: str) -> int:
    if args.action == "add":
        secret = args.secret or os.environ.get(SECRET_ENV_VAR) or None
        try:
            alert = book.add(args.name, args.query, site=args.site, webhook=args.webhook,
                             jsonl=args.jsonl, every=args.every, secret=secret,
                             spike=args.spike)
        except ValueError as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
            return 2
        print(f"alert {alert.name!r} saved in {book.path}: {alert.query!r}"
              + (f" on {alert.site}" if alert.site else "") + f", every={alert.every}")
        if alert.webhook:
            print(f"  webhook {alert.webhook}\n  signing key (X-Newscrawl-Signature, "
                  f"HMAC-SHA256 of 'timestamp.body'): {alert.secret}")
        if alert.jsonl:
            print(f"  JSON lines to {alert.jsonl}")
        return 0
    if args.action == "list":
        alerts = book.alerts()
        if not alerts:
            print(f"no alerts in {book.path} (newscrawl alert add NAME QUERY --jsonl FILE)")
        for alert in alerts:
            st = book.stats(alert.name)
            print(f"{alert.name}: {alert.query!r}" + (f" site={alert.site}" if alert.site else "")
                  + (f" spike x{alert.spike:g}" if alert.spike else f" every={alert.every}")
                  + f"  key={alert.secret[:4]}…")
            for kind, where in (("webhook", alert.webhook), ("jsonl", alert.jsonl)):
                if where:
                    print(f"  {kind} {where}")
            print(f"  stories fired {st['fired']}, pending digest {st['pending']}, sent "
                  f"{st['sent']}, queued {st['queued']}, failed {st['failed']}; last digest "
                  f"{_when(alert.last_digest)}")
        return 0
    if args.action == "remove":
        if not book.remove(args.name):
            print(f"{prog}: no alert {args.name!r}", file=sys.stderr)
            return 2
        print(f"alert {args.name!r} removed")
        return 0
    if args.action == "test":
        saved = book.get(args.name)
        if saved is None:
            print(f"{prog}: no alert {args.name!r}", file=sys.stderr)
            return 2
        try:
            _uri, path = index_location(args.uri, args.data_dir, args.database)
        except READ_ERRORS as exc:
            return read_failure(prog, exc)
        hits = []
        if path.exists():
            with SearchIndex(path) as index:
                hits = index.search(saved.query, site=saved.site, limit=max(1, args.limit))
        oid = book.queue_test(saved, hits)
        return _send(book, prog, only=oid, matches=len(hits))
    return _send(book, prog)


def _send(book: AlertBook, prog: str, *, only: int | None = None, matches: int = 0,
          patience: float = 30.0) -> int:
    """Send the queued notifications (with retries) for up to ``patience`` seconds; with
    ``only``, until that one is sent or failed."""
    sender = Sender(book.path, retries=2, backoff=0.5)
    deadline = time.monotonic() + patience
    try:
        while time.monotonic() < deadline:
            sender.send_due()
            state = book.outbox_state(only) if only is not None else None
            next_at = book.next_due()
            if next_at is None or (state is not None and state[0] != "queued"):
                break
            time.sleep(max(0.0, min(1.0, next_at - book.clock())))
    finally:
        sender.book.close()
    if only is not None:
        final = book.outbox_state(only)
        if final and final[0] == "sent":
            print(f"test notification sent ({matches} matching article(s) listed, "
                  f"{final[1]} attempt(s))")
            return 0
        print(f"{prog}: test notification not delivered: {final[2] if final else 'unknown'}",
              file=sys.stderr)
        return 1
    left = book.next_due()
    print("queued notifications sent" if left is None else
          "some notifications are still queued (the receiver did not answer)")
    return 0 if left is None else 1
