"""The distributed-crawling page (``docs/distributed.md``) names the Redis keys as they are: every
``newscrawl/distributed/keys.py`` (the one module that spells Redis keys) is named in the page
as ``news:…`` (the namespace of the ``news`` spider), and every ``news:…`` key the page names is
a template of ``keys.py``. Placeholders are compared by position only (``<round>`` in the page,
``%(round)s`` in ``keys.py``). A key added to ``keys.py`` without a line in the page, or a
page key that does not exist, fails here.
"""

from __future__ import annotations

import re

from newscrawl.distributed import keys
from tests.helpers import REPO

NAMESPACE = "news"  # NEWSCRAWL_REDIS_NAMESPACE's default for the `news` spider
PAGE = "docs/distributed.md"
#: A key as the page writes it: ``news:`` (or ``<namespace>:``), then names, colons and
#: ``<placeholders>``; not part of a longer word, path or key (``newscrawl:news:…`` is not one).
PAGE_KEY = re.compile(r"(?<![\w:/.\-])(?:news|<namespace>):(?:[\w\-]|<[^>\s]+>)(?:[\w\-:]|<[^>\s]+>)*")


def shape(key: str) -> str:
    """A key with each placeholder replaced by ``<>`` and the namespace by ``news``."""
    key = re.sub(r"^<namespace>:", f"{NAMESPACE}:", key)
    key = re.sub(r"%\(ns\)s", NAMESPACE, key)
    key = re.sub(r"%\(\w+\)s", "<>", key)
    return re.sub(r"<[^>\s]+>", "<>", key).rstrip(":")


def templates() -> dict[str, str]:
    """``shape → constant name`` of every key template in ``keys.py`` (string constants that
    contain the namespace; the SCAN pattern ``%(ns)s:*`` is not a key)."""
    found = {}
    for name, value in vars(keys).items():
        if name.isupper() and isinstance(value, str) and "%(ns)s" in value and "*" not in value:
            found[shape(value)] = name
    return found


def page_keys() -> dict[str, str]:
    """``shape → as written`` of every Redis key the page names."""
    text = (REPO / PAGE).read_text(encoding="utf-8")
    return {shape(m.group(0)): m.group(0) for m in PAGE_KEY.finditer(text)}


def test_keys_module_has_templates():
    assert len(templates()) >= 10, templates()  # the parser still finds the frontier's keys


def test_every_key_of_keys_py_is_named_on_the_page():
    missing = {name: shaped for shaped, name in templates().items() if shaped not in page_keys()}
    assert not missing, f"keys.py templates the page does not name (as news:…): {missing}"


def test_every_key_the_page_names_exists_in_keys_py():
    unknown = {written for shaped, written in page_keys().items() if shaped not in templates()}
    assert not unknown, f"{PAGE} names Redis keys that keys.py does not spell: {sorted(unknown)}"


def test_the_page_has_no_prefixed_namespace():
    text = (REPO / PAGE).read_text(encoding="utf-8")
    assert "newscrawl:news" not in text  # the keys are news:*, not newscrawl:news:*
