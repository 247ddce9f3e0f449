"""``python -m newscrawl.embedded start|stop|status|uri [--data-dir DIR]``.

``start`` starts (or adopts) the data folder's server and keeps it running after crawls (they
reuse it), so analysts can open it in mongosh or Compass; ``stop`` ends it (``--force`` even
while crawls use it); ``uri`` prints ``mongodb://127.0.0.1:PORT/``; ``status`` prints JSON.

Exit codes: 0 done; 1 error (start failed, stop refused, ``uri`` of a stopped server);
3 ``status`` of a stopped server.
"""

from __future__ import annotations

import argparse
import json
import sys

from newscrawl.defaults import NEWSCRAWL_EMBEDDED_START_TIMEOUT, NEWSCRAWL_MONGO_DATABASE
from newscrawl.embedded.control import server_status, stop_server
from newscrawl.embedded.server import EmbeddedMongo
from newscrawl.embedded.uri import resolve_data_dir

#: The commands and what they do (shown by ``--help``).
COMMANDS = {
    "start": "start (or adopt) the server and keep it running; prints its URI",
    "stop": "stop the server, whoever started it (--force: even while crawls use it)",
    "status": "print the server's state as JSON (exit code 3 when not running)",
    "uri": "print mongodb://127.0.0.1:PORT/ (exit code 1 when not running)",
}
_EPILOG = "commands:\n" + "\n".join(f"  {name:<8}{what}" for name, what in COMMANDS.items())


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m newscrawl.embedded",
        description=(
            "Manage the embedded SecantusDB server of a newscrawl data folder. A server started "
            "here is kept running after crawls (they reuse it), so mongosh/Compass can open "
            "mongodb://127.0.0.1:PORT/newscrawl."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=list(COMMANDS), help="what to do (see below)")
    parser.add_argument(
        "--data-dir",
        default=None,
        help="data folder (default: env NEWSCRAWL_DATA_DIR, else ./data)",
    )
    parser.add_argument("--port", type=int, default=0, help="start: port (0 = a free port)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=NEWSCRAWL_EMBEDDED_START_TIMEOUT,
        help="start: seconds to wait for the server; stop: seconds before SIGKILL",
    )
    parser.add_argument("--force", action="store_true", help="stop: even while crawls use it")
    parser.add_argument(
        "--database", default=NEWSCRAWL_MONGO_DATABASE, help="database name in hints"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command with ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Prints results to stdout and errors to stderr; never raises for a server that cannot be
    started or stopped (exit code 1). ``--data-dir`` wins over env ``NEWSCRAWL_DATA_DIR``
    (:func:`~newscrawl.embedded.uri.resolve_data_dir`).
    """
    args = build_parser().parse_args(argv)
    data_dir = resolve_data_dir(args.data_dir)

    if args.command == "start":
        server = EmbeddedMongo(
            data_dir, port=args.port, start_timeout=args.timeout, keep_running=True
        )
        try:
            uri = server.start()
        except (RuntimeError, TimeoutError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
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
