"""Hostile cases that need a known page: servers refusing HEAD (405, 501, 403).

Crawled twice (``crawl="rerun"``): the first crawl stores the page with its validators, the
second one, two days later, checks it with HEAD first (middlewares/headprobe.py), meets the
refusal and falls back to a conditional GET for that host. Each case has a host of its own:
a host's change-detection policy is learned per host.
"""

from __future__ import annotations

from tests.hostile.site import Handler, case, page

#: Case name → (host key, status answered to HEAD).
HEAD_REFUSALS = {"head-405": ("head405", 405), "head-501": ("head501", 501),
                 "head-403": ("head403", 403)}

ETAG = '"v1"'
LAST_MODIFIED = "Tue, 01 Oct 2024 06:00:00 GMT"


def _refusing(status: int):
    def handler(h: Handler, path: str) -> None:
        if h.command == "HEAD":
            h.send(status, b"")
        elif h.headers.get("If-None-Match") == ETAG:
            h.send(304, b"", headers={"ETag": ETAG, "Last-Modified": LAST_MODIFIED})
        else:
            h.send(200, page("Kanal", "<p>Nachrichten des Tages.</p>"),
                   headers={"ETag": ETAG, "Last-Modified": LAST_MODIFIED})
    return handler


for _name, (_host, _status) in HEAD_REFUSALS.items():
    case(_name, host=_host, crawl="rerun")(_refusing(_status))
