"""The documentation: the README and the MkDocs site (``mkdocs.yml``, ``docs/``).

* the site builds with ``mkdocs build --strict`` (a link to a missing page or anchor, a page
  left out of the nav: errors);
* the generated pages are what ``bin/gendocs`` makes of the code now (``docs/configuration.md``
  from ``newscrawl/defaults.py``, the field tables of ``docs/schema.md`` from
  ``newscrawl/items.py``), every setting has a description and a unit, and the configuration page
  lists every ``NEWSCRAWL_*`` setting;
* every setting is read by its full name: ``grep -rn '"NEWSCRAWL_<NAME>"'`` finds a reader
  outside ``defaults.py``, and no reader builds a name from a prefix;
* the README is at most 200 lines, its links lead to files that exist, and its set-up block has
  exactly two commands, the Makefile's ``crawl`` and ``test`` targets (the ones ``.ci/run`` and
  the docs name).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, require_installed

DOCS = REPO / "docs"
README = REPO / "README.md"
#: The packages of the crawler: where settings are read.
PRODUCTION = ("newscrawl", "extensions", "middlewares", "pipelines", "spiders")


def settings_of_defaults() -> list[str]:
    tree = ast.parse((REPO / "newscrawl" / "defaults.py").read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id.startswith("NEWSCRAWL_"):
            names.append(target.id)
    return names


def production_sources() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8")
            for package in PRODUCTION for path in sorted((REPO / package).rglob("*.py"))
            if path.name != "defaults.py" or path.parent.name != "newscrawl"}


def gendocs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "bin" / "gendocs"), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


# --- the site ----------------------------------------------------------------------------------

def test_the_site_builds_with_warnings_as_errors(tmp_path):
    require_installed("mkdocs")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()


def test_make_docs_builds_strictly_and_checks_the_generated_pages():
    recipe = makefile_targets()["docs"]
    assert "mkdocs build --strict" in recipe and "bin/gendocs --check" in recipe
    # mkdocs 1.6 counts the warnings of --strict through its log: --quiet hides them all and
    # the build "passes" with a broken link
    assert "--quiet" not in recipe and not re.search(r"mkdocs build[^\n]* -q\b", recipe)
    assert "make docs" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The strict build really checks links and anchors (the test above can fail)."""
    require_installed("mkdocs")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\n[a](configuration.md#no-such-anchor) [b](gone.md)\n")
    (docs / "configuration.md").write_text("# Configuration\n")
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:")[0]
    (tmp_path / "mkdocs.yml").write_text(config + "\nnav:\n  - index.md\n  - configuration.md\n")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode != 0
    assert "no-such-anchor" in proc.stderr and "gone.md" in proc.stderr


# --- generated pages ---------------------------------------------------------------------------

def test_the_generated_pages_are_current():
    proc = gendocs("--check")
    assert proc.returncode == 0, f"run bin/gendocs:\n{proc.stdout}{proc.stderr}"


def test_every_setting_has_a_description_and_a_unit():
    import runpy

    module = runpy.run_path(str(REPO / "bin" / "gendocs"))
    settings = module["read_settings"]()
    assert [s.name for s in settings] == settings_of_defaults()
    assert module["problems"](settings) == []
    # the check can fail: a setting without its own comment is reported
    bare = module["Setting"]("NEWSCRAWL_X", 1.0, "1.0", "", "group")
    assert module["problems"]([bare]) == ["NEWSCRAWL_X: no #: description in newscrawl/defaults.py"]


def test_the_configuration_page_lists_every_setting_once():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(NEWSCRAWL_\w+)` \|", text, re.M)
    assert sorted(rows) == sorted(settings_of_defaults())
    assert len(rows) == len(set(rows))


def test_the_schema_page_lists_every_item_field():
    text = (DOCS / "schema.md").read_text(encoding="utf-8")
    tree = ast.parse((REPO / "newscrawl" / "items.py").read_text(encoding="utf-8"))
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for node in cls.body:
            if isinstance(node, ast.Assign):
                name = node.targets[0].id  # type: ignore[attr-defined]
                assert f"| `{name}` |" in text, f"{cls.name}.{name} is not on docs/schema.md"


# --- settings are read by full name -------------------------------------------------------------

def test_grep_finds_the_reader_of_every_setting():
    sources = production_sources()
    unread = [name for name in settings_of_defaults()
              if not any(f'"{name}"' in text for text in sources.values())]
    assert not unread, f"no reader spells these settings in full: {unread}"


def test_no_reader_builds_a_setting_name_from_a_prefix():
    built = re.compile(r'"NEWSCRAWL_[A-Z_]*"\s*\+|f"NEWSCRAWL_[A-Z_]*\{|"NEWSCRAWL_[A-Z_]*%s'
                       r'|settings_kwargs\([^)]*?"NEWSCRAWL_[A-Z_]*_",')
    found = [f"{path.relative_to(REPO)}: {m.group(0)}" for path, text in production_sources().items()
             for m in built.finditer(text)]
    assert not found, found


def test_settings_kwargs_takes_full_names_only():
    from scrapy.settings import Settings

    from newscrawl.components import settings_kwargs

    s = Settings({"NEWSCRAWL_MONGO_BATCH_SIZE": "7"})
    assert settings_kwargs(s, batch_size="NEWSCRAWL_MONGO_BATCH_SIZE") == {"batch_size": 7}
    with pytest.raises(KeyError, match="NEWSCRAWL_MONGO_BATCH_SIZ is not a setting"):
        settings_kwargs(s, batch_size="NEWSCRAWL_MONGO_BATCH_SIZ")


# --- the README ---------------------------------------------------------------------------------

def readme() -> str:
    return README.read_text(encoding="utf-8")


def setup_commands() -> list[str]:
    """The lines of the one ``sh`` block of the README's section "Set up and run"."""
    section = readme().split("\n## Set up and run\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```", section, re.S | re.M)
    assert len(blocks) == 1, blocks
    return [line for line in blocks[0].splitlines() if line.strip()]


def makefile_targets() -> dict[str, str]:
    """Target name → its recipe, of the Makefile."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^([a-z][\w-]*):[^=\n]*\n((?:\t.*\n)*)", text, re.M)}


def test_the_readme_is_short():
    assert len(readme().splitlines()) <= 200


def test_the_readme_has_exactly_the_two_commands_of_the_makefile():
    commands = setup_commands()
    assert len(commands) == 2, commands
    crawl, test = commands
    targets = makefile_targets()
    assert crawl.split()[:2] == ["make", "crawl"] and "crawl" in targets
    assert test == "make test" and "test" in targets
    # every variable the crawl command gives is one the crawl target reads
    for name in re.findall(r"\b([A-Z_]+)=", crawl):
        assert f"$({name})" in targets["crawl"], name
    assert "REPLAY=1" in crawl  # works offline, from ../shared/replay
    # CI and the getting-started page run the same commands
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "\n".join(commands) in (DOCS / "getting-started.md").read_text(encoding="utf-8")


def test_the_readme_starts_with_what_it_does_then_set_up_then_quick_start():
    headings = re.findall(r"^## (.+)$", readme(), re.M)
    assert headings[:2] == ["Set up and run", "Quick start"], headings
    assert "make demo" in readme().split("## Quick start", 1)[1].split("\n## ", 1)[0]


def test_the_readmes_links_lead_to_files_and_every_page_is_linked():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme())
    local = [link for link in links if not re.match(r"\w+://", link)]
    missing = [link for link in local if not (REPO / link).exists()]
    assert not missing, missing
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert pages <= set(local), f"README does not link {sorted(pages - set(local))}"


def test_the_docs_commands_name_options_that_exist():
    """Every ``newscrawl report`` / ``export`` / ``schedule`` synopsis line of the docs uses
    options the command's parser knows (printed hints run as printed)."""
    from newscrawl import export, report, schedule

    parsers = {"report": report.make_parser(), "export": export.make_parser("newscrawl export"),
               "schedule": schedule.build_parser()}
    seen = set()
    for page in [README, *DOCS.glob("*.md")]:
        for line in page.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\s*(?:\.venv/bin/)?newscrawl (report|export|schedule)\b(.*)", line)
            if not m:
                continue
            known = {opt for action in parsers[m.group(1)]._actions for opt in action.option_strings}
            used = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", m.group(2).split("#")[0]))
            assert used <= known, f"{page.name}: {line.strip()}: unknown {used - known}"
            seen.add(m.group(1))
    assert seen == set(parsers)


def test_every_make_command_of_the_docs_is_a_target_with_its_variables():
    """``make X`` in the README and the docs: X is a Makefile target, and each ``VAR=`` given
    on that line is read by the Makefile (or is an environment variable the code reads)."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = makefile_targets()
    code_env = {"NEWSCRAWL_DATA_DIR", "NEWSCRAWL_TEST_FULL", "MONGO_URI", "NEWSCRAWL_MONGO_URI",
                "DEMO_PORT", "REDIS_URL"}
    seen = 0
    for page in [README, *DOCS.glob("*.md")]:
        for m in re.finditer(r"(?:^|`|\s)((?:[A-Z_]+=\S+\s+)*)make ([a-z][\w-]*)"
                             r'((?:\s+[A-Z_]+=(?:"[^"]*"|\S+))*)',
                             page.read_text(encoding="utf-8"), re.M):
            target = m.group(2)
            if target in ("it", "sure"):  # prose ("make it ...")
                continue
            assert target in targets, f"{page.name}: make {target} is no Makefile target"
            given = re.sub(r'"[^"]*"', "", m.group(1) + m.group(3))
            for name in re.findall(r"([A-Z_]+)=", given):
                assert f"$({name})" in makefile or name in code_env, f"{page.name}: {name}"
            seen += 1
    assert seen >= 5
