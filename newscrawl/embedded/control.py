"""Operations on the server of a data folder, whoever started it: stop it, describe it.

What ``python -m newscrawl.embedded stop`` and ``status`` / ``uri`` run; a crawl uses
:class:`~newscrawl.embedded.server.EmbeddedMongo` instead.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from newscrawl.embedded.folder import DataFolder, lease_pid
from newscrawl.embedded.health import ping
from newscrawl.embedded.process import HOST, find_server_pids, terminate
from newscrawl.embedded.server import STOP_TIMEOUT

logger = logging.getLogger(__name__)


def stop_server(
    data_dir: str | Path, *, timeout: float = STOP_TIMEOUT, force: bool = False
) -> int | None:
    """Stop the server of ``data_dir`` whoever started it (the CLI ``stop``).

    A daemon serving the folder that server.json does not describe (the file was lost) is
    stopped too.

    Args:
        data_dir: the data folder.
        timeout: seconds between SIGTERM and SIGKILL.
        force: stop it even while crawls hold leases on it.

    Returns:
        The pid that was stopped, or None when no server was running (a stale server.json is
        removed).

    Raises:
        RuntimeError: crawls still use the server and ``force`` is false.
        TimeoutError: another process kept the folder's lock for over ``timeout + 30`` seconds.
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
                terminate(orphan, timeout)
            return orphans[0] if orphans else None
        leases = folder.live_leases()
        if leases and not force:
            users = sorted({str(lease_pid(lease)) for lease in leases})
            raise RuntimeError(
                f"embedded server pid {pid} is in use by crawl process(es) {', '.join(users)}; "
                "use --force to stop it anyway"
            )
        terminate(pid, timeout)
        folder.remove_state()
        folder.clear_leases()
        return pid


def server_status(data_dir: str | Path, *, timeout: float = 2.0) -> dict[str, Any]:
    """Describe the server of ``data_dir``; ``timeout`` (seconds) bounds the ping.

    Returns:
        ``{"running": bool, "answering": bool, "data_dir": str}`` plus, when a server is
        running, ``"leases": [pid, ...]`` and the server.json fields (pid, port, uri,
        started_at, keep, ...).
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
        info["leases"] = [lease_pid(lease) for lease in folder.live_leases()]
    return info
