"""Monitoring mode end to end: ``scrapy crawl news -a watch=1`` against a live loopback news site.

Usage (from the repository root)::

    .venv/bin/python benchmarks/live_freshness.py            # 10 minutes per rate (~35 min)
    .venv/bin/python benchmarks/live_freshness.py --quick    # 2 minutes per rate (~7 min)
    .venv/bin/python benchmarks/live_freshness.py --minutes 5 --keep /tmp/live
    .venv/bin/python benchmarks/live_freshness.py --feeds --quick   # with / without feeds (~5 min)
    .venv/bin/python benchmarks/live_freshness.py --matrix --quick  # 3 site shapes, 4 min, side by side
    .venv/bin/python benchmarks/live_freshness.py --matrix          # the matrix (benchmarks/_matrix.py,
                                                                    # docs/benchmarks.md)

The site (``tests/livesite.py``, a Twisted HTTP server in a subprocess) has 6 hosts on the
loopback addresses 127.0.0.21–26 (distinct hosts and sites) with 10 channels each; channel rates
are drawn log-uniformly from 0.05–5 articles per minute, shaped by a daily cycle compressed into
the run (amplitude 0.6, a phase per host); each index lists its newest 20 articles; 10 % of the
articles are corrected 30 s after publication; one host sends no validators, one answers HEAD
with 405. For each of three request rates (``-a rate=N`` requests per hour: twice the mean
article rate — the daily cycle peaks at 1.6 times it — plus 1,800 / 3,600 / 7,200 channel
visits per hour) a fresh site and a fresh store are started and the real command runs for the
set time::

    scrapy crawl news -a start_urls=<6 home pages> -a depth=1 -a watch=1 -a for=<T> -a rate=<N>

Measured from the site's own request log, for the articles published after a warm-up (the first
sweep: 45 s, 90 s in full runs) and before the last 20 s: *discovery latency* (publication → first 200 answer of an index
listing the article), *capture latency* (publication → the article's first 200 answer), *missed*
articles (scrolled off their channel's list of 20 before any index answer of the crawler
listed them; those still listed but not fetched when the run ends are counted apart, and their
latency is ∞ in the medians), *requests per new article* (every request the crawler sent, robots.txt
and HEAD included, over the new articles it fetched). The same publication times are then served
by two pollers at the crawler's own index-visit rate (a HEAD answered 304/unchanged and a GET
count one visit each; a HEAD followed by its GET counts one): *round-robin* (every channel at
the same interval, phases spread) and the *√λ oracle* (channel intervals ∝ 1/√λ from the true
mean rates, Cho & Garcia-Molina 2000; :func:`newscrawl.algorithms.channelsched.sqrt_allocation`).
An article a poller's list no longer shows at its visit is missed by it (latency ∞ in the median).

Targets (``benchmarks/_targets.py``): median discovery ≤ 1.1 × the oracle's at every rate and
≤ 0.6 × round-robin's, zero missed at the middle rate. Last line:
``live discovery ratio to oracle (worst of 3): X.XX``.

``--feeds`` (issue 12): at the middle request rate, the same site and crawl twice — without
feeds (``NEWSCRAWL_FEEDS_ENABLED=0``, the site serves none) and with them (the site announces an
RSS feed per channel with ``<link rel=alternate>`` and a news sitemap in robots.txt, config key
``feeds``; a feed or sitemap answer listing an article counts as its discovery, as an index
answer does). Targets: median discovery latency with feeds ≤ 0.5 × without, and fewer requests
per new article. Last line: ``live feeds discovery ratio (with / without): X.XX``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from _freshness import index_visits, median, p90, periodic, read_jsonl  # noqa: E402
from _freshness import poll_latency as _poll_latency  # noqa: E402
from _targets import figure, target  # noqa: E402

from newscrawl.algorithms.channelsched import sqrt_allocation  # noqa: E402

HOSTS = [f"127.0.0.{21 + i}" for i in range(6)]
CHANNELS_PER_HOST = 10
INDEX_SIZE = 20
CHANNEL_BUDGETS = (1800.0, 3600.0, 7200.0)  # channel visits per hour on top of article fetches
TAIL = 20.0  # seconds at the end whose articles are not judged


def site_config(duration: float, seed: int) -> dict:
    rng = random.Random(seed)
    rates = [[math.exp(rng.uniform(math.log(0.05), math.log(5.0))) for _ in range(CHANNELS_PER_HOST)]
             for _ in HOSTS]
    return {"hosts": HOSTS, "rates": rates, "duration": duration + 900, "day": duration,
            "amplitude": 0.6, "index_size": INDEX_SIZE, "initial": INDEX_SIZE // 2, "correct_share": 0.1,
            "correct_after": 30.0, "no_validators": HOSTS[5], "no_head": HOSTS[4], "seed": seed}


def poll_latency(articles: list[dict], by_channel: dict, visit_times: dict) -> list[float]:
    """Discovery latency of each article under a poller visiting channel c at visit_times[c]
    (the matrix's scoring, :func:`_freshness.poll_latency`, at this site's list length)."""
    return _poll_latency(articles, by_channel, visit_times, INDEX_SIZE)


def run_rate(rate: float, minutes: float, seed: int, work: Path, warmup: float,
             feeds: bool = False) -> dict:
    """Start a site, watch it for ``minutes`` at ``rate`` requests/hour, measure (``feeds``: the
    site serves feeds and a news sitemap, and the crawl reads them)."""
    work.mkdir(parents=True, exist_ok=True)
    duration = minutes * 60.0
    cfg = {**site_config(duration, seed), "feeds": feeds}
    (work / "site.json").write_text(json.dumps(cfg))
    site = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"), str(work / "site.json"),
                             str(work / "site")], stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(site.stdout.readline())  # type: ignore[union-attr]
        urls = ",".join(ready["hosts"][h] for h in HOSTS)
        env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
        env["NEWSCRAWL_DATA_DIR"] = str(work / "data")
        base = [str(REPO / ".venv" / "bin" / "scrapy"), "crawl", "news", "-a", f"start_urls={urls}",
                "-a", "depth=1", "-s", "NEWSCRAWL_REVISIT_MIN_INTERVAL=2",
                "-s", "NEWSCRAWL_REVISIT_MAX_INTERVAL=600", "-s", "LOG_LEVEL=INFO",
                "-s", "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS=" + ",".join(["127.0.0.1", "localhost", *HOSTS]),
                "-s", "NEWSCRAWL_PAGERANK_ENABLED=0", "-s", f"NEWSCRAWL_FEEDS_ENABLED={int(feeds)}"]
        # A monitor starts on a store that knows the sites: one batch crawl first (untimed).
        t_prime = time.time()
        with open(work / "prime.log", "w") as log:
            subprocess.run(base, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=900)
        print(f"  first crawl of the site (untimed): {time.time() - t_prime:.0f} s", flush=True)
        cmd = [*base, "-a", "watch=1", "-a", f"for={int(duration)}s", "-a", f"rate={int(rate)}"]
        t0 = time.time()
        with open(work / "crawl.log", "w") as log:
            proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=duration + 300)
        end = t0 + duration
    finally:
        site.terminate()
        site.wait(timeout=30)
    if proc.returncode != 0:
        print(f"crawl at rate {rate:.0f} exited with {proc.returncode}; see {work / 'crawl.log'}")
    articles = read_jsonl(work / "site" / "articles.jsonl")
    requests = read_jsonl(work / "site" / "requests.jsonl")
    by_channel: dict[tuple[str, int], list[float]] = {}
    for a in articles:
        by_channel.setdefault((a["host"], a["channel"]), []).append(a["published"])
    judged = [a for a in articles if t0 + warmup <= a["published"] <= end - TAIL]
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
    # Missed: scrolled off its channel's list (20 newer ones by the end) without the crawler's
    # index answers ever listing it; articles still listed but not fetched yet are "pending".
    def scrolled_off(a: dict) -> bool:
        pubs = by_channel[(a["host"], a["channel"])]
        return sum(1 for p in pubs if a["published"] < p <= end) >= INDEX_SIZE
    missed = sum(1 for a in judged if a["id"] not in discovered and scrolled_off(a))
    pending = sum(1 for a in judged if a["id"] not in captured) - missed
    new_fetched = sum(1 for a in articles if a["published"] >= t0 and a["id"] in captured)
    sent = [r for r in requests if t0 <= r["t"] <= end + 60]
    visits = [v for v in index_visits(requests) if t0 + warmup <= v[0] <= end]
    span = max(end - (t0 + warmup), 1.0)
    idx_rate = len(visits) / span
    keys = sorted(by_channel)
    rng = random.Random(seed + 1)
    rr_interval = len(keys) / idx_rate if idx_rate > 0 else math.inf
    rr = {k: periodic(t0 + warmup, end + 600, rr_interval, i / len(keys)) for i, k in enumerate(keys)}
    true = {(HOSTS[h], k): cfg["rates"][h][k] / 60.0 for h in range(len(HOSTS)) for k in range(CHANNELS_PER_HOST)}
    alloc = sqrt_allocation(true, idx_rate, min_interval=1e-3, max_interval=1e9)
    oracle = {k: periodic(t0 + warmup, end + 600, alloc[k], rng.random()) for k in keys}
    return {
        "rate": rate, "judged": len(judged), "disc_median": median(disc), "disc_p90": p90(disc),
        "capt_median": median(capt), "capt_p90": p90(capt), "missed": missed, "pending": pending,
        "req_per_article": len(sent) / max(new_fetched, 1), "idx_rate": idx_rate,
        "rr_median": median(poll_latency(judged, by_channel, rr)),
        "oracle_median": median(poll_latency(judged, by_channel, oracle)),
        "returncode": proc.returncode,
    }


def main() -> int:
    if "--matrix" in sys.argv[1:]:
        from _matrix import main as matrix_main

        return matrix_main([a for a in sys.argv[1:] if a != "--matrix"])
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="2 minutes per rate")
    parser.add_argument("--minutes", type=float, default=None, help="minutes per rate (default 10)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--keep", type=Path, default=None, help="keep site logs, data and crawl logs here")
    parser.add_argument("--feeds", action="store_true",
                        help="the middle rate with and without feeds and a news sitemap")
    parser.add_argument("--matrix", action="store_true",
                        help="site shapes x seeds x rates (docs/benchmarks.md; --matrix --help)")
    args = parser.parse_args()
    if args.feeds:
        return feeds_main(args)
    minutes = args.minutes or (2.0 if args.quick else 10.0)
    warmup = 45.0 if minutes <= 3 else 90.0
    base = Path(tempfile.mkdtemp(prefix="live-freshness-")) if args.keep is None else args.keep
    cfg = site_config(minutes * 60.0, args.seed)
    articles_per_hour = sum(sum(r) for r in cfg["rates"]) * 60.0
    rates = [round(2.0 * articles_per_hour + c, -2) for c in CHANNEL_BUDGETS]
    print(f"live site: {len(HOSTS)} hosts, {len(HOSTS) * CHANNELS_PER_HOST} channels, "
          f"{articles_per_hour:.0f} articles/hour on average; {minutes:g} min per rate")
    results = []
    try:
        for i, rate in enumerate(rates):
            r = run_rate(rate, minutes, args.seed, base / f"rate{i}", warmup)
            results.append(r)
            print(f"rate {rate:.0f}/h: {r['judged']} articles judged; discovery median {r['disc_median']:.1f} s "
                  f"p90 {r['disc_p90']:.1f} s; capture median {r['capt_median']:.1f} s p90 {r['capt_p90']:.1f} s; "
                  f"missed {r['missed']}, not fetched by the end {r['pending']}; "
                  f"{r['req_per_article']:.2f} requests/new article; "
                  f"index visits {r['idx_rate']:.2f}/s; round-robin median {r['rr_median']:.1f} s; "
                  f"sqrt-lambda oracle median {r['oracle_median']:.1f} s", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    worst = 0.0
    for i, r in enumerate(results):
        name = f"live_freshness rate={r['rate']:.0f}"
        to_oracle = r["disc_median"] / r["oracle_median"] if r["oracle_median"] > 0 else math.nan
        to_rr = r["disc_median"] / r["rr_median"] if r["rr_median"] > 0 else math.nan
        worst = max(worst, to_oracle) if not math.isnan(to_oracle) else math.inf
        figure(f"{name} capture median s", round(r["capt_median"], 1))
        figure(f"{name} requests per new article", round(r["req_per_article"], 2))
        figure(f"{name} listed but not fetched by the end", r["pending"])
        target(f"{name} discovery median / oracle", to_oracle, "<=", 1.1)
        target(f"{name} discovery median / round-robin", to_rr, "<=", 0.6)
        if i == 1:
            target(f"{name} missed articles", r["missed"], "==", 0)
    print(f"live discovery ratio to oracle (worst of {len(results)}): {worst:.2f}")
    return 0


def _line(label: str, r: dict) -> str:
    return (f"{label}: {r['judged']} articles judged; discovery median {r['disc_median']:.1f} s "
            f"p90 {r['disc_p90']:.1f} s; capture median {r['capt_median']:.1f} s; missed {r['missed']}; "
            f"{r['req_per_article']:.2f} requests/new article")


def feeds_main(args: argparse.Namespace) -> int:
    """``--feeds``: the middle rate without feeds, then with them (module docstring)."""
    minutes = args.minutes or (2.0 if args.quick else 10.0)
    warmup = 45.0 if minutes <= 3 else 90.0
    base = Path(tempfile.mkdtemp(prefix="live-freshness-")) if args.keep is None else args.keep
    cfg = site_config(minutes * 60.0, args.seed)
    articles_per_hour = sum(sum(r) for r in cfg["rates"]) * 60.0
    rate = round(2.0 * articles_per_hour + CHANNEL_BUDGETS[1], -2)
    print(f"live site: {len(HOSTS)} hosts, {len(HOSTS) * CHANNELS_PER_HOST} channels, "
          f"{articles_per_hour:.0f} articles/hour on average; {minutes:g} min per run, "
          f"rate {rate:.0f} requests/hour, without and with feeds", flush=True)
    try:
        without = run_rate(rate, minutes, args.seed, base / "nofeeds", warmup, feeds=False)
        print(_line("without feeds", without), flush=True)
        with_feeds = run_rate(rate, minutes, args.seed, base / "feeds", warmup, feeds=True)
        print(_line("with feeds", with_feeds), flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    ratio = (with_feeds["disc_median"] / without["disc_median"]
             if without["disc_median"] > 0 else math.nan)
    name = f"live_freshness feeds rate={rate:.0f}"
    figure(f"{name} discovery median s without / with", f"{without['disc_median']:.1f} / "
           f"{with_feeds['disc_median']:.1f}")
    target(f"{name} discovery median with / without feeds", ratio, "<=", 0.5)
    target(f"{name} requests per new article with feeds", with_feeds["req_per_article"], "<",
           without["req_per_article"])
    print(f"live feeds discovery ratio (with / without): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
