"""Scrapy add-on switching a crawl to the shared Redis frontier (``ADDONS`` in the settings).

Distributed mode is on when ``NEWSCRAWL_DISTRIBUTED`` is true, or when it is ``auto`` (the
default) and ``REDIS_URL`` is set — as a Scrapy setting (``-s REDIS_URL=redis://host:6379/0``) or
as an environment variable. ``-s NEWSCRAWL_DISTRIBUTED=0`` keeps one process even with
``REDIS_URL`` in the environment. Add-ons run after every settings source (project, spider,
command line) is merged, so this one sees ``-s`` values; it writes at ``addon`` priority, so
anything set explicitly wins. In distributed mode it sets:

* ``SCHEDULER`` = :class:`newscrawl.distributed.scheduler.DistributedScheduler`;
* ``DUPEFILTER_CLASS`` = :class:`newscrawl.distributed.dupefilter.BucketDupeFilter` (explicitly:
  scrapy-redis otherwise falls back to Scrapy's in-memory filter);
* ``SCHEDULER_PERSIST`` = True (the frontier survives runs and crashes; scrapy-redis's default
  flushes it when a worker closes);
* ``REDIS_URL`` from the environment when the setting is empty;
* the downloader middleware :class:`middlewares.politeness.PolitenessMiddleware` at 950.

Without it nothing changes: Scrapy's own scheduler and duplicate filter run in one process.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger(__name__)

SCHEDULER = "newscrawl.distributed.scheduler.DistributedScheduler"
DUPEFILTER = "newscrawl.distributed.dupefilter.BucketDupeFilter"
POLITENESS_MIDDLEWARE = "middlewares.politeness.PolitenessMiddleware"
POLITENESS_ORDER = 950


def is_distributed(settings, environ=None) -> bool:
    """True when the settings (or ``REDIS_URL`` in ``environ``) ask for the Redis frontier.

    Raises:
        ValueError: ``NEWSCRAWL_DISTRIBUTED`` is neither ``auto`` nor a boolean.
    """
    environ = os.environ if environ is None else environ
    value = settings.get("NEWSCRAWL_DISTRIBUTED", "auto")
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return bool(settings.get("REDIS_URL") or environ.get("REDIS_URL"))
    try:
        return settings.getbool("NEWSCRAWL_DISTRIBUTED")
    except ValueError:
        raise ValueError(f"NEWSCRAWL_DISTRIBUTED must be auto, true or false, got {value!r}") from None


class DistributedAddon:
    """Apply the distributed settings when :func:`is_distributed`."""

    def update_settings(self, settings) -> None:
        if not is_distributed(settings):
            return
        if not settings.get("REDIS_URL") and os.environ.get("REDIS_URL"):
            settings.set("REDIS_URL", os.environ["REDIS_URL"], "addon")
        settings.set("SCHEDULER", SCHEDULER, "addon")
        settings.set("DUPEFILTER_CLASS", DUPEFILTER, "addon")
        settings.set("SCHEDULER_PERSIST", True, "addon")
        middlewares = settings.getdict("DOWNLOADER_MIDDLEWARES")
        if POLITENESS_MIDDLEWARE not in middlewares:
            from middlewares.politeness import PolitenessMiddleware

            settings.set_in_component_priority_dict("DOWNLOADER_MIDDLEWARES", PolitenessMiddleware,
                                                    POLITENESS_ORDER)
        logger.info("Distributed crawl on %s (scrapy-redis scheduler, shared frontier)",
                    settings.get("REDIS_URL") or "redis://localhost:6379 (scrapy-redis default)")
