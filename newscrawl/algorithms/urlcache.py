"""A bounded in-process cache of URL fingerprints in front of the shared duplicate eliminator.

Mercator puts a small cache of recently seen URLs in front of its duplicate URL eliminator and its
host splitter (seed 001, §4.1; Broder, Najork & Wiener, "Efficient URL caching for World Wide
Web crawling", 2003): most links on a page were seen moments ago (navigation, pagers, related
articles), so a few thousand cached fingerprints answer most lookups without a round trip.
Broder et al. found LRU and CLOCK about equally good; this is LRU.

The cache only ever holds fingerprints known to be in the shared set, so a hit is a certain
duplicate and a miss just means "ask the shared set". Pure Python, no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable


class LRUSet:
    """A set of at most ``capacity`` keys that forgets the least recently used one.

    Args:
        capacity: maximum number of keys (entries); 0 disables the cache (every lookup misses).

    Raises:
        ValueError: a negative capacity.
    """

    __slots__ = ("capacity", "_keys", "hits", "misses")

    def __init__(self, capacity: int):
        if capacity < 0:
            raise ValueError(f"capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._keys: OrderedDict[Hashable, None] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: Hashable) -> bool:
        """Membership test that also marks ``key`` as recently used and counts hits/misses."""
        if key in self._keys:
            self._keys.move_to_end(key)
            self.hits += 1
            return True
        self.misses += 1
        return False

    def add(self, key: Hashable) -> None:
        """Insert ``key`` (or refresh it), evicting the least recently used key when full."""
        if not self.capacity:
            return
        if key in self._keys:
            self._keys.move_to_end(key)
            return
        self._keys[key] = None
        if len(self._keys) > self.capacity:
            self._keys.popitem(last=False)

    def clear(self) -> None:
        self._keys.clear()
