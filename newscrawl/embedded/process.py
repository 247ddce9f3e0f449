"""Process, pid and port helpers of the embedded server (no database client here).

Pids are checked through Linux ``/proc`` where it is readable (command line, zombie state), so a
pid that the kernel reused for another program is not taken for the server; elsewhere only
liveness is checked. The daemon is started through a short-lived launcher interpreter (a double
fork), so it is never a child of the crawl.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

#: The only interface the server listens on (no authentication: loopback only).
HOST = "127.0.0.1"
#: Name of the SecantusDB daemon program (PyPI ``secantusdb``).
SERVER_PROGRAM = "secantusd-py"

_WINDOWS = sys.platform.startswith("win")

#: Run as ``python -I -c _LAUNCHER CMD...`` in a new session: starts CMD with the launcher's
#: stderr (server.log) as its stdout and stderr, prints its pid and exits (a double fork).
_LAUNCHER = (
    "import subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=2, stderr=2)\n"
    "print(p.pid, flush=True)\n"
    "import os; os._exit(0)  # leave it to init, without waiting\n"
)


def find_server_program() -> list[str]:
    """Return the command (argv prefix) that runs the SecantusDB daemon.

    ``secantusd-py`` next to ``sys.executable`` (the virtualenv's ``bin``), else on ``PATH``.

    Raises:
        RuntimeError: SecantusDB is not installed.
    """
    names = [SERVER_PROGRAM, SERVER_PROGRAM + ".exe"] if _WINDOWS else [SERVER_PROGRAM]
    for name in names:
        candidate = Path(sys.executable).parent / name
        if candidate.is_file():
            return [str(candidate)]
    found = shutil.which(SERVER_PROGRAM)
    if found:
        return [found]
    raise RuntimeError(
        f"{SERVER_PROGRAM} not found next to {sys.executable} nor on PATH: install SecantusDB "
        "(pip install secantusdb) or set NEWSCRAWL_MONGO_URI / MONGO_URI to a MongoDB server"
    )


def _proc_state(pid: int) -> str | None:
    """One-letter Linux process state (``R``, ``S``, ``Z``...) or None where /proc is absent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[0] if ")" in stat else None


def pid_alive(pid: int | None) -> bool:
    """True when process ``pid`` exists and is not a zombie; False for None, 0 or negative."""
    if not pid or pid <= 0:
        return False
    if _WINDOWS:  # pragma: no cover
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return _proc_state(pid) not in ("Z", "X")


def _cmdline(pid: int) -> list[str] | None:
    """Command line of ``pid`` from /proc, or None where it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _serves_folder(cmdline: list[str], db_dir: Path) -> bool:
    """True when ``cmdline`` runs SecantusDB with ``--storage-path`` ``db_dir``."""
    if not any(SERVER_PROGRAM in part or part == "secantus" for part in cmdline):
        return False
    for i, part in enumerate(cmdline):
        value = None
        if part == "--storage-path" and i + 1 < len(cmdline):
            value = cmdline[i + 1]
        elif part.startswith("--storage-path="):
            value = part.split("=", 1)[1]
        if value is not None:
            with contextlib.suppress(OSError):
                return Path(value).resolve() == db_dir.resolve()
    return False


def server_address(pid: int) -> tuple[str, int] | None:
    """``(host, port)`` a SecantusDB daemon was started with (``--host`` / ``--port`` of its
    command line in /proc; host :data:`HOST` when absent), or None when unreadable."""
    cmdline = _cmdline(pid)
    if not cmdline:
        return None
    values: dict[str, str] = {}
    for i, part in enumerate(cmdline):
        for name in ("--host", "--port"):
            if part == name and i + 1 < len(cmdline):
                values[name] = cmdline[i + 1]
            elif part.startswith(name + "="):
                values[name] = part.split("=", 1)[1]
    try:
        return values.get("--host", HOST), int(values["--port"])
    except (KeyError, ValueError):
        return None


def is_server_process(pid: int | None, db_dir: str | Path) -> bool:
    """True when ``pid`` is a live SecantusDB daemon serving the folder ``db_dir``.

    Where ``/proc`` is readable the command line is checked, so a pid reused by another program
    does not pass; elsewhere only liveness is checked.
    """
    if pid is None or not pid_alive(pid):
        return False
    cmdline = _cmdline(pid)
    if cmdline is None:  # no /proc (or no permission): trust liveness
        return True
    return _serves_folder(cmdline, Path(db_dir))


def find_server_pids(db_dir: str | Path) -> list[int]:
    """Sorted pids of live SecantusDB daemons serving ``db_dir`` (Linux /proc scan; [] elsewhere)."""
    db_dir = Path(db_dir)
    pids = []
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                cmdline = _cmdline(int(entry.name))
                if cmdline and _serves_folder(cmdline, db_dir) and pid_alive(int(entry.name)):
                    pids.append(int(entry.name))
    return sorted(pids)


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    """True when something accepts TCP connections on ``host:port`` within ``timeout`` seconds."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that is free right now (another process may take it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def terminate(pid: int, timeout: float) -> None:
    """End ``pid``: SIGTERM, wait up to ``timeout`` seconds, then SIGKILL (and wait up to 5 s).

    For a process that is not our child (it is never reaped here). Never raises for a process
    that is already gone.
    """
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        logger.warning(
            "Embedded server pid %d ignored SIGTERM for %.1f s; killing it", pid, timeout
        )
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        deadline = time.monotonic() + 5.0
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)


def spawn_detached(cmd: list[str], *, log_file: Path, cwd: Path) -> int:
    """Start ``cmd`` detached and return its pid; its stdout and stderr append to ``log_file``.

    A short-lived launcher interpreter starts the program and exits, so the program is not a
    child of the caller (no zombie, no SIGCHLD for Twisted, no ``ResourceWarning`` when the
    caller leaves it running) and runs in the launcher's new session (Ctrl-C in the caller's
    terminal does not reach it). ``cwd`` is its working directory.

    Raises:
        RuntimeError: the launcher did not report a pid (the reason is in ``log_file``).
        subprocess.TimeoutExpired: the launcher did not exit within 60 seconds.
    """
    kwargs: dict[str, Any] = {}
    if _WINDOWS:  # pragma: no cover
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(
            subprocess, "DETACHED_PROCESS", 0
        )
    else:
        kwargs["start_new_session"] = True
    with open(log_file, "ab") as log:
        launcher = subprocess.run(
            [sys.executable, "-I", "-c", _LAUNCHER, *cmd],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=str(cwd),
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            close_fds=True,
            timeout=60,
            check=False,
            **kwargs,
        )
    try:
        pid = int(launcher.stdout.decode().strip())
    except ValueError:
        raise RuntimeError(
            f"could not start {' '.join(cmd)} (launcher exit code {launcher.returncode})"
        ) from None
    logger.debug("Spawned %s as pid %d", cmd, pid)
    return pid
