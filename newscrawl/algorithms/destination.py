"""Destination policy: which addresses a crawl may connect to, and which redirects it follows.

A crawler that follows links, redirects and meta refreshes of pages it does not control can be
steered to the machine it runs on (``127.0.0.1``), to the private network behind it, or to a
cloud metadata service (``169.254.169.254``): server-side request forgery. By default no
request goes to a loopback, private, link-local, multicast, reserved or unspecified address
(Python's :mod:`ipaddress` classes, which follow the IANA special-purpose registries, RFC 6890),
nor to any other address that is not globally reachable. The check runs on the address a host
name resolves to, so a public name pointing to a private address is refused as well; entries
of an allow list (host names, addresses, CIDR networks) are let through.

Host names that are numbers are normalised as a resolver would read them (``inet_aton``: the
WHATWG URL Standard's IPv4 parser, §3.5): ``167772161``, ``0xa.0.0.1``, ``012.0.0.1`` and
``10.1`` are all ``10.0.0.1``. IPv4-mapped and 6to4/NAT64-embedded IPv6 addresses are judged
by the IPv4 address inside.

Redirects and meta refreshes that leave the registered domain of the page first requested
(Public Suffix List, :func:`newscrawl.algorithms.urls.registered_domain`) are not followed
unless the target's domain is one of the crawl's entry domains (:func:`redirect_allowed`).

Pure: plain strings and addresses in, a reason or ``None`` out; no resolver, no clock.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from newscrawl.algorithms.urls import registered_domain

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Refusal reasons of an address, in the order they are tested (the first that applies wins).
REASONS = ("unspecified", "loopback", "link_local", "multicast", "private", "reserved",
           "non_global")

_IPV4_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")
#: NAT64 well-known prefix (RFC 6052): the last 32 bits are an IPv4 address.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def parse_ipv4_number(host: str) -> ipaddress.IPv4Address | None:
    """Read ``host`` as an IPv4 address the way ``inet_aton`` and browsers do, or ``None``.

    One to four dot-separated parts, each decimal, octal (leading ``0``) or hexadecimal
    (``0x``); the last part fills the remaining bytes (WHATWG URL Standard, "IPv4 parser").
    A trailing dot is ignored.

    Args:
        host: a URL's host, lower or upper case, without port or brackets.

    Returns:
        The address, or ``None`` when ``host`` is not such a number (a name, or out of range).

    >>> str(parse_ipv4_number("167772161")), str(parse_ipv4_number("0x7f.1"))
    ('10.0.0.1', '127.0.0.1')
    >>> str(parse_ipv4_number("017700000001")), parse_ipv4_number("news.example")
    ('127.0.0.1', None)
    """
    text = host.strip().rstrip(".")
    parts = text.split(".")
    if not text or len(parts) > 4 or not all(_IPV4_PART.match(p) for p in parts):
        return None
    numbers = []
    for part in parts:
        if part[:2].lower() == "0x":
            numbers.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            numbers.append(int(part, 8))
        else:
            numbers.append(int(part))
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def literal_address(host: str) -> Address | None:
    """The address ``host`` stands for when it is an IP literal (numeric forms normalised by
    :func:`parse_ipv4_number`, IPv6 with or without brackets and zone), else ``None``.

    >>> str(literal_address("[::ffff:127.0.0.1]")), literal_address("localhost")
    ('::ffff:7f00:1', None)
    """
    text = host.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text.split("%", 1)[0])
        except ValueError:
            return None
    return parse_ipv4_number(text)


def _embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_refusal(address: Address) -> str | None:
    """Why a crawl must not connect to ``address`` (one of :data:`REASONS`), or ``None``.

    IPv6 addresses carrying an IPv4 address (mapped, 6to4, NAT64) are judged by that address
    too. Sources: :mod:`ipaddress` (IANA IPv4/IPv6 special-purpose address registries, RFC 6890).

    >>> address_refusal(ipaddress.ip_address("169.254.169.254"))
    'link_local'
    >>> address_refusal(ipaddress.ip_address("93.184.216.34")) is None
    True
    """
    inner = _embedded_ipv4(address)
    if inner is not None:
        reason = address_refusal(inner)
        if reason is not None:
            return reason
    checks = (address.is_unspecified, address.is_loopback, address.is_link_local,
              address.is_multicast, address.is_private, address.is_reserved,
              not address.is_global)
    for reason, applies in zip(REASONS, checks):
        if applies:
            return reason
    return None


def is_localhost_name(host: str) -> bool:
    """True for ``localhost`` and names below it (RFC 6761 §6.3: they resolve to loopback)."""
    name = host.strip().lower().rstrip(".")
    return name == "localhost" or name.endswith(".localhost")


@dataclass(frozen=True)
class AllowList:
    """Hosts and networks a crawl may reach even though they are private (an allow list).

    Attributes:
        names: lower-case host names allowed whatever they resolve to.
        networks: addresses (as /32 or /128) and CIDR networks.
    """

    names: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, value: str | Iterable[str]) -> AllowList:
        """Parse ``"name, 127.0.0.1, 10.0.0.0/8"`` (or a list of such entries).

        Raises:
            ValueError: an entry that is a malformed network (``10.0.0.1/33``).
        """
        items = value.split(",") if isinstance(value, str) else list(value)
        names: set[str] = set()
        networks: list[Network] = []
        for raw in items:
            item = raw.strip().lower().strip("[]")
            if not item:
                continue
            if "/" in item:
                try:
                    networks.append(ipaddress.ip_network(item, strict=False))
                except ValueError as exc:
                    raise ValueError(f"NEWSCRAWL_ALLOWED_PRIVATE_HOSTS: bad network {raw!r}: "
                                     f"{exc}") from None
                continue
            address = literal_address(item)
            if address is not None:
                networks.append(ipaddress.ip_network(address))
            else:
                names.add(item.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def allows_name(self, host: str) -> bool:
        """True when the host name itself is listed."""
        return host.strip().lower().rstrip(".") in self.names

    def allows_address(self, address: Address) -> bool:
        """True when ``address`` (or the IPv4 address inside it) is in a listed network."""
        candidates = [address]
        inner = _embedded_ipv4(address)
        if inner is not None:
            candidates.append(inner)
        return any(a.version == n.version and a in n for a in candidates for n in self.networks)


def host_refusal(host: str, addresses: Iterable[Address], allow: AllowList) -> str | None:
    """Why a request to ``host``, resolved to ``addresses``, must not be sent; or ``None``.

    The host name on the allow list lets every address through; otherwise each address must
    be allowed by :func:`address_refusal` or by the allow list's networks, and the first
    refused address gives the reason. No address at all is not judged here (the caller decides).

    >>> host_refusal("db.internal", [ipaddress.ip_address("10.0.0.5")], AllowList.parse(""))
    'private'
    >>> host_refusal("db.internal", [ipaddress.ip_address("10.0.0.5")],
    ...              AllowList.parse("db.internal")) is None
    True
    """
    if allow.allows_name(host):
        return None
    for address in addresses:
        reason = address_refusal(address)
        if reason is not None and not allow.allows_address(address):
            return reason
    return None


def literal_refusal(host: str, allow: AllowList) -> str | None:
    """The check of a host without resolving it: IP literals (any numeric form) and
    ``localhost`` names are judged, other names pass (``None``). Used when a proxy resolves
    names, and before resolution."""
    if allow.allows_name(host):
        return None
    address = literal_address(host)
    if address is not None:
        return host_refusal(host, [address], allow)
    if is_localhost_name(host):
        return "loopback"
    return None


def redirect_allowed(first_host: str, target_host: str, entry_domains: Iterable[str]) -> bool:
    """True when a redirect (or meta refresh) of a request first sent to ``first_host`` may be
    followed to ``target_host``: the same registered domain (Public Suffix List), or the domain
    of one of the crawl's entries.

    >>> redirect_allowed("www.zeit.de", "zeit.de", []), redirect_allowed("a.de", "b.com", [])
    (True, False)
    >>> redirect_allowed("a.de", "news.b.com", ["b.com"])
    True
    """
    target = registered_domain(target_host)
    return target == registered_domain(first_host) or target in set(entry_domains)
