"""newscrawl.embedded.uri: which server a crawl uses, and where the embedded one keeps its data."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from newscrawl.embedded.health import ping
from newscrawl.embedded.process import find_server_pids, pid_alive
from newscrawl.embedded.uri import resolve_data_dir, resolve_mongo_uri


@pytest.fixture(autouse=True)
def no_configured_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NEWSCRAWL_MONGO_URI", "MONGO_URI", "NEWSCRAWL_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)


def test_resolve_mongo_uri_prefers_configured_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEWSCRAWL_MONGO_URI", "mongodb://env-newscrawl:1/")
    monkeypatch.setenv("MONGO_URI", "mongodb://env-mongo:1/")
    assert resolve_mongo_uri("mongodb://setting:1/", "./data") == ("mongodb://setting:1/", None)
    assert resolve_mongo_uri("", "./data") == ("mongodb://env-newscrawl:1/", None)
    monkeypatch.delenv("NEWSCRAWL_MONGO_URI")
    assert resolve_mongo_uri("", "./data") == ("mongodb://env-mongo:1/", None)
    # blank values are skipped, values are stripped
    monkeypatch.setenv("NEWSCRAWL_MONGO_URI", "  ")
    assert resolve_mongo_uri(None, "./data") == ("mongodb://env-mongo:1/", None)
    assert resolve_mongo_uri(" mongodb://setting:1/\n", None) == ("mongodb://setting:1/", None)


def test_resolve_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_data_dir("/srv/crawl") == "/srv/crawl"
    assert resolve_data_dir(Path("/srv/crawl")) == "/srv/crawl"
    assert resolve_data_dir(None) == "./data"
    assert resolve_data_dir("") == "./data"
    monkeypatch.setenv("NEWSCRAWL_DATA_DIR", "/var/lib/newscrawl")
    assert resolve_data_dir("/srv/crawl") == "/srv/crawl"  # the folder given wins
    assert resolve_data_dir(None) == "/var/lib/newscrawl"  # then the environment
    assert resolve_data_dir("") == "/var/lib/newscrawl"


def test_no_configured_server_starts_the_embedded_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEWSCRAWL_DATA_DIR", str(tmp_path / "env-data"))
    uri, server = resolve_mongo_uri("", None, start_timeout=30)
    try:
        assert server is not None and server.owner
        assert uri == server.uri and uri.startswith("mongodb://127.0.0.1:")
        assert server.data_dir == tmp_path / "env-data"  # no folder given: the environment's
        assert ping("127.0.0.1", server.port or 0)
        pid = server.pid
        server.stop()
        assert not pid_alive(pid)
    finally:
        for pid in find_server_pids(tmp_path / "env-data" / "db"):
            os.kill(pid, signal.SIGKILL)
