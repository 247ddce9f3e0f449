"""Helpers for tests that run real crawls: a served mock site and ``scrapy crawl`` runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from newscrawl.embedded import EmbeddedMongo
from newscrawl.store import NewsStore

REPO = Path(__file__).resolve().parents[1]
#: The loopback addresses of the mock sites (tests/mocksite.py on 127.0.0.1, the changing sites
#: of tests/mocksite_changing.py on 127.0.0.2-6): the crawls of the tests may reach them
#: (``NEWSCRAWL_ALLOWED_PRIVATE_HOSTS``; every other private address stays refused).
LOOPBACK_SITES = "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6"


@contextmanager
def served(script: str = "tests/mocksite.py", *args: str):
    """Run a site script (with ``args``) that prints its base URL on its first line; yield that
    URL."""
    proc = subprocess.Popen([sys.executable, str(REPO / script), *args], stdout=subprocess.PIPE,
                            text=True, cwd=REPO)
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError(f"{script} did not print its URL (got {url!r})")
        yield url
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()  # else a ResourceWarning at garbage collection (fatal under -W error)


def crawl(args: list[str], data_dir: Path, *, env: dict | None = None, timeout: float = 600,
          settings: dict | None = None, status: int = 0) -> subprocess.CompletedProcess:
    """Run ``scrapy crawl news ARGS`` in the repo with the embedded store on ``data_dir``; the
    mock sites' addresses are allowed (:data:`LOOPBACK_SITES`) unless ``settings`` say otherwise;
    the exit status must be ``status`` (1: a failed run, newscrawl/outcome.py)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI")}
    full_env.update({"NEWSCRAWL_DATA_DIR": str(data_dir), **(env or {})})
    cmd = [sys.executable, "-m", "scrapy", "crawl", "news", *args]
    for key, value in {"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": LOOPBACK_SITES, **(settings or {})}.items():
        cmd += ["-s", f"{key}={value}"]
    proc = subprocess.run(cmd, cwd=REPO, env=full_env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != status:
        raise AssertionError(f"crawl exited {proc.returncode}, not {status}:\n{proc.stderr[-5000:]}")
    return proc


def stats_of(log: str) -> dict:
    """Parse the 'Dumping Scrapy stats' block of a crawl log into a dict (values as text)."""
    start = log.rindex("Dumping Scrapy stats:")
    block = log[log.index("{", start): log.index("}\n", start) + 1]
    stats = {}
    for line in block.strip("{}").splitlines():
        line = line.strip().rstrip(",")
        if line.startswith("'") and "': " in line:
            key, value = line[1:].split("': ", 1)
            stats[key] = value
    return stats


@contextmanager
def open_store(data_dir: Path):
    """Open the embedded store of a finished crawl; stop its server after."""
    server = EmbeddedMongo(data_dir)
    uri = server.start()
    store = NewsStore.connect(uri)
    try:
        yield store
    finally:
        store.close()
        server.stop()


def read_items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def require_installed(module: str):
    """Import and return ``module``, a test dependency of ``requirements-test.txt`` that
    newscrawl itself does not need (pandas, pyarrow): skipped with a message when it is missing,
    except on CI (``CI`` set), where ``make test`` installs it, so its absence is a failure."""
    import importlib

    import pytest

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is missing on CI ({exc}): requirements-test.txt installs it")
        pytest.skip(f"{module} is not installed (pip install -r requirements-test.txt)")
