"""Hostile cases steering the crawler where it must not go, and redirect chains.

The ``trap`` host (127.0.0.9) listens like any other, and is never allowed: a connection there
is a request the destination policy failed to stop. Its own entry (``trap-entry``) makes
127.0.0.9 an entry's domain, so redirects to it pass the cross-domain rule and meet the
address check.
"""

from __future__ import annotations

from tests.hostile.site import Handler, HostileSite, article_page, case, extra_entry, page

#: Redirect chains longer than REDIRECT_MAX_TIMES (10).
CHAIN_HOPS = 30


@case("trap-entry", host="trap")
def trap_entry(h: Handler, path: str) -> None:
    """An entry URL on the trap host: refused before any connection."""
    h.send(200, page("you should not be here"))


@case("redirect-to-trap", article=True)
def redirect_to_trap(h: Handler, path: str) -> None:
    """An allowed page redirecting to 127.0.0.9 (a stand-in for a metadata service)."""
    h.send(302, headers={"Location": h.site.url("/latest/meta-data/", "trap")})


@case("refresh-to-trap", article=True)
def refresh_to_trap(h: Handler, path: str) -> None:
    """An allowed page with a meta refresh to 127.0.0.9."""
    target = h.site.url("/latest/meta-data/iam", "trap")
    h.send(200, page("refresh", f"<meta http-equiv='refresh' content='0; url={target}'>"))


@extra_entry
def numeric_decimal(site: HostileSite) -> str:
    return f"http://2130706441:{site.port('trap')}/numeric-decimal/"  # 127.0.0.9


@extra_entry
def numeric_hex(site: HostileSite) -> str:
    return f"http://0x7f.0.0.9:{site.port('trap')}/numeric-hex/"


@extra_entry
def numeric_octal(site: HostileSite) -> str:
    return f"http://0177.0.0.011:{site.port('trap')}/numeric-octal/"


@extra_entry
def name_to_trap(site: HostileSite) -> str:
    """A host name that the crawl's resolver maps to 127.0.0.9 (tests/hostile/resolver.py)."""
    return f"http://metadata.hostile.test:{site.port('trap')}/latest/meta-data/"


@extra_entry
def idn_host(site: HostileSite) -> str:
    """An internationalised host name (``www.bücher.test``, resolved to the main host)."""
    return f"http://www.bücher.test:{site.port('main')}/idn-host/"


@case("idn-host")
def idn_page(h: Handler, path: str) -> None:
    h.send(200, page("Bücher", "<p>Ein Laden für Bücher.</p>"))


@case("cross-site-redirect", article=True)
def cross_site_redirect(h: Handler, path: str) -> None:
    """A redirect to another site (an allowed address, but no entry's domain)."""
    h.send(301, headers={"Location": h.site.url("/elsewhere/2024-10-01/landing-page-1.html",
                                                "other")})


@case("partner-redirect", article=True)
def partner_redirect(h: Handler, path: str) -> None:
    """A redirect to another site that is an entry's domain: followed."""
    h.send(302, headers={"Location": h.site.url(PARTNER_TARGET, "partner")})


PARTNER_TARGET = "/partner-entry/2024-10-01/partner-landing-article-2.html"
PARTNER_TITLE = "Partner landing article"


@case("partner-entry", host="partner", article=True)
def partner_entry(h: Handler, path: str) -> None:
    h.send(200, article_page(PARTNER_TITLE).encode())


@case("redirect-chain", article=True)
def redirect_chain(h: Handler, path: str) -> None:
    """A chain of 30 redirects (``?hop=N``) ending at the article."""
    hop = int(h.path.split("hop=", 1)[1]) if "hop=" in h.path else 0
    if hop >= CHAIN_HOPS:
        h.send(200, article_page("End of the chain").encode())
    else:
        h.send(302, headers={"Location": f"{path}?hop={hop + 1}"})


@case("refresh-chain", article=True)
def refresh_chain(h: Handler, path: str) -> None:
    """A chain of 30 meta refreshes (``?step=N``) ending at the article."""
    step = int(h.path.split("step=", 1)[1]) if "step=" in h.path else 0
    if step >= CHAIN_HOPS:
        h.send(200, article_page("End of the refreshes").encode())
    else:
        h.send(200, page("weiter", f"<meta http-equiv='refresh' content='0; url={path}?step={step + 1}'>"))
