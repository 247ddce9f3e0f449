"""Every newscrawl default, in one place, grouped by component; enable flag first.

Scrapy components read these through ``settings.get*(name, defaults.NAME)``; the README's
configuration table is written from this module. Units are given in each comment.
"""

from __future__ import annotations

# --- spider ---------------------------------------------------------------------------------
#: Channel (node link) recursion depth below each entry URL (levels). Spider arg ``-a depth=N``.
NEWSCRAWL_DEPTH = 2
#: Crawl order: ``bfs`` (breadth-first), ``dfs`` (depth-first) or ``best`` (best-first by
#: NewsPageRank weight, then URL directory depth; seed 003). Spider arg ``-a strategy=``.
NEWSCRAWL_STRATEGY = "bfs"

# --- charset detection (downloader middleware) -----------------------------------------------
NEWSCRAWL_CHARSET_ENABLED = True

# --- link classification (spider middleware; seed 004 §2) ------------------------------------
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
#: At most this many links are read from one page (links); the rest are counted and skipped.
NEWSCRAWL_LINKCLASS_MAX_LINKS = 5000

# --- article extraction ----------------------------------------------------------------------
#: Pages larger than this are not handed to the extractor (bytes); counted and skipped.
NEWSCRAWL_EXTRACT_MAX_BYTES = 8 * 1024 * 1024

# --- NewsPageRank (pipeline; seed 004 §3) ----------------------------------------------------
NEWSCRAWL_NEWSRANK_ENABLED = True
#: The scoring matrix W_i of the four binary link features.
NEWSCRAWL_NEWSRANK_WEIGHTS = {"image": 0.5, "font_size": 0.2, "bold": 0.1, "html_tag": 0.2}
#: Remedy for the zero-weight degeneracy: r0 is raised to at least this value (0..1), so a
#: page reached only through featureless node links keeps a small, still ordered weight.
NEWSCRAWL_NEWSRANK_FLOOR = 0.05

# --- MongoDB storage (pipeline) --------------------------------------------------------------
NEWSCRAWL_MONGO_ENABLED = True
#: ``mongodb://`` URI of a real server. Empty: the ``MONGO_URI`` / ``NEWSCRAWL_MONGO_URI``
#: environment variables; when those are empty too, the embedded SecantusDB server.
NEWSCRAWL_MONGO_URI = ""
NEWSCRAWL_MONGO_DATABASE = "newscrawl"
#: Writes buffered before one bulk write (an item and each of its links count one).
NEWSCRAWL_MONGO_BATCH_SIZE = 500
#: A buffer older than this is written at the next item (seconds).
NEWSCRAWL_MONGO_FLUSH_INTERVAL = 5.0
#: Server selection / connect timeout of the pymongo client (seconds).
NEWSCRAWL_MONGO_TIMEOUT = 10.0
#: Folder of the embedded store (WiredTiger files, server pid/port file). Environment variable
#: ``NEWSCRAWL_DATA_DIR`` overrides it.
NEWSCRAWL_DATA_DIR = "./data"
#: TCP port of the embedded server on 127.0.0.1; 0 picks a free port.
NEWSCRAWL_EMBEDDED_PORT = 0
#: Seconds to wait for the embedded server to accept connections.
NEWSCRAWL_EMBEDDED_START_TIMEOUT = 30.0

# --- collection names ------------------------------------------------------------------------
ARTICLES_COLLECTION = "articles"
NODES_COLLECTION = "nodes"
LINKS_COLLECTION = "links"
