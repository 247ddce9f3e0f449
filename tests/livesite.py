"""A loopback news site that publishes over real time — for monitoring-mode tests and
``benchmarks/live_freshness.py``.

Run ``python tests/livesite.py CONFIG.json OUTDIR``; it serves several hosts, one per loopback
address (``127.0.0.11``, ``127.0.0.12``, …; distinct hosts, distinct sites), each on a free port,
and prints one JSON line ``{"hosts": {"127.0.0.11": "http://127.0.0.11:PORT/", ...}, "start": T}``
when ready. The whole publication schedule is drawn at start from the config's seed and written to
``OUTDIR/articles.jsonl`` (one line per article: ``id``, ``host``, ``channel``, ``path``,
``published``, ``corrected``); every request is appended to ``OUTDIR/requests.jsonl``
(``t``, ``host``, ``method``, ``path``, ``status``, ``listed``: ids of the articles an index
answer listed). So a test or a benchmark knows what was published when and what the crawler
saw when, independently of the crawler.

Each host has a home page ``/`` linking its channels ``/sectionK/``; a channel page lists its
newest ``index_size`` articles ``/sectionK/YYYY-MM-DD/story-ID.html`` published so far.
Channel ``k`` of host ``h`` publishes as a Poisson process of rate ``rates[h][k]`` per minute,
shaped by a compressed daily cycle ``1 + amplitude · sin(2π (t − start) / day + phase_h)``.
Some articles are corrected ``correct_after`` seconds after publication (text and
``Last-Modified`` change). Hosts answer ``ETag`` / ``Last-Modified`` and 304 to conditional GETs,
except the host listed as ``no_validators``; the host listed as ``no_head`` answers HEAD 405.

Config keys: ``hosts`` (list of loopback addresses), ``rates`` (per host, a list of articles per
minute per channel), ``duration`` (seconds of schedule to draw), ``day`` (seconds of one
compressed day), ``amplitude`` (0..1), ``index_size``, ``initial`` (articles per channel already
published at start), ``correct_share`` (0..1), ``correct_after`` (seconds), ``no_validators``,
``no_head`` (a host or empty), ``seed``, ``article_delay`` (seconds each article answer is held
back: a window in which article requests are in flight, for crash tests; default 0).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import random
import sys
import time
from email.utils import formatdate
from pathlib import Path

from twisted.internet import reactor
from twisted.web import resource, server

UTC = dt.timezone.utc


def draw_schedule(cfg: dict, start: float) -> list[dict]:
    """Every article of the run: publication times by thinning a Poisson process with the daily
    cycle (Lewis & Shedler 1979)."""
    rng = random.Random(cfg.get("seed", 1))
    amp = float(cfg.get("amplitude", 0.5))
    day = float(cfg.get("day", 600.0))
    out: list[dict] = []
    next_id = 1
    for h, host in enumerate(cfg["hosts"]):
        phase = 2 * math.pi * h / max(len(cfg["hosts"]), 1)
        for k, per_minute in enumerate(cfg["rates"][h]):
            lam = per_minute / 60.0
            times = [start - 60.0 * (i + 1) for i in range(int(cfg.get("initial", 3)))]
            t = start
            peak = lam * (1 + amp)
            while peak > 0:
                t += rng.expovariate(peak)
                if t > start + float(cfg["duration"]):
                    break
                if rng.random() * (1 + amp) <= 1 + amp * math.sin(2 * math.pi * (t - start) / day + phase):
                    times.append(t)
            for p in sorted(times):
                corrected = (p + float(cfg.get("correct_after", 60.0))
                             if rng.random() < float(cfg.get("correct_share", 0.1)) else None)
                day_dir = dt.datetime.fromtimestamp(p, UTC).strftime("%Y-%m-%d")
                out.append({"id": next_id, "host": host, "channel": k, "published": p,
                            "corrected": corrected,
                            "path": f"/section{k}/{day_dir}/story-{next_id}.html"})
                next_id += 1
    return out


class Site(resource.Resource):
    isLeaf = True

    def __init__(self, host: str, cfg: dict, articles: list[dict], log) -> None:
        super().__init__()
        self.host = host
        self.cfg = cfg
        self.log = log
        self.channels: dict[int, list[dict]] = {}
        self.by_path: dict[str, dict] = {}
        for a in articles:
            if a["host"] == host:
                self.channels.setdefault(a["channel"], []).append(a)
                self.by_path[a["path"]] = a
        self.validators = host != cfg.get("no_validators")
        self.head_ok = host != cfg.get("no_head")

    def _page(self, path: str, now: float) -> tuple[bytes, float, list[int]] | None:
        """(body, last modified, listed ids) or None (404)."""
        head = '<html lang="en"><head><meta charset="utf-8"><title>{t}</title>{m}</head><body>'
        nav = "".join(f'<a href="/section{k}/">Section {k}</a> ' for k in sorted(self.channels))
        if path == "/":
            body = head.format(t=f"{self.host} news", m="") + f"<nav>{nav}</nav><p>Front page</p></body></html>"
            return body.encode(), 0.0, []
        if path.startswith("/section") and path.endswith("/") and path.count("/") == 2:
            try:
                k = int(path[len("/section"):-1])
            except ValueError:
                return None
            if k not in self.channels:
                return None
            live = [a for a in self.channels[k] if a["published"] <= now]
            newest = sorted(live, key=lambda a: a["published"], reverse=True)[: int(self.cfg.get("index_size", 20))]
            items = "".join(f'<li><a href="{a["path"]}">Story {a["id"]} of section {k}</a></li>' for a in newest)
            body = (head.format(t=f"Section {k}", m="") + f"<nav>{nav}</nav><h1>Section {k}</h1>"
                    f"<ul>{items}</ul></body></html>")
            modified = max((a["published"] for a in newest), default=0.0)
            return body.encode(), modified, [a["id"] for a in newest]
        a = self.by_path.get(path)
        if a is None or a["published"] > now:
            return None
        fixed = a["corrected"] is not None and a["corrected"] <= now
        iso = dt.datetime.fromtimestamp(a["published"], UTC).isoformat()
        title = f"Story {a['id']} of section {a['channel']} on {self.host}"
        paras = [f"Paragraph {i} of story {a['id']}: the council met on Tuesday to discuss the "
                 f"budget of the coming year, and the opposition announced fierce resistance." for i in range(5)]
        if fixed:
            paras[1] = f"Correction to story {a['id']}: an earlier version gave the wrong figure."
        meta = f'<meta property="article:published_time" content="{iso}">'
        body = (head.format(t=title, m=meta) + f"<nav>{nav}</nav><article><h1>{title}</h1>"
                + "".join(f"<p>{p}</p>" for p in paras) + "</article></body></html>")
        return body.encode(), (a["corrected"] if fixed else a["published"]), []

    def render(self, request):
        now = time.time()
        path = request.path.decode("latin-1")
        method = request.method.decode()
        listed: list[int] = []
        if path == "/robots.txt":
            status, body = 200, b"User-agent: *\nAllow: /\n"
            request.setHeader(b"content-type", b"text/plain")
        else:
            page = self._page(path, now)
            if page is None:
                status, body = 404, b"<html><body>not found</body></html>"
            else:
                body, modified, listed = page
                status = 200
                request.setHeader(b"content-type", b"text/html; charset=utf-8")
                if self.validators:
                    etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                    lm = formatdate(modified or 1.0e9, usegmt=True)
                    request.setHeader(b"etag", etag.encode())
                    request.setHeader(b"last-modified", lm.encode())
                    if request.getHeader(b"if-none-match") == etag.encode():
                        status, body = 304, b""
                if method == "HEAD" and not self.head_ok:
                    status, body = 405, b""
        self.log.write(json.dumps({"t": now, "host": self.host, "method": method, "path": path,
                                   "status": status, "listed": listed}) + "\n")
        self.log.flush()
        request.setResponseCode(status)
        if method == "HEAD" or status == 304:
            request.setHeader(b"content-length", str(len(body)).encode())
            return b""
        delay = float(self.cfg.get("article_delay", 0))
        if delay > 0 and path in self.by_path:
            def finish() -> None:
                if not request.finished and not request._disconnected:
                    request.write(body)
                    request.finish()
            reactor.callLater(delay, finish)
            return server.NOT_DONE_YET
        return body


def main() -> None:
    cfg = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    articles = draw_schedule(cfg, start)
    with open(out / "articles.jsonl", "w") as fh:
        for a in articles:
            fh.write(json.dumps(a) + "\n")
    log = open(out / "requests.jsonl", "a")
    urls = {}
    for host in cfg["hosts"]:
        port = reactor.listenTCP(0, server.Site(Site(host, cfg, articles, log)), interface=host)
        urls[host] = f"http://{host}:{port.getHost().port}/"
    print(json.dumps({"hosts": urls, "start": start}), flush=True)
    reactor.run()


if __name__ == "__main__":
    main()
