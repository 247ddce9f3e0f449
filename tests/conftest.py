"""Shared fixtures: the ../shared corpus and the pywb replay proxy.

Tests that need ``../shared`` skip with a message naming the missing path; the replay proxy is
started from ``.venv-replay/bin/wayback`` (``make test`` installs it) or ``wayback`` on PATH.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import uuid

import pytest

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
