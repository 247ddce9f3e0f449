"""The re-crawl benchmark's reading of a crawl log: the time after "Closing spider" and its split
into the components' end-of-run work and process exit (benchmarks/recrawl.py)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import recrawl  # noqa: E402  (benchmarks/recrawl.py)

LOG = """\
1000.000 [scrapy.core.engine] INFO: Spider opened
1002.500 [scrapy.core.engine] INFO: Closing spider (finished)
1002.850 [newscrawl.embedded.server] INFO: Leaving kept embedded server running
1002.850 [scrapy.statscollectors] INFO: Dumping Scrapy stats:
1002.900 [scrapy.core.engine] INFO: Spider closed (finished)
"""


def test_split_adds_up_to_the_time_after_closing():
    work, shutdown = recrawl.closing_split(LOG, 1003.600)
    assert math.isclose(work, 0.4)
    assert math.isclose(shutdown, 0.7)
    assert math.isclose(work + shutdown, recrawl.after_closing(LOG, 1003.600))


def test_split_uses_the_last_closing_lines():
    later = LOG + LOG.replace("1002.", "1010.").replace("1000.000", "1008.000")
    work, shutdown = recrawl.closing_split(later, 1011.000)
    assert math.isclose(work, 0.4)
    assert math.isclose(shutdown, 0.1)


def test_missing_lines_give_nan():
    assert all(math.isnan(x) for x in recrawl.closing_split("no lines\n", 5.0))
    only_closed = "\n".join(line for line in LOG.splitlines() if "Closing spider" not in line)
    work, shutdown = recrawl.closing_split(only_closed, 1003.600)
    assert math.isnan(work) and math.isclose(shutdown, 0.7)
