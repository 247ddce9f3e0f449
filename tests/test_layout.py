"""The architecture's import rules, read from the source with :mod:`ast` (DESIGN §8, issue 8).

* no import cycle between the project's modules;
* ``newscrawl/`` never imports the Scrapy component packages (``spiders``, ``middlewares``,
  ``pipelines``, ``extensions``);
* only ``newscrawl/store/`` talks to MongoDB (``pymongo`` / ``bson``), besides the embedded
  server's health check; only ``newscrawl/distributed/`` imports ``redis`` / ``scrapy_redis``;
* the pure algorithm modules import nothing from Scrapy, Twisted, pymongo or redis;
* no file of a component package is over 300 lines;
* no attribute is pinned on the crawler (``crawler.newscrawl_*``); request-meta keys are
  checked in ``tests/test_meta.py``.

Imports under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("newscrawl", "spiders", "middlewares", "pipelines", "extensions")
COMPONENT_PACKAGES = ("spiders", "middlewares", "pipelines", "extensions")
MAX_COMPONENT_LINES = 300
#: The embedded server's health check: the one pymongo use outside the store package.
EMBEDDED_HEALTH_CHECK = "newscrawl.embedded.health"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, module: str) -> set[str]:
    """Every module name ``path`` imports (absolute, relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    is_package = path.name == "__init__.py"

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names.add(prefix)
            names.update(f"{prefix}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    sources = _sources()
    return {name: _imports(path, name) for name, path in sources.items()}


def _top(name: str) -> str:
    return name.split(".")[0]


def _internal_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Edges between project modules (``from pkg import module`` resolved to the module)."""
    modules = set(graph)
    edges: dict[str, set[str]] = {}
    for name, imported in graph.items():
        targets = set()
        for target in imported:
            if target in modules and target != name:
                targets.add(target)
        edges[name] = targets
    return edges


def test_no_import_cycle(graph):
    edges = _internal_edges(graph)
    # A package's __init__ importing its own submodules (re-exports) is not a cycle of layers.
    for name in edges:
        edges[name] = {t for t in edges[name] if not t.startswith(name + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def strongconnect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                strongconnect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            strongconnect(node)
    assert not cycles, f"import cycles: {cycles}"


def test_newscrawl_never_imports_component_packages(graph):
    bad = {name: sorted(t for t in imported if _top(t) in COMPONENT_PACKAGES)
           for name, imported in graph.items() if _top(name) == "newscrawl"}
    assert not {k: v for k, v in bad.items() if v}


def test_only_the_store_talks_to_mongodb(graph):
    bad = {name: sorted(t for t in imported if _top(t) in ("pymongo", "bson"))
           for name, imported in graph.items()
           if not (name == "newscrawl.store" or name.startswith("newscrawl.store.")
                   or name == EMBEDDED_HEALTH_CHECK)}
    assert not {k: v for k, v in bad.items() if v}


def test_only_the_distributed_package_talks_to_redis(graph):
    bad = {name: sorted(t for t in imported if _top(t) in ("redis", "scrapy_redis"))
           for name, imported in graph.items()
           if not (name == "newscrawl.distributed" or name.startswith("newscrawl.distributed."))}
    assert not {k: v for k, v in bad.items() if v}


def test_pure_algorithms_import_no_framework(graph):
    framework = ("scrapy", "twisted", "pymongo", "bson", "redis", "scrapy_redis", "itemadapter")
    bad = {name: sorted(t for t in imported if _top(t) in framework)
           for name, imported in graph.items()
           if name.startswith(("newscrawl.algorithms", "newscrawl.search"))}
    assert not {k: v for k, v in bad.items() if v}
    assert any(name.startswith("newscrawl.search.") for name in graph)


def test_component_files_are_small():
    big = {}
    for package in COMPONENT_PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_COMPONENT_LINES:
                big[str(path.relative_to(REPO))] = lines
    assert not big, f"over {MAX_COMPONENT_LINES} lines: {big}"


def test_no_attributes_pinned_on_the_crawler():
    pinned = {}
    pattern = re.compile(r"crawler\.newscrawl_\w+|getattr\(\s*(self\.)?crawler,\s*[\"']newscrawl_")
    for name, path in _sources().items():
        hits = pattern.findall(path.read_text(encoding="utf-8"))
        if hits:
            pinned[name] = len(hits)
    for path in (REPO / "tests").glob("*.py"):
        if path.name == Path(__file__).name:
            continue
        if pattern.search(path.read_text(encoding="utf-8")):
            pinned[f"tests/{path.name}"] = 1
    assert not pinned, f"crawler.newscrawl_* attributes: {pinned}"
