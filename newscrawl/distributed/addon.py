"""Scrapy add-on switching a crawl to the shared Redis frontier (``ADDONS`` in the settings).

Distributed mode is on when ``NEWSCRAWL_DISTRIBUTED`` is true, or when it is ``auto`` (the
default) and ``REDIS_URL`` is set — as a Scrapy setting (``-s REDIS_URL=redis://host:6379/0``) or
as an environment variable (:func:`newscrawl.distributed.mode.is_distributed`).
``-s NEWSCRAWL_DISTRIBUTED=0`` keeps one process even with ``REDIS_URL`` in the environment.
Add-ons run after every settings source (project, spider, command line) is merged, so this one
sees ``-s`` values; it writes at ``addon`` priority, so anything set explicitly wins. In
distributed mode it sets:

* ``SCHEDULER`` = :class:`newscrawl.distributed.scheduler.DistributedScheduler`;
* ``DUPEFILTER_CLASS`` = :class:`newscrawl.distributed.dupefilter.BucketDupeFilter` (explicitly:
  scrapy-redis otherwise falls back to Scrapy's in-memory filter);
* ``SCHEDULER_PERSIST`` = True (the frontier survives runs and crashes; scrapy-redis's default
  flushes it when a worker closes);
* ``REDIS_URL`` from the environment when the setting is empty;
* the extension :class:`newscrawl.distributed.extension.FrontierExtension` (owner of the crawl's
  one frontier, found by the scheduler and the middleware) in ``EXTENSIONS``;
* the downloader middleware :class:`newscrawl.distributed.politeness.PolitenessMiddleware` at
  950 in ``DOWNLOADER_MIDDLEWARES``;
* the project's extension ``extensions.recovery.FrontierRecoveryExtension`` at 120 in
  ``EXTENSIONS`` (a frontier Redis lost is rebuilt from the crawl state; not loaded at all by
  single-process crawls).

Components are named by import path and not imported here. A component already in its
dictionary keeps the order given there (``None`` keeps it off).

Without it nothing changes: Scrapy's own scheduler and duplicate filter run in one process.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from newscrawl.distributed.mode import is_distributed

__all__ = ["DistributedAddon", "is_distributed"]

logger = logging.getLogger(__name__)

SCHEDULER = "newscrawl.distributed.scheduler.DistributedScheduler"
DUPEFILTER = "newscrawl.distributed.dupefilter.BucketDupeFilter"
FRONTIER_EXTENSION = "newscrawl.distributed.extension.FrontierExtension"
FRONTIER_EXTENSION_ORDER = 0
POLITENESS_MIDDLEWARE = "newscrawl.distributed.politeness.PolitenessMiddleware"
POLITENESS_ORDER = 950
#: Rebuilds a shared frontier Redis lost from the crawl state; after the store (100) and the
#: crawl-state (110) extensions of the project settings.
RECOVERY_EXTENSION = "extensions.recovery.FrontierRecoveryExtension"
RECOVERY_ORDER = 120


def _import_path(component: Any) -> str:
    """``module.Class`` of a component given as a class or as an import path."""
    if isinstance(component, str):
        return component
    return f"{component.__module__}.{component.__qualname__}"


def add_component(settings: Any, name: str, path: str, order: int) -> bool:
    """Add ``path`` at ``order`` to the component priority dictionary ``name`` unless it is
    already there (as a path or a class, at any order or ``None``); keeps the setting's priority.

    Returns:
        True when added.
    """
    components = settings.getdict(name)
    if any(_import_path(component) == path for component in components):
        return False
    components[path] = order
    settings.set(name, components, settings.getpriority(name) or 0)
    return True


class DistributedAddon:
    """Apply the distributed settings when :func:`is_distributed`."""

    def update_settings(self, settings: Any) -> None:
        if not is_distributed(settings):
            return
        if not settings.get("REDIS_URL") and os.environ.get("REDIS_URL"):
            settings.set("REDIS_URL", os.environ["REDIS_URL"], "addon")
        settings.set("SCHEDULER", SCHEDULER, "addon")
        settings.set("DUPEFILTER_CLASS", DUPEFILTER, "addon")
        settings.set("SCHEDULER_PERSIST", True, "addon")
        add_component(settings, "EXTENSIONS", FRONTIER_EXTENSION, FRONTIER_EXTENSION_ORDER)
        add_component(settings, "EXTENSIONS", RECOVERY_EXTENSION, RECOVERY_ORDER)
        add_component(settings, "DOWNLOADER_MIDDLEWARES", POLITENESS_MIDDLEWARE, POLITENESS_ORDER)
        logger.info("Distributed crawl on %s (scrapy-redis scheduler, shared frontier)",
                    settings.get("REDIS_URL") or "redis://localhost:6379 (scrapy-redis default)")
