"""Checks of the ``NEWSCRAWL_*`` settings a crawl is given, before anything is opened.

Run by :class:`newscrawl.addon.DefaultsAddon` when Scrapy applies the add-ons (after the
spider is created, before any extension, store or connection):

* an unknown ``NEWSCRAWL_*`` name (a typo such as ``NEWSCRAWL_DEPHT``) is warned about by name,
  with the closest known name (:func:`difflib.get_close_matches`); so is an unknown spider
  argument (``-a dpeth=0``, :func:`unknown_arguments`, called by the ``news`` spider);
* a value that cannot be read as its default's type (``NEWSCRAWL_DEPTH=abc``), a negative
  count or a value outside its choices (``NEWSCRAWL_STRATEGY``, ``NEWSCRAWL_UPDATE_MODE``) stops
  the crawl with one line naming the setting (:class:`SettingsError`).

Pure: settings come in as a mapping of given values (names the user or the project set); the
one side effect is the warning of :func:`warn_unknown_arguments`, on the logger it is given.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from newscrawl.algorithms.frontier import STRATEGIES
from newscrawl.crawlstate import UPDATE_MODES, parse_whole_number

#: Settings whose value is one of a few words.
CHOICES: dict[str, tuple[str, ...]] = {
    "NEWSCRAWL_STRATEGY": tuple(STRATEGIES),
    "NEWSCRAWL_UPDATE_MODE": UPDATE_MODES,
}
#: Of those, the ones compared case-insensitively.
CASE_INSENSITIVE = frozenset({"NEWSCRAWL_UPDATE_MODE"})
#: Settings that count something (>= 0).
WHOLE_NUMBERS = ("NEWSCRAWL_DEPTH", "NEWSCRAWL_BUDGET", "NEWSCRAWL_MAX_PAGES")

_TRUE_FALSE = {"1", "0", "true", "false"}


class SettingsError(ValueError):
    """A setting's value cannot be used (the message names the setting and the value)."""


def unknown_settings(names: Iterable[str], known: Iterable[str]) -> list[tuple[str, str | None]]:
    """``(name, closest known name or None)`` for every ``NEWSCRAWL_*`` name not in ``known``.

    >>> unknown_settings(["NEWSCRAWL_DEPHT", "DEPTH_LIMIT"], ["NEWSCRAWL_DEPTH"])
    [('NEWSCRAWL_DEPHT', 'NEWSCRAWL_DEPTH')]
    """
    known = list(known)
    out = []
    for name in sorted(set(names)):
        if name.startswith("NEWSCRAWL_") and name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            out.append((name, close[0] if close else None))
    return out


#: Every argument of the ``news`` spider (``-a NAME=VALUE``): the spider's own, then those its
#: extensions read (``budget``, ``now``: extensions/crawlstate.py; ``watch``, ``for``, ``rate``:
#: extensions/watch.py). Any other name is warned about with the closest of these.
SPIDER_ARGUMENTS = ("start_urls", "seeds", "depth", "strategy", "budget", "now", "watch", "for",
                    "rate")


def warn_unknown_arguments(names: Iterable[str], log: logging.Logger) -> None:
    """Log one warning per unknown spider argument of ``names``, with the closest known name
    (``Unknown spider argument dpeth (did you mean depth?)``)."""
    for name, close in unknown_arguments(names, SPIDER_ARGUMENTS):
        log.warning("Unknown spider argument %s%s", name,
                    f" (did you mean {close}?)" if close else "")


def unknown_arguments(names: Iterable[str], known: Iterable[str]) -> list[tuple[str, str | None]]:
    """``(name, closest known name or None)`` for every spider argument (``-a NAME=…``) not in
    ``known``; names starting with ``_`` (scrapyd's ``_job``) are the runner's, not checked.

    >>> unknown_arguments(["dpeth", "_job", "depth"], ["depth", "strategy"])
    [('dpeth', 'depth')]
    """
    known = list(known)
    out = []
    for name in sorted(set(names)):
        if not name.startswith("_") and name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            out.append((name, close[0] if close else None))
    return out


def _check_type(name: str, value: Any, default: Any) -> None:
    if isinstance(default, bool):
        if not isinstance(value, (bool, int)) and str(value).strip().lower() not in _TRUE_FALSE:
            raise SettingsError(f"{name} must be True or False (1 or 0), got {value!r}")
    elif isinstance(default, int):
        try:
            int(value)
        except (TypeError, ValueError):
            raise SettingsError(f"{name} must be a whole number, got {value!r}") from None
    elif isinstance(default, (dict, list)) and isinstance(value, str):
        try:
            json.loads(value)
        except ValueError as exc:
            raise SettingsError(f"{name} must be JSON (as its default {json.dumps(default)}), "
                                f"got {value!r}: {exc}") from None
    elif isinstance(default, float):
        try:
            float(value)
        except (TypeError, ValueError):
            raise SettingsError(f"{name} must be a number, got {value!r}") from None


def check_values(given: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    """Check the given values of known settings against their defaults' types and rules.

    Args:
        given: setting name → value, for the settings the user or the project set.
        defaults: every known name → its default.

    Raises:
        SettingsError: the first bad value (one line naming the setting).
    """
    for name, value in given.items():
        if name not in defaults or value is None:
            continue
        _check_type(name, value, defaults[name])
        try:
            if name in WHOLE_NUMBERS:
                parse_whole_number(value, name)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        word = str(value).lower() if name in CASE_INSENSITIVE else str(value)
        if name in CHOICES and word not in CHOICES[name]:
            raise SettingsError(f"{name} must be one of {', '.join(CHOICES[name])}, "
                                f"got {value!r}")


def check_combinations(settings: Mapping[str, Any]) -> None:
    """Refuse setting combinations that cannot work together.

    Scrapy's HTTP cache (``HTTPCACHE_ENABLED``) with incremental re-crawls
    (``NEWSCRAWL_REVISIT_ENABLED``): its middleware answers a revalidation's 304 with the cached
    200, so a re-crawl would see false changes and stale bodies (RFC 9110 §15.4.5).

    Raises:
        SettingsError: the combination, in one line naming both settings.
    """
    def on(name: str) -> bool:
        return str(settings.get(name, False)).strip().lower() in ("1", "true")

    if on("HTTPCACHE_ENABLED") and on("NEWSCRAWL_REVISIT_ENABLED"):
        raise SettingsError("HTTPCACHE_ENABLED=True cannot be combined with incremental "
                            "re-crawls: the HTTP cache hides revalidation answers (304) behind "
                            "cached pages; set HTTPCACHE_ENABLED=False or "
                            "NEWSCRAWL_REVISIT_ENABLED=False")
