"""Run state of recurring crawls (:mod:`newscrawl.schedule`): collection ``schedule``, one
document per site (``_id`` = registered domain)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from newscrawl.store.base import Collections, Doc


class ScheduleStore:
    """``newscrawl schedule``'s reads and writes."""

    def __init__(self, collections: Collections) -> None:
        self.c = collections

    def load_schedule(self) -> dict[str, Doc]:
        """Run state of every site: ``{site: document}`` (``_id`` removed)."""
        return {str(doc.pop("_id")): doc for doc in self.c.schedule.find()}

    def save_schedule(self, site: str, state: Mapping[str, Any]) -> None:
        """Replace the run state of ``site`` (created when missing)."""
        doc = {k: v for k, v in state.items() if k != "_id"}
        doc["site"] = site
        self.c.schedule.replace_one({"_id": site}, doc, upsert=True)

    def count_new_articles(self, site: str, since: dt.datetime) -> int:
        """Articles of ``site`` first stored at or after ``since`` (tz-aware); once per site
        and scheduling round, never per page."""
        return int(self.c.articles.count_documents({"site": site, "first_seen": {"$gte": since}}))
