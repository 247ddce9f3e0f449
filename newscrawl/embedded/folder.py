"""The data folder of the embedded server: its files and the small operations on them.

Layout (``NEWSCRAWL_DATA_DIR``, default ``./data``)::

    DATA_DIR/db/            WiredTiger files of the server (--storage-path)
    DATA_DIR/server.json    {"pid", "host", "port", "uri", "started_at", "started_by", "keep", ...}
    DATA_DIR/server.log     the server's stdout/stderr, appended per start (rotated at 5 MB)
    DATA_DIR/leases/        one file per running crawl that uses the server
    DATA_DIR/.lock          flock(2) serialising start/stop decisions between processes
    DATA_DIR/secantusd.toml optional server tuning (cache size, ...), read because the server
                            runs with the data folder as its working directory

A lease file is named ``<pid>-<random>.lease``; a lease whose process is gone is removed when
the leases are listed, so a crawl killed with SIGKILL never keeps the server alive.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from newscrawl.embedded.process import is_server_process, pid_alive

try:  # POSIX only; on other platforms the folder lock is a no-op.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

#: Rotate server.log to server.log.1 when it is larger than this at a start (bytes).
LOG_ROTATE_BYTES = 5 * 1024 * 1024
#: Lines of server.log quoted in start errors.
LOG_TAIL_LINES = 25


def utc_now_iso() -> str:
    """The current UTC time as ISO 8601 with seconds (``2024-05-01T12:00:00+00:00``)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def lease_pid(lease: Path) -> int:
    """The pid a lease file belongs to (from its name); 0 for a malformed name."""
    try:
        return int(lease.name.split("-", 1)[0])
    except ValueError:
        return 0


class DataFolder:
    """Paths and small file operations of one embedded data folder.

    Args:
        data_dir: the folder (``~`` expanded, made absolute; not created here).
    """

    def __init__(self, data_dir: str | Path) -> None:
        self.root = Path(data_dir).expanduser().absolute()
        self.db_dir = self.root / "db"
        self.state_file = self.root / "server.json"
        self.log_file = self.root / "server.log"
        self.leases_dir = self.root / "leases"
        self.lock_file = self.root / ".lock"

    # -- server.json ----------------------------------------------------------------------------

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
        """Replace server.json with ``state`` atomically (write a temporary file, rename).

        Raises:
            OSError: the folder is not writable.
        """
        tmp = self.state_file.with_name(f"{self.state_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.state_file)

    def remove_state(self, pid: int | None = None) -> None:
        """Remove server.json (only if it names ``pid``, when given); no error when missing."""
        if pid is not None:
            state = self.read_state()
            if state is not None and state.get("pid") != pid:
                return
        with contextlib.suppress(FileNotFoundError):
            self.state_file.unlink()

    def live_server(self) -> dict[str, Any] | None:
        """server.json when it names a live daemon serving this folder, else None."""
        state = self.read_state()
        if state is None:
            return None
        pid = state.get("pid")
        if isinstance(pid, int) and is_server_process(pid, self.db_dir):
            return state
        return None

    # -- leases ---------------------------------------------------------------------------------

    def add_lease(self) -> Path:
        """Create a lease file for this process and return its path.

        Raises:
            OSError: the folder is not writable.
        """
        self.leases_dir.mkdir(parents=True, exist_ok=True)
        lease = self.leases_dir / f"{os.getpid()}-{secrets.token_hex(4)}.lease"
        lease.write_text(json.dumps({"pid": os.getpid(), "since": utc_now_iso()}), encoding="utf-8")
        return lease

    def live_leases(self, exclude: Path | None = None) -> list[Path]:
        """Sorted lease files of live processes (but ``exclude``); dead ones are removed."""
        live = []
        with contextlib.suppress(FileNotFoundError):
            for lease in self.leases_dir.glob("*.lease"):
                if exclude is not None and lease == exclude:
                    continue
                if pid_alive(lease_pid(lease)):
                    live.append(lease)
                else:
                    with contextlib.suppress(OSError):
                        lease.unlink()
        return sorted(live)

    def clear_leases(self) -> None:
        """Remove every lease file (the server they leased is gone)."""
        with contextlib.suppress(FileNotFoundError):
            for lease in self.leases_dir.glob("*.lease"):
                with contextlib.suppress(OSError):
                    lease.unlink()

    # -- lock -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, timeout: float) -> Iterator[None]:
        """Hold an exclusive flock on DATA_DIR/.lock, waiting up to ``timeout`` seconds.

        Creates the folder when missing. A no-op where ``fcntl`` is missing.

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

    # -- server.log -----------------------------------------------------------------------------

    def begin_log(self, header: str) -> int:
        """Prepare server.log for a start and return the byte offset where this start begins.

        Rotates server.log to server.log.1 when it is over :data:`LOG_ROTATE_BYTES`, then
        appends the line ``--- newscrawl <UTC time>: <header>``.

        Raises:
            OSError: the folder is not writable.
        """
        with contextlib.suppress(OSError):
            if self.log_file.stat().st_size > LOG_ROTATE_BYTES:
                os.replace(self.log_file, self.log_file.with_name(self.log_file.name + ".1"))
        with open(self.log_file, "ab") as log:
            offset = log.tell()
            log.write(f"--- newscrawl {utc_now_iso()}: {header}\n".encode())
        return offset

    def log_tail(self, offset: int = 0, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of server.log written after byte ``offset`` ("" if none)."""
        try:
            with open(self.log_file, "rb") as handle:
                handle.seek(offset)
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])
