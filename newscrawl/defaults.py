"""Every newscrawl default, in one place, grouped by component; enable flag first (data only).

:class:`newscrawl.addon.DefaultsAddon` registers every ``NEWSCRAWL_*`` name here at ``default``
priority, and Scrapy components read them plainly (``settings.getint("NEWSCRAWL_DEPTH")``), the
way Scrapy reads its own ``default_settings.py``. Constructors may use these values as defaults
of their keyword arguments. ``docs/configuration.md`` is generated from this module by ``bin/gendocs``: every setting
needs a ``#:`` comment of its own, naming its unit in parentheses.
Units are given in each comment.
"""

from __future__ import annotations

# --- spider ---------------------------------------------------------------------------------
#: Channel (node link) recursion depth below each entry URL (levels). Spider arg ``-a depth=N``.
NEWSCRAWL_DEPTH = 2
#: Crawl order: ``bfs`` (breadth-first), ``dfs`` (depth-first) or ``best`` (best-first by
#: NewsPageRank weight, then URL directory depth; seed 003). Spider arg ``-a strategy=``.
NEWSCRAWL_STRATEGY = "bfs"

# --- charset detection (downloader middleware) -----------------------------------------------
#: Charset detection (middlewares/charset.py): BOM, verified HTTP charset, ``<meta>``, GBK →
#: GB18030, detection when undeclared.
NEWSCRAWL_CHARSET_ENABLED = True

# --- link classification (spider middleware; seed 004 §2) ------------------------------------
#: Link classification (middlewares/linkclass.py): every link gets one of six classes, and
#: node (channel) links are told from content (article) links.
NEWSCRAWL_LINKCLASS_ENABLED = True
#: Directory groups with fewer links than this are node links (links).
NEWSCRAWL_LINKCLASS_MIN_GROUP = 5
#: A directory group holding at least this share of the largest group's links is also a
#: content group, so evenly spread portals get several content groups (ratio 0..1).
NEWSCRAWL_LINKCLASS_DOMINANT_RATIO = 0.5
#: Follow crosswise hosts (same registered domain, other host) as ``http(s)://host/`` entries.
NEWSCRAWL_LINKCLASS_FOLLOW_CROSSWISE = True
#: Apply URL-shape signals (article slug / directory page) before the group rule; off gives
#: seed 004's directory grouping alone (see ``newscrawl.algorithms.linkclass``).
NEWSCRAWL_LINKCLASS_USE_SHAPE = True
#: Article-shaped crosswise links (other host or other branch, same registered domain) are
#: content links too, not only their host entry.
NEWSCRAWL_LINKCLASS_CROSSWISE_CONTENT = True
#: Frames inside frames are followed this many levels deep at most (levels).
NEWSCRAWL_LINKCLASS_MAX_FRAME_DEPTH = 1
#: At most this many links are read from one page (links); the rest are counted and skipped.
NEWSCRAWL_LINKCLASS_MAX_LINKS = 5000
#: Crosswise links to channel pages (sister hosts, other branches of the page's host) are node
#: links, followed within the depth limit (``newscrawl.algorithms.linkclass``, point 5).
NEWSCRAWL_LINKCLASS_FOLLOW_CHANNELS = True
#: Channel links a sister host needs on a page, when none of its articles is linked, to be
#: followed (links).
NEWSCRAWL_LINKCLASS_SISTER_EVIDENCE = 2
#: Share of editorial sister-host links a navigation block needs for its other sister-host
#: links to be followed too (ratio 0..1).
NEWSCRAWL_LINKCLASS_BLOCK_SHARE = 0.5
#: JSON file extending (or replacing) the service-link rules: shop, jobs, login, comment,
#: sponsored hosts and paths, per site (``newscrawl.algorithms.linkrules``); "" = built-in rules.
NEWSCRAWL_LINKCLASS_RULES = ""

# --- feeds and sitemaps as sources (middlewares/feeds.py; DESIGN §7, issue 12) --------------
#: Discover RSS / Atom feeds (``<link rel=alternate>`` of entry and channel pages, seed lines
#: that are feeds) and sitemaps (robots.txt ``Sitemap:`` lines), fetch them as sources
#: scheduled by their yield, and request the on-site articles their entries list.
NEWSCRAWL_FEEDS_ENABLED = True
#: NewsPageRank weight of an article known only from a feed or sitemap (0..1): a plain article
#: link of a home page (the ``html_tag`` feature, 0.2, times the entry's weight 1). A channel
#: page linking the article gives it its own weight when that is higher.
NEWSCRAWL_FEEDS_WEIGHT = 0.2
#: Entries of one feed or sitemap turned into requests at most (entries); the rest are counted.
NEWSCRAWL_FEEDS_MAX_ENTRIES = 1000
#: Sources (feeds and sitemaps) discovered per site at most (sources).
NEWSCRAWL_FEEDS_MAX_PER_SITE = 20
#: Entries of plain sitemaps and child sitemaps of an index modified longer ago than this are
#: skipped, and so are undated pages of plain sitemaps (seconds); news sitemap entries count
#: by their publication date.
NEWSCRAWL_FEEDS_SITEMAP_MAX_AGE = 2 * 86400.0

# --- article extraction ----------------------------------------------------------------------
#: Pages larger than this are not handed to the extractor (bytes); counted and skipped.
NEWSCRAWL_EXTRACT_MAX_BYTES = 4 * 1024 * 1024
#: Pages larger than this are extracted in the thread pool, off the reactor thread (bytes);
#: smaller ones inline (faster: no GIL hand-over between threads).
NEWSCRAWL_EXTRACT_THREAD_BYTES = 512 * 1024

# --- destination policy (middlewares/destination.py, middlewares/redirect.py) -----------------
#: Refuse requests to loopback, private, link-local, multicast and reserved addresses (checked
#: after DNS resolution, on every redirect and meta refresh), and redirects to other sites.
NEWSCRAWL_DESTINATION_ENABLED = True
#: Host names, addresses and CIDR networks that may be reached although private
#: (comma-separated), e.g. ``"127.0.0.1,intranet.example,10.1.0.0/16"``.
NEWSCRAWL_ALLOWED_PRIVATE_HOSTS = ""

# --- NewsPageRank (pipeline; seed 004 §3) ----------------------------------------------------
#: NewsPageRank (pipelines/newsrank.py): every page's weight from the links that reach it.
NEWSCRAWL_NEWSRANK_ENABLED = True
#: The scoring matrix W_i of the four binary link features.
NEWSCRAWL_NEWSRANK_WEIGHTS = {"image": 0.5, "font_size": 0.2, "bold": 0.1, "html_tag": 0.2}
#: Remedy for the zero-weight degeneracy: r0 is raised to at least this value (0..1), so a
#: page reached only through featureless node links keeps a small, still ordered weight.
NEWSCRAWL_NEWSRANK_FLOOR = 0.05

# --- stories across sites (pipelines/stories.py; newscrawl/algorithms/stories.py) -----------
#: Give every article a ``story_id``: near-duplicates (the same wire copy, lightly edited) share
#: one, by MinHash / LSH over word shingles (character shingles for Chinese and Japanese).
NEWSCRAWL_STORIES_ENABLED = True
#: Resemblance (Jaccard similarity of the shingle sets, 0..1) at or above which an article joins
#: a known article's story. On the labelled set (benchmarks/story_quality.py) unrelated articles
#: reach 0.044 at most, rewritten teasers of one article 0.38 at least (one pair without common
#: text aside).
NEWSCRAWL_STORIES_THRESHOLD = 0.3
#: Tokens per shingle (tokens: words; characters for Han / kana / Thai text).
NEWSCRAWL_STORIES_SHINGLE_SIZE = 3
#: Hash functions per MinHash signature (hash functions; 4 bytes each, stored per article as base64 text).
#: Changing it makes stored signatures unusable: articles stored before are then not matched.
NEWSCRAWL_STORIES_NUM_PERM = 128
#: Articles seen within this long are matched: stored ones (by ``last_seen``) are loaded at the
#: start, and articles not seen for this long are dropped during a run (seconds; ~18 KiB of
#: memory per article kept); 0 = every stored article, none dropped.
NEWSCRAWL_STORIES_WINDOW = 3 * 86400.0

# --- full-text search and alerts (extensions/search.py, newscrawl/search/) ----------------------
#: Keep the SQLite FTS5 index of the stored articles in the data folder
#: (``<data>/search/<database>.sqlite``), updated as pages are stored, caught up at the start.
NEWSCRAWL_SEARCH_ENABLED = True
#: Fire the saved searches of ``<data>/alerts.sqlite`` (``newscrawl alert``) during the crawl.
NEWSCRAWL_ALERTS_ENABLED = True
#: Retries of a webhook after its first failed attempt (requests; connection error, timeout,
#: 408/429/5xx).
NEWSCRAWL_ALERTS_RETRIES = 5
#: Wait before the first retry of a webhook (seconds); doubled for each further retry.
NEWSCRAWL_ALERTS_BACKOFF = 1.0
#: Longest a webhook request may take (seconds).
NEWSCRAWL_ALERTS_TIMEOUT = 10.0
#: Longest the close of a crawl waits for due notifications to be sent (seconds; the rest stay
#: queued).
NEWSCRAWL_ALERTS_DRAIN = 5.0

# --- MongoDB storage (extensions/store.py, pipelines/mongo.py) --------------------------------
#: Store articles, channel pages, links and the crawl state in MongoDB (extensions/store.py).
NEWSCRAWL_MONGO_ENABLED = True
#: ``mongodb://`` URI of a real server. Empty: the ``MONGO_URI`` / ``NEWSCRAWL_MONGO_URI``
#: environment variables; when those are empty too, the embedded SecantusDB server.
NEWSCRAWL_MONGO_URI = ""
#: Database name, on a real server and in the embedded store.
NEWSCRAWL_MONGO_DATABASE = "newscrawl"
#: Writes buffered before one bulk write (writes; an item and each of its links count one).
NEWSCRAWL_MONGO_BATCH_SIZE = 500
#: A buffer older than this is written at the next item (seconds).
NEWSCRAWL_MONGO_FLUSH_INTERVAL = 5.0
#: Server selection / connect timeout of the pymongo client (seconds).
NEWSCRAWL_MONGO_TIMEOUT = 10.0
#: Folder of the embedded store (WiredTiger files, server pid/port file). Environment variable
#: ``NEWSCRAWL_DATA_DIR`` overrides it.
NEWSCRAWL_DATA_DIR = "./data"
#: TCP port of the embedded server on 127.0.0.1 (port number); 0 picks a free port.
NEWSCRAWL_EMBEDDED_PORT = 0
#: Longest wait for the embedded server to accept connections (seconds).
NEWSCRAWL_EMBEDDED_START_TIMEOUT = 30.0

# --- recurring crawls on scrapyd (``newscrawl schedule``, newscrawl/schedule.py) ---------------
#: Base URL of the scrapyd that runs the jobs (``http://user:pass@host:port/`` for basic auth).
NEWSCRAWL_SCRAPYD_URL = "http://127.0.0.1:6800/"
#: scrapyd project name (``project`` of ``[deploy:local]`` in scrapy.cfg).
NEWSCRAWL_SCRAPYD_PROJECT = "newscrawl"
#: Revisit estimator of a site (``newscrawl.algorithms.revisit.ESTIMATORS``: ``auto``,
#: ``halve_double``, ``equal_interval``, ``timely_return``, ``poisson``, ``nutch_adaptive``).
NEWSCRAWL_SCHEDULE_ESTIMATOR = "auto"
#: Shortest revisit interval of a site (seconds); it should not undercut the cron period.
NEWSCRAWL_SCHEDULE_MIN_INTERVAL = 900.0
#: Longest revisit interval of a site (seconds).
NEWSCRAWL_SCHEDULE_MAX_INTERVAL = 86400.0
#: Finished runs kept per site in the ``schedule`` collection (runs).
NEWSCRAWL_SCHEDULE_HISTORY = 50

# --- request fingerprints and domain aliases (newscrawl/fingerprint.py; seeds 001, 003) -------
#: ``www.example.com`` and ``example.com`` are one site: one fingerprint, one host for politeness.
NEWSCRAWL_ALIAS_FOLD_WWW = True
#: Alias host → canonical host (IP literals, mirror names), e.g. ``{"203.0.113.7": "example.com"}``.
NEWSCRAWL_HOST_ALIASES: dict = {}

# --- distributed crawling on scrapy-redis (newscrawl/distributed; DESIGN §6) ------------------
# Every Redis key is listed in newscrawl/redis_defaults.py.
#: Use the shared Redis frontier: ``auto`` = when ``REDIS_URL`` is set (setting or environment
#: variable), or true / false. ``REDIS_URL`` (scrapy-redis's setting) names the server.
NEWSCRAWL_DISTRIBUTED = "auto"
#: Key namespace of one shared crawl; ``%(spider)s`` is the spider name.
NEWSCRAWL_REDIS_NAMESPACE = "%(spider)s"
#: Request serializer of the frontier: ``json`` (any Python version, readable in redis-cli) or
#: ``pickle`` (protocol 4, Python >= 3.4). Entries that do not decode go to the dead-letter list.
NEWSCRAWL_REDIS_SERIALIZER = "json"
#: Bytes of the 8-byte fingerprint that name its bucket (bytes, 1..4): 1 → 256 buckets, 7 bytes stored
#: per URL (up to a few million URLs); 2 → 65,536 buckets, 6 bytes; 3 → Mercator's 3-byte index.
NEWSCRAWL_REDIS_DUPEFILTER_PREFIX_BYTES = 1
#: In-process LRU cache of seen fingerprints in front of Redis (entries); 0 turns it off.
NEWSCRAWL_REDIS_URL_CACHE = 65536
#: The seen set belongs to a round: a worker starting on a drained frontier (nothing queued,
#: leased or pending) empties it, so the next crawl can revisit known pages; restarts within a
#: round keep it. False keeps fingerprints forever (scrapy-redis; revisits need dont_filter).
NEWSCRAWL_REDIS_SEEN_PER_ROUND = True
#: A worker closes after the shared frontier has been empty, with no request in flight on any
#: worker, for this long (seconds).
NEWSCRAWL_REDIS_IDLE_CLOSE = 30.0
#: A worker without heartbeat for this long is dead: its leases are released and its unfinished
#: requests go back to the frontier (seconds; heartbeats every third of it).
NEWSCRAWL_REDIS_WORKER_TIMEOUT = 30.0
#: Longest a host lease may be held even by a live worker (seconds); past it the host is freed.
NEWSCRAWL_REDIS_LEASE_TTL = 180.0
#: Period of the worker's frontier loop: acknowledgements, wake-ups, idle checks (seconds).
NEWSCRAWL_REDIS_POLL_INTERVAL = 0.1
#: Most requests (of different ready hosts) one Redis round trip takes for the downloader; never
#: more than its free slots, since each holds its host's lease until sent (requests).
NEWSCRAWL_REDIS_POP_BATCH = 8

# --- politeness across workers (distributed politeness middleware; seed 001, Mercator) -------
# One request in flight per host over all workers (the frontier's host lease); then a pause.
#: Pause after a response = this multiple k of its response time (factor; Mercator: 10); 0 turns
#: it off.
NEWSCRAWL_POLITENESS_FACTOR = 10.0
#: Lower bound of the k × response-time pause (seconds); robots.txt Crawl-delay has its own
#: cap (NEWSCRAWL_CRAWL_DELAY_MAX).
NEWSCRAWL_POLITENESS_MIN_DELAY = 0.0
#: Upper bound of the k × response-time pause (seconds).
NEWSCRAWL_POLITENESS_MAX_DELAY = 60.0
#: Honour robots.txt ``Crawl-delay`` (read with Protego, Scrapy's robots.txt parser).
NEWSCRAWL_POLITENESS_CRAWL_DELAY = True
#: Response time of a host = the smallest of its last N measured response times (responses; a
#: busy worker notices responses late, which only adds); 1 = Mercator's literal last response
#: time.
NEWSCRAWL_POLITENESS_RT_WINDOW = 5
#: File to append one JSON line per HTTP exchange to (host, start, end, worker; for overlap
#: checks); empty: off.
NEWSCRAWL_POLITENESS_LOG = ""

# --- server signals (both modes; extensions/politeness.py in one process, RFC 9309, RFC 9110) ---
#: Per-host politeness in single-process mode (Crawl-delay, Retry-After; extensions/politeness.py).
NEWSCRAWL_POLITENESS_ENABLED = True
#: Single-process mode: one request in flight per host and Mercator's k × response-time pause
#: (NEWSCRAWL_POLITENESS_FACTOR ...); off keeps CONCURRENT_REQUESTS_PER_DOMAIN / DOWNLOAD_DELAY
#: for hosts without Crawl-delay or Retry-After. Distributed mode always applies the rule.
NEWSCRAWL_POLITENESS_ONE_PER_HOST = False
#: Largest robots.txt Crawl-delay honoured (seconds; 0 = no cap); a warning names each host
#: whose Crawl-delay is cut.
NEWSCRAWL_CRAWL_DELAY_MAX = 60.0
#: Largest Retry-After (on 429 / 503) honoured for a host (seconds).
NEWSCRAWL_RETRY_AFTER_MAX = 300.0
#: robots.txt answering 5xx (or 429) means "disallow all" for its host (RFC 9309 §2.3.1.4)
#: until it is fetched again, this long after (seconds).
NEWSCRAWL_ROBOTS_RETRY_DELAY = 600.0

# --- the run and incremental re-crawls (extensions/crawlstate.py: clock, budget, crawl state,
#     HEAD probes, update modes; DESIGN §4-5) ----------------------------------------------------
#: Keep a crawl-state record per known URL (``pages`` collection) and re-crawl incrementally:
#: seeds plus known pages that are due, HEAD/conditional checks, versions, PageRank.
NEWSCRAWL_REVISIT_ENABLED = True
#: Shortest revisit interval of a page (seconds); every estimator's answer is clamped to it. In
#: monitoring mode it bounds the re-checks of known articles only: sources (channel pages,
#: feeds, sitemaps, home pages) use NEWSCRAWL_WATCH_MIN_INTERVAL / NEWSCRAWL_WATCH_MAX_INTERVAL.
NEWSCRAWL_REVISIT_MIN_INTERVAL = 600.0
#: Longest revisit interval of a page (seconds; in monitoring mode not of sources, as above).
NEWSCRAWL_REVISIT_MAX_INTERVAL = 7 * 86400.0
#: Interval after a failed visit (HTTP status >= 400, no answer), doubled per consecutive miss
#: (seconds).
NEWSCRAWL_REVISIT_MISS_INTERVAL = 86400.0
#: Visits kept in a page's history (visits); the estimators read at most this many.
NEWSCRAWL_REVISIT_HISTORY = 50
#: New articles expected from a visit of a channel page with no yield history yet (articles).
NEWSCRAWL_REVISIT_CHANNEL_PRIOR = 1.0
#: Channel-page visits per hour (visits/hour) the channel scheduler splits over all channels,
#: ∝ √(rate of new links) (newscrawl/algorithms/channelsched.py). 0 = no budget: a channel
#: publishing one link per hour is visited hourly, one publishing 4× as much twice as often.
NEWSCRAWL_REVISIT_CHANNEL_RATE = 0.0
#: The run clock, read for every time a run records (visits, ``fetched_at``, ``first_seen``,
#: versions, evictions): empty = wall clock; ISO 8601 / epoch seconds = run "at" that time (plus
#: the seconds elapsed), for tests and replays of dated captures. Spider argument ``-a now=``.
NEWSCRAWL_REVISIT_NOW = ""
#: Longest reuse of a host's robots.txt kept in the crawl state (seconds; RFC 9309 §2.4: 24 h);
#: shorter when its Cache-Control max-age / Expires says so; 0 = fetched once per run, as Scrapy
#: does (middlewares/robotscache.py).
NEWSCRAWL_ROBOTSCACHE_MAX_AGE = 86400.0
#: Requests one run may send (requests; HEAD probes included, robots.txt not); 0 = unlimited.
#: Spider argument ``-a budget=N``.
NEWSCRAWL_BUDGET = 0
#: Crawl-state writes buffered before one bulk write (records).
#: Small batches keep the last write at the end of a run short (a re-crawl of 5,044 pages spent
#: 0.7 s of its close on 500 records, 0.1 s on 100) and cost no more per record.
NEWSCRAWL_REVISIT_FLUSH_SIZE = 100
#: Buffered crawl-state writes are written after this long at the latest (seconds); a link
#: found and not fetched yet is in the store about two intervals after it was found.
NEWSCRAWL_REVISIT_FLUSH_INTERVAL = 10.0
#: HEAD-first checks of known pages (downloader middleware), with per-host fallback to a
#: conditional GET or to a GET plus content fingerprint.
NEWSCRAWL_HEADPROBE_ENABLED = True
#: Pieces of evidence (strikes) that a host's validators change on every request before they
#: are distrusted (HEAD said changed but the text was the same; conditional GET answered 200
#: with the same text). One refused HEAD, or one without usable validators, is enough on its own.
NEWSCRAWL_HEADPROBE_STRIKES = 2
#: Verification of "unchanged" (trust, but verify; validators earn trust): a host's first
#: TRUST_AFTER HEAD- or 304-"unchanged" answers (a count) are all fetched with a full GET anyway;
#: once they confirmed "unchanged", START is the share verified (probability 0..1), halved after
#: each further confirmed match, never below FLOOR (a deterministic draw per page and visit). A
#: GET that finds changed text under the same validators catches the host lying: one WARNING,
#: its validators are distrusted (fingerprint mode: every page fetched in full from then on).
#: Each verification GET costs one request of the budget (none left: not verified this time)
#: and of the request rate (which may go into debt: the visit is under way). START 0: no
#: verification (the FLOOR rate only; both 0: none); START = FLOOR = 1: every "unchanged"
#: answer verified.
NEWSCRAWL_HEADPROBE_VERIFY_START = 0.5
#: Lowest share of "unchanged" pages verified with a full GET (probability 0..1).
NEWSCRAWL_HEADPROBE_VERIFY_FLOOR = 0.01
#: An unproven host's first "unchanged" answers verified with a full GET, all of them
#: (responses).
NEWSCRAWL_HEADPROBE_VERIFY_TRUST_AFTER = 3
#: ``inplace`` (即时更新: writes go straight into the live collections) or ``shadow`` (备份式更新,
#: seed 002 §2: a run writes to the ``staging`` collection; at its end the run is merged into
#: the live collections in one transaction when the server has them).
NEWSCRAWL_UPDATE_MODE = "inplace"
#: Recompute PageRank (seed 002 §1.2) over the stored link graph at the end of every run.
NEWSCRAWL_PAGERANK_ENABLED = True
#: PageRank damping factor d (ratio 0..1; seed 002: 0.85).
NEWSCRAWL_PAGERANK_DAMPING = 0.85
#: Bound of the page store (pages); above it the lowest-PageRank pages (pages failing for
#: NEWSCRAWL_EVICT_MISSES visits in a row first) lose their bodies. 0 = unbounded.
NEWSCRAWL_MAX_PAGES = 0
#: Failed visits in a row (visits) that put a page first in line for eviction.
NEWSCRAWL_EVICT_MISSES = 3
#: Keep the previous version of an article whose text changed, with a diff summary.
NEWSCRAWL_VERSIONS_ENABLED = True

# --- monitoring mode (extensions/watch.py; DESIGN §7) -----------------------------------------
#: Keep the crawl running after the first sweep: channel pages again when due, new article
#: links at once, known articles on their correction schedule. Spider arg ``-a watch=1``.
NEWSCRAWL_WATCH_ENABLED = False
#: Stop a watched crawl after this long: ``90s``, ``10m``, ``1h``, ``2d`` or seconds; empty or
#: 0 = until SIGINT/SIGTERM. Spider arg ``-a for=``.
NEWSCRAWL_WATCH_FOR = ""
#: Requests per hour for the whole crawl (requests/hour; a token bucket with a share per site; HEAD probes and
#: robots.txt not counted); 0 = no cap. Spider arg ``-a rate=N``.
NEWSCRAWL_WATCH_RATE = 0
#: Requests per hour per site when no ``-a rate`` is given (requests/hour): the politeness
#: budget of a watched crawl is this times the number of sites of its entry URLs.
NEWSCRAWL_WATCH_SITE_RATE = 3600.0
#: Most tokens of the request rate saved up (seconds of the rate; at least one request).
NEWSCRAWL_WATCH_BURST = 5.0
#: Shortest revisit interval of a source (channel page, feed, sitemap, home page) in monitoring
#: mode (seconds): politeness, not NEWSCRAWL_REVISIT_MIN_INTERVAL, the floor of batch re-runs,
#: which in monitoring mode bounds only the re-checks of known articles.
NEWSCRAWL_WATCH_MIN_INTERVAL = 2.0
#: Longest revisit interval of a source in monitoring mode (seconds).
NEWSCRAWL_WATCH_MAX_INTERVAL = 3600.0
#: A source whose first listing showed no dated items (nothing to estimate its rate from) is
#: visited again this soon, so its rate is measured rather than assumed (seconds).
NEWSCRAWL_WATCH_EXPLORE_INTERVAL = 60.0
#: While the request rate leaves room, a source publishing one article per this long is visited
#: once per it, one publishing 4× as much twice as often (seconds; visits ∝ √rate).
NEWSCRAWL_WATCH_REFERENCE_INTERVAL = 60.0
#: Time between the status lines of a watched crawl (seconds; each line: new articles,
#: requests, rate use, publication→capture delay of the last hour).
NEWSCRAWL_WATCH_LOG_INTERVAL = 60.0
#: Time between the progress lines of a batch (non-watch) crawl (seconds): pages fetched, items
#: stored, frontier size, requests in flight (extensions/progress.py); 0: no progress lines.
NEWSCRAWL_PROGRESS_INTERVAL = 10.0
#: A page requested this long ago and still not visited (its request was lost on the way:
#: robots.txt, a duplicate filter) may be requested again (seconds).
NEWSCRAWL_WATCH_STALE_AFTER = 300.0
#: Distributed watch workers (REDIS_URL): a channel claimed for a visit is held this long before
#: another worker may claim it, when the visit never comes back (its worker was killed); a
#: worker's pages move to the others NEWSCRAWL_REDIS_WORKER_TIMEOUT after its last heartbeat
#: (seconds).
NEWSCRAWL_WATCH_CLAIM_TTL = 30.0

# --- WARC archive and import (extensions/warc.py, middlewares/warc.py, pipelines/warc.py,
# middlewares/warcreplay.py; ISO 28500, issue 24; docs/warc.md) ------------------------------
#: Folder the crawl writes its WARC files to (``newscrawl crawl --warc DIR``); "" = no WARC.
NEWSCRAWL_WARC_DIR = ""
#: A WARC file is closed and a new one begun before it would grow past this size (bytes).
NEWSCRAWL_WARC_MAX_BYTES = 1_000_000_000
#: A WARC file is closed and a new one begun when it is this old (seconds).
NEWSCRAWL_WARC_MAX_AGE = 3600.0
#: gzip level of each record (levels 0-9). zlib's default 6; on the corpus's pages (benchmarks/warc_cost.py)
#: level 9 took 43 % more CPU for files 1 % smaller, level 1 42 % of level 6's CPU for files
#: 18 % larger.
NEWSCRAWL_WARC_GZIP_LEVEL = 6
#: Host part of the file names (text); "" = this machine's host name.
NEWSCRAWL_WARC_HOST = ""
#: A ``metadata`` record (JSON: page context, weight, story, publication date, feed entry)
#: after each page's response record.
NEWSCRAWL_WARC_METADATA = True
#: WARC files (comma-separated paths) an import crawl answers every request from, instead of
#: the network (``newscrawl import``); "" = a normal crawl.
NEWSCRAWL_WARC_IMPORT = ""

# --- collection names ------------------------------------------------------------------------
ARTICLES_COLLECTION = "articles"
NODES_COLLECTION = "nodes"
LINKS_COLLECTION = "links"
#: Per-site run state of ``newscrawl schedule`` (one document per site, ``_id`` = site).
SCHEDULE_COLLECTION = "schedule"
#: Crawl state, one record per known URL (``_id`` = page fingerprint; newscrawl/crawlstate.py).
PAGES_COLLECTION = "pages"
#: Learned per-host change-detection policy (``_id`` = host name).
HOSTS_COLLECTION = "hosts"
#: Previous versions of articles whose text changed, with a diff summary.
VERSIONS_COLLECTION = "article_versions"
#: Writes of shadow-mode runs not merged yet (``run`` = run id).
STAGING_COLLECTION = "staging"

# --- run outcome and entry credentials (extensions/outcome.py, middlewares/credentials.py) ---
#: The run summary block at the end and a non-zero exit status for a failed run
#: (``newscrawl.outcome``); one log line, no traceback, for expected network failures.
NEWSCRAWL_OUTCOME_ENABLED = True
#: Credentials of an entry URL (``http://user:secret@host/``) are sent as an ``Authorization:
#: Basic`` header to that host only; off: they are dropped.
NEWSCRAWL_CREDENTIALS_ENABLED = True
