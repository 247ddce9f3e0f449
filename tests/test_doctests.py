"""The examples in the docstrings of the ``newscrawl`` package run, one test per module.

Every module under ``newscrawl/`` is imported (``__main__`` modules excepted: they run a command)
and its docstring examples are run with :mod:`doctest` (``ELLIPSIS`` and
``NORMALIZE_WHITESPACE`` on, as ``doctest_optionflags`` in pytest.ini for ``pytest
--doctest-modules newscrawl --ignore-glob='**/__main__.py'`` by hand). Importing a module must
have no side effect; a module that cannot be imported fails the collection here.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

import newscrawl

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: Docstring examples known to exist (the count may grow, never shrink unnoticed).
MIN_DOCTESTS = 13
#: Modules outside the package whose examples run too (the benchmarks' target format).
EXTRA_MODULES = ("benchmarks._targets",)


def _modules() -> list[str]:
    names = [newscrawl.__name__]
    for info in pkgutil.walk_packages(newscrawl.__path__, prefix=f"{newscrawl.__name__}."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            names.append(info.name)
    return sorted(names) + list(EXTRA_MODULES)


def _doctests(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, name) if t.examples]


MODULES = _modules()  # importing them all here: an import error fails the collection
WITH_EXAMPLES = [name for name in MODULES if _doctests(name)]


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name: str) -> None:
    tests = _doctests(name)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()


def test_doctests_are_found() -> None:
    found = sum(len(_doctests(name)) for name in WITH_EXAMPLES if name.startswith("newscrawl"))
    assert found >= MIN_DOCTESTS, f"{found} docstrings with examples in {WITH_EXAMPLES}"
