"""Discrete-event simulation of news revisit policies under a request budget (no HTTP).

Run: ``.venv/bin/python benchmarks/revisit_sim.py`` (``--help`` for scale options; ``--quick``:
80 channels on 8 hosts over 3 days at 150 / 300 / 600 requests/hour, the regression-guard size of
``make bench``).

The world (deterministic from ``--seed``)
-----------------------------------------
* ``--channels`` channel (index) pages on ``--hosts`` hosts. Each channel publishes articles as
  a non-homogeneous Poisson process: a mean rate drawn log-uniformly from 1 to 200 articles/day,
  times a newsroom daily profile (quiet at night, busy mornings) in the host's local time; hosts
  sit in UTC+8, UTC+1 or UTC−5, so profiles are out of phase across hosts.
* A channel page lists only its newest 20 articles; an article drops off when the 20th newer one
  appears.
* Each article gets 0–3 corrections (P = .45/.30/.15/.10), at offsets drawn from an exponential
  with mean 1.5 h truncated at 12 h after publication.
* Validators per host: ``good`` (ETag/Last-Modified change exactly when the page does),
  ``absent`` (none), ``stale`` (validators refreshed only every 6 h, so a conditional request is
  answered 304/"unchanged" while the page did change), ``always`` (Last-Modified = now, a new
  ETag on every response).

What is measured
----------------
* **Discovery latency**: time from an article's publication to the first channel visit whose
  response showed it. Median and p90 over articles published after a one-day warm-up and at
  least one day before the end (every policy gets the same warm-up).
* **Missed**: articles pushed off their list (past the newest 20) before any visit saw them.
* **Capture latency**: for articles with at least one correction, time from the *last*
  correction to the first fetch that retrieved the corrected text (the discovery fetch counts
  if it came after the last correction). Articles are tracked for 24 h after discovery; a final
  version not fetched by then counts as never captured (``inf`` in the percentiles, and the
  ``capt%`` column gives the share captured).
* **Requests/bytes**: every HTTP request a policy made. ``ch req/h`` = channel-page requests per
  hour (what the budget limits), ``ch 304`` = those answered 304 Not Modified to a conditional
  GET (headers only); ``art GET`` = article GETs (first fetches + re-check fetches), ``art HEAD``
  = HEAD probes of articles; ``GB`` = bytes of all responses (channel pages 60-250 kB and
  articles 30-120 kB by host, HEAD 450 B, 304 350 B).

The budget
----------
The budget (600 / 1200 / 2400 requests/hour) limits *channel-page* requests: the fetcher has one
slot every ``3600/B`` s and each slot is one HTTP request. Article fetches — the first GET of
every discovered article and the correction re-checks — are outside this budget: every policy
must fetch each article it discovers once, and the re-checks are counted and reported (``art
GET``, ``art chk``) so their cost is visible. Policies that schedule only due pages (Nutch,
halve/double) leave slots idle when nothing is due, as those schedulers do; newscrawl (as its
monitor loop does) and the oracles split the whole budget, fetch the earliest-due channel in
every slot (even a little early) and idle only when every channel was fetched less than the
minimum interval ago; round-robin uses every slot. ``--fill-idle`` makes Nutch and halve/double
fetch the earliest-due page in every slot instead (work-conserving); that does not help them:
early visits find pages unchanged, so Nutch's intervals inflate and its median gets several times
worse, and halve/double gains only at 2400 req/h.

Every HTTP request takes a slot, HEAD probes included (the crawler's budget middleware does not
count a HEAD against ``-a budget``, but it is a request to the site all the same): a channel
check that needs a HEAD and then the GET takes two slots.

The policies
------------
* ``round-robin``: channels in a fixed order, one per slot; articles re-checked hourly.
* ``nutch``: Nutch ``AdaptiveFetchSchedule`` (×1.4 unchanged, ×0.8 changed, sync-delta 0.3,
  initial 1 h) on every page; the most overdue due page is fetched at each slot.
* ``halve/double``: Risvik & Michelsen's proximity rule (×2 / ×½, initial 1 h) on every page.
* ``newscrawl``: what the crawler runs, with the crawler's own objects. Every channel is a
  crawl-state record of :mod:`newscrawl.algorithms.revisitplan`, updated by
  :func:`~newscrawl.algorithms.revisitplan.record_visit` with the run's
  :class:`~newscrawl.algorithms.channelsched.ChannelScheduler` (``RevisitConfig.channel_scheduler``
  with ``channel_rate`` = the budget, as ``NEWSCRAWL_REVISIT_CHANNEL_RATE`` / a monitor's rate):
  rates of new links learned from the visits, the host's hour-of-day profile, visits ∝ √rate
  within the budget, due times solved over the profile. Every 5 minutes the scheduler re-plans
  (:meth:`~newscrawl.algorithms.channelsched.ChannelScheduler.plan`) and each slot fetches what
  :meth:`~newscrawl.algorithms.channelsched.ChannelScheduler.pick` answers (mirrored with numpy
  by :class:`DueIndex`): the loop of a long-running monitor; a batch re-run fetches the channels
  whose due time (the same scheduler's) has passed. A known page is checked as
  ``middlewares/headprobe.py`` checks it: per host a
  :class:`~newscrawl.algorithms.changedetect.HostPolicy` (HEAD, then conditional GET, then plain
  GET and fingerprint; a channel page skips the HEAD once the host is learned, and is fetched
  unconditionally when the scheduler finds a run of "unchanged" answers improbable,
  :meth:`~newscrawl.algorithms.channelsched.ChannelScheduler.verify_due`; a 304 is fetched
  again in full, in the next slot, when the host's verification draw picks it —
  :class:`~newscrawl.algorithms.changedetect.VerificationDraws` at the crawler's
  ``NEWSCRAWL_HEADPROBE_VERIFY_START`` / ``_FLOOR``, as ``middlewares/headprobe.py`` does — and
  :func:`~newscrawl.algorithms.changedetect.verify_outcome` teaches the host, so validators that
  said "unchanged" while the text changed are distrusted), validators compared by :func:`~newscrawl.algorithms.changedetect.compare_validators` /
  :func:`~newscrawl.algorithms.changedetect.validators_agree`, the host taught by
  :func:`~newscrawl.algorithms.changedetect.learn_host` with the events
  ``middlewares/revisit.py`` derives (the one part of the crawl path re-stated here: the mapping
  of an answer to events, a few lines). Article checks use the host's mode at their time as the
  channel visits taught it (host learning from article checks is left out).
* ``oracle``: knows every channel's true instantaneous rate λᵢ(t) and splits the budget
  ∝ √λᵢ(t) (same clamps); it fetches each article exactly at its corrections.
* ``mean-oracle``: the same on each channel's true *mean* rate — the √λ policy of Cho &
  Garcia-Molina with exact rates but no hour of day.

The sites have a daily cycle (``LOCAL_PROFILE``, hosts in three time zones), so
``mean-oracle`` shows what learning the hour-of-day profile is worth.

All policies use the same ``[min, max]`` interval clamp (60 s, 1 day).

Targets (from the issue that introduced this benchmark), printed in the format of
``benchmarks/_targets.py``: ``newscrawl``'s median discovery latency ≤ 1.05× the oracle's at
every budget, below the better of round-robin and Nutch at every budget and ≤ 0.75× it at the
two higher budgets, no missed article at the middle budget. Last lines: ``worst
newscrawl/oracle median discovery ratio: X.XX`` and the same against ``mean-oracle``.
"""

from __future__ import annotations

import argparse
import bisect
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from newscrawl.algorithms.channelsched import ChannelScheduler, sqrt_allocation  # noqa: E402
from benchmarks._targets import target  # noqa: E402
from newscrawl.algorithms.changedetect import (  # noqa: E402
    CONDITIONAL,
    HEAD,
    UNCHANGED,
    HostPolicy,
    Validators,
    Verification,
    VerificationDraws,
    compare_validators,
    learn_host,
    validators_agree,
    verify_outcome,
)
from newscrawl.algorithms.revisit import (  # noqa: E402
    HOW_CONDITIONAL,
    HOW_FINGERPRINT,
    HOW_FIRST,
    HOW_HEAD,
    CorrectionDecay,
    HalveDouble,
    NutchAdaptive,
)
from newscrawl.algorithms.revisitplan import (  # noqa: E402
    RevisitConfig,
    new_record,
    record_visit,
)
from newscrawl.defaults import (  # noqa: E402
    NEWSCRAWL_HEADPROBE_STRIKES,
    NEWSCRAWL_HEADPROBE_VERIFY_FLOOR,
    NEWSCRAWL_HEADPROBE_VERIFY_START,
    NEWSCRAWL_HEADPROBE_VERIFY_TRUST_AFTER,
    NEWSCRAWL_REVISIT_HISTORY,
    NEWSCRAWL_REVISIT_MISS_INTERVAL,
)

HOUR = 3600.0
DAY = 86400.0

#: Newsroom publishing profile by local hour (normalised to mean 1 below).
LOCAL_PROFILE = np.array(
    [0.25, 0.15, 0.1, 0.1, 0.1, 0.2, 0.4, 0.8, 1.3, 1.6, 1.7, 1.6,
     1.4, 1.4, 1.5, 1.5, 1.4, 1.3, 1.2, 1.2, 1.1, 0.9, 0.6, 0.4]
)
LOCAL_PROFILE = LOCAL_PROFILE / LOCAL_PROFILE.mean()
TZ_CHOICES = (8, 1, -5)
TZ_WEIGHTS = (0.6, 0.2, 0.2)
VALIDATOR_MODES = ("good", "absent", "stale", "always")
VALIDATOR_SHARES = (0.55, 0.2, 0.125, 0.125)
STALE_PERIOD = 6 * HOUR
CORRECTION_P = (0.45, 0.30, 0.15, 0.10)
CORRECTION_MEAN = 1.5 * HOUR
CORRECTION_MAX = 12 * HOUR
HEAD_BYTES = 450
NOT_MODIFIED_BYTES = 350

#: ``newscrawl`` is the crawl path (the channel scheduler the crawler imports); the oracles know
#: the true rates, ``mean-oracle`` only their daily means (no hour of day).
POLICIES = ("round-robin", "nutch", "halve/double", "newscrawl", "mean-oracle", "oracle")
ORACLES = ("mean-oracle", "oracle")


@dataclass(frozen=True)
class SimConfig:
    """The simulated sites and the revisit policies' bounds."""

    #: channel-page requests per hour each policy may send, one simulation per budget
    budgets: tuple[int, ...] = (600, 1200, 2400)
    #: channel pages, on this many hosts; each index lists its newest ``index_size`` articles
    channels: int = 320
    hosts: int = 32
    index_size: int = 20
    #: simulated span, and the spans left out of the figures at its start and end (days)
    days: float = 7.0
    warmup_days: float = 1.0
    tail_days: float = 1.0
    #: publishing rates of the channels, log-uniform between these (articles/day)
    rate_min: float = 1.0
    rate_max: float = 200.0
    #: revisit interval bounds of every policy (seconds)
    min_interval: float = 60.0
    max_interval: float = DAY
    initial_interval: float = HOUR
    article_window: float = DAY  # articles are re-checked for this long after discovery
    article_max_interval: float = DAY
    realloc: float = 300.0  # seconds between budget re-allocations (newscrawl, oracles)
    fill_idle: bool = False  # Nutch and halve/double also fetch the earliest-due page when none is due
    seed: int = 20240601


# --- the world ----------------------------------------------------------------------------


@dataclass
class World:
    cfg: SimConfig
    host_of: np.ndarray  # channel -> host
    tz: np.ndarray  # host -> UTC offset hours
    mode: list[str]  # host -> validator mode
    rate: np.ndarray  # channel -> mean articles/second
    pubs: list[list[float]]  # channel -> sorted publication times
    offset: np.ndarray  # channel -> index of its first article in the global arrays
    pub: np.ndarray  # article -> publication time
    chan: np.ndarray  # article -> channel
    corrections: list[tuple[float, ...]]  # article -> absolute correction times
    page_bytes: np.ndarray  # host -> channel page size
    article_bytes: np.ndarray  # host -> article size
    profile: np.ndarray = field(default_factory=lambda: LOCAL_PROFILE)

    def true_rate(self, t: float) -> np.ndarray:
        """Every channel's instantaneous rate at ``t`` (articles/second)."""
        hours = ((t / HOUR + self.tz[self.host_of]) % 24).astype(int)
        return self.rate * self.profile[hours]


def make_world(cfg: SimConfig) -> World:
    rng = np.random.default_rng(cfg.seed)
    n, h = cfg.channels, cfg.hosts
    host_of = np.concatenate([np.arange(h), rng.integers(0, h, n - h)]) if n >= h else np.arange(n) % h
    rng.shuffle(host_of)
    tz = rng.choice(TZ_CHOICES, size=h, p=TZ_WEIGHTS)
    counts = np.floor(np.array(VALIDATOR_SHARES) * h).astype(int)
    counts[0] += h - counts.sum()
    mode = [m for m, c in zip(VALIDATOR_MODES, counts) for _ in range(c)]
    rng.shuffle(mode)
    per_day = np.exp(rng.uniform(math.log(cfg.rate_min), math.log(cfg.rate_max), n))
    rate = per_day / DAY
    horizon = cfg.days * DAY
    pmax = LOCAL_PROFILE.max()
    pubs: list[list[float]] = []
    for i in range(n):
        k = rng.poisson(rate[i] * pmax * horizon)
        cand = np.sort(rng.uniform(0.0, horizon, k))
        local = ((cand / HOUR + tz[host_of[i]]) % 24).astype(int)
        keep = rng.uniform(0.0, pmax, k) < LOCAL_PROFILE[local]
        pubs.append(cand[keep].tolist())
    sizes = np.array([len(p) for p in pubs])
    offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    pub = np.concatenate([np.array(p) for p in pubs]) if sizes.sum() else np.zeros(0)
    chan = np.repeat(np.arange(n), sizes)
    ncorr = rng.choice(len(CORRECTION_P), size=len(pub), p=CORRECTION_P)
    # truncated exponential offsets by inverse CDF
    cap = 1.0 - math.exp(-CORRECTION_MAX / CORRECTION_MEAN)
    corrections: list[tuple[float, ...]] = []
    for a in range(len(pub)):
        k = int(ncorr[a])
        if k == 0:
            corrections.append(())
            continue
        u = rng.uniform(0.0, cap, k)
        offs = np.sort(-CORRECTION_MEAN * np.log1p(-u))
        corrections.append(tuple(float(pub[a] + o) for o in offs))
    page_bytes = rng.integers(60_000, 250_000, h)
    article_bytes = rng.integers(30_000, 120_000, h)
    return World(cfg, host_of, tz, mode, rate, pubs, offset, pub, chan, corrections, page_bytes, article_bytes)


def server_validator(mode: str, changes: list[float], t: float):
    """The validator a server sends at ``t`` for a page whose versions change at ``changes``."""
    if mode == "good":
        return bisect.bisect_right(changes, t)
    if mode == "stale":
        return bisect.bisect_right(changes, math.floor(t / STALE_PERIOD) * STALE_PERIOD)
    if mode == "always":
        return ("t", t)
    return None


# --- channel phase ------------------------------------------------------------------------


@dataclass
class ChannelResult:
    disc: np.ndarray  # article -> discovery time (nan = not yet)
    missed: np.ndarray  # article -> dropped before seen
    get_full: int = 0
    not_modified: int = 0
    heads: int = 0
    bytes: float = 0.0
    slots_used: int = 0
    host_modes: list[list[tuple[float, str]]] | None = None  # newscrawl: host -> (time, mode)


class Lists:
    """What the channel pages show: a full response of channel ``i`` at ``t`` marks the articles
    it lists as discovered and those that scrolled off unseen as missed (in ``res``)."""

    def __init__(self, world: World, res: ChannelResult) -> None:
        self.pubs = world.pubs
        self.offset = world.offset
        self.size = world.cfg.index_size
        self.res = res
        self.seen = [0] * world.cfg.channels  # articles of the channel seen at the last full view

    def view(self, i: int, t: float) -> tuple[int, bool, int]:
        """A full response of channel i at t: returns (new links, changed, listed)."""
        c = bisect.bisect_right(self.pubs[i], t)
        s = self.seen[i]
        first_visible = max(c - self.size, 0)
        lo = max(s, first_visible)
        o = self.offset[i]
        if first_visible > s:
            self.res.missed[o + s:o + first_visible] = True
        if c > lo:
            self.res.disc[o + lo:o + c] = t
        self.seen[i] = c
        return c - lo, c != s, min(c, self.size)


def _new_result(world: World) -> ChannelResult:
    return ChannelResult(disc=np.full(len(world.pub), np.nan), missed=np.zeros(len(world.pub), bool))


def simulate_channels(world: World, policy: str, budget: int) -> ChannelResult:
    if policy == "newscrawl":
        return simulate_channels_crawlpath(world, budget)
    cfg = world.cfg
    n = cfg.channels
    L = cfg.index_size
    horizon = cfg.days * DAY
    dt = HOUR / budget
    pubs = world.pubs
    host_of = world.host_of.tolist()
    page_bytes = world.page_bytes.tolist()
    res = _new_result(world)
    lists = Lists(world, res)
    view = lists.view
    seen = lists.seen
    lo_i, hi_i = cfg.min_interval, cfg.max_interval

    due = np.zeros(n)
    if policy == "round-robin":
        order = list(range(n))
        k = 0
        t = 0.0
        while t < horizon:
            i = order[k % n]
            k += 1
            view(i, t)
            res.get_full += 1
            res.bytes += page_bytes[host_of[i]]
            t += dt
        res.slots_used = k
        return res

    if policy in ("nutch", "halve/double"):
        nutch = NutchAdaptive(initial_interval=cfg.initial_interval)
        hd = HalveDouble(initial_interval=cfg.initial_interval)
        interval = [cfg.initial_interval] * n
        modified = [0.0] * n
        visited = [False] * n
        t = 0.0
        used = 0
        while t < horizon:
            i = int(np.argmin(due))
            if due[i] <= t or cfg.fill_idle:
                used += 1
                _, changed, _ = view(i, t)
                res.get_full += 1
                res.bytes += page_bytes[host_of[i]]
                if not visited[i]:
                    visited[i] = True
                    modified[i] = t
                    due[i] = t + interval[i]
                elif policy == "nutch":
                    interval[i], modified[i], due[i] = nutch.step(
                        interval[i], modified[i], t, changed, min_interval=lo_i, max_interval=hi_i)
                else:
                    interval[i] = hd.step(interval[i], changed, min_interval=lo_i, max_interval=hi_i)
                    due[i] = t + interval[i]
            t += dt
        res.slots_used = used
        return res

    # EDF on allocated intervals of the true rates (now, or their daily means)
    last = np.full(n, -np.inf)
    ivals = np.zeros(n)
    next_alloc = 0.0
    t = 0.0
    used = 0
    due = np.zeros(n)
    assert policy in ORACLES, policy
    while t < horizon:
        if t >= next_alloc:
            r = world.true_rate(t) if policy == "oracle" else world.rate
            alloc = sqrt_allocation(dict(enumerate(r.tolist())), budget / HOUR,
                                    min_interval=lo_i, max_interval=hi_i)
            ivals = np.array([alloc[j] for j in range(n)])
            due = last + ivals
            next_alloc = t + cfg.realloc
        i = int(np.argmin(due))
        if t - last[i] < lo_i:  # nothing may be fetched yet: leave the slot idle
            t += dt
            continue
        used += 1
        view(i, t)
        last[i] = t
        due[i] = t + ivals[i]
        res.get_full += 1
        res.bytes += page_bytes[host_of[i]]
        t += dt
    res.slots_used = used
    return res


# --- channel phase: the crawl path ----------------------------------------------------------


def http_validators(mode: str, changes: list[float] | tuple[float, ...], t: float,
                    size: int) -> Validators:
    """The ``ETag`` / ``Content-Length`` an answer at ``t`` carries, as the crawler reads them."""
    token = server_validator(mode, list(changes), t)
    if token is None:
        return Validators()
    return Validators(etag=f'"{token}"', content_length=int(size))


def revisit_config(cfg: SimConfig, *, max_interval: float | None = None,
                   channel_rate: float = 0.0) -> RevisitConfig:
    """The crawler's revisit settings with the simulation's common clamp (and the channel
    budget, visits/hour, of the channel scheduler)."""
    return RevisitConfig(min_interval=cfg.min_interval,
                         max_interval=cfg.max_interval if max_interval is None else max_interval,
                         miss_interval=NEWSCRAWL_REVISIT_MISS_INTERVAL,
                         history=NEWSCRAWL_REVISIT_HISTORY, channel_rate=channel_rate)


def answer_events(how: str, changed: bool, head: Validators | None, get: Validators) -> list[str]:
    """The host events ``middlewares/revisit.py`` derives from a GET of a known page."""
    events = []
    if head is not None and not validators_agree(head, get):
        events.append("disagree")
    if how == HOW_HEAD:
        events.append("true_change" if changed else "false_change_head")
    elif how == HOW_CONDITIONAL:
        events.append("true_change" if changed else "false_change_conditional")
    return events


class DueIndex:
    """The channel scheduler's due times of every channel as arrays, for one pick per slot.

    :meth:`ChannelScheduler.pick <newscrawl.algorithms.channelsched.ChannelScheduler.pick>` walks
    every channel; here the same answer comes from numpy: ``due[i]`` is
    :meth:`~newscrawl.algorithms.channelsched.ChannelScheduler.next_due` of channel ``i``,
    refreshed after each of its visits and after each re-plan, and :meth:`pick` is the earliest
    due channel not visited within the minimum interval (``tests/test_revisit_sim.py`` checks
    that both agree).
    """

    def __init__(self, sched: ChannelScheduler, keys: list[str]) -> None:
        self.sched = sched
        self.keys = keys
        n = len(keys)
        self.due = np.full(n, -np.inf)
        self.last = np.full(n, -np.inf)
        self.planned_at: float | None = None

    def update(self, i: int, t: float) -> None:
        self.last[i] = t
        self.due[i] = self.sched.next_due(self.keys[i], t)

    def refresh(self, t: float) -> None:
        """After a re-plan: every visited channel's due time from the new plan."""
        if self.sched.planned_at == self.planned_at:
            return
        self.planned_at = self.sched.planned_at
        for i, k in enumerate(self.keys):
            if self.last[i] > -np.inf:
                self.due[i] = self.sched.next_due(k, t)

    def pick(self, t: float) -> int | None:
        ok = t - self.last >= self.sched.min_interval
        if not ok.any():
            return None
        due = np.where(ok, self.due, np.inf)
        return int(np.argmin(due))


def simulate_channels_crawlpath(world: World, budget: int) -> ChannelResult:
    """Channel visits as the crawler makes them (policy ``newscrawl``; module docstring)."""
    cfg = world.cfg
    n = cfg.channels
    horizon = cfg.days * DAY
    dt = HOUR / budget
    rcfg = revisit_config(cfg, channel_rate=budget)
    sched = rcfg.channel_scheduler()
    host_of = world.host_of.tolist()
    page_bytes = world.page_bytes.tolist()
    modes = world.mode
    res = _new_result(world)
    lists = Lists(world, res)
    hosts = [HostPolicy() for _ in range(cfg.hosts)]
    res.host_modes = [[(0.0, HEAD)] for _ in range(cfg.hosts)]
    records = [new_record(str(i), f"http://host{host_of[i]}.example/channel/{i:05d}", now=0.0,
                          role="node", host=f"host{host_of[i]}.example") for i in range(n)]
    stored: list[Validators] = [Validators()] * n  # validators of the last full answer
    index = DueIndex(sched, [r["fp"] for r in records])
    # "Trust, but verify" of 304 answers as middlewares/headprobe.py draws it (the defaults).
    draws = VerificationDraws(Verification(NEWSCRAWL_HEADPROBE_VERIFY_START,
                                           NEWSCRAWL_HEADPROBE_VERIFY_FLOOR,
                                           trust_after=NEWSCRAWL_HEADPROBE_VERIFY_TRUST_AFTER))

    def learn(h: int, event: str, t: float) -> None:
        before = hosts[h]
        hosts[h] = learn_host(before, event, strikes=NEWSCRAWL_HEADPROBE_STRIKES)
        if hosts[h].mode != before.mode:
            res.host_modes[h].append((t, hosts[h].mode))

    def visited(i: int, t: float, **visit: object) -> None:
        """Record a visit of channel ``i`` at ``t`` as the crawl state does."""
        records[i] = record_visit(records[i], now=t, cfg=rcfg, scheduler=sched, **visit)
        index.update(i, t)

    next_plan = 0.0
    t = 0.0
    used = 0
    while t < horizon:
        if t >= next_plan:  # what the monitor loop does every few minutes
            sched.plan(t)
            index.refresh(t)
            next_plan = t + cfg.realloc
        picked = index.pick(t)
        if picked is None:  # every channel was visited within the minimum interval
            t += dt
            continue
        i = picked
        h = host_of[i]
        size = page_bytes[h]
        pubs = world.pubs[i]
        head: Validators | None = None
        verify: Validators | None = None  # the stored validators a verification GET checks
        changed: bool | None = None
        if records[i]["last_visit"] is None:  # first visit: a plain GET
            how = HOW_FIRST
        else:
            policy = hosts[h]
            if not stored[i].any or sched.verify_due(str(i), t):
                how = HOW_FINGERPRINT
            elif policy.mode == HEAD and not policy.learned:  # channels: the first HEAD only
                head = http_validators(modes[h], pubs, t, size)
                used += 1
                res.heads += 1
                res.bytes += HEAD_BYTES
                learn(h, "head_ok", t)
                if compare_validators(stored[i], head) == UNCHANGED:
                    visited(i, t, status=200, how=HOW_HEAD, changed=False)
                    t += dt
                    continue
                how = HOW_HEAD
                t += dt  # the GET takes the next slot
            elif policy.mode in (HEAD, CONDITIONAL) and stored[i].conditional:
                how = HOW_CONDITIONAL
                if compare_validators(stored[i], http_validators(modes[h], pubs, t, size)) == UNCHANGED:
                    used += 1
                    res.not_modified += 1
                    res.bytes += NOT_MODIFIED_BYTES
                    learn(h, "not_modified", t)
                    if not draws.sample(str(h), hosts[h], records[i]["fp"], int(records[i]["visits"])):
                        visited(i, t, status=304, how=how, changed=False)
                        t += dt
                        continue
                    # The host's verification sample: the same page again in full (next slot),
                    # its outcome taught to the host (verify_match / verify_mismatch).
                    verify = stored[i]
                    t += dt
            else:
                how = HOW_FINGERPRINT
        if t >= horizon:
            break
        used += 1
        res.get_full += 1
        res.bytes += size
        new, list_changed, listed = lists.view(i, t)
        got = http_validators(modes[h], pubs, t, size)
        if verify is not None:
            event = verify_outcome(verify, got, list_changed)
            if event is not None:
                learn(h, event, t)
            changed = list_changed  # ``how`` stays conditional, as the crawl path records it
        elif how != HOW_FIRST:
            changed = list_changed
            for event in answer_events(how, changed, head, got):
                learn(h, event, t)
            if not changed:
                how = HOW_FINGERPRINT  # the fingerprint decided: unchanged
        stored[i] = got
        visited(i, t, status=200, how=how, changed=changed, validators=got.to_dict(),
                fingerprint=str(lists.seen[i]), new_links=new, listed=listed)
        t += dt
    res.slots_used = used
    return res


# --- article phase ------------------------------------------------------------------------


@dataclass
class ArticleResult:
    capture: np.ndarray  # corrected article -> capture latency (inf = never)
    first_gets: int = 0
    gets: int = 0
    heads: int = 0  # header-only checks: HEAD probes and 304 answers
    bytes: float = 0.0


def _version(corr: tuple[float, ...], t: float) -> int:
    return bisect.bisect_right(corr, t)


def host_mode_at(ch: ChannelResult, h: int, t: float) -> str:
    """The change-detection mode the channel visits had taught host ``h`` by ``t``."""
    line = ch.host_modes[h] if ch.host_modes else [(0.0, HEAD)]
    k = bisect.bisect_right([x for x, _ in line], t) - 1
    return line[max(k, 0)][1]


def _articles_crawlpath(world: World, ch: ChannelResult, a: int, d: float, end: float,
                        rcfg: RevisitConfig, res: ArticleResult, have: int,
                        got_final_at: float) -> tuple[float, int]:
    """Re-checks of article ``a`` (discovered at ``d``) as the crawler makes them: its record
    after each visit by :func:`record_visit` (correction decay from the publication time), each
    check by the host's mode (HEAD, conditional GET or plain GET). Returns the time the final
    version was fetched and the version held."""
    corr = world.corrections[a]
    h = int(world.host_of[int(world.chan[a])])
    mode_v = world.mode[h]
    size = int(world.article_bytes[h])
    rec = new_record(f"a{a}", f"http://host{h}.example/article/{a}", now=d, role="content")
    client = http_validators(mode_v, corr, d, size)
    rec = record_visit(rec, now=d, cfg=rcfg, status=200, how=HOW_FIRST,
                       validators=client.to_dict(), published=float(world.pub[a]))
    while rec["due"] <= end:
        now = float(rec["due"])
        mode = host_mode_at(ch, h, now)
        fresh = http_validators(mode_v, corr, now, size)
        status = 200
        if client.any and mode == HEAD:
            res.heads += 1
            res.bytes += HEAD_BYTES
            fetch = compare_validators(client, fresh) != UNCHANGED
            how = HOW_HEAD
        elif client.conditional and mode == CONDITIONAL:
            fetch = compare_validators(client, fresh) != UNCHANGED
            how = HOW_CONDITIONAL
            if not fetch:
                status = 304
                res.heads += 1  # a header-only answer
                res.bytes += NOT_MODIFIED_BYTES
        else:
            fetch, how = True, HOW_FINGERPRINT
        changed = False
        if fetch:
            res.gets += 1
            res.bytes += size
            version = _version(corr, now)
            changed = version != have
            have = version
            client = fresh
            if not changed:
                how = HOW_FINGERPRINT
        if have == len(corr) and got_final_at == math.inf:
            got_final_at = now
        rec = record_visit(rec, now=now, cfg=rcfg, status=status, how=how, changed=changed,
                           validators=client.to_dict() if fetch else None)
    return got_final_at, have


def simulate_articles(world: World, policy: str, ch: ChannelResult, idx: np.ndarray) -> ArticleResult:
    """Correction re-checks of the discovered articles ``idx`` (independent of the budget)."""
    cfg = world.cfg
    horizon = cfg.days * DAY
    art_bytes = world.article_bytes.tolist()
    host_of = world.host_of.tolist()
    captures: list[float] = []
    res = ArticleResult(capture=np.zeros(0))
    decay = CorrectionDecay()
    nutch = NutchAdaptive(initial_interval=cfg.initial_interval)
    hd = HalveDouble(initial_interval=cfg.initial_interval)
    lo_i, hi_i = cfg.min_interval, cfg.article_max_interval
    rcfg = revisit_config(cfg, max_interval=hi_i)
    for a in idx.tolist():
        d = float(ch.disc[a])
        corr = world.corrections[a]
        h = host_of[int(world.chan[a])]
        size = art_bytes[h]
        res.first_gets += 1
        res.bytes += size
        end = min(d + cfg.article_window, horizon)
        have = _version(corr, d)  # version fetched at discovery
        got_final_at = d if have == len(corr) else math.inf
        if policy in ORACLES:
            for c in corr:
                if c > d and c <= end:
                    res.gets += 1
                    res.bytes += size
            if corr and got_final_at == math.inf and corr[-1] <= end:
                got_final_at = corr[-1]
        elif policy == "newscrawl":
            got_final_at, have = _articles_crawlpath(world, ch, a, d, end, rcfg, res, have,
                                                     got_final_at)
        else:
            interval = cfg.initial_interval
            modified = d
            now = d + interval
            while now <= end:
                res.gets += 1
                res.bytes += size
                version = _version(corr, now)
                changed = version != have
                have = version
                if have == len(corr) and got_final_at == math.inf:
                    got_final_at = now
                if policy == "round-robin":
                    nxt = now + interval
                elif policy == "nutch":
                    interval, modified, nxt = nutch.step(interval, modified, now, changed,
                                                         min_interval=lo_i, max_interval=hi_i)
                else:
                    interval = hd.step(interval, changed, min_interval=lo_i, max_interval=hi_i)
                    nxt = now + interval
                now = nxt
        if corr:
            captures.append(got_final_at - corr[-1] if got_final_at < math.inf else math.inf)
    res.capture = np.array(captures)
    return res


# --- running and reporting ----------------------------------------------------------------


@dataclass
class Row:
    policy: str
    budget: int
    disc_median: float
    disc_p90: float
    missed: int
    articles: int
    undiscovered: int
    capture_median: float
    capture_p90: float
    captured_share: float
    channel_req_per_hour: float
    not_modified: int
    channel_heads: int
    article_gets: int
    article_heads: int
    gigabytes: float
    seconds: float


_WORLD: dict[SimConfig, World] = {}


def _world(cfg: SimConfig) -> World:
    w = _WORLD.get(cfg)
    if w is None:
        w = _WORLD[cfg] = make_world(cfg)
    return w


def run_one(cfg: SimConfig, policy: str, budget: int) -> Row:
    started = time.perf_counter()
    world = _world(cfg)
    ch = simulate_channels(world, policy, budget)
    lo = cfg.warmup_days * DAY
    hi = (cfg.days - cfg.tail_days) * DAY
    window = (world.pub >= lo) & (world.pub < hi)
    found = window & ~np.isnan(ch.disc)
    lat = ch.disc[found] - world.pub[found]
    missed = int((window & ch.missed).sum())
    undiscovered = int((window & np.isnan(ch.disc) & ~ch.missed).sum())
    art = simulate_articles(world, policy, ch, np.flatnonzero(found))
    cap = art.capture
    finite = cap[np.isfinite(cap)]
    horizon_h = cfg.days * 24
    return Row(
        policy=policy,
        budget=budget,
        disc_median=float(np.median(lat)) if len(lat) else math.nan,
        disc_p90=float(np.percentile(lat, 90)) if len(lat) else math.nan,
        missed=missed,
        articles=int(window.sum()),
        undiscovered=undiscovered,
        capture_median=float(np.median(cap)) if len(cap) else math.nan,
        capture_p90=float(np.percentile(cap, 90)) if len(cap) else math.nan,
        captured_share=len(finite) / len(cap) if len(cap) else math.nan,
        channel_req_per_hour=(ch.get_full + ch.not_modified + ch.heads) / horizon_h,
        not_modified=ch.not_modified,
        channel_heads=ch.heads,
        article_gets=art.first_gets + art.gets,
        article_heads=art.heads,
        gigabytes=(ch.bytes + art.bytes) / 1e9,
        seconds=time.perf_counter() - started,
    )


def run(cfg: SimConfig, policies=POLICIES, workers: int = 2) -> list[Row]:
    jobs = [(cfg, p, b) for b in cfg.budgets for p in policies]
    # longest jobs first so the two workers finish together
    jobs.sort(key=lambda j: -j[2])
    if workers <= 1:
        rows = [run_one(*j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers) as ex:
            rows = list(ex.map(run_one, *zip(*jobs)))
    order = {p: k for k, p in enumerate(policies)}
    rows.sort(key=lambda r: (r.budget, order[r.policy]))
    return rows


def _fmt_minutes(seconds: float) -> str:
    if math.isnan(seconds):
        return "-"
    if math.isinf(seconds):
        return "never"
    return f"{seconds / 60:.1f}"


def report(rows: list[Row], cfg: SimConfig) -> list[str]:
    """Print the table; return the target checks as lines."""
    headers = ["budget", "policy", "disc med", "disc p90", "missed", "capt med", "capt p90",
               "capt%", "ch req/h", "ch 304", "ch HEAD", "art GET", "art chk", "GB"]
    table = []
    for r in rows:
        table.append([
            str(r.budget), r.policy, _fmt_minutes(r.disc_median), _fmt_minutes(r.disc_p90),
            str(r.missed), _fmt_minutes(r.capture_median), _fmt_minutes(r.capture_p90),
            f"{100 * r.captured_share:.0f}", f"{r.channel_req_per_hour:.0f}", str(r.not_modified),
            str(r.channel_heads), str(r.article_gets), str(r.article_heads), f"{r.gigabytes:.1f}",
        ])
    title = (f"{cfg.channels} channels on {cfg.hosts} hosts, {cfg.days:g} days "
             f"(stats over days {cfg.warmup_days:g}-{cfg.days - cfg.tail_days:g}, "
             f"{rows[0].articles} articles); latencies in minutes")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # pragma: no cover - plain fallback
        print(title)
        widths = [max(len(h), *(len(row[k]) for row in table)) for k, h in enumerate(headers)]
        print("  ".join(h.rjust(w) for h, w in zip(headers, widths)))
        for row in table:
            print("  ".join(c.rjust(w) for c, w in zip(row, widths)))
    else:
        t = Table(title=title)
        for h in headers:
            t.add_column(h, justify="left" if h == "policy" else "right")
        prev = None
        for r, row in zip(rows, table):
            if prev is not None and r.budget != prev:
                t.add_section()
            prev = r.budget
            t.add_row(*row, style="bold" if r.policy == "newscrawl" else None)
        Console(width=150).print(t)

    print("newscrawl: what the crawler runs (newscrawl/algorithms/channelsched.py, "
          "revisitplan.record_visit, the HEAD / conditional GET host policy); mean-oracle: "
          "√λ on each channel's mean rate, no hour of day")
    by = {(r.policy, r.budget): r for r in rows}
    lines = []
    for policy in ("newscrawl",):
        for b in cfg.budgets:
            nc = by.get((policy, b))
            if nc is None:
                continue
            parts = [f"{b} req/h:"]
            for other in ("oracle", "mean-oracle", "round-robin", "nutch", "halve/double"):
                o = by.get((other, b))
                if o is not None:
                    parts.append(f"{policy}/{other} {nc.disc_median / o.disc_median:.2f}")
            parts.append(f"missed {nc.missed}")
            lines.append("  ".join(parts))
    return lines


def _ratio(by: dict[tuple[str, int], Row], policy: str, other: str, budgets) -> float:
    """Worst (largest) median discovery ratio ``policy / other`` over ``budgets``."""
    ratios = [by[(policy, b)].disc_median / by[(other, b)].disc_median for b in budgets
              if (policy, b) in by and (other, b) in by]
    return max(ratios) if ratios else math.nan


def check_targets(rows: list[Row], cfg: SimConfig) -> list[bool]:
    """Print the targets (module docstring) in the format of ``benchmarks/_targets.py``."""
    by = {(r.policy, r.budget): r for r in rows}
    # the better baseline at each budget: round-robin or Nutch
    for b in cfg.budgets:
        if ("round-robin", b) in by and ("nutch", b) in by:
            best = min((by[("round-robin", b)], by[("nutch", b)]), key=lambda r: r.disc_median)
            by[("baseline", b)] = best
    budgets = sorted(cfg.budgets)
    upper = budgets[1:] if len(budgets) > 1 else budgets
    middle = budgets[len(budgets) // 2]
    results = []
    if ("newscrawl", middle) in by:
        results.append(target("revisit_sim newscrawl/oracle median discovery, worst budget",
                              _ratio(by, "newscrawl", "oracle", budgets), "<=", 1.05))
        results.append(target("revisit_sim newscrawl/best of round-robin and Nutch, worst budget",
                              _ratio(by, "newscrawl", "baseline", budgets), "<", 1.0))
        results.append(target("revisit_sim newscrawl/best of round-robin and Nutch, worst of "
                              f"{'/'.join(map(str, upper))} req/h",
                              _ratio(by, "newscrawl", "baseline", upper), "<=", 0.75))
        results.append(target(f"revisit_sim newscrawl missed articles at {middle} req/h",
                              by[("newscrawl", middle)].missed, "==", 0))
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--channels", type=int, default=SimConfig.channels)
    ap.add_argument("--hosts", type=int, default=SimConfig.hosts)
    ap.add_argument("--days", type=float, default=SimConfig.days)
    ap.add_argument("--seed", type=int, default=SimConfig.seed)
    ap.add_argument("--budgets", type=int, nargs="+", default=list(SimConfig.budgets))
    ap.add_argument("--quick", action="store_true",
                    help="80 channels on 8 hosts, 3 days, 150/300/600 req/h (regression guard)")
    ap.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--fill-idle", action="store_true",
                    help="Nutch and halve/double fetch the earliest-due page when none is due")
    ap.add_argument("--min-interval", type=float, default=SimConfig.min_interval,
                    help="shortest revisit interval of any policy (seconds)")
    ap.add_argument("--max-interval", type=float, default=SimConfig.max_interval,
                    help="longest revisit interval of any policy (seconds)")
    args = ap.parse_args(argv)
    if args.quick:
        args.channels, args.hosts, args.days, args.budgets = 80, 8, 3.0, [150, 300, 600]
    cfg = SimConfig(channels=args.channels, hosts=args.hosts, days=args.days, seed=args.seed,
                    budgets=tuple(args.budgets), fill_idle=args.fill_idle,
                    min_interval=args.min_interval, max_interval=args.max_interval)
    started = time.perf_counter()
    rows = run(cfg, tuple(args.policies), workers=args.workers)
    checks = report(rows, cfg)
    for line in checks:
        print(line)
    print(f"simulated in {time.perf_counter() - started:.0f} s")
    check_targets(rows, cfg)
    by = {(r.policy, r.budget): r for r in rows}
    worst = _ratio(by, "newscrawl", "oracle", cfg.budgets)
    print(f"worst newscrawl/oracle median discovery ratio: {worst:.2f}")
    worst = _ratio(by, "newscrawl", "mean-oracle", cfg.budgets)
    print(f"worst newscrawl/mean-oracle (no hour of day) median discovery ratio: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
