"""The distributed add-on (:mod:`newscrawl.distributed.addon`) and the mode switch
(:mod:`newscrawl.distributed.mode`): what a distributed crawl changes, and what it leaves alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import scrapy
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from newscrawl.distributed.addon import (
    FRONTIER_EXTENSION,
    POLITENESS_MIDDLEWARE,
    RECOVERY_EXTENSION,
    DistributedAddon,
    add_component,
)
from newscrawl.distributed.extension import FrontierExtension
from newscrawl.distributed.frontier import RedisFrontier
from newscrawl.distributed.mode import is_distributed
from tests.redis_helpers import REDIS_URL

REPO = Path(__file__).resolve().parents[1]
ADDONS = {"newscrawl.addon.DefaultsAddon": 0, "newscrawl.distributed.addon.DistributedAddon": 0}


class _Spider(scrapy.Spider):
    name = "nctest"


@pytest.mark.parametrize("settings, environ, expected", [
    ({}, {}, False),
    ({"NEWSCRAWL_DISTRIBUTED": "auto"}, {"REDIS_URL": "redis://r:6379/0"}, True),
    ({"NEWSCRAWL_DISTRIBUTED": ""}, {"REDIS_URL": "redis://r:6379/0"}, True),
    ({"REDIS_URL": "redis://r:6379/0"}, {}, True),
    ({"NEWSCRAWL_DISTRIBUTED": "1"}, {}, True),
    ({"NEWSCRAWL_DISTRIBUTED": True}, {}, True),
    ({"NEWSCRAWL_DISTRIBUTED": "0", "REDIS_URL": "redis://r"}, {"REDIS_URL": "redis://r"}, False),
])
def test_the_mode_switch(settings, environ, expected):
    assert is_distributed(Settings(settings), environ) is expected


def test_the_mode_switch_rejects_nonsense():
    with pytest.raises(ValueError, match="NEWSCRAWL_DISTRIBUTED"):
        is_distributed(Settings({"NEWSCRAWL_DISTRIBUTED": "sometimes"}), {})


def _applied(settings: dict, monkeypatch, environ_url: str | None = None) -> Settings:
    if environ_url is None:
        monkeypatch.delenv("REDIS_URL", raising=False)
    else:
        monkeypatch.setenv("REDIS_URL", environ_url)
    applied = Settings(settings)
    DistributedAddon().update_settings(applied)
    return applied


def test_a_distributed_crawl_gets_the_scheduler_filter_extension_and_middleware(monkeypatch):
    s = _applied({"REDIS_URL": "redis://r:6379/3"}, monkeypatch)
    assert s["SCHEDULER"] == "newscrawl.distributed.scheduler.DistributedScheduler"
    assert s["DUPEFILTER_CLASS"] == "newscrawl.distributed.dupefilter.BucketDupeFilter"
    assert s.getbool("SCHEDULER_PERSIST") is True
    assert s.getdict("EXTENSIONS") == {FRONTIER_EXTENSION: 0, RECOVERY_EXTENSION: 120}
    assert s.getdict("DOWNLOADER_MIDDLEWARES") == {POLITENESS_MIDDLEWARE: 950}
    assert s["REDIS_URL"] == "redis://r:6379/3"


def test_redis_url_comes_from_the_environment(monkeypatch):
    s = _applied({}, monkeypatch, environ_url="redis://env:6379/2")
    assert s["REDIS_URL"] == "redis://env:6379/2"
    assert s["SCHEDULER"].endswith("DistributedScheduler")


def test_a_crawl_in_one_process_is_left_alone(monkeypatch):
    s = _applied({"NEWSCRAWL_DISTRIBUTED": "0"}, monkeypatch, environ_url="redis://env:6379/2")
    assert s["SCHEDULER"] == "scrapy.core.scheduler.Scheduler"
    assert s.getdict("EXTENSIONS") == {} and s.getdict("DOWNLOADER_MIDDLEWARES") == {}
    assert not s.get("REDIS_URL")


def test_explicit_settings_win(monkeypatch):
    s = Settings()
    s.set("SCHEDULER", "my.Scheduler", "cmdline")
    s.set("SCHEDULER_PERSIST", False, "cmdline")
    s.set("DOWNLOADER_MIDDLEWARES", {POLITENESS_MIDDLEWARE: None, "my.Middleware": 5}, "project")
    s.set("EXTENSIONS", {"my.Extension": 1}, "project")
    s.set("NEWSCRAWL_DISTRIBUTED", True, "project")
    monkeypatch.delenv("REDIS_URL", raising=False)
    DistributedAddon().update_settings(s)
    assert s["SCHEDULER"] == "my.Scheduler" and s.getbool("SCHEDULER_PERSIST") is False
    assert s.getdict("DOWNLOADER_MIDDLEWARES") == {POLITENESS_MIDDLEWARE: None,
                                                   "my.Middleware": 5}  # switched off stays off
    assert s.getdict("EXTENSIONS") == {"my.Extension": 1, FRONTIER_EXTENSION: 0,
                                       RECOVERY_EXTENSION: 120}
    assert s.getpriority("EXTENSIONS") == s.getpriority("DOWNLOADER_MIDDLEWARES")


def test_a_component_given_as_a_class_is_not_added_twice():
    s = Settings({"EXTENSIONS": {FrontierExtension: 10}})
    assert not add_component(s, "EXTENSIONS", FRONTIER_EXTENSION, 0)
    assert s.getdict("EXTENSIONS") == {FrontierExtension: 10}


def test_the_crawler_builds_the_frontier_extension():
    crawler = get_crawler(_Spider, {"ADDONS": ADDONS, "REDIS_URL": REDIS_URL,
                                    "NEWSCRAWL_REDIS_NAMESPACE": "x-%(spider)s",
                                    "NEWSCRAWL_REDIS_LEASE_TTL": 7,
                                    "NEWSCRAWL_REDIS_DUPEFILTER_PREFIX_BYTES": 2})
    extension = crawler.get_extension(FrontierExtension)
    assert isinstance(extension, FrontierExtension)
    frontier = extension.frontier
    assert isinstance(frontier, RedisFrontier)
    assert (frontier.namespace, frontier.lease_ttl_ms, frontier.prefix_bytes) == (
        "x-nctest", 7000, 2)
    extension.engine_stopped()  # nothing queued: nothing sent; the client is closed


def test_the_addon_imports_no_component_and_no_redis():
    """The add-on names the extension and the middleware by path (no import cycle with them)."""
    code = ("import sys, newscrawl.distributed.addon\n"
            "loaded = [m for m in ('redis', 'scrapy_redis', 'newscrawl.distributed.politeness',"
            " 'newscrawl.distributed.extension', 'newscrawl.distributed.frontier')"
            " if m in sys.modules]\n"
            "assert not loaded, loaded\n"
            "import newscrawl.distributed.politeness\n")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_only_the_distributed_package_imports_redis():
    offenders = []
    for folder in ("newscrawl", "spiders", "middlewares", "pipelines", "extensions"):
        for path in (REPO / folder).rglob("*.py"):
            if (REPO / "newscrawl" / "distributed") in path.parents:
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                words = line.split()
                if words[:1] in (["import"], ["from"]) and len(words) > 1 and \
                        words[1].split(".")[0] in ("redis", "scrapy_redis"):
                    offenders.append(f"{path.relative_to(REPO)}: {line.strip()}")
    assert not offenders
