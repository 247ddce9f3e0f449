"""Whether a crawl runs distributed: one question asked by the add-on and the extension.

A leaf module (no Scrapy component, no Redis), so that every part of
:mod:`newscrawl.distributed` can ask it without importing the others.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def is_distributed(settings: Any, environ: Mapping[str, str] | None = None) -> bool:
    """True when the settings (or ``REDIS_URL`` in ``environ``) ask for the shared Redis frontier.

    ``NEWSCRAWL_DISTRIBUTED`` is ``auto`` (or unset: on when ``REDIS_URL`` is set, as a setting
    or in ``environ``), or a boolean.

    Args:
        settings: Scrapy settings (``get``, ``getbool``).
        environ: environment variables; ``None`` reads ``os.environ``.

    Raises:
        ValueError: ``NEWSCRAWL_DISTRIBUTED`` is neither ``auto`` nor a boolean.
    """
    environ = os.environ if environ is None else environ
    value = settings.get("NEWSCRAWL_DISTRIBUTED")
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "auto")):
        return bool(settings.get("REDIS_URL") or environ.get("REDIS_URL"))
    try:
        return bool(settings.getbool("NEWSCRAWL_DISTRIBUTED"))
    except ValueError:
        raise ValueError(
            f"NEWSCRAWL_DISTRIBUTED must be auto, true or false, got {value!r}") from None
