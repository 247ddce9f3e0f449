"""URL canonicalisation, fingerprints, credentials and registered domains.

Pure functions over strings. Canonicalisation is w3lib's (``canonicalize_url``: sorted query,
percent-encoding normalised, fragment dropped) after removing tracking parameters, session ids
(query and path parameters, :data:`SESSION_PARAMETERS`) and credentials (``user:secret@``); it is
the one canonical form of the crawl: links become requests for it (link classification) and the
page fingerprint hashes it. The registered domain comes from the Public Suffix List snapshot
bundled with tldextract (no network), so ``news.sina.com.cn`` belongs to ``sina.com.cn``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from functools import lru_cache
from urllib.parse import unquote, urlsplit, urlunsplit

import tldextract
from w3lib.url import canonicalize_url as _w3lib_canonicalize_url

# Offline snapshot only: an empty suffix_list_urls tuple means "never fetch the live list".
_PSL = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=False)

#: Query parameters that only track the reader (campaign tags, click ids); dropping them makes
#: one article one URL.
TRACKING_PARAMETERS = (
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "utm_id",
    "gclid",
    "fbclid",
    "mc_cid",
    "mc_eid",
    "wt_mc",
    "wt_zmc",
    "xtor",
)
#: Query and path parameters that carry a session id (servlet containers, PHP, ASP, ColdFusion,
#: shop systems). A page reached with another session id is the same page: ``/a;jsessionid=X``,
#: ``/a?PHPSESSID=Y`` and ``/a`` are one URL. Names compare case-insensitively.
SESSION_PARAMETERS = (
    "jsessionid",
    "phpsessid",
    "aspsessionid",  # and ASPSESSIONID<8 letters>, classic ASP
    "asp.net_sessionid",
    "sid",
    "sessionid",
    "session_id",
    "sessid",
    "cfid",
    "cftoken",
    "zenid",
    "oscsid",
)
_DROPPED_PARAMETERS = frozenset(TRACKING_PARAMETERS + SESSION_PARAMETERS)
#: Session parameter names that carry a random suffix (classic ASP: ``ASPSESSIONIDQADBCRCT``).
_SESSION_PREFIXES = ("aspsessionid",)
#: Quick test: may this URL hold a parameter to drop or a session path parameter?
_MAY_HOLD_PARAMETER = re.compile(
    r"[?&;](?:utm_|gclid=|fbclid=|mc_[ce]id=|wt_z?mc=|xtor=|jsessionid|phpsessid|aspsessionid|"
    r"asp\.net_sessionid|sid=|sessionid=|session_id=|sessid=|cfid=|cftoken=|zenid=|oscsid=)",
    re.IGNORECASE)
#: ``;name=value`` path parameters naming a session id (``/a;jsessionid=0A1B/``, RFC 3986 §3.3);
#: a segment that holds nothing else (``/;jsessionid=0A1B/a``) goes with its slash.
_SESSION_NAMES = "|".join(re.escape(name) for name in SESSION_PARAMETERS)
_SESSION_PATH_SEGMENT = re.compile(r"/;(?:" + _SESSION_NAMES + r")=[^/;?#]*(?=/)", re.IGNORECASE)
_SESSION_PATH_PARAMETER = re.compile(r";(?:" + _SESSION_NAMES + r")=[^/;?#]*", re.IGNORECASE)
#: ASP.NET cookieless session segments: ``/(S(ab12cd))/`` (also ``(A(...))``, ``(F(...))``).
_ASPNET_SESSION_SEGMENT = re.compile(r"/\((?:[A-Za-z]\([^()/]*\))+\)(?=/)")
#: The user information of a URL inside any text (``//user:secret@``), for log lines.
_USERINFO_IN_TEXT = re.compile(r"(?<=//)[^/\s@?#'\"<>]+@")


@lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """Return the registered domain (eTLD+1) of ``host``.

    Args:
        host: a host name without port, e.g. ``"news.sina.com.cn"``.

    Returns:
        ``"sina.com.cn"`` for that example; an IP literal or a single-label host (``localhost``)
        is returned unchanged, lower-cased. Never raises.
    """
    host = (host or "").lower().strip(".")
    if not host:
        return ""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return host
    except ValueError:
        pass
    result = _PSL(host)
    return result.top_domain_under_public_suffix or host


def looks_like_host(text: str) -> bool:
    """True when ``text`` starts with a host name under a public suffix (``www.zeit.de/index``),
    an IP address or ``localhost``, with an optional port: how a schemeless entry URL begins.

    >>> looks_like_host("www.zeit.de/index"), looks_like_host("28"), looks_like_host("b.html")
    (True, False, False)
    """
    host = re.split(r"[/?#]", text.strip(), maxsplit=1)[0].rpartition("@")[2]
    if host.startswith("["):
        return host.partition("]")[0].count(":") >= 2
    host = host.partition(":")[0].lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        ipaddress.IPv4Address(host)
        return True
    except ValueError:
        pass
    result = _PSL(host)
    return bool(result.suffix and result.domain)


def host_of(url: str) -> str:
    """Return the lower-cased host name of ``url`` (no port, no credentials); ``""`` if none."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def origin_of(url: str) -> str:
    """The origin of a URL, ``scheme://host:port`` with the default port filled in (RFC 6454
    §4; the protection space of RFC 7617 §2 is the origin plus a realm); ``""`` when the URL
    cannot be parsed.

    >>> origin_of("HTTP://Example.org/a"), origin_of("https://ann@example.org:8443/")
    ('http://example.org:80', 'https://example.org:8443')
    """
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower(), 0)
    except ValueError:
        return ""
    host = (parts.hostname or "").lower()
    return f"{parts.scheme.lower()}://{host}:{port}" if host else ""


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """Split the user information off a URL (RFC 3986 §3.2.1: ``user:password@`` is deprecated).

    Returns:
        ``(url without user information, user, password)``; user and password are
        percent-decoded, None when absent. Never raises on a string (a URL that cannot be
        parsed comes back unchanged with no credentials).

    >>> split_credentials("http://ann:s%40cret@example.org:8080/a")
    ('http://example.org:8080/a', 'ann', 's@cret')
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None, None
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at:
        return url, None, None
    user, colon, password = userinfo.partition(":")
    clean = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    return clean, unquote(user), unquote(password) if colon else None


def redact_credentials(text: str) -> str:
    """``text`` with the user information of every URL in it removed (``http://u:p@h/`` →
    ``http://h/``): for log lines, records and stats. Never raises.

    >>> redact_credentials("GET http://ann:secret@example.org/a failed")
    'GET http://example.org/a failed'
    """
    if "@" not in text:
        return text
    return _USERINFO_IN_TEXT.sub("", text)


def _dropped(argument: str) -> bool:
    name = unquote(argument.split("=", 1)[0]).lower()
    return name in _DROPPED_PARAMETERS or name.startswith(_SESSION_PREFIXES)


def _drop_parameters(url: str) -> str:
    """Remove credentials, session path parameters and :data:`TRACKING_PARAMETERS` /
    :data:`SESSION_PARAMETERS` query arguments (names case-insensitive)."""
    url = split_credentials(url)[0]
    parts = urlsplit(url)
    path = _SESSION_PATH_PARAMETER.sub("", _SESSION_PATH_SEGMENT.sub("", parts.path))
    path = _ASPNET_SESSION_SEGMENT.sub("", path)
    query = parts.query
    if query:
        query = "&".join(arg for arg in query.split("&") if arg and not _dropped(arg))
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


def canonicalize_url(url: str) -> str:
    """Return the canonical form of an absolute http(s) URL.

    w3lib's canonicalisation (RFC 3986 normalisation, sorted query arguments, fragment dropped)
    after removing credentials (``user:secret@``), :data:`TRACKING_PARAMETERS` and
    :data:`SESSION_PARAMETERS` (as query arguments and as ``;name=value`` path parameters) and
    ASP.NET cookieless session segments (``/(S(…))/``). Idempotent; never raises on a string (a
    URL that cannot be parsed is returned stripped).

    >>> canonicalize_url("http://u:pw@example.org/a;jsessionid=0AF3/b?PHPSESSID=9&id=2#top")
    'http://example.org/a/b?id=2'
    """
    url = url.strip()
    try:
        if "@" in url or "(" in url or _MAY_HOLD_PARAMETER.search(url):
            url = _drop_parameters(url)
        return _w3lib_canonicalize_url(url, keep_fragments=False)
    except (ValueError, UnicodeError):
        return url


def url_fingerprint(url: str) -> str:
    """Return the 8-byte fingerprint of ``url`` as 16 lower-case hex digits.

    SHA-1 of the canonical URL (:func:`canonicalize_url`), first 8 bytes: Mercator's compact exact
    fingerprint (Heydon & Najork 1999, §3.5; seed 001). Two URLs that differ only in tracking
    parameters, query order or fragment get the same fingerprint.
    """
    return hashlib.sha1(canonicalize_url(url).encode("utf-8")).hexdigest()[:16]


#: Query parameters through which redirector links carry their target
#: (``go.rss.sina.com.cn/redirect.php?url=…``, ``…/click?u=…``, ``…?dest=…``).
REDIRECT_PARAMETERS = ("url", "u", "target", "dest", "destination", "redirect", "redirect_url",
                       "redirecturl", "goto", "to", "link", "href")
_REDIRECT_ARGUMENT = re.compile(
    r"[?&](?:" + "|".join(REDIRECT_PARAMETERS) + r")=(https?(?::|%3a)[^#]*)", re.IGNORECASE)


def unwrap_redirect(url: str, *, max_depth: int = 3) -> str:
    """The target of a redirector link whose query names it, else ``url`` unchanged.

    A query argument from :data:`REDIRECT_PARAMETERS` whose value is an absolute http(s) URL is
    the target: percent-encoded (``?url=https%3A%2F%2F…&x=1``) it ends at the next ``&``; written
    raw (``redirect.php?url=http://tech.sina.com.cn/t/a.shtml``, as Sina's feed redirector
    does) it runs to the end, its own query included. Nested redirectors are unwrapped up to
    ``max_depth`` times. Links that hide the target (FeedBurner ``/~r/…``) are not unwrapped
    here (the feed entry names the target: see ``newscrawl.algorithms.feeds``). Never raises.

    >>> unwrap_redirect("http://go.rss.sina.com.cn/redirect.php?url=http://tech.sina.com.cn/t/a.shtml")
    'http://tech.sina.com.cn/t/a.shtml'
    >>> unwrap_redirect("https://l.example.net/r?u=https%3A%2F%2Fnews.example.org%2Fa%3Fid%3D2&s=9")
    'https://news.example.org/a?id=2'
    """
    for _ in range(max_depth):
        m = _REDIRECT_ARGUMENT.search(url)
        if m is None:
            break
        value = m.group(1)
        if value[4:6].lower() == "%3" or value[5:7].lower() == "%3":
            value = unquote(value.split("&", 1)[0])
        value = value.strip()
        try:
            if not urlsplit(value).hostname:
                break
        except ValueError:
            break
        url = value
    return url
