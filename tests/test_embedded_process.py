"""newscrawl.embedded.process and .health: pids, ports, the detached launcher and ``ping``,
checked with stand-in processes (no database server)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from newscrawl.embedded import process
from newscrawl.embedded.health import ping
from newscrawl.embedded.process import (
    find_server_pids,
    find_server_program,
    free_port,
    is_server_process,
    pid_alive,
    port_open,
    spawn_detached,
    terminate,
)

pytestmark = pytest.mark.skipif(
    sys.platform.startswith("win"), reason="process-group and /proc checks are POSIX only"
)


def _fake_server(db_dir: Path, *, ignore_sigterm: bool = False) -> subprocess.Popen[bytes]:
    """A sleeping Python whose command line looks like ``secantusd-py --storage-path db_dir``."""
    code = "import signal, time\n"
    if ignore_sigterm:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True); time.sleep(60)\n"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "secantusd-py", "--storage-path", str(db_dir)],
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    proc.stdout.close()
    return proc


@pytest.fixture
def listener() -> Iterator[int]:
    """A port that accepts TCP connections but never speaks the MongoDB protocol."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(None) and not pid_alive(0) and not pid_alive(-1)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while pid_alive(child.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pid_alive(child.pid)  # a zombie (exited, not yet reaped) is not alive
    child.wait()
    assert not pid_alive(child.pid)


def test_server_process_is_recognised_by_its_storage_path(tmp_path: Path) -> None:
    fake = _fake_server(tmp_path / "db")
    try:
        assert is_server_process(fake.pid, tmp_path / "db")
        assert is_server_process(fake.pid, str(tmp_path / "db"))
        assert not is_server_process(fake.pid, tmp_path / "other")
        assert not is_server_process(os.getpid(), tmp_path / "db")  # alive, another program
        assert not is_server_process(None, tmp_path / "db")
        assert find_server_pids(tmp_path / "db") == [fake.pid]
        assert find_server_pids(tmp_path / "other") == []
    finally:
        fake.kill()
        fake.wait()
    assert find_server_pids(tmp_path / "db") == []


def test_terminate_escalates_to_sigkill(tmp_path: Path) -> None:
    stubborn = _fake_server(tmp_path / "db", ignore_sigterm=True)
    started = time.monotonic()
    terminate(stubborn.pid, timeout=0.3)
    assert time.monotonic() - started >= 0.3
    assert stubborn.wait(5) == -signal.SIGKILL
    terminate(stubborn.pid, timeout=0.3)  # already gone: no error


def test_ports(listener: int) -> None:
    assert port_open("127.0.0.1", listener)
    port = free_port()
    assert 0 < port < 65536 and not port_open("127.0.0.1", port)


def test_ping_answers_false_without_a_mongodb_server(listener: int) -> None:
    assert not ping("127.0.0.1", free_port(), timeout=0.5)  # closed port
    started = time.monotonic()
    assert not ping("127.0.0.1", listener, timeout=0.5)  # open, but silent
    assert time.monotonic() - started < 5


def test_spawn_detached_runs_in_its_own_session_and_logs(tmp_path: Path) -> None:
    log_file = tmp_path / "server.log"
    code = "import sys, time; print('hello out'); print('hello err', file=sys.stderr); time.sleep(60)"
    pid = spawn_detached([sys.executable, "-c", code], log_file=log_file, cwd=tmp_path)
    try:
        assert pid_alive(pid)
        assert os.getsid(pid) != os.getsid(0)  # Ctrl-C of the caller's terminal misses it
        assert int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1]) != (
            os.getpid()
        )  # not our child
        assert Path(f"/proc/{pid}/cwd").resolve() == tmp_path.resolve()
        deadline = time.monotonic() + 10
        while "hello err" not in log_file.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {"hello out", "hello err"} <= set(log_file.read_text().splitlines())
    finally:
        terminate(pid, timeout=5)
    assert not pid_alive(pid)


def test_spawn_detached_reports_a_program_that_does_not_exist(tmp_path: Path) -> None:
    log_file = tmp_path / "server.log"
    with pytest.raises(RuntimeError, match="could not start .*no-such-program"):
        spawn_detached([str(tmp_path / "no-such-program")], log_file=log_file, cwd=tmp_path)
    assert "no-such-program" in log_file.read_text()  # the launcher's traceback


def test_find_server_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process.sys, "executable", str(tmp_path / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RuntimeError, match="secantusd-py not found .* MONGO_URI"):
        find_server_program()
    (tmp_path / "bin").mkdir()
    beside = tmp_path / "bin" / "secantusd-py"
    beside.write_text("#!/bin/sh\n")
    beside.chmod(0o755)
    assert find_server_program() == [str(beside)]
