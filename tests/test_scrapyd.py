"""scrapyd end to end: build the egg with scrapyd-client, deploy it to a real scrapyd on loopback,
run ``news`` through ``schedule.json`` and ``newscrawl schedule``, check the store.

scrapyd (the virtualenv's, ``python -m scrapyd``) runs in an empty temporary folder with its own
scrapyd.conf (127.0.0.1, a free port, eggs/logs/dbs inside the folder) and an environment
without ``NEWSCRAWL_DATA_DIR`` / ``MONGO_URI`` / ``PYTHONPATH``, so its jobs see the egg and
nothing of the checkout: a job can only import what the egg ships (STYLE.md "Packaging for
scrapyd"). The egg is built from a copy of the project (the checkout is never written to).
Both crawls run at the same time (``max_proc = 2``) to keep the module under 90 s.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace
from urllib.request import urlopen

import pytest

from newscrawl.embedded import free_port, stop_server
from newscrawl.schedule import ScrapydClient, ScrapydError
from tests.helpers import REPO, open_store, served, stats_of
from tests.mocksite import ARTICLES

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
PROJECT = "newscrawl"
#: Packages the egg must ship; also checked against the checkout's package folders below.
PACKAGES = ["newscrawl", "newscrawl.algorithms", "newscrawl.store", "extensions", "spiders",
            "middlewares", "pipelines"]
NOT_SHIPPED = ("tests", "benchmarks")
JOB_TIMEOUT = 75.0


def clean_env(**extra: str) -> dict[str, str]:
    """os.environ without anything that would point a job at the checkout or another store."""
    drop = {"NEWSCRAWL_DATA_DIR", "NEWSCRAWL_MONGO_URI", "MONGO_URI", "PYTHONPATH",
            "SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "SCRAPYD_EGG_VERSION"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def checkout_packages() -> list[str]:
    """Dotted names of the checkout's package folders: every folder holding ``.py`` files below a
    top-level folder with an ``__init__.py`` (so a sub-package that lacks its ``__init__.py`` is
    found too); tests and benchmarks excepted."""
    found = set()
    for top in REPO.glob("*/__init__.py"):
        if top.parent.name.startswith(".") or top.parent.name in NOT_SHIPPED:
            continue
        for module in top.parent.rglob("*.py"):
            rel = module.parent.relative_to(REPO)
            if not any(part.startswith(".") or part in ("__pycache__", "build") for part in rel.parts):
                found.add(".".join(rel.parts))
    return sorted(found)


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("scrapyd")


@pytest.fixture(scope="module")
def project_copy(tmp) -> Path:
    """scrapy.cfg, setup.py, the packages, tests/ and benchmarks/ copied from the checkout."""
    dest = tmp / "project"
    dest.mkdir()
    for name in ("scrapy.cfg", "setup.py"):
        shutil.copy2(REPO / name, dest / name)
    top = sorted({name.split(".")[0] for name in checkout_packages() + PACKAGES}) + list(NOT_SHIPPED)
    for name in top:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return dest


@pytest.fixture(scope="module")
def egg(tmp, project_copy) -> Path:
    """The egg ``scrapyd-deploy --build-egg`` builds from the project folder."""
    deploy = BIN / "scrapyd-deploy"
    if not deploy.exists():
        pytest.skip(f"needs scrapyd-client's scrapyd-deploy next to {sys.executable}")
    path = tmp / "newscrawl.egg"
    build_tmp = tmp / "build-tmp"  # scrapyd-deploy --build-egg leaves its temp folder behind
    build_tmp.mkdir()
    proc = subprocess.run([str(deploy), "--build-egg", str(path)], cwd=project_copy,
                          env=clean_env(TMPDIR=str(build_tmp), HOME=str(tmp)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture(scope="module")
def scrapyd(tmp):
    """A real scrapyd on 127.0.0.1:<free port>, run in an empty folder; killed at the end."""
    work = tmp / "scrapyd-home"
    work.mkdir()
    port = free_port()
    (work / "scrapyd.conf").write_text(
        "[scrapyd]\n"
        "bind_address = 127.0.0.1\n"
        f"http_port = {port}\n"
        f"eggs_dir = {work / 'eggs'}\n"
        f"logs_dir = {work / 'logs'}\n"
        f"dbs_dir = {work / 'dbs'}\n"
        "items_dir =\n"
        "max_proc = 2\n"
        "poll_interval = 0.2\n"
        "jobs_to_keep = 10\n",
        encoding="utf-8",
    )
    log = open(work / "scrapyd.out", "wb")
    # HOME: no ~/.scrapyd.conf of the machine; own session: the kill below reaches its jobs too.
    proc = subprocess.Popen([sys.executable, "-m", "scrapyd"], cwd=work,
                            env=clean_env(HOME=str(work)), stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    client = ScrapydClient(f"http://127.0.0.1:{port}/", timeout=10)
    deadline = time.monotonic() + 30
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"scrapyd exited with {proc.returncode}: "
                            f"{(work / 'scrapyd.out').read_text()[-3000:]}")
            try:
                client.daemon_status()
                break
            except ScrapydError:
                if time.monotonic() > deadline:
                    pytest.fail("scrapyd did not answer daemonstatus.json within 30 s")
                time.sleep(0.1)
        yield SimpleNamespace(url=client.url, port=port, dir=work, client=client)
    finally:
        with_group_signal(proc, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with_group_signal(proc, signal.SIGKILL)
            proc.wait(5)
        log.close()


def with_group_signal(proc: subprocess.Popen, sig: int) -> None:
    """Signal the process group this test started (scrapyd and the jobs it spawned)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="module")
def deployed(scrapyd, egg, project_copy, tmp):
    """The egg uploaded with ``scrapyd-deploy`` to a target that points at the test's scrapyd."""
    with open(project_copy / "scrapy.cfg", "a", encoding="utf-8") as cfg:
        cfg.write(f"\n[deploy:pytest]\nurl = {scrapyd.url}\nproject = {PROJECT}\n")
    proc = subprocess.run([str(BIN / "scrapyd-deploy"), "pytest", "--egg", str(egg), "-v", "1"],
                          cwd=project_copy, env=clean_env(HOME=str(tmp)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    assert answer["status"] == "ok" and answer["spiders"] == 2, answer  # news, warcimport
    return scrapyd


@pytest.fixture(scope="module")
def site():
    with served() as url:
        yield url


@pytest.fixture(scope="module")
def jobs(deployed, site, tmp):
    """Start both crawls at once: a seeds job through schedule.json, then a pass of
    ``newscrawl schedule`` with one due and one not-due site. Stops stray embedded servers."""
    seeds = tmp / "seeds.txt"
    seeds.write_text(f"# mock site\n{site}\n", encoding="utf-8")
    data = tmp / "data"
    job = deployed.client.schedule(PROJECT, "news", args={"seeds": str(seeds)},
                                   settings={"NEWSCRAWL_DATA_DIR": str(data), "LOG_LEVEL": "INFO",
                                             "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"})

    sched_data = tmp / "sched-data"
    sched_seeds = tmp / "sched-seeds.txt"
    sched_seeds.write_text(f"{site}\nhttp://not-due.example/\n", encoding="utf-8")
    now = time.time()
    with open_store(sched_data) as store:  # not-due.example ran a minute ago, due in an hour
        store.save_schedule("not-due.example", {
            "entry_urls": ["http://not-due.example/"], "job": None,
            "history": [{"time": _utc(now - 60), "changed": True, "new_articles": 3}],
            "next_due": _utc(now + 3600)})
    first = run_schedule(deployed.url, sched_seeds, sched_data)
    try:
        yield SimpleNamespace(job=job, data=data, sched_seeds=sched_seeds, sched_data=sched_data,
                              first=first, client=deployed.client, dir=deployed.dir, url=deployed.url)
    finally:
        for folder in (data, sched_data):
            stop_server(folder, timeout=10, force=True)


def _utc(seconds: float):
    import datetime as dt

    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


def run_schedule(url: str, seeds: Path, data_dir: Path) -> dict[str, dict]:
    """``python -m newscrawl schedule ... --json`` from the checkout; decisions by site."""
    proc = subprocess.run(
        [sys.executable, "-m", "newscrawl", "schedule", "--seeds", str(seeds), "--scrapyd", url,
         "--data-dir", str(data_dir), "--estimator", "halve_double", "--json",
         "-s", "LOG_LEVEL=INFO", "-s", "NEWSCRAWL_ALLOWED_PRIVATE_HOSTS=127.0.0.1"],
        cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {d["site"]: d for d in json.loads(proc.stdout)}


def wait_finished(client: ScrapydClient, job: str, timeout: float = JOB_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.job_states(PROJECT).get(job)
        if state == "finished":
            return
        time.sleep(0.5)
    pytest.fail(f"scrapyd job {job} did not finish within {timeout:.0f} s")


def job_log(scrapyd_dir: Path, job: str) -> str:
    return (scrapyd_dir / "logs" / PROJECT / "news" / f"{job}.log").read_text(encoding="utf-8")


# --- the egg ------------------------------------------------------------------------------------


def test_scrapy_cfg_has_a_local_deploy_target():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "scrapy.cfg")
    assert cfg["settings"]["default"] == "newscrawl.settings"
    assert cfg["deploy:local"]["url"].rstrip("/") == "http://127.0.0.1:6800"
    assert cfg["deploy:local"]["project"] == PROJECT


def test_egg_ships_every_package_and_the_settings_entry_point(egg, project_copy):
    names = set(zipfile.ZipFile(egg).namelist())
    assert set(PACKAGES) <= set(checkout_packages())
    for package in checkout_packages():
        folder = project_copy.joinpath(*package.split("."))
        for module in folder.glob("*.py"):
            rel = module.relative_to(project_copy).as_posix()
            assert rel in names, f"{rel} is not in the egg (add {package!r} to setup.py packages)"
    assert not [n for n in names if n.split("/")[0] in NOT_SHIPPED]
    entry_points = configparser.ConfigParser()
    entry_points.read_string(zipfile.ZipFile(egg).read("EGG-INFO/entry_points.txt").decode())
    assert entry_points["scrapy"]["settings"].strip() == "newscrawl.settings"
    top_level = zipfile.ZipFile(egg).read("EGG-INFO/top_level.txt").decode().split()
    assert sorted(top_level) == sorted({p.split(".")[0] for p in PACKAGES})


CHECK_IMPORTS = """
import importlib, json, sys
from scrapyd.runner import activate_egg
activate_egg(sys.argv[1])  # as scrapyd's runner does: the egg goes to the end of sys.path
from scrapy.settings import Settings
from scrapy.spiderloader import get_spider_loader
files = {name: importlib.import_module(name).__file__ for name in sys.argv[2:]}
settings = Settings()
settings.setmodule("newscrawl.settings")
print(json.dumps({"files": files, "spiders": get_spider_loader(settings).list()}))
"""


def test_egg_packages_load_from_the_egg_in_a_clean_directory(egg, tmp):
    """Generic names (``spiders``, ``pipelines``) could be shadowed by other distributions on a
    scrapyd host; here every module must come from the egg itself."""
    clean = tmp / "clean-dir"
    clean.mkdir()
    modules = PACKAGES + ["newscrawl.settings", "spiders.news", "pipelines.mongo", "extensions.store"]
    proc = subprocess.run([sys.executable, "-c", CHECK_IMPORTS, str(egg), *modules], cwd=clean,
                          env=clean_env(HOME=str(clean)), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, file in found["files"].items():
        assert file.startswith(str(egg) + os.sep), f"{name} was imported from {file}, not the egg"
    assert found["spiders"] == ["news", "warcimport"]


def test_scrapyd_lists_the_news_spider(deployed):
    with urlopen(f"{deployed.url}listspiders.json?project={PROJECT}", timeout=60) as response:
        answer = json.loads(response.read())
    assert answer["status"] == "ok" and answer["spiders"] == ["news", "warcimport"]


# --- crawls -------------------------------------------------------------------------------------


def test_seeds_job_crawls_the_site_into_the_store(jobs, site):
    wait_finished(jobs.client, jobs.job)
    log = job_log(jobs.dir, jobs.job)
    assert "Traceback" not in log, log[-4000:]
    stats = stats_of(log)
    assert stats["finish_reason"] == "'finished'"
    assert int(stats["newscrawl/store/articles"]) >= len(ARTICLES)
    assert "embedded SecantusDB" in log and str(jobs.data) in log  # the absolute data folder
    with open_store(jobs.data) as store:
        urls = {doc["url"] for doc in store.articles.find({}, {"url": 1})}
    assert {site.rstrip("/") + path for path in ARTICLES} <= urls


def test_schedule_command_runs_due_sites_and_skips_the_others(jobs, site):
    first = jobs.first
    assert first["127.0.0.1"]["action"] == "scheduled", first
    assert first["not-due.example"]["action"] == "not_due", first
    job = first["127.0.0.1"]["job"]
    assert jobs.client.job_states(PROJECT).get(job) in ("pending", "running", "finished")

    wait_finished(jobs.client, job)
    log = job_log(jobs.dir, job)
    assert "Traceback" not in log, log[-4000:]
    assert stats_of(log)["finish_reason"] == "'finished'"

    second = run_schedule(jobs.url, jobs.sched_seeds, jobs.sched_data)
    assert second["127.0.0.1"]["action"] == "not_due", second  # next due an hour after the run
    assert second["127.0.0.1"]["recorded"]["new_articles"] >= len(ARTICLES)
    assert second["not-due.example"]["action"] == "not_due"
    known = jobs.client.job_states(PROJECT)
    assert set(known) == {jobs.job, job}  # nothing else was scheduled
    with open_store(jobs.sched_data) as store:
        state = store.load_schedule()["127.0.0.1"]
        assert store.articles.count_documents({"site": "127.0.0.1"}) >= len(ARTICLES)
    assert state["job"] is None and state["last_job"]["id"] == job
    assert len(state["history"]) == 1 and state["history"][0]["changed"] is True
    assert state["entry_urls"] == [site]
