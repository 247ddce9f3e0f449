"""Which MongoDB server a crawl (or a command) uses: a configured URI, else the embedded one.

One precedence for every command (``newscrawl crawl``, ``scrapy crawl``, scrapyd jobs,
``report``, ``export``, ``schedule``, ``python -m newscrawl.embedded``; documented in
``docs/configuration.md``, "Where the store is"): a value given to the command (an option such
as ``--uri`` / ``--data-dir``, a ``-s`` setting, ``newscrawl/settings.py``) > the environment
variable (``NEWSCRAWL_MONGO_URI``, then ``MONGO_URI``; ``NEWSCRAWL_DATA_DIR``) > the default (the
embedded store; ``./data``). :func:`configured_uri` and :func:`resolve_data_dir` are the only
places that apply it.

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
#: Environment variable naming the data folder, read when the command is given none.
DATA_DIR_ENV_VAR = "NEWSCRAWL_DATA_DIR"


def resolve_data_dir(data_dir: str | Path | None = None) -> str:
    """The embedded data folder as given (not made absolute).

    ``data_dir`` (the folder given to the command) if not empty, else env
    ``NEWSCRAWL_DATA_DIR`` if set, else the default ``./data``.
    """
    return (str(data_dir) if data_dir else "") or os.environ.get(DATA_DIR_ENV_VAR) or (
        NEWSCRAWL_DATA_DIR
    )


def configured_uri(uri: str | None) -> str:
    """The MongoDB URI given (``uri``: an option, ``NEWSCRAWL_MONGO_URI``), else env
    ``NEWSCRAWL_MONGO_URI``, else env ``MONGO_URI`` (blank values skipped, the URI stripped);
    ``""`` when all are empty: the embedded store."""
    for candidate in (uri, *(os.environ.get(name) for name in URI_ENV_VARS)):
        if candidate and candidate.strip():
            return candidate.strip()
    return ""


def resolve_mongo_uri(
    setting_uri: str | None,
    data_dir: str | Path | None,
    *,
    port: int = NEWSCRAWL_EMBEDDED_PORT,
    start_timeout: float = NEWSCRAWL_EMBEDDED_START_TIMEOUT,
) -> tuple[str, EmbeddedMongo | None]:
    """Decide which MongoDB server the crawl uses, starting the embedded one when needed.

    Order (:func:`configured_uri`): ``setting_uri`` (setting ``NEWSCRAWL_MONGO_URI``), env
    ``NEWSCRAWL_MONGO_URI``, env ``MONGO_URI``; when all are empty the embedded server of the data folder (:func:`resolve_data_dir` of ``data_dir``) is started or
    reused on ``port`` (0 = a free port), waiting up to ``start_timeout`` seconds.

    Returns:
        ``(uri, embedded)``: ``embedded`` is the :class:`EmbeddedMongo` to ``stop()`` when the
        crawl ends, or None for a configured server.

    Raises:
        RuntimeError: the embedded server could not be started (see :meth:`EmbeddedMongo.start`).
        TimeoutError: another process kept the data folder's lock too long.
    """
    uri = configured_uri(setting_uri)
    if uri:
        return uri, None
    server = EmbeddedMongo(resolve_data_dir(data_dir), port=port, start_timeout=start_timeout)
    return server.start(), server
