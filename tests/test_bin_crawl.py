"""bin/crawl (what ``make crawl`` runs): the replay proxy on a free port, run after run; a port
given and taken is one clear error; no results block after a crawl that could not start."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED, _wayback
from tests.helpers import REPO


def _bin_crawl(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    if not (SHARED / "replay" / "collections").exists() or _wayback() is None:
        pytest.skip(f"needs {SHARED / 'replay'} and pywb's wayback (make test installs it)")
    full = {k: v for k, v in os.environ.items()
            if k not in ("MONGO_URI", "NEWSCRAWL_MONGO_URI", "REPLAY_PORT")}
    full.update({"NEWSCRAWL_DATA_DIR": str(tmp_path / "data"), "VENV": sys.prefix,
                 "REPLAY_VENV": str(Path(_wayback()).parents[1]), "SHARED": str(SHARED),
                 "REPLAY": "1", **env})
    return subprocess.run([str(REPO / "bin" / "crawl"), *args], cwd=REPO, env=full,
                          capture_output=True, text=True, timeout=300)


def test_the_replay_proxy_starts_on_a_free_port_run_after_run(tmp_path):
    ports = []
    for _ in range(2):  # back to back: the first proxy is stopped before the script returns
        proc = _bin_crawl(tmp_path, "-a", "start_urls=https://www.heise.de/", "-a", "depth=x")
        assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
        found = re.search(r"Replay proxy of .* on 127\.0\.0\.1:(\d+)", proc.stdout)
        assert found, proc.stdout
        ports.append(int(found.group(1)))
        assert proc.stderr.rstrip().splitlines()[-1] == (
            "newscrawl: cannot start: news: depth must be a whole number, got 'x'")
        assert "open it:" not in proc.stdout  # no "where the results are" after a failed run
        with socket.socket() as probe:  # the proxy is gone: its port is free again
            probe.bind(("127.0.0.1", ports[-1]))


def test_a_replay_port_given_and_taken_is_one_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _bin_crawl(tmp_path, "-a", "start_urls=https://www.heise.de/",
                          REPLAY_PORT=str(port))
    assert proc.returncode == 2
    assert proc.stdout.strip() == (
        f"error: port {port} is in use by another process; set REPLAY_PORT=... to a free port, "
        f"or leave it unset for any free port")
