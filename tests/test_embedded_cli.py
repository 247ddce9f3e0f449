"""newscrawl.embedded.cli (``python -m newscrawl.embedded``) and the package's public names."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import newscrawl.embedded
from newscrawl.embedded.cli import COMMANDS, main
from newscrawl.embedded.health import ping
from newscrawl.embedded.process import find_server_pids, pid_alive
from newscrawl.embedded.server import EmbeddedMongo

#: Every public name of the former single module newscrawl/embedded.py.
FORMER_NAMES = [
    "DataFolder", "EmbeddedMongo", "HOST", "LOG_ROTATE_BYTES", "LOG_TAIL_LINES", "PORT_ATTEMPTS",
    "SERVER_PROGRAM", "find_server_pids", "find_server_program", "free_port",
    "is_server_process", "main", "pid_alive", "ping", "port_open", "resolve_data_dir",
    "resolve_mongo_uri", "server_status", "stop_server",
]


@pytest.fixture
def data(tmp_path: Path) -> Iterator[Path]:
    """A data folder; servers a failed test left running on it are killed afterwards."""
    yield tmp_path / "data"
    for pid in find_server_pids(tmp_path / "data" / "db"):
        os.kill(pid, signal.SIGKILL)


def test_package_keeps_the_former_names() -> None:
    missing = [name for name in FORMER_NAMES if not hasattr(newscrawl.embedded, name)]
    assert missing == []
    assert set(FORMER_NAMES) <= set(newscrawl.embedded.__all__)
    assert newscrawl.embedded.main is main


def test_help_lists_the_commands_without_loading_pymongo() -> None:
    probe = (
        "import sys, runpy; sys.argv = ['x', '--help']\n"
        "try:\n    runpy.run_module('newscrawl.embedded', run_name='__main__')\n"
        "except SystemExit as exc:\n    assert exc.code == 0, exc.code\n"
        "print('pymongo loaded:', 'pymongo' in sys.modules)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert "usage: python -m newscrawl.embedded" in shown.stdout
    for command, what in COMMANDS.items():
        assert f"{command:<8}{what}" in shown.stdout
    assert "pymongo loaded: False" in shown.stdout


def test_bad_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["restart"])
    assert info.value.code == 2 and "invalid choice: 'restart'" in capsys.readouterr().err


def test_cli_keeps_the_server_for_analysts(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def cli(*args: str) -> tuple[int, str]:
        code = main([*args, "--data-dir", str(data)])
        return code, capsys.readouterr().out.strip()

    assert cli("status")[0] == 3
    assert cli("uri")[0] == 1
    # start in its own process, as an analyst would: the server outlives the command
    started = subprocess.run(
        [sys.executable, "-m", "newscrawl.embedded", "start", "--data-dir", str(data)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0, started.stderr
    uri = started.stdout.strip()
    assert uri.startswith("mongodb://127.0.0.1:") and f"mongosh {uri}newscrawl" in started.stderr
    assert "Started embedded SecantusDB" in started.stderr  # __main__ configures logging
    assert cli("uri") == (0, uri)
    code, out = cli("status")
    status = json.loads(out)
    assert code == 0 and status["running"] and status["answering"] and status["keep"]
    # a crawl uses the kept server and leaves it running
    crawl = EmbeddedMongo(data)
    assert crawl.start() == uri and not crawl.owner
    crawl.stop()
    assert ping("127.0.0.1", status["port"])

    assert cli("stop") == (0, f"stopped pid {status['pid']}")
    assert not pid_alive(status["pid"])
    assert cli("status")[0] == 3
    assert cli("stop") == (0, "not running")


def test_data_dir_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEWSCRAWL_DATA_DIR", str(tmp_path / "from-env"))
    assert main(["status"]) == 3
    assert json.loads(capsys.readouterr().out)["data_dir"] == str(tmp_path / "from-env")
    # an explicit --data-dir wins over the environment
    assert main(["status", "--data-dir", str(tmp_path / "given")]) == 3
    assert json.loads(capsys.readouterr().out)["data_dir"] == str(tmp_path / "given")
