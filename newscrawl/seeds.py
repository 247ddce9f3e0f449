"""Entry URLs of a crawl: ``-a start_urls=`` (comma-separated) and seeds files.

The one parser of seeds files, used by the ``news`` spider (:mod:`spiders.news`) and by
``newscrawl schedule`` (:mod:`newscrawl.schedule`). Pure: reads a file, no Scrapy import.

A seeds file holds one URL per line, UTF-8 (a byte-order mark is dropped); blank lines and
``#`` comments (whole-line or trailing) are skipped; a URL without a scheme gets ``http://``.
In ``start_urls`` a comma separates two entries only when what follows it starts a URL (a
scheme, or a host name such as ``www.zeit.de/index``): ``https://x.example/a,28`` stays one entry.

Only ``http`` and ``https`` entries are crawled. Every other line is a counted skip with a reason
(:data:`SKIP_REASONS`) and its line number; credentials in an entry (``http://user:secret@host/``)
are taken off the URL and kept apart (:attr:`Entries.credentials`), so they reach no log line,
record or item (:func:`newscrawl.algorithms.urls.split_credentials`). Entry URLs are canonical
(:func:`newscrawl.algorithms.urls.canonicalize_url`), like every other request of the crawl.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from newscrawl.algorithms.urls import (
    canonicalize_url,
    host_of,
    looks_like_host,
    origin_of,
    redact_credentials,
    split_credentials,
)

logger = logging.getLogger(__name__)

#: Why an entry is skipped: stat key suffix (``newscrawl/seeds/skipped_<reason>``) → sentence.
SKIP_REASONS = {
    "space": "a URL has no spaces",
    "not_http": "only http and https URLs are crawled",
    "no_host": "the URL has no host",
    "bad_port": "the port is not a number from 1 to 65535",
    "numeric_host": "the host is a bare number, not a name or a dotted-quad IPv4 address",
    "bad_url": "the URL cannot be requested",
}

#: ``scheme:`` at the start of an entry — but not ``host:8080`` (a port: digits, then the end
#: or a path).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(?!\d+(?:[/?#]|$))")
#: Schemes without an authority part: their ``x@y`` is an address, not credentials.
_OPAQUE_SCHEMES = frozenset({"mailto", "tel", "sms", "fax", "callto", "data", "javascript", "about",
                             "news", "urn"})
_NUMERIC_LABEL = re.compile(r"^(?:0[xX][0-9a-fA-F]*|\d+)$")


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    """An entry that is not crawled.

    Attributes:
        source: ``"start_urls"``, the seeds file's path, or ``"entries"`` (the entry URLs
            after parsing, refused when their request was built).
        line: line of the seeds file, or position in ``start_urls`` / the entries (1-based).
        entry: the entry as given, credentials removed.
        reason: a key of :data:`SKIP_REASONS`.
    """

    source: str
    line: int
    entry: str
    reason: str

    def describe(self) -> str:
        """``seeds.txt line 3 'javascript:x': only http and https URLs are crawled``."""
        if self.source == "start_urls":
            where = f"start_urls entry {self.line}"
        elif self.source == "entries":
            where = f"entry {self.line}"
        else:
            where = f"{self.source} line {self.line}"
        return f"{where} {self.entry!r}: {SKIP_REASONS.get(self.reason, self.reason)}"


@dataclass(slots=True)
class Entries:
    """The entries of a crawl (:func:`parse_entries`).

    Attributes:
        urls: canonical http(s) entry URLs, duplicates dropped, order kept.
        skipped: entries not crawled, in input order.
        credentials: origin (``scheme://host:port``) → ``(user, password)`` taken from
            credentialed entries (never logged).
    """

    urls: list[str] = field(default_factory=list)
    skipped: list[SkippedEntry] = field(default_factory=list)
    credentials: dict[str, tuple[str, str]] = field(default_factory=dict)


def read_seeds_file(seeds: str | Path) -> list[str]:
    """The lines of a seeds file, decoded as UTF-8 (a byte-order mark is dropped).

    Raises:
        ValueError: the file cannot be read, or is not UTF-8 (one line naming the path, the
            byte offset and the line of the first undecodable byte).
    """
    try:
        data = Path(seeds).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read seeds file {str(seeds)!r}: {exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"seeds file {str(seeds)!r} is not UTF-8 text: undecodable byte "
            f"0x{data[exc.start]:02x} at byte offset {exc.start} (line {line}); save it as "
            f"UTF-8") from None
    return text.splitlines()


def split_start_urls(text: str) -> list[str]:
    """Split ``-a start_urls=`` at the commas that separate two URLs.

    A comma starts a new entry only when what follows starts with a scheme (``https:``,
    ``mailto:``) or a host name (:func:`~newscrawl.algorithms.urls.looks_like_host`); any other
    comma belongs to the URL.

    >>> split_start_urls("https://a.example/x,28,www.zeit.de/index, https://b.example/")
    ['https://a.example/x,28', 'www.zeit.de/index', 'https://b.example/']
    """
    out: list[str] = []
    for piece in text.split(","):
        start = piece.strip()
        if out and start and not (_SCHEME.match(start) or looks_like_host(start)):
            out[-1] += "," + piece
        elif out and not start:
            out[-1] += ","  # an empty piece: a trailing or doubled comma, stripped below
        else:
            out.append(piece)
    return [entry.strip().strip(",").strip() for entry in out if entry.strip().strip(",")]


def _numeric_host(host: str) -> bool:
    """A host that browsers and resolvers read as a number (``167772161``, ``0x7f.1``,
    ``010.0.0.1``, ``10.1``), unlike a dotted-quad of decimals."""
    labels = host.rstrip(".").split(".")
    if not all(_NUMERIC_LABEL.match(label) for label in labels):
        return False
    try:
        ipaddress.IPv4Address(host.rstrip("."))
        return False
    except ValueError:
        return True


def entry_problem(url: str) -> tuple[str, str | None]:
    """``(URL, None)`` for a usable entry (``http://`` added when it has no scheme), or
    ``(url, reason)``, a key of :data:`SKIP_REASONS`. Credentials stay in the returned URL
    (:func:`parse_entries` takes them off).

    >>> entry_problem("www.sina.com.cn/")
    ('http://www.sina.com.cn/', None)
    >>> entry_problem("ftp://files.example/")
    ('ftp://files.example/', 'not_http')
    >>> entry_problem("javascript:alert(1)")
    ('javascript:alert(1)', 'not_http')
    """
    if any(ch.isspace() for ch in url):
        return url, "space"
    scheme = _SCHEME.match(url)
    if scheme is None and url.partition(":")[0].lower() in _OPAQUE_SCHEMES:
        return url, "not_http"  # tel:110 looks like host:port
    if scheme is None:
        url = "http://" + url
    elif scheme.group(1).lower() not in ("http", "https") or not url[scheme.end():].startswith("//"):
        return url, "not_http"
    host = host_of(url)
    if not host:
        return url, "no_host"
    try:
        port = urlsplit(url).port
    except ValueError:
        return url, "bad_port"
    if port == 0:
        return url, "bad_port"
    if _numeric_host(host):
        return url, "numeric_host"
    return url, None


def _redacted(entry: str) -> str:
    """An entry for a log line: user information removed, also without a scheme."""
    if "//" in entry:
        return redact_credentials(entry)
    scheme = _SCHEME.match(entry)
    if scheme and scheme.group(1).lower() in _OPAQUE_SCHEMES:
        return entry
    authority, slash, rest = entry.partition("/")
    return authority.rpartition("@")[2] + slash + rest


def parse_entries(start_urls: str | None = None, seeds: str | Path | None = None) -> Entries:
    """The entries given as ``-a start_urls=`` (comma-separated) and/or ``-a seeds=``.

    Duplicates are dropped, order kept (``start_urls`` first). A bad entry is skipped with a
    warning naming its line and reason (:class:`SkippedEntry`); credentials are moved to
    :attr:`Entries.credentials` (the first given for an origin wins).

    Raises:
        ValueError: a seeds file that cannot be read or is not UTF-8.
    """
    given: list[tuple[str, int, str]] = []
    if start_urls:
        given += [("start_urls", n, u) for n, u in enumerate(split_start_urls(start_urls), 1)]
    if seeds:
        given += [(str(seeds), n, line.split("#", 1)[0].strip())
                  for n, line in enumerate(read_seeds_file(seeds), 1)]
    entries = Entries()
    for source, line, entry in given:
        if not entry:
            continue
        url, reason = entry_problem(entry)
        if reason:
            skip = SkippedEntry(source, line, _redacted(entry), reason)
            logger.warning("Skipping %s", skip.describe())
            entries.skipped.append(skip)
            continue
        url, user, password = split_credentials(url)
        url = canonicalize_url(url)
        if user is not None or password is not None:
            entries.credentials.setdefault(origin_of(url), (user or "", password or ""))
        if url not in entries.urls:
            entries.urls.append(url)
    return entries


def no_entry_message(skipped: list[SkippedEntry]) -> str:
    """The one-line error of a crawl with no usable entry."""
    if skipped:
        return (f"news: no valid entry URL ({len(skipped)} skipped; first: "
                f"{skipped[0].describe()}); give http(s) URLs with -a start_urls=URL[,URL...] "
                f"or -a seeds=FILE")
    return "news: give entry URLs with -a start_urls=URL[,URL...] or -a seeds=FILE"


def read_entry_urls(start_urls: str | None = None, seeds: str | Path | None = None,
                    skipped: list[SkippedEntry] | None = None) -> list[str]:
    """The entry URLs of :func:`parse_entries` (credentials dropped); skipped entries are
    appended to ``skipped`` when given.

    Raises:
        ValueError: no valid URL remains, or a seeds file that cannot be read or is not UTF-8.
    """
    entries = parse_entries(start_urls, seeds)
    if skipped is not None:
        skipped.extend(entries.skipped)
    if not entries.urls:
        raise ValueError(no_entry_message(entries.skipped))
    return entries.urls
