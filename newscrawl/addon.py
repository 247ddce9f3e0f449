"""Scrapy add-on registering every ``NEWSCRAWL_*`` default at ``default`` priority.

Every default lives in :mod:`newscrawl.defaults` and is registered here once, the way Scrapy
registers its own in ``scrapy/settings/default_settings.py``: components then read a setting
plainly (``settings.getint("NEWSCRAWL_DEPTH")``) with no second fallback in code, and any
project, spider or command-line value (``-s NEWSCRAWL_DEPTH=1``) wins over the default.

Enabled in :mod:`newscrawl.settings` (``ADDONS``); tests that build a crawler without the project
settings add ``{"newscrawl.addon.DefaultsAddon": 0}`` to their ``ADDONS``.
"""

from __future__ import annotations

import logging
from typing import Any

from newscrawl import defaults
from newscrawl.settingscheck import check_combinations, check_values, unknown_settings

logger = logging.getLogger(__name__)


def default_settings() -> dict[str, Any]:
    """Every ``NEWSCRAWL_*`` name of :mod:`newscrawl.defaults` with its default value."""
    return {name: getattr(defaults, name) for name in dir(defaults) if name.startswith("NEWSCRAWL_")}


class DefaultsAddon:
    """Register :func:`default_settings` at ``default`` priority (below project settings),
    after checking the ``NEWSCRAWL_*`` settings given (:mod:`newscrawl.settingscheck`).

    Raises:
        newscrawl.settingscheck.SettingsError: a given value cannot be used (before any
            extension, store or connection is opened).
    """

    def update_settings(self, settings: Any) -> None:
        known = default_settings()
        given = {name: settings.get(name) for name in settings if name.startswith("NEWSCRAWL_")}
        for name, close in unknown_settings(given, known):
            logger.warning("Unknown setting %s ignored%s", name,
                           f" (did you mean {close}?)" if close else "")
        check_values(given, known)
        for name, value in known.items():
            settings.set(name, value, priority="default")
        check_combinations({name: settings.get(name) for name in
                            ("HTTPCACHE_ENABLED", "NEWSCRAWL_REVISIT_ENABLED")})
