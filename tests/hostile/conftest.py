"""One crawl of every hostile case (tests/hostile/cases.py) per test session.

The site runs in threads of the test process (every connection recorded); the crawl is a real
``scrapy crawl news`` subprocess with the embedded store, one entry URL per case, small
timeouts, and only the site's allowed loopback hosts in ``NEWSCRAWL_ALLOWED_PRIVATE_HOSTS``
(never ``trap``). Tests read :class:`HostileCrawl`: the stats, the log, the store, the site's
records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import tests.hostile.cases
import tests.hostile.cases_destination
import tests.hostile.cases_head
import tests.hostile.cases_signals
from tests.helpers import crawl, open_store, stats_of
from tests.hostile.site import CASES, HOSTS, HostileSite

#: The modules registering cases (imported for that).
CASE_MODULES = (tests.hostile.cases, tests.hostile.cases_destination, tests.hostile.cases_signals,
                tests.hostile.cases_head)
#: Run clocks of the two crawls of the ``rerun`` cases (two days apart: every page is due).
RERUN_TIMES = ("2024-10-01T08:00:00+00:00", "2024-10-03T08:00:00+00:00")

#: Loopback addresses the crawler may reach (every host of the site but ``trap``).
ALLOWED = ",".join(address for key, address in HOSTS.items() if key != "trap")

#: Settings of the hostile crawl: small timeouts, one retry, every case in one run.
SETTINGS = {
    "LOG_LEVEL": "INFO",
    "DOWNLOAD_TIMEOUT": 3,
    "RETRY_TIMES": 1,
    "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": ALLOWED,
    "NEWSCRAWL_EXTRACT_MAX_BYTES": 1_000_000,
    "TWISTED_DNS_RESOLVER": "tests.hostile.resolver.MapResolver",
    "NEWSCRAWL_CRAWL_DELAY_MAX": 1,  # robots.txt of the crawl-delay case asks for an hour
    "NEWSCRAWL_LINKCLASS_MAX_LINKS": 500,  # the 100,000-link page: the rest counted
    # No verification GETs of "unchanged" answers: the re-run's request counts stay exact.
    "NEWSCRAWL_HEADPROBE_VERIFY_START": 0,
    "NEWSCRAWL_HEADPROBE_VERIFY_FLOOR": 0,
}


@dataclass
class HostileCrawl:
    """The finished crawl of every case."""

    site: HostileSite
    stats: dict[str, str]
    log: str
    store: Any

    def stat(self, key: str) -> int:
        """A numeric stat (0 when absent)."""
        return int(self.stats.get(key, "0"))

    def url(self, path: str, host_key: str = "main") -> str:
        return self.site.url(path, host_key)

    def article(self, name: str) -> dict | None:
        """The stored article of case ``name`` (its article-shaped URL), or None."""
        return self.store.articles.find_one({"url": self.url(CASES[name].article_path(),
                                                            CASES[name].host)})

    def log_lines(self, pattern: str) -> list[str]:
        """Log lines matching the regular expression ``pattern``."""
        return [line for line in self.log.splitlines() if re.search(pattern, line)]


@pytest.fixture(scope="session")
def hostile_site():
    """The hostile site, serving every case for the whole session."""
    site = HostileSite()
    yield site
    site.close()


@pytest.fixture(scope="session")
def hostile(tmp_path_factory, hostile_site) -> HostileCrawl:
    """One crawl of every ``main`` case."""
    tmp: Path = tmp_path_factory.mktemp("hostile")
    site = hostile_site
    seeds = tmp / "seeds.txt"
    seeds.write_text("\n".join(site.entry_urls()) + "\n", encoding="utf-8")
    proc = crawl(["-a", f"seeds={seeds}", "-a", "depth=1"], tmp / "data", timeout=300,
                 settings=SETTINGS, env={"HOSTILE_DNS": _dns_map(site)})
    (tmp / "crawl.log").write_text(proc.stderr, encoding="utf-8")
    with open_store(tmp / "data") as store:
        yield HostileCrawl(site, stats_of(proc.stderr), proc.stderr, store)


@pytest.fixture(scope="session")
def hostile_rerun(tmp_path_factory, hostile_site) -> tuple[HostileCrawl, HostileCrawl]:
    """Two crawls of every ``rerun`` case, two days apart, on one data folder: (first, second)."""
    tmp: Path = tmp_path_factory.mktemp("hostile-rerun")
    site = hostile_site
    seeds = tmp / "seeds.txt"
    seeds.write_text("\n".join(site.entry_urls("rerun")) + "\n", encoding="utf-8")
    logs = []
    for now in RERUN_TIMES:
        proc = crawl(["-a", f"seeds={seeds}", "-a", "depth=0", "-a", f"now={now}"], tmp / "data",
                     timeout=300, settings=SETTINGS, env={"HOSTILE_DNS": _dns_map(site)})
        logs.append(proc.stderr)
    with open_store(tmp / "data") as store:
        yield tuple(HostileCrawl(site, stats_of(log), log, store) for log in logs)


def _dns_map(site: HostileSite) -> str:
    """``name=address`` pairs the crawl's resolver answers (tests/hostile/resolver.py)."""
    from tests.hostile.resolver import NAMES

    return ",".join(f"{name}={HOSTS[key]}" for name, key in NAMES.items())
