"""What the Scrapy components (extensions, middlewares, pipelines, the scheduler) share when
Scrapy builds them (``from_crawler``): reading ``NEWSCRAWL_*`` settings, refusing to run when a
switch is off, finding the run's extensions.

A setting is read as the type of its default in :mod:`newscrawl.defaults` (``getbool`` for a
bool default, ``getint``, ``getfloat``, ``getdict``; the plain value otherwise), so a value given
as text (``-s NEWSCRAWL_X=5``) arrives converted, as the components' own reads did.
"""

from __future__ import annotations

from typing import Any, TypeVar

from scrapy.exceptions import NotConfigured

from newscrawl import defaults

T = TypeVar("T")

#: Default type → the Settings method that reads it (bool before int: a bool is an int).
_GETTERS = ((bool, "getbool"), (int, "getint"), (float, "getfloat"), (dict, "getdict"))


def setting(settings: Any, name: str) -> Any:
    """The value of setting ``name``, read as the type of its default in :mod:`newscrawl.defaults`."""
    default = getattr(defaults, name, None)
    for kind, getter in _GETTERS:
        if isinstance(default, kind):
            return getattr(settings, getter)(name)
    return settings.get(name)


def settings_kwargs(settings: Any, **named: str) -> dict[str, Any]:
    """Keyword arguments read from the settings: each ``key="NEWSCRAWL_FULL_NAME"`` of ``named``
    from that setting, read as :func:`setting` does.

    Every setting is named in full where it is read (never built from a prefix), so
    ``grep -rn '"NEWSCRAWL_X"'`` finds its reader (``tests/test_docs.py`` checks it).

    >>> from scrapy.settings import Settings
    >>> s = Settings({"NEWSCRAWL_LINKCLASS_MIN_GROUP": "3", "NEWSCRAWL_LINKCLASS_USE_SHAPE": "0"})
    >>> settings_kwargs(s, min_group="NEWSCRAWL_LINKCLASS_MIN_GROUP",
    ...                 shape="NEWSCRAWL_LINKCLASS_USE_SHAPE")
    {'min_group': 3, 'shape': False}

    Raises:
        KeyError: a name that is not a setting of :mod:`newscrawl.defaults` (a typo).
    """
    for name in named.values():
        if not hasattr(defaults, name):
            raise KeyError(f"{name} is not a setting of newscrawl.defaults")
    return {key: setting(settings, name) for key, name in named.items()}


def given_data_dir(settings: Any) -> str:
    """The data folder given to the crawl (``-s NEWSCRAWL_DATA_DIR=…``, ``newscrawl crawl
    --data-dir``, a scrapyd job's setting, ``newscrawl/settings.py``), or ``""`` when only the
    default of :mod:`newscrawl.defaults` stands (registered at ``default`` priority, 0): then
    env ``NEWSCRAWL_DATA_DIR`` decides, else ``./data``
    (:func:`newscrawl.embedded.uri.resolve_data_dir`, the one precedence of every command).

    >>> from scrapy.settings import Settings
    >>> given_data_dir(Settings({"NEWSCRAWL_DATA_DIR": "/srv/data"}, priority="cmdline"))
    '/srv/data'
    >>> given_data_dir(Settings({"NEWSCRAWL_DATA_DIR": "./data"}, priority="default"))
    ''
    """
    if (settings.getpriority("NEWSCRAWL_DATA_DIR") or 0) <= 0:
        return ""
    return str(settings.get("NEWSCRAWL_DATA_DIR") or "")


def require_enabled(settings: Any, *names: str) -> None:
    """Raise :class:`NotConfigured` (``"<NAME> is off"``) for the first of the boolean settings
    ``names`` that is off."""
    for name in names:
        if not settings.getbool(name):
            raise NotConfigured(f"{name} is off")


def require_extension(crawler: Any, cls: type[T]) -> T:
    """The crawler's extension of class ``cls``; :class:`NotConfigured` when ``EXTENSIONS``
    lacks it."""
    extension = crawler.get_extension(cls)
    if extension is None:
        raise NotConfigured(f"needs {cls.__module__}.{cls.__qualname__} in EXTENSIONS")
    return extension


def watch_bounds(settings: Any, spider: Any = None) -> dict[str, Any]:
    """The :class:`~newscrawl.algorithms.revisitplan.RevisitConfig` fields of monitoring mode
    (``-a watch=1`` / ``NEWSCRAWL_WATCH_ENABLED``): the sources' interval bounds, reference and
    explore intervals from ``NEWSCRAWL_WATCH_*`` (seconds), and the channel budget as a ceiling.
    Empty for a batch crawl (and for a ``watch`` value that is not a switch: the watch
    extension reports that).
    """
    from newscrawl.algorithms.watch import is_on  # pure; imported here to keep this module light

    value = getattr(spider, "watch", None)
    try:
        on = is_on(value if value not in (None, "") else settings.get("NEWSCRAWL_WATCH_ENABLED"))
    except ValueError:
        return {}
    if not on:
        return {}
    return {"source_min_interval": setting(settings, "NEWSCRAWL_WATCH_MIN_INTERVAL"),
            "source_max_interval": setting(settings, "NEWSCRAWL_WATCH_MAX_INTERVAL"),
            "reference_interval": setting(settings, "NEWSCRAWL_WATCH_REFERENCE_INTERVAL"),
            "explore_interval": setting(settings, "NEWSCRAWL_WATCH_EXPLORE_INTERVAL"),
            "budget_is_cap": True}
