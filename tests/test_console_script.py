"""The installed ``newscrawl`` console script (``make setup`` runs ``pip install --no-deps -e .``
into ``.venv``): run as an analyst runs it, by its path in the virtualenv's ``bin/`` folder, from a
temporary working directory, with no ``PYTHONPATH`` and no configured MongoDB.

The script is looked up in the scripts folder of the interpreter running the tests
(``sysconfig.get_path('scripts')``). When it is not installed there, or belongs to another
checkout, the tests skip with a message, except on CI (``CI`` set), where ``make test`` installs
it first and they fail.
"""

from __future__ import annotations

import os
import subprocess
import sysconfig
from pathlib import Path

import pytest

from newscrawl.cli import USAGE
from newscrawl.readstore import checkout_store
from tests.helpers import REPO


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{why} (make setup installs it: pip install --no-deps -e .)")
    pytest.skip(f"{why}; run `make setup` (pip install --no-deps -e .) to test it")


def _env() -> dict[str, str]:
    """The environment of a fresh shell: nothing that points at this checkout or at a store."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "MONGO_URI", "NEWSCRAWL_MONGO_URI", "NEWSCRAWL_DATA_DIR",
                         "SCRAPY_SETTINGS_MODULE")}


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    """Path of the installed ``newscrawl`` script that runs this checkout's code."""
    path = Path(sysconfig.get_path("scripts")) / "newscrawl"
    if not path.exists():
        _unavailable(f"the newscrawl command is not installed in {path.parent}")
    # The script's interpreter must import this checkout's package (an editable install of
    # another checkout would test other code).
    shebang = path.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    python = shebang[2:].strip().split()[0] if shebang.startswith("#!") else None
    if not python:
        _unavailable(f"{path} has no #! line naming its Python")
    cwd = tmp_path_factory.mktemp("which-checkout")
    proc = subprocess.run([python, "-c", "import newscrawl.cli as c; print(c.__file__)"],
                          cwd=cwd, env=_env(), capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        pytest.fail(f"{path}'s Python cannot import newscrawl from {cwd}: {proc.stderr[-2000:]}")
    found = Path(proc.stdout.strip()).resolve()
    if found != (REPO / "newscrawl" / "cli.py").resolve():
        _unavailable(f"{path} runs {found}, not this checkout ({REPO})")
    return path


def run(script: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(script), *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=120)


def test_help_from_another_directory(script, tmp_path):
    proc = run(script, ["--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == USAGE
    assert "Traceback" not in proc.stderr
    for command in ("crawl", "report", "export", "schedule"):
        assert f"\n  {command} " in proc.stdout


@pytest.mark.parametrize("command", [["report"], ["export", "--format", "csv"]])
def test_missing_data_folder_is_one_clear_line_and_status_2(script, tmp_path, command):
    # a folder that does not exist (a typo)
    typo = tmp_path / "dtaa"
    proc = run(script, [*command, "--data-dir", str(typo)], tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert f"no store at {typo}: the data folder does not exist" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not typo.exists()  # no empty store made
    if checkout_store() is not None:  # the checkout has crawled: no ./data reads that store
        return
    # no folder given: ./data of the working directory, which has none
    proc = run(script, command, tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert f"no store at {tmp_path / 'data'}: the data folder does not exist" in proc.stderr
    assert not (tmp_path / "data").exists()
