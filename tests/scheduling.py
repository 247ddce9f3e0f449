"""The order of the test files in a parallel run (``make test``): the slow files first.

``make test`` runs the tests in parallel processes with pytest-xdist (``-n 2 --dist loadfile
--no-loadscope-reorder``): all tests of one file go to one process, so module-scoped fixtures
(an embedded server, a crawl whose results several tests check) are set up once, and a process
takes the next file in collection order whenever it has little left to do. A file of slow tests
handed out last would leave one process working alone for its whole length while the other
idles; so the files that hold a test marked ``slow`` or ``integration`` (tens of seconds each)
are handed out first and the many quick files fill in behind them (longest jobs first, the
usual list-scheduling rule). Mark a test ``slow`` when it takes more than a few seconds.

The tests of a file keep their order; a run in one process (no ``-n``) keeps pytest's order.
"""

from __future__ import annotations

import os

import pytest

#: Markers that make a test file one of the first handed out.
SLOW_MARKERS = ("slow", "integration")


def slow_files_first(items: list[pytest.Item]) -> None:
    """Sort ``items`` in place: the tests of files that hold a ``slow`` or ``integration`` test
    first, the other files after; the order is otherwise kept (the sort is stable)."""
    slow = {item.path for item in items
            if any(item.get_closest_marker(name) for name in SLOW_MARKERS)}
    items.sort(key=lambda item: item.path not in slow)


def in_xdist_worker() -> bool:
    """True in a pytest-xdist worker process (it sets ``PYTEST_XDIST_WORKER``, e.g. ``gw0``)."""
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))
