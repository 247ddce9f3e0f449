"""The embedded MongoDB-compatible server: SecantusDB run as a separate, detached process.

When no MongoDB URI is configured (setting ``NEWSCRAWL_MONGO_URI``, then the environment
variables ``NEWSCRAWL_MONGO_URI`` and ``MONGO_URI``), the crawl stores its data in an embedded
SecantusDB server (https://secantusdb.com/, WiredTiger storage, MongoDB wire protocol). SecantusDB
is GPL-2.0; newscrawl never imports it, it only starts the ``secantusd-py`` program as a separate
process and talks to it over a loopback socket with pymongo, so the process boundary keeps
newscrawl's own licence free.

Data folder layout (``NEWSCRAWL_DATA_DIR``, default ``./data``)::

    DATA_DIR/db/            WiredTiger files of the server (--storage-path)
    DATA_DIR/server.json    {"pid", "host", "port", "uri", "started_at", "started_by", "keep", ...}
    DATA_DIR/server.log     the server's stdout/stderr, appended per start (rotated at 5 MB)
    DATA_DIR/leases/        one file per running crawl that uses the server
    DATA_DIR/.lock          flock(2) serialising start/stop decisions between processes
    DATA_DIR/secantusd.toml optional server tuning (cache size, ...), read because the server
                            runs with the data folder as its working directory

Lifecycle policy (decided here, see also the CLI below):

* A crawl reuses a server that is already running on its data folder (``server.json`` names a
  live ``secantusd`` process that answers ``ping``); otherwise it starts one, detached into its
  own session, so Ctrl-C in the crawl's terminal does not kill the server in the middle of a write.
* Each crawl takes a *lease* while it uses the server. ``stop()`` gives the lease back; the server
  is terminated (SIGTERM, then SIGKILL after ``stop_timeout`` seconds) only when no other crawl
  holds a lease and the server was not started to be kept (``keep``). A crawl that reused a server
  another running crawl started leaves it alone; when the starter finishes first, the *last* crawl
  out stops it. So a fresh machine is not left with a daemon, and concurrent scrapyd jobs on one
  data folder never pull the server from under each other.
* ``python -m newscrawl.embedded start`` starts (or adopts) the server with ``keep`` set: crawls
  then use it and never stop it, and analysts can open ``mongodb://127.0.0.1:PORT/newscrawl`` in
  mongosh or Compass. ``stop``, ``status`` and ``uri`` do what they say.

Crash handling: a ``server.json`` whose pid is dead (or is another program after pid reuse, or a
zombie) is stale and replaced. WiredTiger locks its home folder with an fcntl lock that the
kernel releases when the process dies, so a crashed (killed) server leaves no lock behind; its
log is replayed on the next start. A killed server loses the writes of its last ~50 ms unless
they were acknowledged with ``j: true`` (SecantusDB honours it by flushing its log; the
store writes that way), which is why ``stop()`` sends SIGTERM first and SIGKILL only after
``stop_timeout`` seconds. A server that is alive but does not answer is reported with
its pid (``RuntimeError``) rather than killed: ``python -m newscrawl.embedded stop`` ends it.

The server listens on 127.0.0.1 only and runs without authentication.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from newscrawl import defaults

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
SERVER_PROGRAM = "secantusd-py"
#: Rotate server.log to server.log.1 when it is larger than this at a start (bytes).
LOG_ROTATE_BYTES = 5 * 1024 * 1024
#: Lines of server.log quoted in start errors.
LOG_TAIL_LINES = 25
#: Attempts at a free port when the port is chosen automatically (port 0).
PORT_ATTEMPTS = 3

_WINDOWS = sys.platform.startswith("win")
try:  # POSIX only; on other platforms the folder lock is a no-op.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


#: Run as ``python -I -c _LAUNCHER CMD...`` in a new session: starts CMD with the launcher's
#: stderr (server.log) as its stdout and stderr, prints its pid and exits (a double fork).
_LAUNCHER = (
    "import subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=2, stderr=2)\n"
    "print(p.pid, flush=True)\n"
    "import os; os._exit(0)  # leave it to init, without waiting\n"
)


# --- process helpers ----------------------------------------------------------------------------


def find_server_program() -> list[str]:
    """Return the command that runs the SecantusDB daemon.

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
    """True when process ``pid`` exists and is not a zombie."""
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
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _serves_folder(cmdline: list[str], db_dir: Path) -> bool:
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


def is_server_process(pid: int | None, db_dir: Path) -> bool:
    """True when ``pid`` is a live SecantusDB daemon serving ``db_dir``.

    Where ``/proc`` is readable the command line is checked, so a pid reused by another program
    does not pass; elsewhere only liveness is checked.
    """
    if not pid_alive(pid):
        return False
    assert pid is not None
    cmdline = _cmdline(pid)
    if cmdline is None:  # no /proc (or no permission): trust liveness
        return True
    return _serves_folder(cmdline, db_dir)


def find_server_pids(db_dir: str | Path) -> list[int]:
    """Pids of live SecantusDB daemons serving ``db_dir`` (Linux /proc scan; [] elsewhere)."""
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
    """True when something accepts TCP connections on ``host:port`` (timeout in seconds)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def ping(host: str, port: int, timeout: float = 2.0) -> bool:
    """True when a MongoDB-protocol server on ``host:port`` answers ``ping`` in ``timeout`` s."""
    import pymongo  # local: keep `python -m newscrawl.embedded --help` light

    if not port_open(host, port, timeout=min(timeout, 1.0)):
        return False
    ms = max(int(timeout * 1000), 50)
    client: Any = pymongo.MongoClient(
        host=host,
        port=port,
        directConnection=True,
        serverSelectionTimeoutMS=ms,
        connectTimeoutMS=ms,
        socketTimeoutMS=ms,
    )
    try:
        client.admin.command("ping")
        return True
    except Exception:  # noqa: BLE001 - any failure means "does not answer"
        return False
    finally:
        client.close()


def free_port(host: str = HOST) -> int:
    """A TCP port on ``host`` that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _terminate_pid(pid: int, timeout: float) -> None:
    """SIGTERM ``pid``, wait up to ``timeout`` seconds, then SIGKILL (a process not our child)."""
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


def _utcnow_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


# --- the data folder ----------------------------------------------------------------------------


class DataFolder:
    """Paths and small file operations of one embedded data folder."""

    def __init__(self, data_dir: str | Path) -> None:
        self.root = Path(data_dir).expanduser().absolute()
        self.db_dir = self.root / "db"
        self.state_file = self.root / "server.json"
        self.log_file = self.root / "server.log"
        self.leases_dir = self.root / "leases"
        self.lock_file = self.root / ".lock"

    def read_state(self) -> dict[str, Any] | None:
        """Contents of server.json, or None when missing or unreadable (logged)."""
        try:
            state = json.loads(self.state_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            logger.warning("Ignoring unreadable %s: %s", self.state_file, exc)
            return None
        return state if isinstance(state, dict) else None

    def write_state(self, state: dict[str, Any]) -> None:
        tmp = self.state_file.with_name(f"{self.state_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.state_file)

    def remove_state(self, pid: int | None = None) -> None:
        """Remove server.json (only if it names ``pid``, when given)."""
        if pid is not None:
            state = self.read_state()
            if state is not None and state.get("pid") != pid:
                return
        with contextlib.suppress(FileNotFoundError):
            self.state_file.unlink()

    def add_lease(self) -> Path:
        self.leases_dir.mkdir(parents=True, exist_ok=True)
        lease = self.leases_dir / f"{os.getpid()}-{secrets.token_hex(4)}.lease"
        lease.write_text(json.dumps({"pid": os.getpid(), "since": _utcnow_iso()}), encoding="utf-8")
        return lease

    def live_leases(self, exclude: Path | None = None) -> list[Path]:
        """Lease files of live processes; leases of dead processes are removed."""
        live = []
        with contextlib.suppress(FileNotFoundError):
            for lease in self.leases_dir.glob("*.lease"):
                if exclude is not None and lease == exclude:
                    continue
                try:
                    pid = int(lease.name.split("-", 1)[0])
                except ValueError:
                    pid = 0
                if pid_alive(pid):
                    live.append(lease)
                else:
                    with contextlib.suppress(OSError):
                        lease.unlink()
        return sorted(live)

    def clear_leases(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            for lease in self.leases_dir.glob("*.lease"):
                with contextlib.suppress(OSError):
                    lease.unlink()

    @contextlib.contextmanager
    def locked(self, timeout: float) -> Iterator[None]:
        """Hold an exclusive flock on DATA_DIR/.lock (wait up to ``timeout`` seconds).

        Raises:
            TimeoutError: another process held the lock longer than ``timeout``.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        if fcntl is None:  # pragma: no cover
            yield
            return
        with open(self.lock_file, "a+b") as handle:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(
                            f"{self.lock_file} is held by another process for over {timeout:.0f} s"
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def log_tail(self, offset: int = 0, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of server.log written after byte ``offset``."""
        try:
            with open(self.log_file, "rb") as handle:
                handle.seek(offset)
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def live_server(self) -> dict[str, Any] | None:
        """server.json when it names a live daemon serving this folder, else None."""
        state = self.read_state()
        if state is None:
            return None
        pid = state.get("pid")
        if isinstance(pid, int) and is_server_process(pid, self.db_dir):
            return state
        return None


# --- the server manager -------------------------------------------------------------------------


class EmbeddedMongo:
    """Start, reuse and stop the SecantusDB server of one data folder.

    Args:
        data_dir: the data folder (created when missing); layout in the module docstring.
        port: TCP port on 127.0.0.1 for a server started here; 0 picks a free port. A server
            already running on the folder is reused on its own port.
        start_timeout: seconds to wait for a new server to answer ``ping``.
        stop_timeout: seconds between SIGTERM and SIGKILL in :meth:`stop`.
        keep_running: start (or mark) the server as kept: :meth:`stop` then never terminates it
            (what ``python -m newscrawl.embedded start`` does).

    Use as ``uri = server.start(); ...; server.stop()`` or as a context manager.
    """

    def __init__(
        self,
        data_dir: str | Path,
        *,
        port: int = 0,
        start_timeout: float = defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT,
        stop_timeout: float = 10.0,
        keep_running: bool = False,
    ) -> None:
        self.folder = DataFolder(data_dir)
        self.requested_port = int(port)
        self.start_timeout = float(start_timeout)
        self.stop_timeout = float(stop_timeout)
        self.keep_running = keep_running
        self.host = HOST
        self.port: int | None = None
        self.pid: int | None = None
        #: True when this object started the server process.
        self.owner = False
        self._lease: Path | None = None

    # paths, for callers and tests
    @property
    def data_dir(self) -> Path:
        return self.folder.root

    @property
    def db_dir(self) -> Path:
        return self.folder.db_dir

    @property
    def state_file(self) -> Path:
        return self.folder.state_file

    @property
    def log_file(self) -> Path:
        return self.folder.log_file

    @property
    def uri(self) -> str | None:
        """``mongodb://127.0.0.1:PORT/`` once started, else None."""
        return f"mongodb://{self.host}:{self.port}/" if self.port else None

    @property
    def started(self) -> bool:
        return self.port is not None

    def __repr__(self) -> str:
        return (
            f"<EmbeddedMongo {str(self.data_dir)!r} pid={self.pid} port={self.port} "
            f"owner={self.owner}>"
        )

    def __enter__(self) -> EmbeddedMongo:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- start ----------------------------------------------------------------------------------

    def start(self) -> str:
        """Reuse the folder's running server or start a new one; return its URI.

        Returns:
            ``mongodb://127.0.0.1:PORT/`` (add the database name yourself).

        Raises:
            RuntimeError: the server did not answer within ``start_timeout`` seconds, exited at
                start (the message quotes the tail of server.log), the folder is locked by a
                daemon that does not answer, or SecantusDB is not installed.
            TimeoutError: another process kept the folder's start lock too long.
        """
        if self.started:
            assert self.uri is not None
            return self.uri
        self.folder.root.mkdir(parents=True, exist_ok=True)
        with self.folder.locked(self.start_timeout + self.stop_timeout + 10.0):
            state = self.folder.read_state()
            if state is not None:
                if self._try_reuse(state):
                    assert self.uri is not None
                    return self.uri
                logger.info(
                    "Removing stale %s (pid %s is not running)", self.state_file, state.get("pid")
                )
                self.folder.remove_state()
                self.folder.clear_leases()
            holders = find_server_pids(self.db_dir)
            if holders:
                raise RuntimeError(
                    f"{self.db_dir} is in use by SecantusDB process(es) {holders} that "
                    f"{self.state_file.name} does not describe; end them with "
                    f"`kill {' '.join(map(str, holders))}` and start again"
                )
            self._spawn_until_ready()
            assert self.pid is not None and self.port is not None
            self.folder.write_state(
                {
                    "pid": self.pid,
                    "host": self.host,
                    "port": self.port,
                    "uri": self.uri,
                    "storage_path": str(self.db_dir),
                    "started_at": _utcnow_iso(),
                    "started_by": os.getpid(),
                    "keep": self.keep_running,
                }
            )
            if not self.keep_running:
                self._lease = self.folder.add_lease()
        logger.info(
            "Started embedded SecantusDB pid %d at %s (data %s)", self.pid, self.uri, self.data_dir
        )
        assert self.uri is not None
        return self.uri

    def _try_reuse(self, state: dict[str, Any]) -> bool:
        pid, port = state.get("pid"), state.get("port")
        if not isinstance(pid, int) or not isinstance(port, int):
            return False
        if not is_server_process(pid, self.db_dir):
            return False
        host = str(state.get("host") or HOST)
        if not ping(host, port, timeout=min(5.0, max(self.start_timeout, 0.5))):
            raise RuntimeError(
                f"SecantusDB pid {pid} holds {self.db_dir} but does not answer on {host}:{port}; "
                f"stop it with `python -m newscrawl.embedded stop --data-dir {self.data_dir}` "
                f"(server log: {self.log_file})"
            )
        self.host, self.port, self.pid = host, port, pid
        self.owner = False
        if self.keep_running and not state.get("keep"):
            self.folder.write_state({**state, "keep": True})
        if not self.keep_running:
            self._lease = self.folder.add_lease()
        logger.info("Reusing embedded SecantusDB pid %d at %s", pid, self.uri)
        return True

    def _spawn_until_ready(self) -> None:
        program = find_server_program()
        self.db_dir.mkdir(parents=True, exist_ok=True)
        attempts = 1 if self.requested_port else PORT_ATTEMPTS
        for attempt in range(1, attempts + 1):
            port = self.requested_port or free_port(self.host)
            pid, offset = self._spawn(program, port)
            failure = self._wait_ready(pid, port)
            if failure is None:
                self.pid, self.port, self.owner = pid, port, True
                return
            tail = self.folder.log_tail(offset)
            if attempt < attempts and "Address already in use" in tail:
                logger.info("Port %d was taken before the server bound it; trying another", port)
                continue
            hint = ""
            if "resource busy" in tail.lower():
                hint = (
                    f"\n{self.db_dir} is locked by another WiredTiger process "
                    f"(pids: {find_server_pids(self.db_dir) or 'unknown'})."
                )
            raise RuntimeError(
                f"Embedded SecantusDB on {self.host}:{port} {failure}.{hint}\n"
                f"Last lines of {self.log_file}:\n{tail or '(empty)'}"
            )

    def _spawn(self, program: list[str], port: int) -> tuple[int, int]:
        """Start the daemon detached; return (its pid, server.log offset before its output).

        A short-lived launcher interpreter starts the daemon and exits, so the daemon is not a
        child of the crawl (no zombie, no SIGCHLD for Twisted, no ``ResourceWarning`` when the
        crawl leaves it running) and runs in the launcher's new session (Ctrl-C in the crawl's
        terminal does not reach it).
        """
        log_file = self.log_file
        with contextlib.suppress(OSError):
            if log_file.stat().st_size > LOG_ROTATE_BYTES:
                os.replace(log_file, log_file.with_name(log_file.name + ".1"))
        cmd = [*program, "--host", self.host, "--port", str(port)]
        cmd += ["--storage-path", str(self.db_dir)]
        with open(log_file, "ab") as log:
            offset = log.tell()
            log.write(f"--- newscrawl {_utcnow_iso()}: {' '.join(cmd)}\n".encode())
            log.flush()
            kwargs: dict[str, Any] = {}
            if _WINDOWS:  # pragma: no cover
                kwargs["creationflags"] = getattr(
                    subprocess, "CREATE_NEW_PROCESS_GROUP", 0
                ) | getattr(subprocess, "DETACHED_PROCESS", 0)
            else:
                kwargs["start_new_session"] = True
            launcher = subprocess.run(
                [sys.executable, "-I", "-c", _LAUNCHER, *cmd],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=str(self.data_dir),
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
                f"could not start {' '.join(cmd)} (launcher exit code {launcher.returncode}); "
                f"see {log_file}:\n{self.folder.log_tail(offset)}"
            ) from None
        logger.debug("Spawned %s as pid %d", cmd, pid)
        return pid, offset

    def _wait_ready(self, pid: int, port: int) -> str | None:
        """None once the server answers ping, else why not (the process is then ended)."""
        deadline = time.monotonic() + self.start_timeout
        while True:
            if not pid_alive(pid):
                return "exited while starting"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            if port_open(self.host, port, timeout=min(0.2, remaining)) and ping(
                self.host, port, timeout=max(min(2.0, remaining), 0.1)
            ):
                return None
            time.sleep(min(0.05, max(deadline - time.monotonic(), 0)))
        _terminate_pid(pid, self.stop_timeout)
        return f"did not answer within {self.start_timeout:g} s (start_timeout)"

    # -- stop -----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Give the lease back; terminate the server if nobody else needs it.

        The server is terminated (SIGTERM, after ``stop_timeout`` seconds SIGKILL) and
        server.json removed when this object started it, or when it was started by a crawl that
        has finished, and in both cases only if no other live crawl holds a lease and the
        server is not kept (``keep``). Otherwise it keeps running. Idempotent; never raises for
        an already stopped server.
        """
        if not self.started:
            return
        try:
            with self.folder.locked(self.stop_timeout + 30.0):
                self._stop_locked()
        finally:
            self.port = None
            self.pid = None
            self.owner = False
            self._lease = None

    def _stop_locked(self) -> None:
        if self._lease is not None:
            with contextlib.suppress(FileNotFoundError):
                self._lease.unlink()
        state = self.folder.read_state() or {}
        if state.get("pid") != self.pid:
            # server.json is gone or names another server: ours was stopped (CLI ``stop``) or
            # crashed and was replaced by someone else
            return
        if self.keep_running or state.get("keep"):
            logger.info("Leaving kept embedded server pid %s running at %s", self.pid, self.uri)
            return
        others = self.folder.live_leases()
        if others:
            logger.info(
                "Leaving embedded server pid %s running: %d other crawl(s) still use it",
                self.pid,
                len(others),
            )
            return
        # Nobody else uses it: the starter stops it, or - when the starter has already left
        # it running for us - the last crawl out does.
        logger.info("Stopping embedded SecantusDB pid %s at %s", self.pid, self.uri)
        if self.pid is not None:
            _terminate_pid(self.pid, self.stop_timeout)
        self.folder.remove_state(pid=self.pid)


# --- module functions ---------------------------------------------------------------------------


def stop_server(data_dir: str | Path, *, timeout: float = 10.0, force: bool = False) -> int | None:
    """Stop the server of ``data_dir`` whoever started it (the CLI ``stop``).

    Args:
        timeout: seconds between SIGTERM and SIGKILL.
        force: stop it even while crawls hold leases on it.

    Returns:
        The pid that was stopped, or None when no server was running (a stale server.json is
        removed).

    Raises:
        RuntimeError: crawls still use the server and ``force`` is false.
    """
    folder = DataFolder(data_dir)
    with folder.locked(timeout + 30.0):
        state = folder.live_server()
        pid = state.get("pid") if state else None
        if not isinstance(pid, int):
            folder.remove_state()
            folder.clear_leases()
            orphans = find_server_pids(folder.db_dir)
            for orphan in orphans:  # a daemon whose server.json was lost
                logger.info("Stopping SecantusDB pid %d serving %s", orphan, folder.db_dir)
                _terminate_pid(orphan, timeout)
            return orphans[0] if orphans else None
        leases = folder.live_leases()
        if leases and not force:
            users = sorted({lease.name.split("-", 1)[0] for lease in leases})
            raise RuntimeError(
                f"embedded server pid {pid} is in use by crawl process(es) {', '.join(users)}; "
                "use --force to stop it anyway"
            )
        _terminate_pid(pid, timeout)
        folder.remove_state()
        folder.clear_leases()
        return pid


def server_status(data_dir: str | Path, *, timeout: float = 2.0) -> dict[str, Any]:
    """Describe the server of ``data_dir``.

    Returns:
        ``{"running": bool, "answering": bool, "data_dir": str, "leases": [pid, ...]}`` plus the
        server.json fields (pid, port, uri, started_at, keep, ...) when a server is running.
    """
    folder = DataFolder(data_dir)
    state = folder.live_server()
    info: dict[str, Any] = {"running": False, "answering": False, "data_dir": str(folder.root)}
    if state is not None:
        info.update(state)
        info["running"] = True
        port = state.get("port")
        info["answering"] = isinstance(port, int) and ping(
            str(state.get("host") or HOST), port, timeout=timeout
        )
        info["leases"] = [int(p.name.split("-", 1)[0]) for p in folder.live_leases()]
    return info


def resolve_data_dir(data_dir: str | Path | None = None) -> str:
    """The embedded data folder: env ``NEWSCRAWL_DATA_DIR`` if set, else ``data_dir``, else
    the default ``./data``."""
    return (
        os.environ.get("NEWSCRAWL_DATA_DIR")
        or (str(data_dir) if data_dir else "")
        or defaults.NEWSCRAWL_DATA_DIR
    )


def resolve_mongo_uri(
    setting_uri: str | None,
    data_dir: str | Path | None,
    *,
    port: int = defaults.NEWSCRAWL_EMBEDDED_PORT,
    start_timeout: float = defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT,
) -> tuple[str, EmbeddedMongo | None]:
    """Decide which MongoDB server the crawl uses.

    Order: ``setting_uri`` (setting ``NEWSCRAWL_MONGO_URI``), env ``NEWSCRAWL_MONGO_URI``, env
    ``MONGO_URI``; when all are empty the embedded server of the data folder is started or
    reused. The data folder is env ``NEWSCRAWL_DATA_DIR`` when set, else ``data_dir`` (the
    setting ``NEWSCRAWL_DATA_DIR``, default ``./data``).

    Returns:
        ``(uri, embedded)``: ``embedded`` is the :class:`EmbeddedMongo` to ``stop()`` when the
        crawl ends, or None for a configured server.

    Raises:
        RuntimeError: the embedded server could not be started (see :meth:`EmbeddedMongo.start`).
    """
    for candidate in (
        setting_uri,
        os.environ.get("NEWSCRAWL_MONGO_URI"),
        os.environ.get("MONGO_URI"),
    ):
        if candidate and candidate.strip():
            return candidate.strip(), None
    server = EmbeddedMongo(resolve_data_dir(data_dir), port=port, start_timeout=start_timeout)
    return server.start(), server


# --- command line -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``python -m newscrawl.embedded start|stop|status|uri [--data-dir DIR]``."""
    parser = argparse.ArgumentParser(
        prog="python -m newscrawl.embedded",
        description=(
            "Manage the embedded SecantusDB server of a newscrawl data folder. A server started "
            "here is kept running after crawls (they reuse it), so mongosh/Compass can open "
            "mongodb://127.0.0.1:PORT/newscrawl."
        ),
    )
    parser.add_argument("command", choices=["start", "stop", "status", "uri"])
    parser.add_argument(
        "--data-dir",
        default=None,
        help="data folder (default: env NEWSCRAWL_DATA_DIR, else ./data)",
    )
    parser.add_argument("--port", type=int, default=0, help="start: port (0 = a free port)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=defaults.NEWSCRAWL_EMBEDDED_START_TIMEOUT,
        help="start: seconds to wait for the server; stop: seconds before SIGKILL",
    )
    parser.add_argument("--force", action="store_true", help="stop: even while crawls use it")
    parser.add_argument(
        "--database", default=defaults.NEWSCRAWL_MONGO_DATABASE, help="database name in hints"
    )
    args = parser.parse_args(argv)
    data_dir = resolve_data_dir(args.data_dir) if args.data_dir is None else args.data_dir

    if args.command == "start":
        import warnings

        server = EmbeddedMongo(
            data_dir, port=args.port, start_timeout=args.timeout, keep_running=True
        )
        try:
            uri = server.start()
        except (RuntimeError, TimeoutError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        # The daemon outlives this command on purpose; don't warn about the running child.
        warnings.simplefilter("ignore", ResourceWarning)
        print(uri)
        print(f"mongosh {uri}{args.database}", file=sys.stderr)
        return 0
    if args.command == "stop":
        try:
            pid = stop_server(data_dir, timeout=args.timeout, force=args.force)
        except (RuntimeError, TimeoutError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(f"stopped pid {pid}" if pid else "not running")
        return 0
    info = server_status(data_dir)
    if args.command == "uri":
        if not info["running"]:
            print(f"not running ({info['data_dir']})", file=sys.stderr)
            return 1
        print(info["uri"])
        return 0
    print(json.dumps(info, indent=2, sort_keys=True, default=str))
    return 0 if info["running"] else 3


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    sys.exit(main())
