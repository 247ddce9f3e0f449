"""``newscrawl report``: what the store holds, per site, in the terminal or as one HTML page.

Reads the store a crawl wrote (:mod:`newscrawl.readstore`: ``--uri`` / env, else the embedded
store of ``--data-dir``; a data folder that does not exist is an error, exit status 2). Prints
per site: articles, channel pages, links per class, newest publication time; freshness over the
window (``--days``, ending at ``--now`` or at the newest capture): new articles per hour, median
and p90 publication → capture delay, channels and their estimated rate of new links; the top
stories by NewsPageRank weight (full titles, wrapped); the stories carried by several sites; the
sources (channel pages, feeds) with their rates. ``--html FILE`` writes the same as one
self-contained page with charts (:mod:`newscrawl.report_html`). The figures are computed by
:mod:`newscrawl.algorithms.analytics`; this module reads the store and lays them out.

Exit status: 0 done, 1 the store could not be read, 2 usage or no store.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from newscrawl import defaults
from newscrawl.algorithms.analytics import (
    Report,
    ReportBuilder,
    as_utc,
    format_rate,
    format_seconds,
)
from newscrawl.readstore import READ_ERRORS, read_failure, reading_store
from newscrawl.store import NewsStore

#: Article fields the report reads (a projection: bodies are never transferred).
REPORT_FIELDS = ("site", "first_seen", "published", "weight", "title", "url", "fp", "story_id",
                 "sources")
CLASSES = ("downward", "horizontal", "crosswise", "upward", "outward", "frame")
SHORT = {"downward": "down", "horizontal": "horiz", "crosswise": "cross", "upward": "up",
         "outward": "out", "frame": "frame"}


def site_summary(store: NewsStore) -> list[dict[str, Any]]:
    """Return one row per site: ``{site, articles, nodes, newest, links: {class: n}}``."""
    return store.site_summary()


def parse_time(value: str) -> dt.datetime:
    """An ISO 8601 date or time (``2026-12-01``, ``2026-12-01T08:00:00Z``) as tz-aware UTC.

    Raises:
        argparse.ArgumentTypeError: not ISO 8601.
    """
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or time: {value!r}") from None
    result = as_utc(parsed)
    assert result is not None
    return result


def build_report(store: NewsStore, *, now: dt.datetime | None, days: float, top: int,
                 site: str | None = None) -> Report:
    """Stream the window's articles and the sources from ``store`` into a :class:`Report`;
    ``now`` None: the newest capture in the store (else the wall clock for an empty store);
    ``site``: only that registered domain's articles and sources."""
    end = now or store.newest_capture() or dt.datetime.now(dt.timezone.utc)
    builder = ReportBuilder(end, days=days, top=top)
    for doc in store.iter_articles(since=builder.start, site=site, fields=REPORT_FIELDS):
        builder.add_article(doc)
    for record in store.iter_sources():
        if site is None or record.get("site") == site:
            builder.add_source(record)
    return builder.build()


def render_terminal(console: Console, title: str, rows: list[dict[str, Any]], report: Report,
                    discovered: list[dict[str, Any]] | None = None) -> None:
    """Print the report's tables; long titles and URLs wrap, nothing is cut. ``discovered``: the
    feeds and sitemaps found per site (:meth:`NewsStore.discovered_sources`)."""
    table = Table(title=title)
    for col in ["site", "articles", "nodes", "newest (UTC)", *(SHORT[c] for c in CLASSES)]:
        table.add_column(col, justify="left" if col == "site" else "right", overflow="fold")
    for row in rows:
        newest = row.get("newest")
        table.add_row(str(row["site"]), str(row.get("articles", 0)), str(row.get("nodes", 0)),
                      newest.strftime("%Y-%m-%d %H:%M") if newest else "-",
                      *(str(row["links"].get(c, 0)) for c in CLASSES))
    console.print(table)

    window = f"{report.start:%Y-%m-%d %H:%M} – {report.now:%Y-%m-%d %H:%M} UTC"
    fresh = Table(title=f"freshness, {window}")
    for col in ("site", "new articles", "new/hour", "delay median", "delay p90", "dated",
                "channels", "channel rate/h"):
        fresh.add_column(col, justify="left" if col == "site" else "right", overflow="fold")
    for site in report.sites:
        fresh.add_row(site.site, str(site.articles), format_rate(site.per_hour, site.per_hour_note),
                      format_seconds(site.median_delay), format_seconds(site.p90_delay),
                      str(len(site.delays)), str(site.channels),
                      format_rate(site.channel_rate, "n/a (1 visit)") if site.channels else "-")
    console.print(fresh)

    label = "stories" if report.clustered else "articles"
    stories = Table(title=f"top {len(report.stories)} {label} by NewsPageRank weight")
    stories.add_column("weight", justify="right", no_wrap=True)
    stories.add_column("sites", justify="right", no_wrap=True)
    stories.add_column("title", overflow="fold", ratio=3)
    stories.add_column("url", overflow="fold", ratio=2)
    for story in report.stories:
        stories.add_row(f"{story.weight:.3f}", ", ".join(sorted(story.sites)), story.title or "-",
                        story.url)
    console.print(stories)
    if report.widest:
        wide = Table(title="other stories carried by several sites")
        wide.add_column("sites", justify="right")
        wide.add_column("articles", justify="right")
        wide.add_column("title", overflow="fold")
        for story in report.widest:
            wide.add_row(str(len(story.sites)), str(story.articles), story.title)
        console.print(wide)
    if report.sources:
        sources = Table(title="sources by estimated rate of new links")
        for col in ("kind", "rate/h", "articles", "url"):
            sources.add_column(col, justify="right" if col in ("rate/h", "articles") else "left",
                               overflow="fold")
        for source in report.sources:
            sources.add_row(source.kind, source.rate_note or
                            ("-" if source.rate is None else f"{source.rate:.2f}"),
                            str(source.articles), source.url)
        console.print(sources)
    if report.newest:
        newest = Table(title=f"newest {len(report.newest)} articles")
        for col in ("stored (UTC)", "published", "site", "title", "url"):
            newest.add_column(col, overflow="fold", no_wrap=col in ("stored (UTC)", "published"))
        for a in report.newest:
            newest.add_row(f"{a['first_seen']:%Y-%m-%d %H:%M}",
                           "-" if a["published"] is None else f"{a['published']:%Y-%m-%d %H:%M}",
                           a["site"], a["title"] or "-", a["url"])
        console.print(newest)
    if discovered:
        found = Table(title="feeds and sitemaps discovered per site")
        for col in ("site", "kind", "via", "url"):
            found.add_column(col, overflow="fold")
        for row in discovered:
            found.add_row(str(row["site"]), str(row.get("kind")), str(row.get("via")),
                          str(row["url"]))
        console.print(found)


def make_parser(prog: str = "newscrawl report") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--uri", default="", help="MongoDB URI (default: env, else embedded store)")
    parser.add_argument("--data-dir", default=None, help="embedded store folder (default ./data)")
    parser.add_argument("--database", default=defaults.NEWSCRAWL_MONGO_DATABASE)
    parser.add_argument("--top", type=int, default=10, help="top stories and sources to list")
    parser.add_argument("--days", type=float, default=7.0,
                        help="freshness window in days, ending at --now (default 7)")
    parser.add_argument("--hours", type=float, default=None,
                        help="freshness window in hours (instead of --days)")
    parser.add_argument("--site", default=None,
                        help="only this registered domain (e.g. zeit.de)")
    parser.add_argument("--now", type=parse_time, default=None,
                        help="end of the window, ISO 8601 (default: the newest capture)")
    parser.add_argument("--html", default=None, metavar="FILE",
                        help="also write the report with charts to FILE (one self-contained page)")
    return parser


def main(argv: list[str] | None = None, *, prog: str = "newscrawl report") -> int:
    """Run the command; return its exit status (0 done, 1 store error, 2 usage / no store)."""
    parser = make_parser(prog)
    args = parser.parse_args(argv)
    if args.hours is not None:
        if not args.hours > 0:
            parser.error("--hours must be > 0")
        args.days = args.hours / 24.0
    if args.top < 0 or not args.days > 0:
        parser.error("--top must be >= 0 and --days > 0")
    site = args.site.strip().lower() if args.site else None
    console = Console()
    if not console.is_terminal:  # a pipe or file: wide enough for the tables, titles still wrap
        console = Console(width=140)
    try:
        with reading_store(args.uri, args.data_dir, args.database) as (store, where):
            rows = [r for r in site_summary(store) if site is None or r.get("site") == site]
            report = build_report(store, now=args.now, days=args.days, top=args.top, site=site)
            discovered = [d for d in store.discovered_sources()
                          if site is None or d.get("site") == site]
    except READ_ERRORS as exc:
        return read_failure(prog, exc)
    render_terminal(console, f"newscrawl: {where}", rows, report, discovered)  # rich ends a broken pipe quietly
    if args.html:
        from newscrawl.report_html import write_html

        try:
            write_html(args.html, report, rows, title=f"newscrawl report: {where}")
        except OSError as exc:
            print(f"{prog}: cannot write {args.html}: {exc}", file=sys.stderr)
            return 1
        console.print(f"HTML report written to {args.html}")
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m newscrawl.report"))
