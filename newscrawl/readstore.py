"""Open the store a crawl wrote, for a command that only reads it (``newscrawl report``,
``newscrawl export``).

The server is the configured one (``--uri``, env ``NEWSCRAWL_MONGO_URI``, env ``MONGO_URI``) or
else the embedded store of the data folder (``--data-dir``, env ``NEWSCRAWL_DATA_DIR``, default
``./data``, or when there is none the checkout's ``data`` folder, where ``make crawl`` stores), started for the command and stopped after unless it was already running. Unlike a
crawl, a reading command never creates a store: a data folder that does not exist, or holds no
store, is :class:`NoStore` with a message saying what to do.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from newscrawl.defaults import NEWSCRAWL_EMBEDDED_PORT, NEWSCRAWL_EMBEDDED_START_TIMEOUT
from newscrawl.embedded import resolve_data_dir
from newscrawl.embedded.folder import DataFolder
from newscrawl.embedded.server import EmbeddedMongo
from newscrawl.embedded.uri import DATA_DIR_ENV_VAR, configured_uri
from newscrawl.store import NewsStore, StoreError


class NoStore(Exception):
    """There is no store to read: the data folder does not exist or holds no store."""


#: What reading a store can raise: no store, or a store that cannot be read.
READ_ERRORS = (NoStore, StoreError, RuntimeError, ValueError, TimeoutError)


def read_failure(prog: str, exc: BaseException) -> int:
    """Print one line for ``exc`` (one of :data:`READ_ERRORS`) on stderr and return the exit
    status: 2 when there is no store (:class:`NoStore`), 1 when it could not be read."""
    if isinstance(exc, NoStore):
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    print(f"{prog}: cannot read the store: {exc}", file=sys.stderr)
    return 1


#: The checkout this package runs from (an editable install or ``python -m`` in the checkout):
#: ``make crawl`` stores into its ``data`` folder.
CHECKOUT = Path(__file__).resolve().parents[1]


def checkout_store(checkout: Path = CHECKOUT) -> Path | None:
    """The data folder ``make crawl`` writes (``data/`` of the checkout) when it holds a store;
    None otherwise, and for an installed copy that is no checkout (no ``setup.py`` beside)."""
    folder = checkout / "data"
    if (checkout / "setup.py").is_file() and DataFolder(folder).db_dir.is_dir():
        return folder
    return None


def check_data_dir(data_dir: str | None, *, checkout: Path = CHECKOUT) -> Path:
    """The absolute embedded data folder (:func:`resolve_data_dir`: ``data_dir`` when given, else
    env ``NEWSCRAWL_DATA_DIR``, else ``./data``).

    With no folder given (no ``--data-dir``, no env ``NEWSCRAWL_DATA_DIR``) and no ``./data`` in
    the working directory, the store of the checkout (:func:`checkout_store`, where ``make crawl``
    stores) is read, and a line on stderr says so: the README's first command, then
    ``newscrawl report`` from any directory.

    Raises:
        NoStore: the folder does not exist, or has no ``db/`` folder (never crawled into).
    """
    folder = Path(resolve_data_dir(data_dir)).expanduser().resolve()
    if not folder.is_dir() and not data_dir and not os.environ.get(DATA_DIR_ENV_VAR):
        fallback = checkout_store(checkout)
        if fallback is not None:
            print(f"newscrawl: no {folder}; reading the store of the checkout, {fallback} "
                  f"(--data-dir DIR reads another)", file=sys.stderr)
            return fallback
    if not folder.is_dir():
        raise NoStore(f"no store at {folder}: the data folder does not exist (crawl first with "
                      f"`newscrawl crawl URL --data-dir {folder}`, or give the folder of a crawl "
                      f"with --data-dir, or a server with --uri)")
    if not DataFolder(folder).db_dir.is_dir():
        raise NoStore(f"no store at {folder}: the folder holds no store (no db/ folder; give the "
                      f"folder a crawl wrote with --data-dir)")
    return folder


@contextmanager
def reading_store(uri: str | None, data_dir: str | None,
                  database: str) -> Iterator[tuple[NewsStore, str]]:
    """Yield ``(store, where)`` for reading; ``where`` names the server or folder (no password).

    Raises:
        NoStore: see :func:`check_data_dir` (only when no URI is configured).
        RuntimeError: the embedded server could not be started.
        ValueError: a malformed URI.
    """
    given = configured_uri(uri)
    folder = None if given else check_data_dir(data_dir)
    embedded: EmbeddedMongo | None = None
    if folder is None:
        resolved = given
    else:  # this very folder, not the one env NEWSCRAWL_DATA_DIR names (resolve_mongo_uri's)
        embedded = EmbeddedMongo(str(folder), port=NEWSCRAWL_EMBEDDED_PORT,
                                 start_timeout=NEWSCRAWL_EMBEDDED_START_TIMEOUT)
        resolved = embedded.start()
    where = f"embedded store in {folder}" if folder else _without_password(resolved)
    try:
        with NewsStore.connect(resolved, database) as store:
            yield store, f"{where} (database {database})"
    finally:
        if embedded is not None:
            embedded.stop()


def _without_password(uri: str) -> str:
    """``uri`` without its user information (``//user:secret@`` → ``//``)."""
    head, sep, rest = uri.partition("//")
    if not sep:
        return uri
    authority, slash, tail = rest.partition("/")
    return head + sep + authority.rpartition("@")[2] + slash + tail
