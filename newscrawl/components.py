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


def settings_kwargs(settings: Any, prefix: str, *names: str, **named: str) -> dict[str, Any]:
    """Keyword arguments read from the settings: each of ``names`` from ``prefix + NAME``
    (upper case), each ``key=SETTING`` of ``named`` from ``SETTING``.

    >>> from scrapy.settings import Settings
    >>> s = Settings({"NEWSCRAWL_LINKCLASS_MIN_GROUP": "3", "NEWSCRAWL_LINKCLASS_USE_SHAPE": "0"})
    >>> settings_kwargs(s, "NEWSCRAWL_LINKCLASS_", "min_group", shape="NEWSCRAWL_LINKCLASS_USE_SHAPE")
    {'min_group': 3, 'shape': False}
    """
    wanted = {name: prefix + name.upper() for name in names}
    wanted.update(named)
    return {key: setting(settings, name) for key, name in wanted.items()}


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
