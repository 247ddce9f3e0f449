"""newscrawl.meta: one name per request-meta key, and the page context's four mappings."""

import ast
import re
import tokenize
from pathlib import Path

from newscrawl import meta
from newscrawl.meta import PageContext

REPO = Path(__file__).resolve().parents[1]

CTX = PageContext(entry_url="https://s.example/", start_url="https://s.example/politik/", depth=2,
                  link_class="downward", features={"image": 1, "bold": 0}, parent_weight=0.5,
                  weight=0.35, referer="https://s.example/politik/")


def test_keys_are_unique_and_keep_their_values():
    assert len(set(meta.ALL_KEYS)) == len(meta.ALL_KEYS) == 23
    assert meta.DISPATCH == "newscrawl_dispatch"
    assert all(key.startswith("newscrawl_") for key in meta.ALL_KEYS)
    assert (meta.REVISIT, meta.LEASE, meta.SENT_AT, meta.PROBE) == (
        "newscrawl_revisit", "newscrawl_lease", "newscrawl_sent_at", "newscrawl_probe")


def test_meta_round_trip():
    request_meta = CTX.to_meta()
    assert request_meta == {meta.ENTRY_URL: "https://s.example/", meta.START_URL: "https://s.example/politik/",
                            meta.DEPTH: 2, meta.LINK_CLASS: "downward",
                            meta.FEATURES: {"image": 1, "bold": 0}, meta.PARENT_WEIGHT: 0.5,
                            meta.WEIGHT: 0.35, meta.REFERER: "https://s.example/politik/"}
    assert PageContext.from_meta({**request_meta, meta.ROLE: "content"}) == CTX


def test_missing_meta_gets_the_defaults():
    ctx = PageContext.from_meta({})
    assert (ctx.depth, ctx.features, ctx.parent_weight, ctx.weight, ctx.referer) == (0, {}, 1.0, None, None)
    assert meta.WEIGHT not in ctx.to_meta() and meta.REFERER not in ctx.to_meta()


def test_record_holds_one_weight():
    record_ctx = CTX.to_record()
    assert "weight" not in record_ctx  # the record's own ``weight`` field holds it
    record = {"url": "https://s.example/politik/a.html", "request": record_ctx, "weight": 0.35}
    assert PageContext.from_record(record) == CTX
    known = PageContext.from_record({"url": "https://s.example/x.html", "request": {}})
    assert (known.entry_url, known.start_url, known.link_class, known.depth, known.weight) == (
        "https://s.example/x.html", "https://s.example/x.html", "known", 0, None)


def test_item_fields():
    assert CTX.to_item() == {"entry_url": "https://s.example/", "start_url": "https://s.example/politik/",
                             "link_class": "downward", "depth": 2, "referer": "https://s.example/politik/",
                             "features": {"image": 1, "bold": 0}, "parent_weight": 0.5}


def test_entry_context():
    entry = PageContext.entry("https://s.example/")
    assert (entry.depth, entry.link_class, entry.parent_weight, entry.weight) == (0, "entry", 1.0, 1.0)




def _spelled_keys(path: Path) -> list[tuple[int, str]]:
    """``(line, literal)`` of every string literal ``"newscrawl_..."`` in a module (docstrings
    and comments that mention a key are not literals of it)."""
    found = []
    with open(path, encoding="utf-8") as handle:
        for token in tokenize.generate_tokens(handle.readline):
            if token.type != tokenize.STRING:
                continue
            try:
                value = ast.literal_eval(token.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, str) and re.fullmatch(r"newscrawl_[a-z_]+", value):
                found.append((token.start[0], value))
    return found


def test_no_other_module_spells_a_key():
    """Only newscrawl/meta.py writes ``"newscrawl_..."`` literals (in the project's packages)."""
    offenders = []
    for folder in ("newscrawl", "extensions", "spiders", "middlewares", "pipelines"):
        for path in (REPO / folder).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            if rel == "newscrawl/meta.py":
                continue
            offenders += [f"{rel}:{line}: {value}" for line, value in _spelled_keys(path)]
    assert not offenders, offenders
