"""Pinned request serializers for the Redis frontier, and the dead-letter rule.

scrapy-redis pickles requests with ``protocol=-1`` — the newest protocol of whichever Python
pushed them, so a frontier written by Python 3.12 may not load in an older worker, and unpickling
what anybody wrote into Redis runs their code. newscrawl pins the format
(``NEWSCRAWL_REDIS_SERIALIZER``):

* ``json`` (default): UTF-8 JSON of ``Request.to_dict()``, readable in redis-cli, loadable by any
  Python. Values JSON cannot carry are tagged: bytes ``{"$b": base64}``, tuples ``{"$t": [...]}``
  and dicts with non-string keys (or keys starting with ``$``) ``{"$d": [[k, v], ...]}``. Other
  types (sets, datetimes, objects in ``meta``) raise :class:`SerializationError` when pushed.
* ``pickle``: protocol 4 (Python >= 3.4, the default protocol of 3.8-3.13), loads JSON entries too.

Either ``loads`` raises :class:`SerializationError` for bytes it cannot decode (truncated, another
format, a pickle under the ``json`` serializer); the queue then moves the entry to the dead-letter
list instead of losing it (:mod:`newscrawl.distributed.queue`).
"""

from __future__ import annotations

import base64
import json
import pickle
from typing import Any

#: Pickle protocol of the ``pickle`` serializer (loadable by Python >= 3.4).
PICKLE_PROTOCOL = 4


class SerializationError(ValueError):
    """A request cannot be encoded, or an entry cannot be decoded."""


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return {"$b": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple):
        return {"$t": [_encode(v) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {"$d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise SerializationError(f"cannot encode a {type(value).__name__} as JSON: {value!r:.80}")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, inner), = value.items()
            if tag == "$b":
                return base64.b64decode(inner, validate=True)
            if tag == "$t":
                return tuple(_decode(v) for v in inner)
            if tag == "$d":
                return {_decode(k): _decode(v) for k, v in inner}
        return {k: _decode(v) for k, v in value.items()}
    return value


class JsonSerializer:
    """``dumps(dict) -> bytes`` / ``loads(bytes) -> dict`` over tagged JSON."""

    name = "json"

    def dumps(self, obj: Any) -> bytes:
        """Encode; raises :class:`SerializationError` for values JSON cannot carry."""
        return json.dumps(_encode(obj), ensure_ascii=False, separators=(",", ":"),
                          allow_nan=True).encode("utf-8")

    def loads(self, data: bytes) -> Any:
        """Decode; raises :class:`SerializationError` for anything but this JSON."""
        try:
            return _decode(json.loads(data.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise SerializationError(f"undecodable JSON entry: {exc}") from exc


class PickleSerializer:
    """Pickle protocol 4; ``loads`` also accepts the JSON format (for mixed frontiers)."""

    name = "pickle"

    def __init__(self) -> None:
        self._json = JsonSerializer()

    def dumps(self, obj: Any) -> bytes:
        try:
            return pickle.dumps(obj, protocol=PICKLE_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise SerializationError(f"cannot pickle request: {exc}") from exc

    def loads(self, data: bytes) -> Any:
        if data[:1] == b"{":
            return self._json.loads(data)
        try:
            return pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - any unpickling failure is a dead letter
            raise SerializationError(f"undecodable pickle entry: {exc}") from exc


SERIALIZERS = {"json": JsonSerializer, "pickle": PickleSerializer}


def get_serializer(name: str):
    """Return a serializer instance by name (``json`` or ``pickle``).

    Raises:
        ValueError: an unknown name.
    """
    try:
        return SERIALIZERS[str(name).strip().lower()]()
    except KeyError:
        raise ValueError(f"NEWSCRAWL_REDIS_SERIALIZER must be one of {sorted(SERIALIZERS)}, "
                         f"got {name!r}") from None
