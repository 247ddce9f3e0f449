"""newscrawl.embedded.folder: DataFolder's state file, leases, lock and log, without a server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from newscrawl.embedded.folder import LOG_ROTATE_BYTES, DataFolder, lease_pid

pytestmark = pytest.mark.skipif(
    sys.platform.startswith("win"), reason="flock(2) and /proc checks are POSIX only"
)


def _dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_layout_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = DataFolder("data")
    assert folder.root == tmp_path / "data"
    assert folder.db_dir == tmp_path / "data" / "db"
    assert folder.state_file.name == "server.json" and folder.log_file.name == "server.log"
    assert not folder.root.exists()  # nothing is created until used


def test_state_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = DataFolder(tmp_path)
    assert folder.read_state() is None
    folder.write_state({"pid": 12, "port": 27017})
    assert folder.read_state() == {"pid": 12, "port": 27017}
    assert [p.name for p in tmp_path.iterdir()] == ["server.json"]  # no temporary file left
    folder.remove_state(pid=13)  # names another pid: kept
    assert folder.read_state() == {"pid": 12, "port": 27017}
    folder.remove_state(pid=12)
    assert not folder.state_file.exists()
    folder.remove_state()  # missing: no error

    folder.state_file.write_text("{not json")
    assert folder.read_state() is None and "Ignoring unreadable" in caplog.text
    folder.state_file.write_text("[1, 2]")
    assert folder.read_state() is None


def test_live_server_needs_a_live_daemon_on_this_folder(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    folder.write_state({"pid": _dead_pid(), "port": 1})
    assert folder.live_server() is None
    folder.write_state({"pid": os.getpid(), "port": 1})  # alive, but not SecantusDB
    assert folder.live_server() is None
    folder.write_state({"pid": "12", "port": 1})
    assert folder.live_server() is None


def test_leases(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    assert folder.live_leases() == []  # no leases folder yet
    mine = folder.add_lease()
    assert lease_pid(mine) == os.getpid()
    assert json.loads(mine.read_text())["pid"] == os.getpid()
    dead = folder.leases_dir / f"{_dead_pid()}-abcd.lease"
    dead.write_text("{}")
    malformed = folder.leases_dir / "garbage.lease"
    malformed.write_text("{}")
    assert lease_pid(malformed) == 0
    assert folder.live_leases() == [mine]
    assert not dead.exists() and not malformed.exists()  # leases of dead processes removed
    second = folder.add_lease()
    assert folder.live_leases(exclude=mine) == [second]
    folder.clear_leases()
    assert folder.live_leases() == []


def test_lock_is_exclusive_and_times_out(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path / "new")
    with folder.locked(1.0):
        assert folder.root.is_dir()  # created
        # flock(2) locks conflict between open file descriptions, even in one process
        with pytest.raises(TimeoutError, match=r"held by another process for over 0 s"):
            with folder.locked(0.1):
                pass
    with folder.locked(0.1):  # released
        pass


def test_log_offsets_tail_and_rotation(tmp_path: Path) -> None:
    folder = DataFolder(tmp_path)
    assert folder.log_tail() == ""  # no log yet
    first = folder.begin_log("secantusd-py --port 1")
    assert first == 0
    with open(folder.log_file, "a") as log:
        log.write("".join(f"line {i}\n" for i in range(40)))
    second = folder.begin_log("secantusd-py --port 2")
    with open(folder.log_file, "a") as log:
        log.write("Address already in use\n")
    assert folder.log_tail(second).splitlines()[-1] == "Address already in use"
    assert "--port 2" in folder.log_tail(second) and "--port 1" not in folder.log_tail(second)
    assert folder.log_tail(first, lines=3).splitlines()[0] == "line 39"
    assert len(folder.log_tail(first).splitlines()) == 25

    with open(folder.log_file, "ab") as log:
        log.write(b"x" * (LOG_ROTATE_BYTES + 1))
    assert folder.begin_log("secantusd-py --port 3") == 0  # rotated: a fresh log
    assert folder.log_file.with_name("server.log.1").stat().st_size > LOG_ROTATE_BYTES
    assert folder.log_tail().startswith("--- newscrawl ")
