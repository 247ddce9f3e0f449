"""``benchmarks/live_freshness.py --matrix``: monitoring mode judged on many live site shapes,
so no single configuration can be tuned to (issue 20, item 6). See ``docs/benchmarks.md``.

Each *shape* is drawn from its seed (:func:`draw_shape`, ranges in :data:`RANGES`); each *cell*
is a shape at one crawl rate — 1.3×, 2× and 4× the site's mean article rate (``-a rate=N``
requests per hour) or none (``--watch`` with the defaults only). Per cell a fresh live loopback
site (``tests/livesite.py``) and a fresh store are started and the product's own command runs
as a subprocess from this checkout::

    python -m newscrawl crawl <home pages> --watch --data-dir D -a for=<T>s [-a rate=N]
        -s NEWSCRAWL_ALLOWED_PRIVATE_HOSTS=<the site's loopback addresses>

Each cell is judged twice from the site's own logs (``benchmarks/_freshness.py``): *cold*
(articles published from the crawler's first request on, with the backlog already on the site)
and *steady* (from 10 minutes after it; in runs shorter than 20 minutes from a third of the
run), against round-robin and the √λ oracle at the crawler's own listing-request rate in the
same window. Targets (issue 20's acceptance): steady ≤ 1.1× the oracle (≤ 0.95× with an
hour-of-day cycle) and ≤ 0.6× round-robin; cold ≤ 1.5× the oracle, and nothing falls off an
index unseen when the rate is ≥ 2× the article rate; the no-rate cell: cold ≤ 2× the oracle and
≤ 300 s (and the steady targets). Dev seeds (1–6) and held-out seeds (101+) are reported apart.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from _freshness import (  # noqa: E402
    kind_of,
    ratio,
    read_jsonl,
    request_kinds,
    score_window,
)
from _targets import figure, target  # noqa: E402

#: The documented ranges a shape is drawn from (docs/benchmarks.md).
RANGES: dict[str, Any] = {
    "channels": (20, 200),            # channels of the site, spread over the hosts (each ≥ 1)
    "hosts": (3, 20),                 # hosts (one loopback address each)
    "site_rate": (900.0, 5400.0),     # articles per hour of the whole site, log-uniform
    "rate_decades": 2.0,              # channel rates log-uniform over [r, 10^2 · r], scaled to site_rate
    "index_size": (10, 50),           # articles a channel page lists
    "initial": (0, 50),               # articles per channel already published: uniform 0..cap, cap uniform in range
    "cycle_share": 0.5,               # share of shapes with an hour-of-day cycle ...
    "amplitude": (0.4, 0.8),          # ... of this amplitude (one compressed day = the run)
    "no_validators": (0, 2),          # hosts sending no ETag / Last-Modified
    "no_head": (0, 2),                # hosts answering HEAD 405
    "lying_share": 0.5,               # share of shapes with one host whose validators lie
}
FACTORS: tuple[float | None, ...] = (1.3, 2.0, 4.0, None)  # × the article rate; None: no -a rate
DEV_SEEDS = tuple(range(1, 7))
HELD_OUT_SEEDS = (101, 102)
QUICK_CELLS = ((1, 2.0), (2, None), (101, 1.3))
TAIL = 20.0  # seconds at the end whose articles are not judged
STEADY_AFTER = 600.0  # seconds after the first request; runs < 20 min: a third of the run
REDIS_URL = "redis://127.0.0.1:6379/13"  # never db 0 (a developer's crawls); tests use 15


def draw_shape(seed: int, minutes: float, block: int) -> dict:
    """A live-site config (``tests/livesite.py`` keys) drawn from ``seed`` within :data:`RANGES`,
    on the loopback addresses ``127.77.<block>.1…``; ``minutes`` is the run length (the compressed
    day and the schedule's length follow it). Extra key ``shape``: a readable summary."""
    rng = random.Random(seed * 7919 + 17)
    n_hosts = rng.randint(*RANGES["hosts"])
    n_channels = rng.randint(max(RANGES["channels"][0], n_hosts), RANGES["channels"][1])
    counts = [1] * n_hosts
    for _ in range(n_channels - n_hosts):
        counts[rng.randrange(n_hosts)] += 1
    hosts = [f"127.77.{block}.{h + 1}" for h in range(n_hosts)]
    site_rate = math.exp(rng.uniform(*map(math.log, RANGES["site_rate"])))
    raw = [[math.exp(rng.uniform(0.0, RANGES["rate_decades"] * math.log(10.0))) for _ in range(c)]
           for c in counts]
    scale = site_rate / 60.0 / sum(map(sum, raw))  # per minute
    rates = [[r * scale for r in host] for host in raw]
    index_size = rng.randint(*RANGES["index_size"])
    cap = rng.randint(*RANGES["initial"])
    initial = [[rng.randint(0, cap) for _ in range(c)] for c in counts]
    cycle = rng.random() < RANGES["cycle_share"]
    amplitude = rng.uniform(*RANGES["amplitude"]) if cycle else 0.0
    pool = list(hosts)
    rng.shuffle(pool)
    no_validators = [pool.pop() for _ in range(min(rng.randint(*RANGES["no_validators"]), len(pool)))]
    no_head = [pool.pop() for _ in range(min(rng.randint(*RANGES["no_head"]), len(pool)))]
    lying = [pool.pop()] if pool and rng.random() < RANGES["lying_share"] else []

    def feed_hosts() -> bool | list[str]:
        mode = rng.choice(("off", "all", "some"))
        return {"off": False, "all": True}.get(mode, sorted(rng.sample(hosts, max(1, n_hosts // 2))))

    channel_feeds, site_feed, news_sitemap = feed_hosts(), feed_hosts(), feed_hosts()
    duration = minutes * 60.0

    def share(v: bool | list[str]) -> str:
        return "all" if v is True else "off" if v is False else f"{len(v)}/{n_hosts}"

    summary = (f"{n_channels} ch/{n_hosts} hosts, {site_rate:.0f} art/h, list {index_size}, "
               f"backlog≤{cap}, cycle {'%.2f' % amplitude if cycle else 'off'}, "
               f"novalid {len(no_validators)}, nohead {len(no_head)}, lying {len(lying)}, "
               f"feeds ch {share(channel_feeds)} site {share(site_feed)} sitemap {share(news_sitemap)}")
    return {
        "hosts": hosts, "rates": rates, "duration": duration + 900.0, "day": duration,
        "amplitude": amplitude, "index_size": index_size, "initial": initial,
        "history_spacing": "rate", "correct_share": 0.1, "correct_after": 30.0,
        "no_validators": no_validators, "no_head": no_head, "lying": lying,
        "channel_feeds": channel_feeds, "site_feed": site_feed, "news_sitemap": news_sitemap,
        "seed": seed, "shape": summary,
    }


def articles_per_hour(cfg: dict) -> float:
    """The site's mean article rate (articles per hour)."""
    return sum(map(sum, cfg["rates"])) * 60.0


@dataclass
class Cell:
    seed: int
    factor: float | None  # × the article rate; None: no -a rate
    block: int
    workers: int = 1  # 2: two watch workers on one Redis, twice the rate
    held_out: bool = False
    name: str = ""
    rate: int | None = None
    config: dict = field(default_factory=dict)

    def label(self) -> str:
        f = "none" if self.factor is None else f"{self.factor:g}x"
        return f"s{self.seed}@{f}" + ("/redis2" if self.workers > 1 else "")


def make_cell(seed: int, factor: float | None, block: int, minutes: float, workers: int = 1) -> Cell:
    cfg = draw_shape(seed, minutes, block)
    rate = None if factor is None else int(round(factor * articles_per_hour(cfg) * workers, -1))
    cell = Cell(seed, factor, block, workers, seed >= 100, "", rate, cfg)
    cell.name = cell.label()
    return cell


def _crawl_command(cell: Cell, urls: list[str], data: Path, seconds: int,
                   extra: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "newscrawl", "crawl", *urls, "--watch", "--data-dir", str(data),
           "-a", f"for={seconds}s"]
    if cell.rate is not None:
        cmd += ["-a", f"rate={cell.rate}"]
    cmd += ["-s", "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS=" + ",".join(["127.0.0.1", "localhost",
                                                                 *cell.config["hosts"]]),
            "-s", "LOG_LEVEL=INFO", "-s", "TELNETCONSOLE_ENABLED=False"]
    for setting in extra:
        cmd += ["-s", setting]
    return cmd


def _delete_namespace(url: str, namespace: str) -> None:
    try:
        import redis

        client = redis.Redis.from_url(url, socket_timeout=5)
        keys = list(client.scan_iter(match=f"{namespace}:*", count=1000))
        for i in range(0, len(keys), 500):
            client.delete(*keys[i:i + 500])
    except Exception as exc:  # noqa: BLE001 - cleanup only; report, do not fail the cell
        print(f"  (could not delete Redis namespace {namespace}: {exc})", flush=True)


def redis_reachable(url: str) -> str:
    """'' when the Redis server at ``url`` answers PING, else the reason."""
    try:
        import redis

        redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2).ping()
        return ""
    except Exception as exc:  # noqa: BLE001
        return str(exc)


def run_cell(cell: Cell, minutes: float, work: Path, extra: list[str], redis_url: str) -> dict:
    """Start the cell's site, watch it with the product's command, judge it (module docstring)."""
    work.mkdir(parents=True, exist_ok=True)
    cfg = {k: v for k, v in cell.config.items() if k != "shape"}
    (work / "site.json").write_text(json.dumps(cfg))
    seconds = int(minutes * 60)
    site = subprocess.Popen([sys.executable, str(REPO / "tests" / "livesite.py"), str(work / "site.json"),
                             str(work / "site")], stdout=subprocess.PIPE, text=True, cwd=REPO)
    procs: list[subprocess.Popen] = []
    returncodes: list[int] = []
    namespace = f"matrix-{uuid.uuid4().hex[:8]}"
    try:
        line = site.stdout.readline()  # type: ignore[union-attr]
        if not line.startswith("{"):
            raise RuntimeError(f"{cell.name}: livesite.py did not start (got {line!r})")
        ready = json.loads(line)
        urls = [ready["hosts"][h] for h in cfg["hosts"]]
        env = {k: v for k, v in os.environ.items()
               if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI", "REDIS_URL")}
        worker_extra = list(extra)
        if cell.workers > 1:
            env["REDIS_URL"] = redis_url
            worker_extra.append(f"NEWSCRAWL_REDIS_NAMESPACE={namespace}")
        cmd = _crawl_command(cell, urls, work / "data", seconds, worker_extra)
        (work / "command.txt").write_text(" ".join(cmd) + "\n")
        launched = time.time()
        logs = []
        for w in range(cell.workers):
            log = open(work / f"crawl{w}.log", "w")
            logs.append(log)
            procs.append(subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT))
        deadline = launched + seconds + 300
        for proc in procs:
            try:
                returncodes.append(proc.wait(timeout=max(1.0, deadline - time.time())))
            except subprocess.TimeoutExpired:
                proc.kill()
                returncodes.append(proc.wait())
        for log in logs:
            log.close()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        site.terminate()
        try:
            site.wait(timeout=30)
        except subprocess.TimeoutExpired:
            site.kill()
            site.wait()
        if site.stdout is not None:
            site.stdout.close()
        if cell.workers > 1:
            _delete_namespace(redis_url, namespace)
    (work / "cell.json").write_text(json.dumps({"cell": asdict(cell), "launched": launched,
                                                "seconds": seconds, "minutes": minutes,
                                                "returncodes": returncodes, "commit": _commit()}))
    return judge(cell, work, launched, seconds, minutes, returncodes)


def rejudge(folder: Path) -> tuple[list[Cell], list[dict], float, dict]:
    """Judge again the kept cells of a ``--keep`` folder (each sub-folder's ``cell.json`` and site
    logs), e.g. after a change of the scoring; returns cells, results, the minutes per cell and
    ``{"run_date", "run_commit"}`` of the crawl (its earliest launch, its commit)."""
    cells, results, minutes = [], [], math.nan
    launches, commits = [], set()
    for meta_path in sorted(folder.glob("*/cell.json")):
        meta = json.loads(meta_path.read_text())
        cell = Cell(**meta["cell"])
        minutes = meta["minutes"]
        launches.append(meta["launched"])
        commits.add(meta.get("commit", "unknown"))
        cells.append(cell)
        results.append(judge(cell, meta_path.parent, meta["launched"], meta["seconds"], minutes,
                             meta["returncodes"]))
    run = {"run_date": dt.datetime.fromtimestamp(min(launches), dt.timezone.utc).isoformat(timespec="seconds")
           if launches else None, "run_commit": ",".join(sorted(commits))}
    return cells, results, minutes, run


def judge(cell: Cell, work: Path, launched: float, seconds: int, minutes: float,
          returncodes: list[int]) -> dict:
    """Score a finished cell from the site's logs in ``work/site``: cold and steady (module
    docstring), requests by kind, and the targets."""
    cfg = cell.config
    articles = read_jsonl(work / "site" / "articles.jsonl")
    requests = read_jsonl(work / "site" / "requests.jsonl")
    # the crawler's for= clock starts about at its first request, not at its launch
    t_first = requests[0]["t"] if requests else launched + seconds
    end = t_first + seconds
    sent = [r for r in requests if r["t"] <= end + 60]
    rates = {(host, k): r / 60.0 for host, row in zip(cfg["hosts"], cfg["rates"]) for k, r in enumerate(row)}
    index_size = int(cfg["index_size"])
    steady_after = STEADY_AFTER if minutes >= 20 else minutes * 60.0 / 3.0
    cold = score_window(articles, sent, rates, index_size, t_first, end, TAIL, cell.seed)
    steady = score_window(articles, sent, rates, index_size, t_first + steady_after, end, TAIL, cell.seed)
    by_path = {a["path"]: a for a in articles}
    kinds = request_kinds(sent, by_path, t_first)
    new_fetched = len({r["path"] for r in sent if r["status"] == 200 and r["method"] == "GET"
                       and kind_of(r["path"], by_path) == "article"
                       and by_path[r["path"]]["published"] >= t_first})
    backlog = sum(1 for a in articles if a["published"] < t_first)
    result = {
        "cell": cell.name, "seed": cell.seed, "factor": cell.factor, "rate": cell.rate,
        "workers": cell.workers, "held_out": cell.held_out, "shape": cfg["shape"],
        "articles_per_hour": articles_per_hour(cfg), "index_size": index_size,
        "amplitude": cfg["amplitude"], "minutes": minutes, "steady_after_s": steady_after,
        "startup_s": t_first - launched, "returncodes": returncodes, "backlog": backlog,
        "backlog_fetched": kinds.get("article_backlog", 0), "requests": kinds,
        "requests_total": len(sent), "req_per_new_article": len(sent) / max(new_fetched, 1),
        "cold": cold, "steady": steady,
    }
    result["lying"] = lying_hosts(cfg, articles, sent, t_first, end, work)
    result["targets"] = targets_of(result)
    return result


def lying_hosts(cfg: dict, articles: list[dict], requests: list[dict], start: float, end: float,
                work: Path) -> list[dict]:
    """Per lying host (frozen validators): its articles published in the run, how many a crawler
    answer listed, their discovery median (s), and the WARNING lines of the crawl logs naming it
    (issue 20 item 4: caught within 3 revisits, one WARNING)."""
    out = []
    logs = "".join(p.read_text(errors="replace") for p in sorted(work.glob("crawl*.log")))
    for host in cfg.get("lying") or ():
        mine = [a for a in articles if a["host"] == host and start <= a["published"] <= end - TAIL]
        seen: dict[int, float] = {}
        for r in requests:
            if r["host"] == host and r["status"] == 200 and r["method"] == "GET":
                for i in r.get("listed") or ():
                    seen.setdefault(i, r["t"])
        lat = sorted(seen.get(a["id"], math.inf) - a["published"] for a in mine)
        warnings = [line for line in logs.splitlines() if "WARNING" in line and host in line]
        out.append({"host": host, "judged": len(mine), "discovered": sum(a["id"] in seen for a in mine),
                    "disc_median": lat[len(lat) // 2] if lat else math.nan,
                    "warnings": len(warnings), "first_warning": warnings[0][:300] if warnings else ""})
    return out


def targets_of(r: dict) -> list[dict]:
    """Issue 20's acceptance for one cell: ``{name, value, op, threshold, met}`` each."""
    out = []

    def add(what: str, value: float, op: str, threshold: float) -> None:
        ok = not math.isnan(value) and {"<=": value <= threshold, "==": value == threshold}[op]
        out.append({"name": f"live_matrix {r['cell']} {what}", "value": value, "op": op,
                    "threshold": threshold, "met": bool(ok)})

    st, co = r["steady"], r["cold"]
    cycle = r["amplitude"] > 0
    add("steady discovery / oracle", ratio(st["disc_median"], st["oracle_median"]), "<=", 0.95 if cycle else 1.1)
    add("steady discovery / round-robin", ratio(st["disc_median"], st["rr_median"]), "<=", 0.6)
    if r["factor"] is None:
        add("cold discovery / oracle (no rate)", ratio(co["disc_median"], co["oracle_median"]), "<=", 2.0)
        add("cold discovery median s (no rate)", co["disc_median"], "<=", 300.0)
    else:
        add("cold discovery / oracle", ratio(co["disc_median"], co["oracle_median"]), "<=", 1.5)
        if r["factor"] >= 2.0:
            add("cold fell off unseen", co["fell_off"], "==", 0)
    if any(rc != 0 for rc in r["returncodes"]):
        add("crawl exit status", max(abs(rc) for rc in r["returncodes"]), "==", 0)
    return out


def _f(x: float, digits: int = 0) -> str:
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.{digits}f}"


def table(results: list[dict], title: str) -> None:
    """The per-cell table on stdout."""
    if not results:
        return
    print(f"\n== {title}")
    head = (f"{'cell':<16} {'judge':<6} {'rate/h':>7} {'n':>5} {'found':>5} {'disc':>6} {'oracle':>6} {'rr':>6} "
            f"{'/orac':>6} {'/rr':>5} {'fell':>5} {'pend':>5} {'idx/s':>6}  targets")
    print(head)
    for r in results:
        for judge_name in ("cold", "steady"):
            s = r[judge_name]
            mine = [t for t in r["targets"] if judge_name in t["name"]
                    or (judge_name == "cold" and "exit" in t["name"])]
            verdict = ("met" if all(t["met"] for t in mine) else
                       "NOT met: " + ", ".join(t["name"].split(" ", 2)[2] for t in mine if not t["met"]))
            rate = "none" if r["rate"] is None else str(r["rate"])
            print(f"{r['cell']:<16} {judge_name:<6} {rate:>7} {s['judged']:>5} {s['discovered']:>5} {_f(s['disc_median']):>6} "
                  f"{_f(s['oracle_median']):>6} {_f(s['rr_median']):>6} "
                  f"{_f(ratio(s['disc_median'], s['oracle_median']), 2):>6} "
                  f"{_f(ratio(s['disc_median'], s['rr_median']), 2):>5} {s['fell_off']:>5} "
                  f"{s['pending']:>5} {s['listing_rate']:>6.2f}  {verdict}")
        k = r["requests"]
        print(f"{'':<16} requests {r['requests_total']}: article new {k.get('article_new', 0)}, backlog "
              f"{k.get('article_backlog', 0)} (of {r['backlog']}), channel {k.get('channel', 0)}, "
              f"feeds {k.get('channel_feed', 0)}+{k.get('site_feed', 0)}, sitemap {k.get('sitemap', 0)}, "
              f"home {k.get('home', 0)}, robots {k.get('robots', 0)}, other {k.get('other', 0)}; "
              f"HEAD {k.get('HEAD', 0)}, 304 {k.get('304', 0)}, 405 {k.get('405', 0)}; "
              f"{r['req_per_new_article']:.2f}/new article; first request after {r['startup_s']:.1f} s")
        print(f"{'':<16} shape: {r['shape']}")
        for lie in r.get("lying") or ():
            print(f"{'':<16} lying host {lie['host']}: {lie['discovered']} of {lie['judged']} new articles "
                  f"discovered (median {_f(lie['disc_median'])} s); {lie['warnings']} WARNING line(s) "
                  f"naming it")


def _clean(x: object) -> object:
    """JSON-safe: ∞ as the string "inf", NaN as null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def _commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def _seeds(spec: str) -> list[int]:
    out: list[int] = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        if "-" in part:
            a, b = part.split("-", 1)
            out += range(int(a), int(b) + 1)
        else:
            out.append(int(part))
    return out


def _factor(text: str) -> float | None:
    return None if text.strip().lower() in ("none", "no", "-") else float(text.rstrip("x"))


def plan(args: argparse.Namespace) -> list[Cell]:
    """The cells of a run from the command line (``--cells`` or seeds × factors, + the Redis cell)."""
    specs: list[tuple[int, float | None, int]] = []
    if args.cells:
        for part in filter(None, (p.strip() for p in args.cells.split(","))):
            seed, _, fac = part.partition(":")
            workers = 2 if fac.endswith("/redis2") else 1
            specs.append((int(seed), _factor(fac.removesuffix("/redis2") or "2"), workers))
    elif args.quick:
        specs = [(s, f, 1) for s, f in QUICK_CELLS]
    else:
        factors = [_factor(f) for f in args.factors.split(",")]
        for seed in _seeds(args.seeds) + _seeds(args.held_out):
            specs += [(seed, f, 1) for f in factors]
        if not args.no_redis:
            specs.append((_seeds(args.seeds)[0], 2.0, 2))
    cells = []
    for block, (seed, factor, workers) in enumerate(specs, start=1):
        cells.append(make_cell(seed, factor, block, args.minutes, workers))
    return cells


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="live_freshness.py --matrix",
                                     description="monitoring mode on a matrix of live site shapes")
    parser.add_argument("--quick", action="store_true",
                        help=f"the quick subset {QUICK_CELLS} at 4 minutes")
    parser.add_argument("--minutes", type=float, default=None, help="minutes per cell (default 30; quick 4)")
    parser.add_argument("--parallel", type=int, default=None,
                        help="cells run side by side (default: the CPU count; --quick: all 3)")
    parser.add_argument("--seeds", default="1-6", help="dev shape seeds (default 1-6)")
    parser.add_argument("--held-out", default="101-102", help="held-out shape seeds, reported apart")
    parser.add_argument("--factors", default="1.3,2,4,none",
                        help="crawl rates as multiples of the article rate; none = no -a rate")
    parser.add_argument("--cells", default="",
                        help="explicit cells SEED:FACTOR[/redis2],... (e.g. 1:2,2:none,101:1.3,3:2/redis2)")
    parser.add_argument("--no-redis", action="store_true", help="leave out the two-worker Redis cell")
    parser.add_argument("--redis", default=REDIS_URL, help=f"Redis for the two-worker cell ({REDIS_URL})")
    parser.add_argument("--crawler-setting", action="append", default=[], metavar="NAME=VALUE",
                        help="an extra -s NAME=VALUE for every crawl (default: none; product defaults)")
    parser.add_argument("--keep", type=Path, default=None, help="keep sites' logs, stores and crawl logs here")
    parser.add_argument("--results", type=Path, default=REPO / "benchmarks" / "results",
                        help="folder of the JSON results file")
    parser.add_argument("--dry-run", action="store_true", help="print the cells and their shapes only")
    parser.add_argument("--rejudge", type=Path, default=None, metavar="KEEP_DIR",
                        help="judge the cells kept by an earlier --keep run again (no crawl)")
    args = parser.parse_args(argv)
    if args.rejudge is not None:
        cells, results, minutes, run = rejudge(args.rejudge)
        if not cells:
            print(f"no kept cells (*/cell.json) in {args.rejudge}")
            return 2
        print(f"rejudged: the cells of {args.rejudge}, crawled {run['run_date']} on {run['run_commit']}")
        return report(cells, results, args, dt.datetime.now(dt.timezone.utc), minutes, 0, run)
    if args.minutes is None:
        args.minutes = 4.0 if args.quick else 30.0
    if args.parallel is None:
        args.parallel = len(QUICK_CELLS) if args.quick and not args.cells else (os.cpu_count() or 1)
    cells = plan(args)
    if any(c.workers > 1 for c in cells):
        why = redis_reachable(args.redis)
        if why:
            print(f"no Redis at {args.redis} ({why}): the two-worker cell is left out", flush=True)
            cells = [c for c in cells if c.workers == 1]
    parallel = max(1, min(args.parallel, len(cells)))
    waves = math.ceil(len(cells) / parallel)
    print(f"live matrix: {len(cells)} cells, {args.minutes:g} min each, {parallel} side by side "
          f"(~{waves * (args.minutes + 1):.0f} min); commit {_commit()[:12]}; {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}", flush=True)
    for c in cells:
        rate = "no -a rate" if c.rate is None else f"rate={c.rate}/h"
        print(f"  {c.name:<14} {rate:<16} {c.config['shape']}", flush=True)
    if args.dry_run:
        return 0
    base = Path(tempfile.mkdtemp(prefix="live-matrix-")) if args.keep is None else args.keep
    started = dt.datetime.now(dt.timezone.utc)
    lock = threading.Lock()

    def one(cell: Cell) -> dict:
        t = time.time()
        try:
            r = run_cell(cell, args.minutes, base / cell.name.replace("/", "-"), args.crawler_setting,
                         args.redis)
        except Exception as exc:  # noqa: BLE001 - one broken cell must not lose the others
            r = {"cell": cell.name, "error": repr(exc), "held_out": cell.held_out, "targets": [
                {"name": f"live_matrix {cell.name} ran", "value": 0, "op": "==", "threshold": 1,
                 "met": False}]}
        with lock:
            state = r.get("error") or ("all targets met" if all(x["met"] for x in r["targets"])
                                       else "targets NOT met")
            print(f"  cell {cell.name} done in {time.time() - t:.0f} s: {state}", flush=True)
        return r

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
            results = list(pool.map(one, cells))
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return report(cells, results, args, started, args.minutes, parallel)


def report(cells: list[Cell], results: list[dict], args: argparse.Namespace, started: dt.datetime,
           minutes: float, parallel: int, run: dict | None = None) -> int:
    """Tables, target lines, figures and the JSON results file of a finished (or rejudged) run."""
    ok = [r for r in results if "error" not in r]
    for r in results:
        if "error" in r:
            print(f"cell {r['cell']} failed: {r['error']}")
    table([r for r in ok if not r["held_out"]], "dev seeds")
    table([r for r in ok if r["held_out"]], "held-out seeds")
    print()
    for r in results:
        for t in r["targets"]:
            target(t["name"], t["value"], t["op"], t["threshold"])
    for group, rows in (("dev", [r for r in results if not r["held_out"]]),
                        ("held-out", [r for r in results if r["held_out"]])):
        if not rows:
            continue
        ts = [t for r in rows for t in r["targets"]]
        worst = max((ratio(r["steady"]["disc_median"], r["steady"]["oracle_median"]) for r in rows
                     if "steady" in r), default=math.nan, key=lambda x: math.inf if math.isnan(x) else x)
        figure(f"live_matrix {group} targets met", f"{sum(t['met'] for t in ts)} of {len(ts)}")
        figure(f"live_matrix {group} worst steady ratio to oracle", _f(worst, 2))
    args.results.mkdir(parents=True, exist_ok=True)
    stamp = (dt.datetime.fromisoformat(run["run_date"]) if run and run.get("run_date") else started)
    out = args.results / (f"live_matrix-{stamp.strftime('%Y%m%dT%H%M%SZ')}"
                          f"{'-rejudged' if args.rejudge is not None else ''}.json")
    out.write_text(json.dumps(_clean({
        "date": started.isoformat(timespec="seconds"), "finished": dt.datetime.now(dt.timezone.utc)
        .isoformat(timespec="seconds"), "commit": _commit(), "argv": sys.argv[1:], "minutes": minutes,
        "parallel": parallel, "cpus": os.cpu_count(), "ranges": RANGES,
        "crawler_settings": args.crawler_setting,
        "rejudged": str(args.rejudge) if args.rejudge is not None else None,
        **(run or {}),
        "cells": [{**asdict(c), "result": r} for c, r in zip(cells, results)],
    }), indent=1, default=str))
    print(f"results: {out}")
    return 0
