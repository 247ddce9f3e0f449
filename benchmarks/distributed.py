"""Distributed crawling on scrapy-redis: throughput, exactly-once, politeness, memory per URL.

Usage (from the repository root; a Redis server on ``--redis``, default redis://127.0.0.1:6379/0)::

    .venv/bin/python benchmarks/distributed.py              # 22,000 pages on 250 hosts, ~4 min
    .venv/bin/python benchmarks/distributed.py --quick      # 7,500 pages on 250 hosts, ~2 min
    .venv/bin/python benchmarks/distributed.py --check      # also: store agreement, kill -9
    .venv/bin/python benchmarks/distributed.py --hosts 20 --pages 10000 --keep /tmp/dist
    .venv/bin/python benchmarks/distributed.py --set NEWSCRAWL_POLITENESS_FACTOR=0  # no pause

The site: ``--hosts`` copies of ``crawl_throughput.py``'s generated news site (home, channel
indexes with pagination, articles, footer pages, robots.txt; its generator is imported, with as
many channels per host as make the page count land near ``--pages``), one per loopback address
127.0.0.1 … 127.0.0.N (all loopback on Linux), served on the same port of every address by one
nginx process when nginx is installed (``apt-get install nginx-light``; ``--server``), else by
one Twisted process; a request's address picks the folder. The site server shares the 2 cores
with the workers and Redis, so its CPU per page is printed: Twisted's (about 0.25 ms/page) is
7 % of a worker's, nginx's a tenth of that — what the crawl of real, remote sites would see.

Why 250 hosts and 12 requests in flight per Redis worker by default: a Redis worker sends one
request per host at a time and then pauses k = 10 times the host's response time (Mercator).
The response time a worker measures includes the time its busy event loop takes to notice the
answer: with N requests in flight on a CPU-bound worker that is about N × its CPU time per page
(measured: median 20 ms with N = 8, 28 ms with 12, 37 ms with 16, 57 ms with 32, for a server
answering in 2 ms). A host is then idle about k/(k+1) of the time, so a worker keeping N requests
in flight needs on the order of (k + 1) × N hosts with work; two workers twice that. With fewer,
the comparison measures politeness, not the frontier (``--hosts 50`` shows that case: the Redis
runs then stall on host pauses). N = 12 (``--worker-concurrency``, Scrapy's
``CONCURRENT_REQUESTS`` of the Redis runs) keeps a worker's CPU busy here (N = 8 left it idle
more often: 269.1 vs 282.8 pages/s for one worker in two runs); the in-memory run keeps the
project's 32 (it was faster with 32 than with 8 here: 284.6 vs 267.1 pages/s). On the real web,
where response times are network times, a Redis worker wants the larger
``CONCURRENT_REQUESTS``. The per-run medians of response
time, pause and idle time per host are printed. The Twisted server answers each request
after ``--serve-delay`` ms (so that two requests in flight on one host would overlap in its
books); nginx answers at once and its books come from its access log (request intervals to the
millisecond). Either counts hits per URL and the largest number of requests in flight per host,
and records the time of the last page hit.

Runs, each ``scrapy crawl news`` over the N entry URLs with ``-a depth=`` pagination + 2, the
MongoDB pipeline off (its server would be one more process on the same cores; ``--check`` runs
with it), LOG_LEVEL=WARNING:

1. ``inmemory``  — one process, Scrapy's scheduler and duplicate filter (the project's
   single-process settings: 8 requests per host in parallel, no delay);
2. ``redis x1``  — one worker with ``REDIS_URL`` (shared frontier, one request per host over all
   workers, pause = 10 × response time, Crawl-delay honoured);
3. ``redis x2``  — two workers started together on the same ``REDIS_URL`` and namespace.

pages/s = site pages fetched / (time of the last page hit at the server − process start), so
the Redis workers' idle wait before closing (``NEWSCRAWL_REDIS_IDLE_CLOSE``) is not counted;
interpreter start-up is, equally for all runs. Checks per run: every site page fetched exactly
once (server hit counts; response stats summed over workers; items scraped = pages), and for
the Redis runs never two requests in flight on one host (server-side maximum per host, and no
overlap between the HTTP exchanges the workers logged with ``NEWSCRAWL_POLITENESS_LOG``).

Memory: Redis ``MEMORY USAGE`` of newscrawl's seen-set buckets after run 3, divided by the URLs
in it; and of scrapy-redis's default ``RFPDupeFilter`` set after feeding it the same URLs.

``--check`` adds: 4. two workers with the embedded MongoDB store (started beforehand): items
stored = pages = items scraped; 5. two workers, one killed with SIGKILL after 30 % of the pages
and restarted 3 s later: the union of fetched pages is complete (requests in flight at the kill
may be fetched twice; counted).

``--quick`` (the size ``make bench`` runs): the same 250 hosts with the smallest site each (30
pages, 7,500 in all). What bounds a run is the host count, not the page count: a host's pages are
fetched one at a time with a pause, so a host takes pages × (k + 1) × response time while the run
takes pages / throughput, and their ratio does not depend on the pages per host. Fewer hosts
(``--hosts 20 --pages 1000``, a smoke run) measure politeness, not the frontier.

Targets (``benchmarks/_targets.py`` format): redis x1 >= 0.9 x inmemory pages/s, redis x2 >= 1.7 x
redis x1, <= 16 Redis bytes per seen URL. Last line:
``redis/inmemory: X.XX two/one: X.XX bytes_per_url: N``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(ROOT)]

from _targets import target  # noqa: E402

from newscrawl import settings as project_settings  # noqa: E402

STATS_PATH = "/__bench__/stats"
RESET_PATH = "/__bench__/reset"

#: Every page of the synthetic sites is fetched, their footer service pages (imprint, privacy,
#: contact) too, as ``crawl_throughput.SAME_PAGES_SETTINGS``: no service-link rules, no channel
#: following.
SAME_PAGES_SETTINGS = {
    "NEWSCRAWL_LINKCLASS_RULES": '{"replace": true}',
    "NEWSCRAWL_LINKCLASS_FOLLOW_CHANNELS": "False",
}

COMMON_SETTINGS = {
    "LOG_LEVEL": "WARNING",
    # The sites on 127.0.0.1 ... 127.0.0.N (loopback is refused unless allowed).
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": "127.0.0.0/24",
    "TELNETCONSOLE_ENABLED": "False",
    "HTTPCACHE_ENABLED": "False",
    "AUTOTHROTTLE_ENABLED": "False",
    "NEWSCRAWL_MONGO_ENABLED": "False",
    "NEWSCRAWL_REVISIT_ENABLED": "False",
    # The project's extensions (store, crawl state) plus the stats recorder: -s EXTENSIONS
    # replaces the project's dict, it does not add to it.
    "EXTENSIONS": json.dumps({**project_settings.EXTENSIONS, "_plain_spider.BenchStats": 900}),
    **SAME_PAGES_SETTINGS,
}
REDIS_SETTINGS = {
    "NEWSCRAWL_REDIS_IDLE_CLOSE": "2",
    "NEWSCRAWL_REDIS_WORKER_TIMEOUT": "6",
}


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc/<pid>/stat``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def redis_cpu_seconds(redis_url: str) -> float:
    """CPU seconds the Redis server has used (``INFO cpu``: used_cpu_sys + used_cpu_user)."""
    import redis

    info = redis.Redis.from_url(redis_url).info("cpu")
    return float(info.get("used_cpu_sys", 0)) + float(info.get("used_cpu_user", 0))


def host_address(index: int) -> str:
    return f"127.0.0.{index + 1}"


# --- the site -----------------------------------------------------------------------------------


def site_pages(channels: int, pages: int) -> int:
    """Pages ``crawl_throughput.generate_site`` writes for ``pages`` with ``channels`` channels
    (home, 3 footer pages, per channel its index pages and 20 articles per index page)."""
    per_index = 20 + 1
    per_channel = max(2, -(-(pages - 4) // (channels * per_index)))
    return 4 + channels * per_channel * per_index


def channels_for(pages: int) -> int:
    """The number of channels (1..10) whose site is the smallest one with >= ``pages`` pages."""
    return min(range(1, 11), key=lambda c: (site_pages(c, pages), -c))


def _generate_one(args: tuple[str, int, int]) -> list[str]:
    folder, pages, seed = args
    import crawl_throughput as ct

    ct.CHANNELS = ct.CHANNELS[:channels_for(pages)]  # so that one host has about `pages` pages
    site = ct.generate_site(Path(folder), pages, seed)
    return site.paths, site.pages_per_channel


def generate(root: Path, hosts: int, pages: int) -> tuple[dict[str, list[str]], int]:
    """Write one site per host into ``root/<address>``; return host → page paths, and the
    number of index pages per channel."""
    per_host = max(30, -(-pages // hosts))
    jobs = [(str(root / host_address(i)), per_host, 1000 + i) for i in range(hosts)]
    with ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        results = list(pool.map(_generate_one, jobs))
    return ({host_address(i): paths for i, (paths, _) in enumerate(results)},
            max(ppc for _, ppc in results))


def serve(root: str, hosts: int, delay_ms: float) -> None:
    """Serve ``root/<address>`` on every address at one port; print the port; book-keep hits."""
    from twisted.internet import reactor
    from twisted.web import resource, server
    from twisted.web.static import File

    files = {}
    for i in range(hosts):
        f = File(str(Path(root) / host_address(i)))
        f.indexNames = ["index.html"]
        files[host_address(i)] = f
    book = {"hits": defaultdict(int), "inflight": defaultdict(int), "max_inflight": defaultdict(int),
            "last_page_hit": 0.0, "first_hit": 0.0}

    def reset():
        book["hits"].clear()
        book["inflight"].clear()
        book["max_inflight"].clear()
        book["last_page_hit"] = book["first_hit"] = 0.0

    class Root(resource.Resource):
        isLeaf = True

        def render(self, request):
            path = request.path.decode("latin-1")
            if path == STATS_PATH:
                request.setHeader(b"content-type", b"application/json")
                return json.dumps({"hits": dict(book["hits"]),
                                   "max_inflight": dict(book["max_inflight"]),
                                   "last_page_hit": book["last_page_hit"],
                                   "first_hit": book["first_hit"]}).encode()
            if path == RESET_PATH:
                reset()
                return b"ok"
            host = request.getHost().host
            book["hits"][f"{host}{path}"] += 1
            now = time.time()
            book["first_hit"] = book["first_hit"] or now
            if path != "/robots.txt":
                book["last_page_hit"] = now
            book["inflight"][host] += 1
            book["max_inflight"][host] = max(book["max_inflight"][host], book["inflight"][host])
            done = []

            def finished(_):
                if not done:
                    done.append(1)
                    book["inflight"][host] -= 1

            request.notifyFinish().addBoth(finished)

            def answer():
                if request._disconnected:
                    return
                target = resource.getChildForRequest(files[host], request)
                body = target.render(request)
                if body is not server.NOT_DONE_YET:
                    request.write(body)
                    request.finish()

            reactor.callLater(delay_ms / 1000.0, answer)
            return server.NOT_DONE_YET

    site = server.Site(Root())
    site.displayTracebacks = False
    site.log = lambda request: None  # no access log
    port = None
    for _ in range(50):
        with socket.socket() as sock:
            sock.bind((host_address(0), 0))
            candidate = sock.getsockname()[1]
        try:
            listening = [reactor.listenTCP(candidate, site, interface=host_address(i), backlog=512)
                         for i in range(hosts)]
        except Exception:  # noqa: BLE001 - the port was taken on another address: try another
            for p in locals().get("listening", []) or []:
                p.stopListening()
            continue
        port = candidate
        break
    if port is None:
        raise SystemExit("no common free port on all addresses")
    print(port, flush=True)
    reactor.run()


class SiteServer:
    """The Twisted site server (``serve``) in a subprocess, and its books."""

    kind = "twisted"

    def __init__(self, root: Path, hosts: int, delay_ms: float):
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(root),
             "--hosts", str(hosts), "--serve-delay", str(delay_ms)],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.stop()
            raise RuntimeError(f"site server did not start (got {line!r})")
        self.port = int(line)
        self.hosts = hosts

    def url(self, index: int, path: str = "/") -> str:
        return f"http://{host_address(index)}:{self.port}{path}"

    def _get(self, path: str):
        with urllib.request.urlopen(self.url(0, path), timeout=30) as response:
            return response.read()

    def stats(self) -> dict:
        return json.loads(self._get(STATS_PATH))

    def reset(self) -> None:
        self._get(RESET_PATH)

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server process has used so far (Linux /proc)."""
        return proc_cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        from crawl_throughput import stop_process

        stop_process(self.proc)


_NGINX_CONF = """daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 8192; }}
http {{
    log_format bench '$server_addr $request_uri $msec $request_time $status';
    access_log {dir}/access.log bench;
    types {{ text/html html; text/plain txt; }}
    default_type application/octet-stream;
    sendfile on;
    tcp_nodelay on;
    keepalive_timeout 120;
    keepalive_requests 1000000;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    server {{
{listen}
        root {root}/$server_addr;
        index index.html;
    }}
}}
"""


class NginxSiteServer:
    """The same site served by nginx (one process, ``master_process off``), books kept from its
    access log: ``$server_addr $request_uri $msec $request_time $status`` per request.

    nginx answers at once (no ``--serve-delay``) and costs a tenth of the Twisted server's CPU,
    which shares the 2 cores with the workers and Redis. Requests in flight per host are
    reconstructed from the log: request ``i`` occupies ``[msec - request_time, msec]`` (both in
    milliseconds); two intervals of one host overlapping count as two in flight.
    """

    kind = "nginx"

    def __init__(self, root: Path, hosts: int, work: Path):
        self.hosts = hosts
        self.dir = work / "nginx"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = self.dir / "access.log"
        self.proc = None
        for _ in range(20):
            with socket.socket() as sock:
                sock.bind((host_address(0), 0))
                port = sock.getsockname()[1]
            listen = "\n".join(f"        listen {host_address(i)}:{port} backlog=1024;"
                               for i in range(hosts))
            conf = self.dir / "nginx.conf"
            conf.write_text(_NGINX_CONF.format(dir=self.dir, listen=listen, root=root.resolve()))
            self.log.write_text("")
            self.proc = subprocess.Popen([shutil.which("nginx") or "nginx", "-c", str(conf),
                                          "-p", str(self.dir)], stderr=subprocess.PIPE, text=True)
            self.port = port
            if self._ready():
                break
            self.stop()
            self.proc = None
        if self.proc is None:
            raise RuntimeError(f"nginx did not start: {(self.dir / 'error.log').read_text()[-500:]}")
        self.reset()

    def _ready(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection((host_address(self.hosts - 1), self.port), 0.5):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def url(self, index: int, path: str = "/") -> str:
        return f"http://{host_address(index)}:{self.port}{path}"

    def reset(self) -> None:
        self._offset = self.log.stat().st_size
        self._hits: dict[str, int] = defaultdict(int)
        self._intervals: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._last_page_hit = 0.0
        self._first_hit = 0.0

    def _read(self) -> None:
        with open(self.log, "rb") as handle:
            handle.seek(self._offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1  # a line nginx is still writing waits for the next read
        self._offset += end
        for line in data[:end].decode("utf-8", "replace").splitlines():
            parts = line.split(" ")
            if len(parts) != 5:
                continue
            host, uri, msec, request_time, _status = parts
            path = uri.split("?", 1)[0]
            done = float(msec)
            self._hits[f"{host}{path}"] += 1
            self._first_hit = self._first_hit or done - float(request_time)
            if path != "/robots.txt":
                self._last_page_hit = max(self._last_page_hit, done)
            end_ms = int(round(done * 1000))
            self._intervals[host].append((end_ms - int(round(float(request_time) * 1000)),
                                          end_ms))

    def stats(self) -> dict:
        self._read()
        max_inflight = {}
        for host, intervals in self._intervals.items():
            ends: list[int] = []  # a heap of the ends of the requests still in flight
            peak = 0
            for start, end in sorted(intervals):
                while ends and ends[0] <= start:  # ended when (or before) this one started
                    heapq.heappop(ends)
                heapq.heappush(ends, end)
                peak = max(peak, len(ends))
            max_inflight[host] = peak
        return {"hits": dict(self._hits), "max_inflight": max_inflight,
                "last_page_hit": self._last_page_hit, "first_hit": self._first_hit}

    def cpu_seconds(self) -> float:
        return proc_cpu_seconds(self.proc.pid) if self.proc and self.proc.poll() is None else 0.0

    def stop(self) -> None:
        from crawl_throughput import stop_process

        stop_process(self.proc)


# --- runs ---------------------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    workers: int
    started: float
    seconds: float = 0.0
    pages: int = 0
    expected: int = 0
    once: int = 0
    twice: int = 0
    missing: int = 0
    extra: int = 0
    max_inflight: int = 0
    overlaps: int | None = None
    exchanges: int = 0
    responses: int = 0
    items: int = 0
    cpu: float = 0.0
    server_cpu: float = 0.0
    redis_cpu: float = 0.0
    politeness: str = ""
    store_docs: int | None = None
    returncodes: list[int] = field(default_factory=list)
    stats: list[dict] = field(default_factory=list)
    note: str = ""

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.seconds if self.seconds else 0.0

    @property
    def exactly_once(self) -> bool:
        return self.once == self.expected and not self.extra


def scrapy_command(seeds: Path, depth: int, settings: dict[str, str]) -> list[str]:
    command = [sys.executable, "-m", "scrapy", "crawl", "news", "-a", f"seeds={seeds}",
               "-a", f"depth={depth}"]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    return command


def start_worker(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    handle = open(log, "w", encoding="utf-8")
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT)
    handle.close()
    return proc


def read_exchanges(log_files: list[Path]) -> list[dict]:
    """The HTTP exchanges the workers logged (``NEWSCRAWL_POLITENESS_LOG``)."""
    records = []
    for path in log_files:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                continue  # a line cut by kill -9
    return records


def politeness_summary(log_files: list[Path]) -> str:
    """Median response time, pause and idle time between exchanges on one host."""
    records = read_exchanges(log_files)
    by_host: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_host[record["host"]].append(record)
    gaps = []
    for host_records in by_host.values():
        host_records.sort(key=lambda r: r["start"])
        gaps += [b["start"] - a["end"] for a, b in zip(host_records, host_records[1:])]
    rts = sorted(r["rt"] for r in records if r.get("lease"))
    pauses = sorted(r["pause"] for r in records if r.get("pause") is not None)
    gaps.sort()

    def median(values):
        return 1000 * values[len(values) // 2] if values else float("nan")

    return (f"median response time {median(rts):.1f} ms, pause {median(pauses):.1f} ms, host idle "
            f"between two exchanges {median(gaps):.1f} ms")


def overlap_count(log_files: list[Path]) -> tuple[int, int]:
    """Pairs of HTTP exchanges on one host that overlap in time, over all workers' logs."""
    by_host: dict[str, list[tuple[float, float]]] = defaultdict(list)
    exchanges = 0
    for record in read_exchanges(log_files):
        by_host[record["host"]].append((record["start"], record["end"]))
        exchanges += 1
    overlaps = 0
    for intervals in by_host.values():
        intervals.sort()
        latest_end = 0.0
        for start, end in intervals:
            if start < latest_end:
                overlaps += 1
            latest_end = max(latest_end, end)
    return overlaps, exchanges


def evaluate(run: Run, server: SiteServer, site: dict[str, list[str]], stats_files: list[Path],
             politeness_logs: list[Path]) -> Run:
    book = server.stats()
    expected = {f"{host}{path}" for host, paths in site.items() for path in paths}
    hits = {url: n for url, n in book["hits"].items() if not url.endswith("/robots.txt")}
    run.expected = len(expected)
    run.pages = len(expected & hits.keys())
    run.once = sum(1 for url in expected if hits.get(url) == 1)
    run.twice = sum(1 for url in expected if hits.get(url, 0) > 1)
    run.missing = len(expected - hits.keys())
    run.extra = len(hits.keys() - expected)
    run.max_inflight = max(book["max_inflight"].values() or [0])
    run.seconds = book["last_page_hit"] - run.started
    for path in stats_files:
        try:
            run.stats.append(json.loads(path.read_text(encoding="utf-8"))["stats"])
        except (OSError, ValueError, KeyError):
            pass
    run.responses = sum(int(s.get("response_received_count", 0)) - int(
        s.get("robotstxt/response_count", 0)) for s in run.stats)
    run.items = sum(int(s.get("item_scraped_count", 0)) for s in run.stats)
    if politeness_logs:
        run.overlaps, run.exchanges = overlap_count(politeness_logs)
        run.politeness = politeness_summary(politeness_logs)
    return run


def crawl(name: str, workers: int, *, server: SiteServer, site, work: Path, seeds: Path,
          depth: int, env: dict, redis_url: str | None, extra: dict[str, str] | None = None,
          kill_at: float | None = None) -> Run:
    """Run ``workers`` crawl processes together and evaluate them."""
    server.reset()
    run_dir = work / name.replace(" ", "-")
    run_dir.mkdir(parents=True, exist_ok=True)
    namespace = f"bench-{name.replace(' ', '')}-{random.randrange(1 << 30):x}"
    stats_files, logs, procs = [], [], []
    commands = []
    for w in range(workers):
        settings = {**COMMON_SETTINGS, "BENCH_STATS_FILE": str(run_dir / f"stats-{w}.json"),
                    **(extra or {})}
        run_env = dict(env)
        run_env.setdefault("NEWSCRAWL_DATA_DIR", str(run_dir / "data"))
        if redis_url:
            run_env["REDIS_URL"] = redis_url
            settings.update(REDIS_SETTINGS)
            settings["NEWSCRAWL_REDIS_NAMESPACE"] = namespace
            settings["NEWSCRAWL_POLITENESS_LOG"] = str(run_dir / f"exchanges-{w}.jsonl")
            logs.append(run_dir / f"exchanges-{w}.jsonl")
        else:
            run_env.pop("REDIS_URL", None)
            settings["NEWSCRAWL_DISTRIBUTED"] = "False"
        stats_files.append(run_dir / f"stats-{w}.json")
        commands.append((scrapy_command(seeds, depth, settings), run_env))
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_cpu = server.cpu_seconds()
    redis_cpu = redis_cpu_seconds(redis_url) if redis_url else 0.0
    run = Run(name=name, workers=workers, started=time.time())
    for w, (command, run_env) in enumerate(commands):
        procs.append(start_worker(command, run_env, run_dir / f"worker-{w}.log"))
    if kill_at is not None:
        total = sum(len(p) for p in site.values())
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline and procs[0].poll() is None:
            pages = sum(1 for url in server.stats()["hits"] if not url.endswith("/robots.txt"))
            if pages >= kill_at * total:
                break
            time.sleep(0.5)
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        killed_pages = sum(1 for url in server.stats()["hits"] if not url.endswith("/robots.txt"))
        run.note = f"worker 0 killed (SIGKILL) after {killed_pages} pages, restarted 3 s later"
        time.sleep(3)
        command, run_env = commands[0]
        stats_files.append(run_dir / "stats-restarted.json")
        command = [c if not c.startswith("BENCH_STATS_FILE=") else
                   f"BENCH_STATS_FILE={stats_files[-1]}" for c in command]
        procs.append(start_worker(command, run_env, run_dir / "worker-restarted.log"))
    for proc in procs:
        try:
            proc.wait(timeout=1800)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        run.returncodes.append(proc.returncode)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    run.server_cpu = server.cpu_seconds() - server_cpu
    run.redis_cpu = redis_cpu_seconds(redis_url) - redis_cpu if redis_url else 0.0
    for w, proc in enumerate(procs):
        if proc.returncode not in (0, -signal.SIGKILL):
            log = (run_dir / (f"worker-{w}.log" if w < workers else "worker-restarted.log"))
            print(f"--- {name} worker {w} exited {proc.returncode}; log tail:", file=sys.stderr)
            print("\n".join(log.read_text(errors="replace").splitlines()[-30:]), file=sys.stderr)
    return evaluate(run, server, site, stats_files, logs)


# --- memory per URL -----------------------------------------------------------------------------


def bytes_per_url(redis_url: str, namespace_prefix: str, site) -> tuple[float, float, int]:
    """(newscrawl bytes/URL of the last redis x2 run, scrapy-redis default bytes/URL, URLs)."""
    import redis
    import scrapy
    from scrapy_redis.dupefilter import RFPDupeFilter

    from newscrawl.distributed.frontier import RedisFrontier

    client = redis.Redis.from_url(redis_url)
    namespaces = {k.decode().rsplit(":round", 1)[0]
                  for k in client.scan_iter(match=f"{namespace_prefix}*:round")}
    namespace = sorted(namespaces)[-1]
    frontier = RedisFrontier(client, namespace)
    frontier.current_round()
    seen = frontier.seen_count()
    ours = frontier.seen_memory() / seen
    key = f"{namespace}:scrapy-redis-default"
    dupefilter = RFPDupeFilter(client, key)
    urls = [f"http://{host}{path}" for host, paths in site.items() for path in paths]
    pipe = client.pipeline(transaction=False)
    for url in urls:
        pipe.sadd(key, dupefilter.request_fingerprint(scrapy.Request(url)))
    pipe.execute()
    theirs = client.memory_usage(key, samples=0) / client.scard(key)
    client.delete(key)
    return ours, theirs, seen


def clear_namespaces(redis_url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    for start in range(0, len(keys), 500):
        client.delete(*keys[start:start + 500])


# --- store check --------------------------------------------------------------------------------


def store_counts(data_dir: Path, env: dict) -> dict[str, int]:
    from newscrawl.store import NewsStore

    uri = subprocess.run([sys.executable, "-m", "newscrawl.embedded", "uri", "--data-dir",
                          str(data_dir)], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    store = NewsStore.connect(uri)
    try:
        return {"articles": store.articles.count_documents({}),
                "nodes": store.nodes.count_documents({})}
    finally:
        store.close()


# --- output -------------------------------------------------------------------------------------


def print_runs(runs: list[Run]) -> None:
    headers = ["run", "workers", "pages", "once", ">1", "missing", "extra", "s", "pages/s",
               "CPU ms/page", "server CPU", "Redis CPU", "responses", "items",
               "max in flight/host", "overlaps (exchanges)"]
    rows = []
    for r in runs:
        rows.append([r.name, str(r.workers), f"{r.pages}/{r.expected}", str(r.once), str(r.twice),
                     str(r.missing), str(r.extra), f"{r.seconds:.1f}", f"{r.pages_per_s:.1f}",
                     f"{1000 * r.cpu / r.pages:.1f}" if r.pages else "–",
                     f"{1000 * r.server_cpu / r.pages:.2f}" if r.pages else "–",
                     f"{1000 * r.redis_cpu / r.pages:.2f}" if r.pages else "–",
                     str(r.responses), str(r.items), str(r.max_inflight),
                     "–" if r.overlaps is None else f"{r.overlaps} ({r.exchanges})"])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    print("CPU ms/page: the crawl processes (user + system); server CPU: the site server; Redis "
          "CPU: the Redis server (INFO cpu), each divided by the pages of the run")
    for r in runs:
        if r.politeness:
            print(f"{r.name}: {r.politeness}")
        if r.note:
            print(f"{r.name}: {r.note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20_000, help="at least this many pages")
    parser.add_argument("--hosts", type=int, default=250, help="loopback hosts (default 250)")
    parser.add_argument("--worker-concurrency", type=int, default=12, metavar="N",
                        help="CONCURRENT_REQUESTS of the Redis workers (default 12; see above)")
    parser.add_argument("--quick", action="store_true",
                        help="regression-guard size: 30 pages on each host (7,500 on 250 hosts)")
    parser.add_argument("--check", action="store_true",
                        help="also run with the store (agreement) and with a kill -9")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--server", choices=("auto", "nginx", "twisted"), default="auto",
                        help="site server: nginx (when installed: auto) or the Twisted one")
    parser.add_argument("--serve-delay", type=float, default=2.0,
                        help="ms the Twisted site server waits before answering (default 2)")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR and keep it")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="extra Scrapy setting for the Redis runs (repeatable), e.g. "
                             "NEWSCRAWL_POLITENESS_FACTOR=0 to measure without the pause")
    parser.add_argument("--set-all", action="append", default=[], metavar="NAME=VALUE",
                        help="extra Scrapy setting for every run, the in-memory one included")
    parser.add_argument("--runs", default="inmemory,x1,x2",
                        help="which of inmemory,x1,x2 to run (default all; ratios need all)")
    parser.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.hosts, args.serve_delay)
        return 0
    if not 1 <= args.hosts <= 250:
        parser.error("--hosts must be 1..250")
    pages = 30 * args.hosts if args.quick else args.pages

    import redis

    try:
        redis.Redis.from_url(args.redis, socket_connect_timeout=2).ping()
    except redis.exceptions.RedisError as exc:
        print(f"error: needs a Redis server at {args.redis}: {exc}", file=sys.stderr)
        return 2

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="newscrawl-dist-"))
    if args.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    site, per_channel = generate(work / "site", args.hosts, pages)
    total = sum(len(p) for p in site.values())
    print(f"site: {total} pages on {args.hosts} hosts ({host_address(0)} … "
          f"{host_address(args.hosts - 1)}), up to {per_channel} index pages per channel, "
          f"generated in {time.perf_counter() - started:.1f} s", flush=True)
    use_nginx = args.server == "nginx" or (args.server == "auto" and shutil.which("nginx"))
    if args.server == "nginx" and not shutil.which("nginx"):
        parser.error("--server nginx: no nginx on PATH (apt-get install nginx-light)")
    server = (NginxSiteServer(work / "site", args.hosts, work) if use_nginx
              else SiteServer(work / "site", args.hosts, args.serve_delay))
    seeds = work / "seeds.txt"
    seeds.write_text("".join(server.url(i) + "\n" for i in range(args.hosts)))
    depth = per_channel + 2
    env = {k: v for k, v in os.environ.items()
           if k not in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "MONGO_URI",
                        "NEWSCRAWL_MONGO_URI", "REDIS_URL")}
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH_DIR), str(ROOT)])
    extra_all = dict(item.split("=", 1) for item in args.set_all)
    extra = {**extra_all, "CONCURRENT_REQUESTS": str(args.worker_concurrency),
             **dict(item.split("=", 1) for item in args.set)}
    answers = (f"answers after {args.serve_delay:g} ms" if server.kind == "twisted" else
               "answers at once")
    print(f"site server: {server.kind}, port {server.port}, {answers}; Redis "
          f"{args.redis}; depth {depth}; Redis workers with CONCURRENT_REQUESTS="
          f"{extra['CONCURRENT_REQUESTS']}", flush=True)
    runs: list[Run] = []
    common = {"server": server, "site": site, "work": work, "seeds": seeds, "depth": depth,
              "env": env}
    try:
        selected = [r.strip() for r in args.runs.split(",") if r.strip()]
        for key, name, workers in (("inmemory", "inmemory", 1), ("x1", "redis x1", 1),
                                   ("x2", "redis x2", 2)):
            if key in selected:
                runs.append(crawl(name, workers, redis_url=None if key == "inmemory" else
                                  args.redis, extra=extra_all if key == "inmemory" else extra,
                                  **common))
                print(f"{name}: {runs[-1].pages} pages, {runs[-1].pages_per_s:.1f} pages/s",
                      flush=True)
        last = "redisx2" if "x2" in selected else "redisx1"
        ours, theirs, seen = bytes_per_url(args.redis, f"bench-{last}-", site) \
            if {"x1", "x2"} & set(selected) else (0.0, 0.0, 0)
        if args.check:
            data_dir = work / "data"
            store_env = {**env, "NEWSCRAWL_DATA_DIR": str(data_dir)}
            subprocess.run([sys.executable, "-m", "newscrawl.embedded", "start", "--data-dir",
                            str(data_dir)], cwd=ROOT, env=store_env, check=True,
                           capture_output=True)
            try:
                run = crawl("redis x2 + store", 2, redis_url=args.redis,
                            extra={**extra, "NEWSCRAWL_MONGO_ENABLED": "True",
                                   "NEWSCRAWL_REVISIT_ENABLED": "True"},
                            **{**common, "env": store_env})
                counts = store_counts(data_dir, store_env)
                run.store_docs = counts["articles"] + counts["nodes"]
                run.note = (f"store: {counts['articles']} articles + {counts['nodes']} nodes = "
                            f"{counts['articles'] + counts['nodes']} documents; items scraped "
                            f"{run.items}; pages {run.expected}")
                runs.append(run)
            finally:
                subprocess.run([sys.executable, "-m", "newscrawl.embedded", "stop", "--force",
                                "--data-dir", str(data_dir)], cwd=ROOT, env=store_env,
                               capture_output=True)
            runs.append(crawl("redis x2 kill -9", 2, redis_url=args.redis, kill_at=0.3,
                              extra=extra, **common))
    finally:
        server.stop()
        clear_namespaces(args.redis, "bench-")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print_runs(runs)
    failures = []
    for r in runs:
        if "kill" in r.name:
            if r.missing:
                failures.append(f"{r.name}: {r.missing} pages never fetched")
            continue
        if not r.exactly_once:
            failures.append(f"{r.name}: pages not fetched exactly once ({r.twice} twice, "
                            f"{r.missing} missing, {r.extra} extra)")
        if r.responses != r.expected or r.items != r.expected:
            failures.append(f"{r.name}: stats disagree (responses {r.responses}, items {r.items}, "
                            f"pages {r.expected})")
        if r.name.startswith("redis") and (r.max_inflight > 1 or r.overlaps):
            failures.append(f"{r.name}: {r.max_inflight} requests in flight on one host, "
                            f"{r.overlaps} overlapping exchanges")
        if r.store_docs is not None and r.store_docs != r.expected:
            failures.append(f"{r.name}: {r.store_docs} documents stored for {r.expected} pages")
        if any(code != 0 for code in r.returncodes):
            failures.append(f"{r.name}: exit codes {r.returncodes}")
    by_name = {r.name: r for r in runs}
    if not {"inmemory", "redis x1", "redis x2"} <= by_name.keys():
        for failure in failures:
            print(f"FAILED: {failure}")
        return 1 if failures else 0
    inmem, one, two = by_name["inmemory"], by_name["redis x1"], by_name["redis x2"]
    ratio_one = one.pages_per_s / inmem.pages_per_s
    ratio_two = two.pages_per_s / one.pages_per_s
    print(f"Redis bytes per seen URL ({seen} URLs): newscrawl {ours:.1f}, scrapy-redis default "
          f"RFPDupeFilter {theirs:.1f}")
    size = f"{inmem.expected} pages on {args.hosts} hosts"
    target(f"distributed redis x1/inmemory pages_per_s ({size})", ratio_one, ">=", 0.9)
    target(f"distributed redis x2/redis x1 pages_per_s ({size})", ratio_two, ">=", 1.7)
    target(f"distributed Redis bytes per seen URL ({seen} URLs)", ours, "<=", 16, digits=1)
    for failure in failures:
        print(f"FAILED: {failure}")
    print(f"redis/inmemory: {ratio_one:.2f} two/one: {ratio_two:.2f} bytes_per_url: {round(ours)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
