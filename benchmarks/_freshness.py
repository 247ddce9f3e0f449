"""Scoring of a monitoring run against a live loopback site (``tests/livesite.py``), shared by
``benchmarks/live_freshness.py`` and its ``--matrix`` (``benchmarks/_matrix.py``).

Inputs are the site's own logs: ``articles.jsonl`` (what was published when) and
``requests.jsonl`` (every request the crawler sent, with the ids each listing answer showed), so
the crawler is judged from outside, independently of what it logs.

* *Discovery latency* of an article: publication → the first 200 answer of a listing (channel
  page, feed, news sitemap) that lists it; *capture latency*: publication → its own first 200.
* *Fell off unseen*: an article that had ``index_size`` newer ones in its channel by the end of
  the run and was never listed by an answer the crawler got.
* The references poll the same publication times at the crawler's own *listing-request rate*
  (each channel page, feed or sitemap visit counts one; a HEAD and the GET of the same page
  within 5 s count once): *round-robin* (every channel at the same interval, phases spread) and
  the *√λ oracle* (channel intervals ∝ 1/√λ of the true mean rates; Cho & Garcia-Molina 2000,
  :func:`newscrawl.algorithms.channelsched.sqrt_allocation`). An article a poller's list no
  longer shows at its visit is missed by it (latency ∞, counted in the medians).
"""

from __future__ import annotations

import bisect
import json
import math
import random
import re
from collections import Counter
from pathlib import Path

from newscrawl.algorithms.channelsched import sqrt_allocation

_CHANNEL = re.compile(r"^/section(\d+)/$")
_CHANNEL_FEED = re.compile(r"^/section(\d+)/feed\.xml$")


def read_jsonl(path: Path) -> list[dict]:
    """The records of a JSON-lines file (``[]`` when it does not exist; a torn last line is
    skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def channel_of(path: str) -> int | None:
    """The channel number of a channel page path ``/sectionK/``, else None."""
    m = _CHANNEL.match(path)
    return int(m.group(1)) if m else None


def kind_of(path: str, article_paths: dict[str, dict] | None = None) -> str:
    """The kind of a request path: robots, home, channel, channel_feed, site_feed, sitemap,
    article, other."""
    if path == "/robots.txt":
        return "robots"
    if path == "/":
        return "home"
    if _CHANNEL.match(path):
        return "channel"
    if _CHANNEL_FEED.match(path):
        return "channel_feed"
    if path == "/feed.xml":
        return "site_feed"
    if path == "/news-sitemap.xml":
        return "sitemap"
    if article_paths is not None and path in article_paths:
        return "article"
    return "other"


LISTINGS = ("channel", "channel_feed", "site_feed", "sitemap")


def index_visits(requests: list[dict], kinds: tuple[str, ...] = ("channel",)) -> list[tuple[float, str, str]]:
    """(time, host, path) of each visit of a listing of one of ``kinds``: a HEAD and the GET of
    the same page that follows it within 5 s count once."""
    visits: list[tuple[float, str, str]] = []
    last_head: dict[tuple[str, str], float] = {}
    for r in requests:
        if kind_of(r["path"]) not in kinds:
            continue
        key = (r["host"], r["path"])
        if r["method"] == "HEAD":
            last_head[key] = r["t"]
            visits.append((r["t"], r["host"], r["path"]))
        elif r["method"] == "GET":
            head = last_head.pop(key, None)
            if head is None or r["t"] - head > 5.0:
                visits.append((r["t"], r["host"], r["path"]))
    return visits


def poll_latency(articles: list[dict], by_channel: dict, visit_times: dict, index_size: int) -> list[float]:
    """Discovery latency (s) of each article under a poller visiting channel ``c`` at the sorted
    times ``visit_times[c]``; ``by_channel[c]`` are the channel's sorted publication times; an
    article with ``index_size`` newer ones at the visit is off the list (∞)."""
    out = []
    for a in articles:
        key = (a["host"], a["channel"])
        pubs = by_channel[key]
        visits = visit_times[key]
        i = bisect.bisect_left(visits, a["published"])
        latency = math.inf
        if i < len(visits):
            v = visits[i]
            newer = bisect.bisect_right(pubs, v) - bisect.bisect_right(pubs, a["published"])
            if newer < index_size:
                latency = v - a["published"]
        out.append(latency)
    return out


def periodic(start: float, end: float, interval: float, phase: float) -> list[float]:
    """Visit times ``start + (phase + i) · interval`` up to ``end + interval``."""
    times: list[float] = []
    t = start + phase * interval
    if not math.isfinite(interval) or interval <= 0:
        return times
    while t <= end + interval:
        times.append(t)
        t += interval
    return times


def median(xs: list[float]) -> float:
    ys = sorted(xs)
    if not ys:
        return math.nan
    n = len(ys)
    return ys[n // 2] if n % 2 else (ys[n // 2 - 1] + ys[n // 2]) / 2


def p90(xs: list[float]) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(0.9 * len(ys)))] if ys else math.nan


def ratio(a: float, b: float) -> float:
    """a / b, NaN when b is 0 or NaN; ∞ / ∞ is NaN, x / ∞ is 0."""
    if math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    if math.isinf(a) and math.isinf(b):
        return math.nan
    return a / b


def request_kinds(requests: list[dict], article_paths: dict[str, dict], t0: float) -> dict[str, int]:
    """Counts of the crawler's requests by kind (``article_new`` / ``article_backlog``: articles
    published after / before ``t0``), and ``HEAD``, ``304``, ``405`` overall."""
    counts: Counter[str] = Counter()
    for r in requests:
        kind = kind_of(r["path"], article_paths)
        if kind == "article":
            kind = "article_backlog" if article_paths[r["path"]]["published"] < t0 else "article_new"
        counts[kind] += 1
        if r["method"] == "HEAD":
            counts["HEAD"] += 1
        if r["status"] in (304, 405):
            counts[str(r["status"])] += 1
    return dict(counts)


def score_window(articles: list[dict], requests: list[dict], rates: dict[tuple[str, int], float],
                 index_size: int, start: float, end: float, tail: float, seed: int) -> dict:
    """Judge the articles published in ``[start, end - tail]`` (s, epoch).

    ``rates``: the true mean rate of each channel (articles per second), for the oracle;
    ``index_size``: the channel list length. The references poll from ``start`` at the
    crawler's listing-request rate in ``[start, end]`` and stop at ``end`` as the crawler does
    (an article no poll listed by then counts ∞ for every policy alike). Returns medians (s) of discovery and
    capture, p90s, ``discovered`` (articles listed by the end), ``fell_off`` (unseen and scrolled off by ``end``), ``pending`` (still listed,
    not fetched), ``listing_rate`` (visits/s), ``rr_median``, ``oracle_median``, ``judged``.
    """
    by_channel: dict[tuple[str, int], list[float]] = {}
    for a in articles:
        by_channel.setdefault((a["host"], a["channel"]), []).append(a["published"])
    for pubs in by_channel.values():
        pubs.sort()
    for key in rates:
        by_channel.setdefault(key, [])
    judged = [a for a in articles if start <= a["published"] <= end - tail]
    discovered: dict[int, float] = {}
    captured: dict[int, float] = {}
    path_id = {a["path"]: a["id"] for a in articles}
    for r in requests:
        if r["status"] != 200 or r["method"] != "GET":
            continue
        for i in r.get("listed") or ():
            discovered.setdefault(i, r["t"])
        if r["path"] in path_id:
            captured.setdefault(path_id[r["path"]], r["t"])
    disc = [discovered.get(a["id"], math.inf) - a["published"] for a in judged]
    capt = [captured.get(a["id"], math.inf) - a["published"] for a in judged]

    def scrolled_off(a: dict) -> bool:
        pubs = by_channel[(a["host"], a["channel"])]
        return bisect.bisect_right(pubs, end) - bisect.bisect_right(pubs, a["published"]) >= index_size

    fell_off = sum(1 for a in judged if a["id"] not in discovered and scrolled_off(a))
    pending = sum(1 for a in judged if a["id"] not in captured) - fell_off
    visits = [v for v in index_visits(requests, LISTINGS) if start <= v[0] <= end]
    span = max(end - start, 1.0)
    listing_rate = len(visits) / span
    keys = sorted(by_channel)
    rng = random.Random(seed + 1)
    rr_interval = len(keys) / listing_rate if listing_rate > 0 else math.inf
    # The references poll in the crawler's own window only: a poller allowed to go on after the
    # crawler stopped would discover the last minutes' articles the crawler could not.
    rr = {k: [t for t in periodic(start, end, rr_interval, i / len(keys)) if t <= end]
          for i, k in enumerate(keys)}
    if listing_rate > 0:
        alloc = sqrt_allocation({k: rates.get(k, 0.0) for k in keys}, listing_rate,
                                min_interval=1e-3, max_interval=1e9)
    else:
        alloc = {k: math.inf for k in keys}
    oracle = {k: [t for t in periodic(start, end, alloc[k], rng.random()) if t <= end] for k in keys}
    return {
        "judged": len(judged), "discovered": sum(1 for x in disc if math.isfinite(x)),
        "disc_median": median(disc), "disc_p90": p90(disc),
        "capt_median": median(capt), "capt_p90": p90(capt), "fell_off": fell_off, "pending": pending,
        "listing_rate": listing_rate,
        "rr_median": median(poll_latency(judged, by_channel, rr, index_size)),
        "oracle_median": median(poll_latency(judged, by_channel, oracle, index_size)),
    }
