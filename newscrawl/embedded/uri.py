"""Which MongoDB server a crawl (or a command) uses: a configured URI, else the embedded one.

Plain arguments only: callers read their settings (``NEWSCRAWL_MONGO_URI``,
``NEWSCRAWL_DATA_DIR``, ``NEWSCRAWL_EMBEDDED_PORT``, ``NEWSCRAWL_EMBEDDED_START_TIMEOUT``) and
pass the values; the environment variables named below are read here.
"""

from __future__ import annotations

import os
from pathlib import Path

from newscrawl.defaults import (
    NEWSCRAWL_DATA_DIR,
    NEWSCRAWL_EMBEDDED_PORT,
    NEWSCRAWL_EMBEDDED_START_TIMEOUT,
)
from newscrawl.embedded.server import EmbeddedMongo

#: Environment variables naming a MongoDB server, in the order they are tried.
URI_ENV_VARS = ("NEWSCRAWL_MONGO_URI", "MONGO_URI")
#: Environment variable naming the data folder; it wins over the argument.
DATA_DIR_ENV_VAR = "NEWSCRAWL_DATA_DIR"


def resolve_data_dir(data_dir: str | Path | None = None) -> str:
    """The embedded data folder as given (not made absolute).

    Env ``NEWSCRAWL_DATA_DIR`` if set, else ``data_dir``, else the default ``./data``.
    """
    return os.environ.get(DATA_DIR_ENV_VAR) or (str(data_dir) if data_dir else "") or (
        NEWSCRAWL_DATA_DIR
    )


def resolve_mongo_uri(
    setting_uri: str | None,
    data_dir: str | Path | None,
    *,
    port: int = NEWSCRAWL_EMBEDDED_PORT,
    start_timeout: float = NEWSCRAWL_EMBEDDED_START_TIMEOUT,
) -> tuple[str, EmbeddedMongo | None]:
    """Decide which MongoDB server the crawl uses, starting the embedded one when needed.

    Order: ``setting_uri`` (setting ``NEWSCRAWL_MONGO_URI``), env ``NEWSCRAWL_MONGO_URI``, env
    ``MONGO_URI`` (blank values are skipped, the URI is stripped); when all are empty the
    embedded server of the data folder (:func:`resolve_data_dir` of ``data_dir``) is started or
    reused on ``port`` (0 = a free port), waiting up to ``start_timeout`` seconds.

    Returns:
        ``(uri, embedded)``: ``embedded`` is the :class:`EmbeddedMongo` to ``stop()`` when the
        crawl ends, or None for a configured server.

    Raises:
        RuntimeError: the embedded server could not be started (see :meth:`EmbeddedMongo.start`).
        TimeoutError: another process kept the data folder's lock too long.
    """
    candidates = (setting_uri, *(os.environ.get(name) for name in URI_ENV_VARS))
    for candidate in candidates:
        if candidate and candidate.strip():
            return candidate.strip(), None
    server = EmbeddedMongo(resolve_data_dir(data_dir), port=port, start_timeout=start_timeout)
    return server.start(), server
