"""What every part of the store shares: collection names, errors, the collection handles.

:class:`StoreError` and :class:`StoreUnavailable` are the only exceptions the store's public
methods raise for database trouble: :func:`guarded` turns pymongo's (``ConnectionFailure``, a
transient ``OperationFailure``, anything else pymongo or bson raises) into them, so no caller
outside :mod:`newscrawl.store` imports pymongo.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

from bson.errors import BSONError
from pymongo import MongoClient, WriteConcern
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import AutoReconnect, BulkWriteError, ConnectionFailure, OperationFailure
from pymongo.errors import PyMongoError

from newscrawl import defaults

ARTICLES = defaults.ARTICLES_COLLECTION
NODES = defaults.NODES_COLLECTION
LINKS = defaults.LINKS_COLLECTION
SCHEDULE = defaults.SCHEDULE_COLLECTION
PAGES = defaults.PAGES_COLLECTION
HOSTS = defaults.HOSTS_COLLECTION
VERSIONS = defaults.VERSIONS_COLLECTION
STAGING = defaults.STAGING_COLLECTION
#: Collection of the store's own bookkeeping: the schema document (``_id: "schema"``).
META = "meta"

#: MongoDB error code of ``CannotCreateIndex`` (SecantusDB's answer to a text index).
CANNOT_CREATE_INDEX = 67
#: MongoDB error code of a duplicate key (unique index).
DUPLICATE_KEY = 11000
#: Server error codes meaning "shutting down / not primary right now": retried like
#: connection failures.
TRANSIENT_CODES = frozenset({91, 189, 10107, 11600, 11602, 13435, 13436})

Doc = dict[str, Any]
Coll = Collection[Doc]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class StoreError(Exception):
    """The database refused an operation (other than by being unreachable: see
    :class:`StoreUnavailable`), or the data folder cannot be used by this code.

    Attributes:
        code: the server's error code, when it gave one.
    """

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


class StoreUnavailable(StoreError):
    """The database stayed unreachable through every retry.

    Attributes:
        docs: the page documents (as given to :meth:`NewsStore.write_pages`) that were not
            written; spill them with :func:`newscrawl.store.spill`. Empty for every other method.
    """

    def __init__(self, message: str, docs: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.docs: list[Mapping[str, Any]] = list(docs)


def utcnow() -> dt.datetime:
    """The wall clock as a tz-aware UTC datetime."""
    return dt.datetime.now(dt.timezone.utc)


def is_transient(exc: BaseException) -> bool:
    """True for a failure that means "the server is not there right now" (retry later)."""
    if isinstance(exc, ConnectionFailure):
        return True
    if isinstance(exc, OperationFailure) and not isinstance(exc, BulkWriteError):
        return exc.code in TRANSIENT_CODES or exc.has_error_label("RetryableWriteError")
    return False


def raise_if_interrupted(name: str, write_errors: list[dict[str, Any]], exc: Exception) -> None:
    """Raise ``AutoReconnect`` when the server refused writes because it is shutting down or
    stepping down: the batch is then retried."""
    if any(err.get("code") in TRANSIENT_CODES for err in write_errors):
        raise AutoReconnect(
            f"{name}: the server interrupted the bulk write ({write_errors[0].get('errmsg')})"
        ) from exc


def translate(exc: Exception, what: str) -> StoreError:
    """The store's exception for a pymongo / bson failure while ``what`` (``"writing pages"``)."""
    if is_transient(exc):
        return StoreUnavailable(f"MongoDB unavailable {what}: {exc}")
    code = exc.code if isinstance(exc, OperationFailure) else None
    return StoreError(f"MongoDB refused {what}: {exc}", code=code)


def guarded(what: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Decorate a store method so that pymongo / bson failures leave it as :class:`StoreError`
    (:class:`StoreUnavailable` for an unreachable server); store errors pass unchanged."""

    def decorate(method: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(method)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return method(*args, **kwargs)
            except (PyMongoError, BSONError) as exc:
                raise translate(exc, what) from exc

        return wrapper

    return decorate


def guarded_iter(items: Iterator[_R], what: str) -> Iterator[_R]:
    """``items`` with pymongo / bson failures raised as :class:`StoreError` (see
    :func:`guarded`), for methods that return a lazy cursor."""
    try:
        yield from items
    except (PyMongoError, BSONError) as exc:
        raise translate(exc, what) from exc


class _Handle:
    """A read-only attribute of :class:`Collections`: the handle of one collection (looked up
    in ``by_name`` at every access, so a swapped handle is seen)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, colls: Collections, owner: type | None = None) -> Coll:
        return colls.by_name[self.name]


class Collections:
    """The collection handles of one store database, shared by the store's parts.

    Page bodies, links, versions and staging are written with ``j: true`` (``journal``) so a
    server killed right after an acknowledged batch keeps it. Crawl state (``pages``, ``hosts``)
    is written with the database's own write concern: a record lost with the last ~50 ms before
    a server crash costs one extra visit, while ``j: true`` makes SecantusDB flush its log per
    replaced record (5 ms instead of 1-2 ms).

    Attributes:
        by_name: collection name -> handle; tests swap a handle here to simulate failures.
    """

    def __init__(self, db: Database[Doc], client: MongoClient[Doc] | None,
                 *, journal: bool) -> None:
        self.db = db
        self.client = client if client is not None else db.client
        concern = db.write_concern
        if journal:
            concern = WriteConcern(**{**concern.document, "j": True})
        self.journaled = concern
        self.by_name: dict[str, Coll] = {
            name: db.get_collection(name, write_concern=concern)
            for name in (ARTICLES, NODES, LINKS, VERSIONS, STAGING, SCHEDULE, META)
        }
        for name in (PAGES, HOSTS):
            self.by_name[name] = db.get_collection(name)

    def __getitem__(self, name: str) -> Coll:
        return self.by_name[name]

    articles = _Handle(ARTICLES)
    nodes = _Handle(NODES)
    links = _Handle(LINKS)
    pages = _Handle(PAGES)
    hosts = _Handle(HOSTS)
    versions = _Handle(VERSIONS)
    staging = _Handle(STAGING)
    schedule = _Handle(SCHEDULE)
    meta = _Handle(META)
