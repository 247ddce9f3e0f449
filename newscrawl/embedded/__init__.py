"""The embedded MongoDB-compatible server: SecantusDB run as a separate, detached process.

When no MongoDB URI is configured (setting ``NEWSCRAWL_MONGO_URI``, then the environment
variables ``NEWSCRAWL_MONGO_URI`` and ``MONGO_URI``), the crawl stores its data in an embedded
SecantusDB server (https://secantusdb.com/, WiredTiger storage, MongoDB wire protocol). SecantusDB
is GPL-2.0; newscrawl never imports it, it only starts the ``secantusd-py`` program as a separate
process and talks to it over a loopback socket with pymongo, so the process boundary keeps
newscrawl's own licence free. The server listens on 127.0.0.1 only and runs without
authentication.

Modules:

* :mod:`.uri` -- :func:`resolve_mongo_uri`, :func:`resolve_data_dir`: which server a crawl uses.
* :mod:`.server` -- :class:`EmbeddedMongo`: start, reuse and stop the server of one data
  folder (lifecycle policy, leases, crash handling).
* :mod:`.control` -- :func:`stop_server`, :func:`server_status`: a folder's server, whoever
  started it.
* :mod:`.folder` -- :class:`DataFolder`: the folder layout, server.json, leases, lock, log.
* :mod:`.process` -- pids, ports and the detached launcher.
* :mod:`.health` -- :func:`ping`, the one pymongo use of this package.
* :mod:`.cli` -- ``python -m newscrawl.embedded start|stop|status|uri``.

Every name the former single module ``newscrawl/embedded.py`` exported is re-exported here.
"""

from newscrawl.embedded.cli import main
from newscrawl.embedded.control import server_status, stop_server
from newscrawl.embedded.folder import LOG_ROTATE_BYTES, LOG_TAIL_LINES, DataFolder
from newscrawl.embedded.health import ping
from newscrawl.embedded.process import (HOST, SERVER_PROGRAM, find_server_pids, find_server_program,
                                        free_port, is_server_process, pid_alive, port_open,
                                        terminate)
from newscrawl.embedded.server import PORT_ATTEMPTS, STOP_TIMEOUT, EmbeddedMongo
from newscrawl.embedded.uri import resolve_data_dir, resolve_mongo_uri

__all__ = [
    "HOST",
    "LOG_ROTATE_BYTES",
    "LOG_TAIL_LINES",
    "PORT_ATTEMPTS",
    "SERVER_PROGRAM",
    "STOP_TIMEOUT",
    "DataFolder",
    "EmbeddedMongo",
    "find_server_pids",
    "find_server_program",
    "free_port",
    "is_server_process",
    "main",
    "pid_alive",
    "ping",
    "port_open",
    "resolve_data_dir",
    "resolve_mongo_uri",
    "server_status",
    "stop_server",
    "terminate",
]
