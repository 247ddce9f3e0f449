"""``newscrawl report --html FILE``: the report as one self-contained HTML page with charts.

The charts are plotly figures (:mod:`plotly.graph_objects`); plotly.js is inlined once in the
page (``plotly.offline.get_plotlyjs()``, about 4.8 MB), so the page opens without a network
connection and fetches nothing. Charts: articles per hour per site, the publication → capture
delay distribution per site, the top stories by NewsPageRank weight, channel structure counts
(channel pages and links per class per site), the sources with their estimated rates; tables
with the freshness figures, the stories (full titles, linked) and the sources (linked). All text
from the store is HTML-escaped. The figures come from :class:`~newscrawl.algorithms.analytics.Report`.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from newscrawl.algorithms.analytics import Report, Story, format_rate, format_seconds

CLASSES = ("downward", "horizontal", "crosswise", "upward", "outward", "frame")
#: plotly's per-figure options: no logo link to plotly's site.
CONFIG = {"displaylogo": False, "responsive": True}

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .25em .5em; vertical-align: top; }
td.num { text-align: right; white-space: nowrap; } td.wrap { max-width: 40em; overflow-wrap: anywhere; }
.chart { margin: .5em 0 1.5em; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _link(url: str, text: str) -> str:
    if url.startswith(("http://", "https://")):
        return f'<a href="{_esc(url)}">{_esc(text)}</a>'
    return _esc(text)


def _short(text: str, limit: int = 60) -> str:
    """An axis label: ``text`` cut at ``limit`` characters with "…" (the hover shows it whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _figure(fig: go.Figure, *, height: int, title: str) -> str:
    fig.update_layout(title=title, height=height, margin={"l": 60, "r": 20, "t": 50, "b": 50},
                      template="plotly_white")
    return ('<div class="chart">'
            + fig.to_html(full_html=False, include_plotlyjs=False, config=CONFIG,
                          default_height=f"{height}px")
            + "</div>")


def articles_per_hour(report: Report) -> go.Figure:
    """Lines: new articles (first captures) per hour, one line per site."""
    fig = go.Figure()
    for site, counts in report.per_hour.items():
        fig.add_trace(go.Scatter(x=[h.isoformat() for h in report.hours], y=counts, mode="lines",
                                 name=site, line_shape="hv"))
    fig.update_layout(xaxis_title="hour (UTC)", yaxis_title="new articles")
    return fig


def delay_distribution(report: Report) -> go.Figure:
    """Box plots of the publication → capture delay (minutes) per site."""
    fig = go.Figure()
    for site in report.sites:
        if site.delays:
            fig.add_trace(go.Box(y=[d / 60.0 for d in site.delays], name=site.site, boxpoints="outliers"))
    if not fig.data:
        fig.add_annotation(text="no article of the window has a publication time in it",
                           showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(yaxis_title="minutes from publication to capture", showlegend=False)
    return fig


def top_stories(stories: list[Story]) -> go.Figure:
    """Horizontal bars: the top stories by weight (heaviest on top), full titles on hover."""
    ordered = list(reversed(stories))
    fig = go.Figure(go.Bar(
        x=[s.weight for s in ordered], y=[f"{i}. {_short(s.title or s.url)}" for i, s in
                                          zip(range(len(ordered), 0, -1), ordered)],
        orientation="h", hovertext=[f"{s.title}<br>{', '.join(sorted(s.sites))}" for s in ordered],
        hoverinfo="text+x"))
    fig.update_layout(xaxis_title="NewsPageRank weight", yaxis={"automargin": True})
    return fig


def channel_structure(rows: list[dict[str, Any]]) -> go.Figure:
    """Stacked bars per site: links per class, and the channel pages stored."""
    sites = [str(r["site"]) for r in rows]
    fig = go.Figure()
    for cls in CLASSES:
        fig.add_trace(go.Bar(x=sites, y=[int(r.get("links", {}).get(cls, 0)) for r in rows], name=cls))
    fig.add_trace(go.Bar(x=sites, y=[int(r.get("nodes", 0) or 0) for r in rows], name="channel pages",
                         yaxis="y2", marker_pattern_shape="/", opacity=0.6))
    fig.update_layout(barmode="stack", yaxis_title="links",
                      yaxis2={"title": "channel pages", "overlaying": "y", "side": "right"})
    return fig


def source_rates(report: Report) -> go.Figure:
    """Horizontal bars: the sources' estimated rates of new links per hour."""
    ordered = list(reversed(report.sources))
    fig = go.Figure(go.Bar(x=[s.rate or 0.0 for s in ordered],
                           y=[_short(f"{s.kind}: {s.url}", 70) for s in ordered], orientation="h",
                           hovertext=[f"{s.url}<br>{s.articles} article(s) in the window" for s in ordered],
                           hoverinfo="text+x"))
    fig.update_layout(xaxis_title="estimated new links per hour", yaxis={"automargin": True})
    return fig


def _freshness_table(report: Report) -> str:
    head = ("<tr><th>site</th><th>new articles</th><th>new / hour</th><th>delay median</th>"
            "<th>delay p90</th><th>dated</th><th>future-dated</th><th>channels</th>"
            "<th>channel rate / h</th><th>found first by</th></tr>")
    body = []
    for s in report.sites:
        first = ", ".join(f"{k} {v}" for k, v in sorted(s.found_first_by.items())) or "-"
        body.append(
            f"<tr><td>{_esc(s.site)}</td><td class=num>{s.articles}</td>"
            f"<td class=num>{_esc(format_rate(s.per_hour, s.per_hour_note))}</td>"
            f"<td class=num>{format_seconds(s.median_delay)}</td>"
            f"<td class=num>{format_seconds(s.p90_delay)}</td><td class=num>{len(s.delays)}</td>"
            f"<td class=num>{s.future_dated}</td><td class=num>{s.channels}</td>"
            f"<td class=num>{_esc(format_rate(s.channel_rate, 'n/a (1 visit)'))}</td>"
            f"<td>{_esc(first)}</td></tr>")
    return f"<table>{head}{''.join(body)}</table>"


def _stories_table(stories: list[Story]) -> str:
    rows = "".join(
        f"<tr><td class=num>{i}</td><td class=num>{s.weight:.3f}</td>"
        f"<td class=num>{len(s.sites)}</td><td class=num>{s.articles}</td>"
        f"<td class=wrap>{_link(s.url, s.title or s.url)}</td><td>{_esc(', '.join(sorted(s.sites)))}</td></tr>"
        for i, s in enumerate(stories, 1))
    return ("<table><tr><th>#</th><th>weight</th><th>sites</th><th>articles</th><th>title</th>"
            f"<th>carried by</th></tr>{rows}</table>")


def _newest_table(report: Report) -> str:
    rows = "".join(
        f"<tr><td>{a['first_seen']:%Y-%m-%d %H:%M}</td>"
        f"<td>{'-' if a['published'] is None else format(a['published'], '%Y-%m-%d %H:%M')}</td>"
        f"<td>{_esc(a['site'])}</td><td class=wrap>{_link(a['url'], a['title'] or a['url'])}</td></tr>"
        for a in report.newest)
    return ("<table><tr><th>stored (UTC)</th><th>published</th><th>site</th><th>title</th></tr>"
            f"{rows}</table>")


def _sources_table(report: Report) -> str:
    rows = "".join(
        f"<tr><td>{_esc(s.kind)}</td><td>{_esc(s.site)}</td>"
        f"<td class=num>{_esc(s.rate_note or ('-' if s.rate is None or not math.isfinite(s.rate) else f'{s.rate:.2f}'))}</td>"
        f"<td class=num>{s.articles}</td><td class=wrap>{_link(s.url, s.url)}</td></tr>"
        for s in report.sources)
    kinds = "".join(f"<li>{_esc(site)}: " + _esc(", ".join(f"{k} {v}" for k, v in sorted(c.items())))
                    + "</li>" for site, c in report.source_kinds.items())
    found = f"<p>Articles of the window per kind of source that listed them:</p><ul>{kinds}</ul>" if kinds else ""
    return ("<table><tr><th>kind</th><th>site</th><th>rate / h</th><th>articles</th><th>url</th>"
            f"</tr>{rows}</table>{found}")


def render_html(report: Report, rows: list[dict[str, Any]], *, title: str) -> str:
    """The whole page as a string (plotly.js inlined)."""
    label = "stories" if report.clustered else "articles"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_esc(title)}</title><style>{STYLE}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script></head><body>',
        f"<h1>{_esc(title)}</h1>",
        f"<p>Window {report.start:%Y-%m-%d %H:%M} – {report.now:%Y-%m-%d %H:%M} UTC: "
        f"{report.articles} article(s) first captured, {len(report.sites)} site(s).</p>",
        "<h2>Freshness per site</h2>", _freshness_table(report),
        _figure(articles_per_hour(report), height=380, title="New articles per hour"),
        _figure(delay_distribution(report), height=380, title="Publication → capture delay"),
        f"<h2>Top {len(report.stories)} {label} by NewsPageRank weight</h2>",
        _figure(top_stories(report.stories), height=120 + 28 * max(len(report.stories), 1),
                title=f"Top {label} by weight"),
        _stories_table(report.stories),
    ]
    if report.widest:
        parts += ["<h2>Other stories carried by several sites</h2>", _stories_table(report.widest)]
    if report.newest:
        parts += [f"<h2>Newest {len(report.newest)} articles</h2>", _newest_table(report)]
    parts += [
        "<h2>Channel structure</h2>",
        _figure(channel_structure(rows), height=380, title="Links per class and channel pages per site"),
        "<h2>Sources and their estimated rates</h2>",
        _figure(source_rates(report), height=120 + 26 * max(len(report.sources), 1),
                title="Sources by estimated rate of new links"),
        _sources_table(report),
        "</body></html>",
    ]
    return "\n".join(parts)


def write_html(path: str | Path, report: Report, rows: list[dict[str, Any]], *, title: str) -> Path:
    """Write :func:`render_html` to ``path`` (UTF-8); return the path.

    Raises:
        OSError: the file cannot be written.
    """
    target = Path(path)
    target.write_text(render_html(report, rows, title=title), encoding="utf-8")
    return target
