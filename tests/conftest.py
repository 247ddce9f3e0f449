"""Shared fixtures: the ../shared corpus, the pywb replay proxy, the store, component crawlers.

Tests that need ``../shared`` skip with a message naming the missing path; the replay proxy is
started from ``.venv-replay/bin/wayback`` (``make test`` installs it) or ``wayback`` on PATH.
Scrapy components are built the way Scrapy's own tests build them: a crawler from
:func:`component_crawler` (``scrapy.utils.test.get_crawler`` plus what the project settings
would add) and ``Component.from_crawler(crawler)``; :func:`open_spider` sends ``spider_opened``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from scrapy import signals
from scrapy.exceptions import CloseSpider
from scrapy.utils.test import get_crawler

from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NEWSCRAWL_SHARED", REPO.parent / "shared"))


def shared_path(*parts: str) -> Path:
    """Return ``../shared/<parts>`` or skip the test naming the missing path."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the shared corpus is not here)")
    return path


@pytest.fixture(autouse=True)
def _no_data_dir_from_the_environment(monkeypatch):
    """``make test`` exports ``NEWSCRAWL_DATA_DIR`` (the crawl's data folder), which a crawl
    given no folder uses: in-process tests that give no ``NEWSCRAWL_DATA_DIR`` setting must not
    write into the checkout's ``data/``. Subprocess tests set their own environment."""
    monkeypatch.delenv("NEWSCRAWL_DATA_DIR", raising=False)


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_path()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wayback() -> str | None:
    local = REPO / ".venv-replay" / "bin" / "wayback"
    if local.exists():
        return str(local)
    return shutil.which("wayback")


@pytest.fixture(scope="session")
def replay_proxy(tmp_path_factory) -> str:
    """Start pywb in proxy mode over ../shared/replay; yield ``http://127.0.0.1:PORT``."""
    collections = shared_path("replay", "collections")
    wayback = _wayback()
    if wayback is None:
        pytest.skip("needs pywb's wayback (make test installs it into .venv-replay)")
    workdir = tmp_path_factory.mktemp("replay")
    (workdir / "collections").symlink_to(collections)
    shutil.copy(SHARED / "replay" / "config.yaml", workdir / "config.yaml")
    port = _free_port()
    log = open(workdir / "pywb.log", "wb")
    proc = subprocess.Popen([wayback, "-b", "127.0.0.1", "-p", str(port)], cwd=workdir,
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"pywb exited with {proc.returncode}: {(workdir / 'pywb.log').read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("pywb replay proxy did not start within 60 s")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """An embedded SecantusDB server on a fresh folder, for one test module."""
    server = EmbeddedMongo(tmp_path_factory.mktemp("store-db"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["secantus", "mongo"])
def store(request):
    """A NewsStore on a fresh database: the embedded server, and a real MongoDB when
    ``MONGO_URI`` is set (skipped otherwise, naming the variable)."""
    if request.param == "mongo":
        uri = os.environ.get("MONGO_URI")
        if not uri:
            pytest.skip("MONGO_URI is not set: no real MongoDB server to test the store against")
    else:
        uri = request.getfixturevalue("embedded").uri
    name = f"test_{uuid.uuid4().hex[:12]}"
    news = NewsStore.connect(uri, name, timeout=5.0)
    news.ensure_indexes()
    news.ensure_state_indexes()
    yield news
    news.client.drop_database(name)
    news.close()


# --- component crawlers -------------------------------------------------------------------------

#: Extensions of the project settings (newscrawl/settings.py), by name.
EXTENSIONS = {"store": ("extensions.store.StoreExtension", 100),
              "crawlstate": ("extensions.crawlstate.CrawlStateExtension", 110)}


def component_crawler(settings: dict[str, Any] | None = None, *, spidercls: Any = None,
                      extensions: tuple[str, ...] = ("crawlstate",)) -> Any:
    """A crawler for component tests: ``get_crawler`` with the ``NEWSCRAWL_*`` defaults
    (:class:`newscrawl.addon.DefaultsAddon`), the project's request fingerprinter and the named
    extensions (``"crawlstate"``, ``"store"``); ``settings`` win. Stats are open."""
    if spidercls is None:
        from spiders.news import NewsSpider

        spidercls = NewsSpider
    base: dict[str, Any] = {
        "ADDONS": {"newscrawl.addon.DefaultsAddon": 0},
        "REQUEST_FINGERPRINTER_CLASS": "newscrawl.fingerprint.NewsRequestFingerprinter",
        "EXTENSIONS": dict(EXTENSIONS[name] for name in extensions),
    }
    crawler = get_crawler(spidercls, {**base, **(settings or {})})
    crawler.stats.open_spider()
    return crawler


def open_spider(crawler: Any, spider: Any) -> None:
    """Make ``spider`` the crawler's spider and send ``spider_opened`` (handlers awaited);
    raise what a handler raised."""
    crawler.spider = spider

    async def send() -> list[tuple[Any, Any]]:
        return await crawler.signals.send_catch_log_async(signal=signals.spider_opened,
                                                          spider=spider, dont_log=CloseSpider)

    for _, result in asyncio.run(send()):
        if isinstance(result, BaseException):
            raise result


@pytest.fixture
def database(embedded):
    """A fresh database name on the session's embedded server, dropped afterwards."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    yield name
    with NewsStore.connect(embedded.uri, name, timeout=5.0) as store:
        store.client.drop_database(name)


# --- parallel runs (make test: pytest-xdist) -----------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """In a pytest-xdist worker, hand out the files of slow tests first (tests/scheduling.py)."""
    from tests.scheduling import in_xdist_worker, slow_files_first

    if in_xdist_worker():
        slow_files_first(items)
