"""newscrawl.embedded.server (EmbeddedMongo) and .control (stop_server, server_status): the
SecantusDB server process, started and stopped for real."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pymongo
import pytest
from pymongo import WriteConcern

from newscrawl.embedded.control import server_status, stop_server
from newscrawl.embedded.health import ping
from newscrawl.embedded.process import find_server_pids, free_port, is_server_process, pid_alive
from newscrawl.embedded.server import EmbeddedMongo

pytestmark = pytest.mark.skipif(
    sys.platform.startswith("win"), reason="process-group and /proc checks are POSIX only"
)


def _client(uri: str) -> pymongo.MongoClient:
    return pymongo.MongoClient(uri, tz_aware=True, serverSelectionTimeoutMS=5000)


def _state(data: Path) -> dict:
    return json.loads((data / "server.json").read_text())


def _children() -> set[int]:
    """Pids of this process's children (Linux)."""
    me = os.getpid()
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            children.add(int(stat.parent.name))
    return children


def _wait_dead(pid: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)


def _sleeping_daemon(db: Path) -> subprocess.Popen[bytes]:
    """A sleeping Python whose command line looks like ``secantusd-py --storage-path db``,
    returned once it runs: right after ``Popen`` returns, ``/proc/PID/cmdline`` can still be
    empty (the kernel lets the parent go before the new program's arguments are in place), and
    a loaded machine widens that window."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
        + ["secantusd-py", "--storage-path", str(db)],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    proc.stdout.close()
    return proc


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    """A data folder; servers a failed test left running on it are killed afterwards."""
    yield tmp_path / "data"
    for pid in find_server_pids(tmp_path / "data" / "db"):
        os.kill(pid, signal.SIGKILL)


def test_lifecycle_on_one_folder(data: Path) -> None:
    # 1. a fresh folder: start, state file, detached session
    owner = EmbeddedMongo(data)
    uri = owner.start()
    first_pid, port = owner.pid, owner.port
    assert first_pid is not None and port is not None
    assert uri == f"mongodb://127.0.0.1:{owner.port}/"
    assert owner.owner and pid_alive(first_pid)
    state = _state(data)
    assert state["pid"] == first_pid and state["port"] == owner.port and state["started_at"]
    assert (data / "db" / "WiredTiger").exists()
    assert "listening" in (data / "server.log").read_text()
    assert os.getsid(first_pid) != os.getsid(0)  # its own session: Ctrl-C of the crawl misses it
    assert os.getppid() != first_pid and first_pid not in _children()  # detached: not our child
    assert owner.start() == uri  # idempotent
    with _client(uri) as client:
        client.newscrawl.t.insert_one({"fp": "first run"})

    # 2. a second user on the same folder reuses it; its stop() leaves the server alive
    user = EmbeddedMongo(data)
    assert user.start() == uri
    assert not user.owner and user.pid == first_pid
    user.stop()
    assert pid_alive(first_pid) and ping("127.0.0.1", port)

    # 3. the owner's stop() ends it and removes server.json
    owner.stop()
    assert not pid_alive(first_pid) and not (data / "server.json").exists()
    owner.stop()  # idempotent

    # 4. persistence across a restart
    restarted = EmbeddedMongo(data)
    with _client(restarted.start()) as client:
        assert client.newscrawl.t.find_one({"fp": "first run"})
        # j=True (as NewsStore writes): acknowledged means in the server's log, crash or not
        journaled = client.newscrawl.get_collection("t", write_concern=WriteConcern(j=True))
        journaled.insert_one({"fp": "before crash"})
    survivor = EmbeddedMongo(data)
    survivor.start()
    crashed_pid = restarted.pid
    assert crashed_pid is not None
    restarted.stop()  # another user holds a lease: left running
    assert pid_alive(crashed_pid)

    # 5. crash: the server dies without cleanup; server.json names a dead pid
    os.kill(crashed_pid, signal.SIGKILL)
    _wait_dead(crashed_pid)
    assert _state(data)["pid"] == crashed_pid and not pid_alive(crashed_pid)
    # ... a pid reused by another program is not taken for the server either
    assert not is_server_process(os.getpid(), data / "db")

    third = EmbeddedMongo(data)
    uri = third.start()
    assert third.owner and third.pid != crashed_pid and _state(data)["pid"] == third.pid
    with _client(uri) as client:
        assert {d["fp"] for d in client.newscrawl.t.find()} == {"first run", "before crash"}
    survivor.stop()  # its server is gone and server.json is not its own: nothing happens
    assert pid_alive(third.pid)

    # 6. the starter leaves first: the last user out stops the server
    last = EmbeddedMongo(data)
    last.start()
    third_pid = third.pid
    third.stop()
    assert pid_alive(third_pid)
    last.stop()
    assert not pid_alive(third_pid) and not (data / "server.json").exists()


def test_start_timeout_reports_log_and_cleans_up(tmp_path: Path) -> None:
    server = EmbeddedMongo(tmp_path, start_timeout=0.05)
    with pytest.raises(RuntimeError, match=r"did not answer within 0\.05 s") as info:
        server.start()
    assert "server.log" in str(info.value)
    assert not (tmp_path / "server.json").exists()
    assert find_server_pids(tmp_path / "db") == []
    assert not server.started


def test_port_in_use_fails_with_log_tail(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(RuntimeError, match="exited while starting") as info:
            EmbeddedMongo(tmp_path, port=port, start_timeout=20).start()
    assert "Address already in use" in str(info.value)


def test_live_server_that_does_not_answer(tmp_path: Path) -> None:
    """A hung daemon holding the folder is reported, not killed; the CLI stop ends it."""
    db = tmp_path / "db"
    hung = _sleeping_daemon(db)
    try:
        (tmp_path / "server.json").write_text(
            json.dumps({"pid": hung.pid, "port": free_port(), "host": "127.0.0.1"})
        )
        with pytest.raises(RuntimeError, match=f"pid {hung.pid} holds .* does not answer"):
            EmbeddedMongo(tmp_path, start_timeout=0.3).start()
        assert hung.poll() is None
        assert stop_server(tmp_path, timeout=5) == hung.pid
        assert hung.wait(5) == -signal.SIGTERM
        assert not (tmp_path / "server.json").exists()
    finally:
        hung.kill()
        hung.wait()


def test_stop_server_refuses_while_a_crawl_holds_a_lease(data: Path) -> None:
    with EmbeddedMongo(data) as crawl:  # a crawl: the starter, holding a lease
        pid = crawl.pid
        status = server_status(data)
        assert status["running"] and status["answering"] and not status["keep"]
        assert status["pid"] == pid and status["leases"] == [os.getpid()]
        with pytest.raises(RuntimeError, match=f"in use by crawl process\\(es\\) {os.getpid()}"):
            stop_server(data, timeout=5)
        assert pid_alive(pid)
        assert stop_server(data, timeout=5, force=True) == pid
        assert not pid_alive(pid) and not (data / "server.json").exists()
        assert not list((data / "leases").glob("*.lease"))
    # the crawl's own stop() afterwards finds server.json gone and does nothing
    assert not crawl.started
    assert server_status(data) == {"running": False, "answering": False, "data_dir": str(data)}


def test_stop_server_ends_a_daemon_that_lost_its_state_file(tmp_path: Path) -> None:
    orphan = _sleeping_daemon(tmp_path / "db")
    try:
        assert find_server_pids(tmp_path / "db") == [orphan.pid]
        assert stop_server(tmp_path, timeout=5) == orphan.pid
        assert orphan.wait(5) == -signal.SIGTERM
        assert stop_server(tmp_path, timeout=5) is None
    finally:
        orphan.kill()
        orphan.wait()


def test_a_daemon_whose_crawl_was_killed_before_server_json_is_adopted(data: Path) -> None:
    """kill -9 of a crawl between spawning the daemon and writing server.json leaves a live
    daemon that no server.json names: the next start adopts it (it answers) instead of refusing
    every later run, and the last crawl out stops it."""
    first = EmbeddedMongo(data)
    uri = first.start()
    pid = first.pid
    (data / "server.json").unlink()  # what a crawl killed before write_state leaves behind
    for lease in (data / "leases").glob("*.lease"):
        lease.unlink()
    second = EmbeddedMongo(data, start_timeout=10)
    assert second.start() == uri and second.pid == pid
    assert _state(data)["pid"] == pid
    with _client(uri) as client:
        client.newscrawl.t.insert_one({"x": 1})
    second.stop()
    _wait_dead(pid)
    assert not pid_alive(pid) and not (data / "server.json").exists()


def test_an_unnamed_daemon_that_does_not_answer_is_still_refused(tmp_path: Path) -> None:
    hung = _sleeping_daemon(tmp_path / "db")
    try:
        with pytest.raises(RuntimeError, match=f"in use by SecantusDB process\\(es\\) \\[{hung.pid}\\]"):
            EmbeddedMongo(tmp_path, start_timeout=0.3).start()
        assert hung.poll() is None
    finally:
        hung.kill()
        hung.wait()
