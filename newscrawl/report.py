"""``python -m newscrawl.report``: what the store holds, per site, as a terminal table.

Reads the same MongoDB the crawl wrote (``--uri`` / ``MONGO_URI`` / ``NEWSCRAWL_MONGO_URI``, else
the embedded store of ``--data-dir``, started for the report and stopped after unless it was
already running). Prints per site: articles, nodes, links per class, newest publication time,
the top articles by NewsPageRank weight, and the feeds and sitemaps discovered per site.
"""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.table import Table

from newscrawl import defaults
from newscrawl.embedded import resolve_mongo_uri
from newscrawl.store import NewsStore


def site_summary(store: NewsStore) -> list[dict]:
    """Return one row per site: ``{site, articles, nodes, newest, links: {class: n}}``."""
    return store.site_summary()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m newscrawl.report", description=__doc__.split("\n")[0])
    parser.add_argument("--uri", default="", help="MongoDB URI (default: env, else embedded store)")
    parser.add_argument("--data-dir", default=None, help="embedded store folder (default ./data)")
    parser.add_argument("--database", default=defaults.NEWSCRAWL_MONGO_DATABASE)
    parser.add_argument("--top", type=int, default=10, help="top articles by weight to list")
    args = parser.parse_args(argv)
    uri, embedded = resolve_mongo_uri(args.uri, args.data_dir or defaults.NEWSCRAWL_DATA_DIR)
    console = Console()
    try:
        with NewsStore.connect(uri, args.database) as store:
            table = Table(title=f"newscrawl store {uri}{args.database}")
            classes = ["downward", "horizontal", "crosswise", "upward", "outward", "frame"]
            short = {"downward": "down", "horizontal": "horiz", "crosswise": "cross", "upward": "up", "outward": "out", "frame": "frame"}
            for col in ["site", "articles", "nodes", "newest (UTC)", *(short[c] for c in classes)]:
                table.add_column(col, justify="left" if col == "site" else "right")
            for row in site_summary(store):
                newest = row.get("newest")
                table.add_row(str(row["site"]), str(row.get("articles", 0)), str(row.get("nodes", 0)),
                              newest.strftime("%Y-%m-%d %H:%M") if newest else "-",
                              *(str(row["links"].get(c, 0)) for c in classes))
            console.print(table)
            top = Table(title=f"top {args.top} articles by NewsPageRank weight")
            for col in ("weight", "site", "title", "url"):
                top.add_column(col)
            for doc in store.top_articles(args.top):
                top.add_row(f"{doc.get('weight', 0):.3f}", str(doc.get("site")), str(doc.get("title"))[:60],
                            str(doc.get("url")))
            console.print(top)
            sources = store.discovered_sources()
            if sources:
                found = Table(title="feeds and sitemaps discovered")
                for col in ("site", "kind", "via", "url"):
                    found.add_column(col)
                for row in sources:
                    found.add_row(str(row["site"]), str(row.get("kind")), str(row.get("via")),
                                  str(row["url"]))
                console.print(found)
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
