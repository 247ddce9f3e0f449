"""``newscrawl schedule``: ask scrapyd to crawl the sites of a seeds file that are due.

Run it from cron (every 15 minutes, say); each run:

1. reads the seeds file (one entry URL a line, as for ``scrapy crawl news -a seeds=``) and
   groups the URLs by site (registered domain, :func:`newscrawl.algorithms.sitedue.group_sites`);
2. asks scrapyd (``listjobs.json``) about each site's last job. A job still pending or running
   keeps its site busy. A finished job (or one scrapyd no longer knows, e.g. after a restart) is
   recorded as a visit of the site: the articles of the site first stored since the job was
   scheduled are counted (``changed`` = at least one), and the revisit estimator
   (:mod:`newscrawl.algorithms.revisit`, default ``auto``) gives the site's next due time;
3. schedules one ``news`` job per due site through ``schedule.json`` (``start_urls`` = the
   site's entry URLs), never-crawled sites first, then the most overdue.

Run state lives in the store's database, collection ``schedule`` (one document per site, see
:meth:`newscrawl.store.NewsStore.save_schedule`), next to the articles it is computed from, so
the scheduler can move to another host and ``mongosh`` shows it::

    {_id: "zeit.de", site, entry_urls: [...], next_due: <date>, job: {id, scheduled_at,
     entry_urls} | null, last_job: {id, scheduled_at, status, new_articles}, estimator,
     chosen, reason, history: [{time: <date>, changed, new_articles}, ...]}

Store and jobs must meet: with the embedded store (no ``--uri`` / ``MONGO_URI``) the absolute
data folder is passed to every job as ``setting=NEWSCRAWL_DATA_DIR=...`` (so scrapyd must run on
this host; a setting given to the job wins over a ``NEWSCRAWL_DATA_DIR`` in scrapyd's environment).
With a MongoDB URI, give scrapyd the same ``MONGO_URI`` in its environment (a URI passed with
``-s NEWSCRAWL_MONGO_URI=...`` would be listed by scrapyd's ``listjobs.json`` while pending).

Concurrent runs on one data folder are serialised by an flock on ``DATA_DIR/schedule.lock``;
a run that finds it held exits at once (status 0), so a slow run never doubles jobs.

Exit status: 0 when every due site was scheduled (or nothing was due), 1 when scrapyd refused
or could not be reached, 2 for usage errors (bad seeds file, unknown estimator).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import datetime as dt
import json
import logging
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib import error, parse, request

from newscrawl import defaults
from newscrawl.algorithms.revisit import ESTIMATORS, Estimator, Observation, choose_estimator
from newscrawl.algorithms.sitedue import due_sites, group_sites, next_due, run_observation, trim_history

logger = logging.getLogger(__name__)

#: The spider the jobs run.
SPIDER = "news"
#: Lock file in the data folder serialising schedule runs.
LOCK_NAME = "schedule.lock"

try:  # POSIX only; elsewhere runs are not serialised.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


# --- scrapyd's JSON API -------------------------------------------------------------------------


class ScrapydError(RuntimeError):
    """scrapyd could not be reached, answered an HTTP error, or answered ``status: error``."""


class ScrapydClient:
    """The few calls of scrapyd's JSON API that scheduling needs (stdlib HTTP, no threads).

    Args:
        url: scrapyd's base URL; ``http://user:password@host:6800/`` sends basic auth.
        timeout: per request (seconds).
    """

    def __init__(self, url: str, *, timeout: float = 30.0) -> None:
        parts = parse.urlsplit(url if "://" in url else "http://" + url)
        self._auth: str | None = None
        if parts.username is not None:
            token = f"{parse.unquote(parts.username)}:{parse.unquote(parts.password or '')}"
            self._auth = "Basic " + base64.b64encode(token.encode()).decode()
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        path = parts.path if parts.path.endswith("/") else parts.path + "/"
        self.url = parse.urlunsplit((parts.scheme, netloc, path, "", ""))
        self.timeout = timeout

    def call(self, endpoint: str, *, params: Mapping[str, str] | None = None,
             data: Sequence[tuple[str, str]] | None = None) -> dict[str, Any]:
        """GET (``params``) or POST (``data``, form-encoded, keys may repeat) one endpoint.

        Raises:
            ScrapydError: unreachable, an HTTP error, a body that is not JSON, or ``status``
                other than ``ok`` (the message quotes scrapyd's).
        """
        url = parse.urljoin(self.url, endpoint)
        if params:
            url += "?" + parse.urlencode(params)
        body = parse.urlencode(list(data)).encode() if data is not None else None
        req = request.Request(url, data=body)
        if self._auth:
            req.add_header("Authorization", self._auth)
        try:
            with request.urlopen(req, timeout=self.timeout) as response:
                raw = response.read()
        except error.HTTPError as exc:
            detail = exc.read()[:500].decode(errors="replace")
            raise ScrapydError(f"scrapyd {endpoint}: HTTP {exc.code} {detail}") from exc
        except (error.URLError, OSError) as exc:
            raise ScrapydError(f"scrapyd at {self.url} unreachable ({endpoint}): {exc}") from exc
        try:
            answer = json.loads(raw)
        except ValueError as exc:
            raise ScrapydError(f"scrapyd {endpoint}: not JSON: {raw[:200]!r}") from exc
        if not isinstance(answer, dict) or answer.get("status") != "ok":
            message = answer.get("message") if isinstance(answer, dict) else answer
            raise ScrapydError(f"scrapyd {endpoint}: {message}")
        return answer

    def daemon_status(self) -> dict[str, Any]:
        """``daemonstatus.json``: ``{pending, running, finished, node_name}``."""
        return self.call("daemonstatus.json")

    def job_states(self, project: str) -> dict[str, str]:
        """``{job id: "pending" | "running" | "finished"}`` of ``project``.

        Raises:
            ScrapydError: as :meth:`call`; also when the project was never deployed.
        """
        try:
            answer = self.call("listjobs.json", params={"project": project})
        except ScrapydError as exc:
            if "not found" in str(exc):
                raise ScrapydError(f"{exc} (deploy it first: scrapyd-deploy local)") from exc
            raise
        return {job["id"]: state for state in ("finished", "running", "pending")
                for job in answer.get(state, ())}

    def schedule(self, project: str, spider: str, *, args: Mapping[str, str] | None = None,
                 settings: Mapping[str, str] | None = None) -> str:
        """``schedule.json``: queue ``spider`` with spider ``args`` and Scrapy ``settings``.

        Returns:
            The job id.

        Raises:
            ScrapydError: as :meth:`call`.
        """
        data = [("project", project), ("spider", spider)]
        data += [("setting", f"{k}={v}") for k, v in (settings or {}).items()]
        data += [(k, str(v)) for k, v in (args or {}).items()]
        return str(self.call("schedule.json", data=data)["jobid"])


# --- one scheduling pass ------------------------------------------------------------------------


@dataclass
class Decision:
    """What a pass did for one site (``action``: ``scheduled``, ``due`` (dry run), ``busy``,
    ``not_due`` or ``error``); times are ISO 8601 UTC."""

    site: str
    action: str
    entry_urls: list[str]
    job: str | None = None
    next_due: str | None = None
    recorded: dict[str, Any] | None = None  # the run recorded in this pass, if any
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _to_dt(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


def _to_seconds(value: Any) -> float | None:
    """A stored time (datetime, naive = UTC, or number) as seconds since the epoch."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _iso(seconds: float | None) -> str | None:
    return None if seconds is None else _to_dt(seconds).isoformat(timespec="seconds")


def history_from_doc(doc: Mapping[str, Any]) -> list[Observation]:
    """The visits stored in a ``schedule`` document (junk entries are skipped)."""
    visits = []
    for entry in doc.get("history") or ():
        if not isinstance(entry, Mapping):
            continue
        t = _to_seconds(entry.get("time"))
        if t is not None:
            visits.append(run_observation(t, int(entry.get("new_articles") or 0)))
    return visits


def history_to_doc(history: Sequence[Observation]) -> list[dict[str, Any]]:
    return [{"time": _to_dt(o.time), "changed": o.changed, "new_articles": o.new_links or 0}
            for o in history]


def run_pass(
    sites: Mapping[str, list[str]],
    store: Any,
    client: ScrapydClient,
    *,
    now: float,
    project: str = defaults.NEWSCRAWL_SCRAPYD_PROJECT,
    estimator: str = defaults.NEWSCRAWL_SCHEDULE_ESTIMATOR,
    min_interval: float = defaults.NEWSCRAWL_SCHEDULE_MIN_INTERVAL,
    max_interval: float = defaults.NEWSCRAWL_SCHEDULE_MAX_INTERVAL,
    keep_history: int = defaults.NEWSCRAWL_SCHEDULE_HISTORY,
    job_args: Mapping[str, str] | None = None,
    job_settings: Mapping[str, str] | None = None,
    limit: int = 0,
    dry_run: bool = False,
) -> list[Decision]:
    """Record finished runs, then schedule the due sites; one :class:`Decision` per site.

    Args:
        sites: ``{site: entry URLs}`` (:func:`~newscrawl.algorithms.sitedue.group_sites`).
        store: a :class:`~newscrawl.store.NewsStore` (``load_schedule``, ``save_schedule``,
            ``count_new_articles``).
        now: the present (seconds since the epoch); stored as the job's ``scheduled_at``.
        estimator: a key of :data:`newscrawl.algorithms.revisit.ESTIMATORS`.
        min_interval, max_interval: bounds of a site's revisit interval (seconds).
        keep_history: finished runs kept per site.
        job_args, job_settings: extra spider arguments / Scrapy settings of every job.
        limit: schedule at most this many sites in this pass (0: no limit).
        dry_run: change nothing (no job, no write); due sites get the action ``due``.

    Raises:
        KeyError: unknown ``estimator``.
        ScrapydError: ``listjobs.json`` failed (a failed ``schedule.json`` is reported in the
            site's decision instead, and the pass goes on).
        pymongo.errors.PyMongoError: the store is unreachable.
    """
    model: Estimator = ESTIMATORS[estimator]
    states = store.load_schedule()
    jobs = client.job_states(project)
    decisions: dict[str, Decision] = {}
    busy: set[str] = set()
    due_at: dict[str, float | None] = {}
    for site, urls in sites.items():
        state = dict(states.get(site) or {})
        job = state.get("job")
        recorded = None
        if isinstance(job, Mapping) and job.get("id"):
            status = jobs.get(str(job["id"]), "unknown")
            if status in ("pending", "running"):
                busy.add(site)
                decisions[site] = Decision(site, "busy", urls, job=str(job["id"]),
                                           extra={"status": status})
                continue
            # finished, or forgotten by scrapyd (restart): the run is over either way
            scheduled_at = _to_seconds(job.get("scheduled_at")) or now
            new = store.count_new_articles(site, _to_dt(scheduled_at))
            history = trim_history([*history_from_doc(state), run_observation(scheduled_at, new)],
                                   keep_history)
            due = next_due(history, estimator=model, min_interval=min_interval,
                           max_interval=max_interval)
            recorded = {"job": str(job["id"]), "status": status, "new_articles": new,
                        "scheduled_at": _iso(scheduled_at)}
            if status == "unknown":
                logger.warning("%s: scrapyd does not know job %s any more; counted as finished",
                               site, job["id"])
            state.update(history=history_to_doc(history), job=None, estimator=estimator,
                         next_due=_to_dt(due) if due is not None else None,
                         last_job={**dict(job), "status": status, "new_articles": new})
            if estimator == "auto":
                state["chosen"], state["reason"] = choose_estimator(history)
            if not dry_run:
                store.save_schedule(site, state)
            states[site] = state
        due_at[site] = _to_seconds(state.get("next_due"))
        decisions[site] = Decision(site, "not_due", urls, next_due=_iso(due_at[site]),
                                   recorded=recorded)
    chosen = due_sites(list(sites), due_at, now, busy=busy)
    if limit > 0:
        chosen = chosen[:limit]
    for site in chosen:
        decision = decisions[site]
        urls = sites[site]
        if dry_run:
            decision.action = "due"
            continue
        try:
            job_id = client.schedule(project, SPIDER, settings=job_settings,
                                     args={"start_urls": ",".join(urls), **(job_args or {})})
        except ScrapydError as exc:
            decision.action, decision.error = "error", str(exc)
            logger.error("%s: not scheduled: %s", site, exc)
            continue
        state = dict(states.get(site) or {})
        state.update(entry_urls=urls, estimator=state.get("estimator", estimator),
                     job={"id": job_id, "scheduled_at": _to_dt(now), "entry_urls": urls})
        store.save_schedule(site, state)
        decision.action, decision.job = "scheduled", job_id
    return [decisions[site] for site in sites]


# --- command line -------------------------------------------------------------------------------


@contextlib.contextmanager
def run_lock(data_dir: Path) -> Iterator[bool]:
    """Hold ``DATA_DIR/schedule.lock`` without waiting; yield False when another run holds it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover
        yield True
        return
    with open(data_dir / LOCK_NAME, "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _pairs(values: Sequence[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise SystemExit(f"newscrawl schedule: {flag} needs NAME=VALUE, got {value!r}")
        out[key] = val
    return out


def command_settings() -> Any:
    """The settings of the command: every default of :mod:`newscrawl.defaults` (``default``
    priority) under the project's :mod:`newscrawl.settings`; the options' defaults are read from
    them by full name (``NEWSCRAWL_SCRAPYD_URL`` …), as a crawl reads its settings."""
    from scrapy.settings import Settings

    import newscrawl.settings as project
    from newscrawl.addon import default_settings

    settings = Settings(default_settings(), priority="default")
    settings.setmodule(project, priority="project")
    return settings


def build_parser(prog: str = "newscrawl schedule") -> argparse.ArgumentParser:
    s = command_settings()
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Ask scrapyd to crawl the sites of a seeds file that the revisit estimator "
                    "says are due (one `news` job per site).",
        epilog="cron: */15 * * * * cd /srv/newscrawl && .venv/bin/python -m newscrawl schedule "
               "--seeds seeds.txt --scrapyd http://127.0.0.1:6800/ >> data/schedule.log 2>&1")
    parser.add_argument("--seeds", required=True, help="seeds file: one entry URL a line, # comments")
    parser.add_argument("--scrapyd", default=s.get("NEWSCRAWL_SCRAPYD_URL"),
                        help="scrapyd base URL (default %(default)s; user:pass@ for basic auth)")
    parser.add_argument("--project", default=s.get("NEWSCRAWL_SCRAPYD_PROJECT"),
                        help="scrapyd project (default %(default)s)")
    parser.add_argument("--uri", default="", help="MongoDB URI (default: env NEWSCRAWL_MONGO_URI, "
                        "MONGO_URI, else the embedded store of the data folder)")
    parser.add_argument("--database", default=s.get("NEWSCRAWL_MONGO_DATABASE"))
    parser.add_argument("--data-dir", default=None, help="embedded store folder (default: env NEWSCRAWL_DATA_DIR, "
                        "else ./data); passed to the jobs as an absolute path")
    parser.add_argument("--estimator", default=s.get("NEWSCRAWL_SCHEDULE_ESTIMATOR"),
                        choices=sorted(ESTIMATORS), help="revisit estimator (default %(default)s)")
    parser.add_argument("--min-interval", type=float,
                        default=s.getfloat("NEWSCRAWL_SCHEDULE_MIN_INTERVAL"),
                        help="shortest revisit interval of a site, seconds (default %(default)s)")
    parser.add_argument("--max-interval", type=float,
                        default=s.getfloat("NEWSCRAWL_SCHEDULE_MAX_INTERVAL"),
                        help="longest revisit interval of a site, seconds (default %(default)s)")
    parser.add_argument("--history", type=int, default=s.getint("NEWSCRAWL_SCHEDULE_HISTORY"),
                        help="finished runs kept per site (default %(default)s)")
    parser.add_argument("--limit", type=int, default=0, help="schedule at most N sites per run")
    parser.add_argument("-a", dest="job_args", action="append", default=[], metavar="NAME=VALUE",
                        help="spider argument of every job (e.g. -a depth=1)")
    parser.add_argument("-s", dest="job_settings", action="append", default=[], metavar="NAME=VALUE",
                        help="Scrapy setting of every job (e.g. -s DOWNLOAD_DELAY=1)")
    parser.add_argument("--dry-run", action="store_true", help="show what is due; change nothing")
    parser.add_argument("--json", action="store_true", help="print the decisions as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    return parser


def _span(seconds: float) -> str:
    """A duration for people: ``42 min``, ``5.0 h``, ``3.2 d``."""
    if seconds < 3600:
        return f"{max(seconds, 0) / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def _print_table(decisions: list[Decision], now: float) -> None:
    for d in decisions:
        if d.action in ("scheduled", "busy"):
            what = f"job {d.job}"
        elif d.action == "error":
            what = d.error or ""
        elif d.next_due:
            due = _to_seconds(dt.datetime.fromisoformat(d.next_due)) or now
            what = f"next due {d.next_due} (in {_span(due - now)})" if due > now \
                else f"due since {d.next_due}"
        else:
            what = "never crawled"
        if d.recorded:
            what += f"; last run: {d.recorded['new_articles']} new article(s)"
        print(f"{d.site:<32} {d.action:<9} {what}")
    counts = {action: sum(d.action == action for d in decisions)
              for action in ("scheduled", "due", "busy", "not_due", "error")}
    print(f"{len(decisions)} site(s): " + ", ".join(f"{n} {a}" for a, n in counts.items() if n))


def main(argv: list[str] | None = None, prog: str = "newscrawl schedule") -> int:
    """Command line: see :func:`build_parser` and the module docstring. Returns the exit status."""
    args = build_parser(prog).parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s [%(name)s] %(levelname)s: %(message)s")
    from newscrawl.embedded import resolve_data_dir, resolve_mongo_uri
    from newscrawl.seeds import read_entry_urls  # the one parser of seeds files
    from newscrawl.store import NewsStore

    try:
        sites = group_sites(read_entry_urls(seeds=args.seeds))
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if not 0 < args.min_interval <= args.max_interval:
        print(f"{prog}: need 0 < --min-interval <= --max-interval", file=sys.stderr)
        return 2
    job_args = _pairs(args.job_args, "-a")
    job_settings = _pairs(args.job_settings, "-s")
    data_dir = Path(resolve_data_dir(args.data_dir)).expanduser().absolute()
    client = ScrapydClient(args.scrapyd)
    with run_lock(data_dir) as locked:
        if not locked:
            print(f"{prog}: another run holds {data_dir / LOCK_NAME}; nothing to do")
            return 0
        uri, embedded = resolve_mongo_uri(args.uri, data_dir)
        if embedded is not None:
            job_settings.setdefault("NEWSCRAWL_DATA_DIR", str(data_dir))
        now = time.time()
        try:
            with NewsStore.connect(uri, args.database) as store:
                decisions = run_pass(
                    sites, store, client, now=now, project=args.project, estimator=args.estimator,
                    min_interval=args.min_interval, max_interval=args.max_interval,
                    keep_history=args.history, job_args=job_args, job_settings=job_settings,
                    limit=args.limit, dry_run=args.dry_run)
        except ScrapydError as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
            return 1
        finally:
            if embedded is not None:
                embedded.stop()
    if args.json:
        print(json.dumps([asdict(d) for d in decisions], indent=2))
    else:
        _print_table(decisions, now)
    return 1 if any(d.action == "error" for d in decisions) else 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m newscrawl.schedule"))
