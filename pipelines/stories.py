"""Item pipeline: every article gets a ``story_id`` (stories across sites, issue 13).

Articles that carry the same text — the same wire copy on several sites, lightly edited — share
one ``story_id``, by MinHash / LSH near-duplicate detection
(:class:`newscrawl.algorithms.stories.StoryClusterer`: an article joins the story of the most
similar known article at or above ``NEWSCRAWL_STORIES_THRESHOLD``, else opens a story named by
its own fingerprint). Each article item also gets ``minhash``, its signature as base64 text (512
bytes for 128 values), which the store keeps with the article: at open the clusterer is rebuilt
from the stored signatures of the articles seen within ``NEWSCRAWL_STORIES_WINDOW``
(:meth:`newscrawl.store.NewsStore.story_signatures`, on the store's writer thread), so stories
continue across runs. An article already known keeps its story. Runs before the storage
pipeline (:class:`pipelines.mongo.MongoPipeline`), which stores both fields.

Articles not seen for ``NEWSCRAWL_STORIES_WINDOW`` are dropped from the clusterer during the
run too (a watched crawl runs for days; about 18 KiB of memory per article kept).

Limits: workers of a distributed crawl each cluster what they see plus what was stored when
they started; an article re-crawled after the window is clustered again (it keeps its story
when it had opened it, since a story id is the fingerprint of its first article).

Settings: ``NEWSCRAWL_STORIES_ENABLED`` (off raises ``NotConfigured``),
``NEWSCRAWL_STORIES_THRESHOLD``, ``NEWSCRAWL_STORIES_SHINGLE_SIZE``,
``NEWSCRAWL_STORIES_NUM_PERM``, ``NEWSCRAWL_STORIES_WINDOW``. Stats:
``newscrawl/stories/<loaded|new|joined|known|no_text|forgotten|errors>``.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import deque
from typing import Any

from itemadapter import ItemAdapter

from extensions.crawlstate import CrawlStateExtension
from extensions.store import StoreExtension, wait_for
from newscrawl import defaults
from newscrawl.algorithms.stories import StoryClusterer
from newscrawl.components import require_enabled, settings_kwargs
from newscrawl.store import StoreError

logger = logging.getLogger(__name__)


def clusterer_from_settings(settings: Any) -> StoryClusterer:
    """The crawl's :class:`StoryClusterer`, built from ``NEWSCRAWL_STORIES_*`` (also used by
    ``benchmarks/story_quality.py``).

    Raises:
        ValueError: a threshold outside (0, 1), ``NUM_PERM < 16`` or ``SHINGLE_SIZE < 1``.
    """
    return StoryClusterer(**settings_kwargs(settings, threshold="NEWSCRAWL_STORIES_THRESHOLD",
                                            num_perm="NEWSCRAWL_STORIES_NUM_PERM",
                                            shingle_size="NEWSCRAWL_STORIES_SHINGLE_SIZE"))


class StoryPipeline:
    """Set ``story_id`` and ``minhash`` on article items (see the module docstring).

    Args:
        stats: the crawler's stats collector.
        clusterer: the run's clusterer.
        store: the store extension (state loaded at open), or None: no earlier articles.
        window: seconds before the run's start whose stored articles are loaded; 0 = all.
        clock: the run clock's ``utcnow`` (default: the wall clock).
    """

    def __init__(self, stats: Any, clusterer: StoryClusterer, *,
                 store: StoreExtension | None = None,
                 window: float = defaults.NEWSCRAWL_STORIES_WINDOW,
                 clock: Any = None) -> None:
        self.stats = stats
        self.clusterer = clusterer
        self.store = store
        self.window = float(window)
        self.clock = clock or (lambda: dt.datetime.now(dt.timezone.utc))
        #: (time seen, fp) in the order seen, and each article's last time: articles not seen
        #: for a window are forgotten (bounds the clusterer's memory in long watched crawls).
        self._seen: deque[tuple[dt.datetime, str]] = deque()
        self._last: dict[str, dt.datetime] = {}

    @classmethod
    def from_crawler(cls, crawler: Any) -> StoryPipeline:
        s = crawler.settings
        require_enabled(s, "NEWSCRAWL_STORIES_ENABLED")
        run = crawler.get_extension(CrawlStateExtension)
        return cls(crawler.stats, clusterer_from_settings(s),
                   store=crawler.get_extension(StoreExtension),
                   window=s.getfloat("NEWSCRAWL_STORIES_WINDOW"),
                   clock=run.state.clock.utcnow if run is not None else None)

    async def open_spider(self, spider: Any = None) -> None:
        """Rebuild the clusterer from the stored signatures (a store that does not answer:
        logged, counted in ``errors``; the run starts with no earlier stories)."""
        store = self.store
        if store is None:
            return
        since = self.clock() - dt.timedelta(seconds=self.window) if self.window > 0 else None
        try:
            await store.open(getattr(spider, "name", None) or "news")
            writer = store.writer
            if not store.connected or writer.store is None:
                raise StoreError(f"the store at {store.describe()} does not answer")
            records = await wait_for(writer.submit(writer.store.story_signatures, since))
        except Exception as exc:  # noqa: BLE001 - no earlier stories is not fatal
            logger.error("Stories: earlier articles not loaded (%s); this run's articles are "
                         "clustered among themselves", exc)
            self.stats.inc_value("newscrawl/stories/errors")
            return
        loaded = self.clusterer.restore(records)
        now = self.clock()
        for fp, _story, _signature in records:  # forgotten one window after this start
            if fp in self.clusterer:
                self._saw(fp, now)
        self.stats.set_value("newscrawl/stories/loaded", loaded)
        logger.info("Stories: %d stored article signature(s) loaded%s", loaded,
                    f" (seen since {since:%Y-%m-%d %H:%M} UTC)" if since else "")

    def process_item(self, item: Any, spider: Any = None) -> Any:
        adapter = ItemAdapter(item)
        fp = adapter.get("fp")
        if adapter.get("kind") != "article" or not fp:
            return item
        now = self.clock()
        self._expire(now)
        try:
            assignment = self.clusterer.assign(fp, adapter.get("title"), adapter.get("text"))
        except Exception:  # noqa: BLE001 - an article without story beats a lost article
            logger.exception("Stories: could not cluster %s", adapter.get("url"))
            self.stats.inc_value("newscrawl/stories/errors")
            return item
        if assignment is None:
            self.stats.inc_value("newscrawl/stories/no_text")
            return item
        adapter["story_id"] = assignment.story_id
        adapter["minhash"] = assignment.signature
        self._saw(fp, now)
        event = ("new" if assignment.new_story
                 else "joined" if assignment.matched is not None else "known")
        self.stats.inc_value(f"newscrawl/stories/{event}")
        return item

    def _saw(self, fp: str, now: dt.datetime) -> None:
        """Note that ``fp`` was seen at ``now`` (nothing to note without a window)."""
        if self.window <= 0:
            return
        self._seen.append((now, fp))
        self._last[fp] = now

    def _expire(self, now: dt.datetime) -> None:
        """Forget the articles not seen for a window before ``now``."""
        if self.window <= 0:
            return
        cutoff = now - dt.timedelta(seconds=self.window)
        while self._seen and self._seen[0][0] < cutoff:
            _, old = self._seen.popleft()
            if old in self._last and self._last[old] < cutoff:
                del self._last[old]
                self.clusterer.forget(old)
                self.stats.inc_value("newscrawl/stories/forgotten")
