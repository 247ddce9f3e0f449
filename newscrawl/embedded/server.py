"""Start, reuse and stop the SecantusDB server of one data folder.

Lifecycle policy (see also the command line, :mod:`newscrawl.embedded.cli`):

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
zombie) is stale and replaced; a live daemon on the folder that no ``server.json`` names (its
crawl was killed between spawning it and writing the file) is adopted when it answers. WiredTiger locks its home folder with an fcntl lock that the
kernel releases when the process dies, so a crashed (killed) server leaves no lock behind; its
log is replayed on the next start. A killed server loses the writes of its last ~50 ms unless
they were acknowledged with ``j: true`` (SecantusDB honours it by flushing its log; the
store writes that way), which is why ``stop()`` sends SIGTERM first and SIGKILL only after
``stop_timeout`` seconds. A server that is alive but does not answer is reported with
its pid (``RuntimeError``) rather than killed: ``python -m newscrawl.embedded stop`` ends it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Any

from newscrawl.defaults import NEWSCRAWL_EMBEDDED_START_TIMEOUT
from newscrawl.embedded.folder import DataFolder, utc_now_iso
from newscrawl.embedded.health import ping
from newscrawl.embedded.process import (HOST, find_server_pids, find_server_program, free_port,
                                        is_server_process, pid_alive, port_open, server_address,
                                        spawn_detached, terminate)

logger = logging.getLogger(__name__)

#: Attempts at a free port when the port is chosen automatically (port 0).
PORT_ATTEMPTS = 3
#: Default seconds between SIGTERM and SIGKILL when a server is stopped.
STOP_TIMEOUT = 10.0


class _FolderPath:
    """A read-only attribute of :class:`EmbeddedMongo`: the path ``name`` of its
    :class:`DataFolder`."""

    def __init__(self, name: str, doc: str) -> None:
        self.name = name
        self.__doc__ = doc

    def __get__(self, server: EmbeddedMongo, owner: type | None = None) -> Path:
        path: Path = getattr(server.folder, self.name)
        return path


class EmbeddedMongo:
    """Start, reuse and stop the SecantusDB server of one data folder.

    Args:
        data_dir: the data folder (created when missing); layout in :mod:`.folder`.
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
        start_timeout: float = NEWSCRAWL_EMBEDDED_START_TIMEOUT,
        stop_timeout: float = STOP_TIMEOUT,
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
    data_dir = _FolderPath("root", "The absolute data folder.")
    db_dir = _FolderPath("db_dir", "The server's WiredTiger folder (DATA_DIR/db).")
    state_file = _FolderPath("state_file", "DATA_DIR/server.json.")
    log_file = _FolderPath("log_file", "DATA_DIR/server.log.")

    @property
    def uri(self) -> str | None:
        """``mongodb://127.0.0.1:PORT/`` once started, else None."""
        return f"mongodb://{self.host}:{self.port}/" if self.port else None

    @property
    def started(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
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
        if self.uri is not None:
            return self.uri
        self.folder.root.mkdir(parents=True, exist_ok=True)
        with self.folder.locked(self.start_timeout + self.stop_timeout + 10.0):
            state = self.folder.read_state()
            if state is not None:
                if self._try_reuse(state) and self.uri is not None:
                    return self.uri
                logger.info(
                    "Removing stale %s (pid %s is not running)", self.state_file, state.get("pid")
                )
                self.folder.remove_state()
                self.folder.clear_leases()
            holders = find_server_pids(self.db_dir)
            if len(holders) == 1 and self._try_adopt(holders[0]) and self.uri is not None:
                return self.uri
            if holders:
                raise RuntimeError(
                    f"{self.db_dir} is in use by SecantusDB process(es) {holders} that "
                    f"{self.state_file.name} does not describe; end them with "
                    f"`kill {' '.join(map(str, holders))}` and start again"
                )
            uri = self._spawn_until_ready()
            self.folder.write_state(
                {
                    "pid": self.pid,
                    "host": self.host,
                    "port": self.port,
                    "uri": uri,
                    "storage_path": str(self.db_dir),
                    "started_at": utc_now_iso(),
                    "started_by": os.getpid(),
                    "keep": self.keep_running,
                }
            )
            if not self.keep_running:
                self._lease = self.folder.add_lease()
        logger.info(
            "Started embedded SecantusDB pid %d at %s (data %s)", self.pid, uri, self.data_dir
        )
        return uri

    def _try_reuse(self, state: dict[str, Any]) -> bool:
        """Adopt the server ``state`` names when it is alive; False when it is stale."""
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

    def _try_adopt(self, pid: int) -> bool:
        """Adopt a daemon serving this folder that no ``server.json`` names - one a crawl spawned
        and was killed (kill -9) before it wrote ``server.json`` - when it answers ``ping`` on
        the port of its command line: ``server.json`` is written for it and it is used like a
        reused server (the last crawl out stops it). False when it does not answer."""
        address = server_address(pid)
        if address is None:
            return False
        host, port = address
        if not ping(host, port, timeout=min(5.0, max(self.start_timeout, 0.5))):
            return False
        state = {"pid": pid, "host": host, "port": port, "uri": f"mongodb://{host}:{port}/",
                 "storage_path": str(self.db_dir), "started_at": utc_now_iso(),
                 "started_by": None, "keep": self.keep_running}
        self.folder.write_state(state)
        logger.warning("Adopting embedded SecantusDB pid %d at %s: it serves %s but no %s named "
                       "it (the crawl that started it was killed)", pid, state["uri"],
                       self.db_dir, self.state_file.name)
        return self._try_reuse(state)

    def _spawn_until_ready(self) -> str:
        """Start a daemon (up to :data:`PORT_ATTEMPTS` free ports) and return its URI."""
        program = find_server_program()
        self.db_dir.mkdir(parents=True, exist_ok=True)
        attempts = 1 if self.requested_port else PORT_ATTEMPTS
        for attempt in range(1, attempts + 1):
            port = self.requested_port or free_port(self.host)
            cmd = [*program, "--host", self.host, "--port", str(port)]
            cmd += ["--storage-path", str(self.db_dir)]
            offset = self.folder.begin_log(" ".join(cmd))
            try:
                pid = spawn_detached(cmd, log_file=self.log_file, cwd=self.data_dir)
            except RuntimeError as exc:
                raise RuntimeError(
                    f"{exc}; see {self.log_file}:\n{self.folder.log_tail(offset)}"
                ) from None
            failure = self._wait_ready(pid, port)
            if failure is None:
                self.pid, self.port, self.owner = pid, port, True
                return f"mongodb://{self.host}:{port}/"
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
        raise AssertionError("unreachable: the last attempt returns or raises")

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
        terminate(pid, self.stop_timeout)
        return f"did not answer within {self.start_timeout:g} s (start_timeout)"

    # -- stop -----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Give the lease back; terminate the server if nobody else needs it.

        The server is terminated (SIGTERM, after ``stop_timeout`` seconds SIGKILL) and
        server.json removed when this object started it, or when it was started by a crawl that
        has finished, and in both cases only if no other live crawl holds a lease and the
        server is not kept (``keep``). Otherwise it keeps running. Idempotent; never raises for
        an already stopped server.

        Raises:
            TimeoutError: another process kept the folder's lock for over
                ``stop_timeout + 30`` seconds.
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
            terminate(self.pid, self.stop_timeout)
        self.folder.remove_state(pid=self.pid)

