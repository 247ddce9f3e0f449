"""Health check of the embedded server: does it answer the MongoDB ``ping`` command?

The only module of :mod:`newscrawl.embedded` that uses pymongo (imported when a check runs, so
``python -m newscrawl.embedded --help`` stays light); everything else talking to the database
lives in :mod:`newscrawl.store`.
"""

from __future__ import annotations

from typing import Any

from newscrawl.embedded.process import port_open


def ping(host: str, port: int, timeout: float = 2.0) -> bool:
    """True when a MongoDB-protocol server on ``host:port`` answers ``ping`` in ``timeout`` seconds.

    A closed port is detected first with a plain TCP connect (at most 1 s). Never raises: any
    failure (refused, timeout, protocol error) means False.
    """
    import pymongo

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
