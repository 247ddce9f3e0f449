"""One pass of ``newscrawl schedule`` (newscrawl/schedule.py) against a fake store and scrapyd.

The real scrapyd and the real store are exercised in tests/test_scrapyd.py.
"""

import datetime as dt

import pytest

from newscrawl.cli import main as cli_main
from newscrawl.schedule import ScrapydClient, ScrapydError, run_lock, run_pass

T0 = 1_700_000_000.0
HOUR = 3600.0
SITES = {"a.de": ["https://www.a.de/"], "b.de": ["https://b.de/", "https://sport.b.de/"]}


def utc(seconds):
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)


class FakeStore:
    def __init__(self, states=None, new_articles=None):
        self.states = {k: dict(v) for k, v in (states or {}).items()}
        self.new_articles = new_articles or {}
        self.counted = []
        self.saves = 0

    def load_schedule(self):
        return {k: dict(v) for k, v in self.states.items()}

    def save_schedule(self, site, state):
        self.saves += 1
        self.states[site] = {**state, "site": site}

    def count_new_articles(self, site, since):
        self.counted.append((site, since))
        return self.new_articles.get(site, 0)


class FakeScrapyd:
    def __init__(self, jobs=None, fail=()):
        self.jobs = dict(jobs or {})
        self.fail = set(fail)
        self.scheduled = []

    def job_states(self, project):
        return dict(self.jobs)

    def schedule(self, project, spider, *, args=None, settings=None):
        if args["start_urls"] in self.fail:
            raise ScrapydError("scrapyd schedule.json: refused")
        self.scheduled.append((project, spider, dict(args), dict(settings or {})))
        job = f"job{len(self.scheduled)}"
        self.jobs[job] = "pending"
        return job


def run(store, scrapyd, now=T0, **kwargs):
    kwargs.setdefault("estimator", "halve_double")
    return {d.site: d for d in run_pass(SITES, store, scrapyd, now=now, **kwargs)}


def test_sites_never_crawled_are_scheduled_with_their_entry_urls_and_settings():
    store, scrapyd = FakeStore(), FakeScrapyd()
    out = run(store, scrapyd, job_settings={"NEWSCRAWL_DATA_DIR": "/abs/data"}, job_args={"depth": "1"})
    assert [d.action for d in out.values()] == ["scheduled", "scheduled"]
    assert scrapyd.scheduled[1] == ("newscrawl", "news",
                                    {"start_urls": "https://b.de/,https://sport.b.de/", "depth": "1"},
                                    {"NEWSCRAWL_DATA_DIR": "/abs/data"})
    assert store.states["b.de"]["job"] == {"id": "job2", "scheduled_at": utc(T0),
                                           "entry_urls": SITES["b.de"]}


def test_a_site_with_a_pending_or_running_job_is_busy():
    states = {"a.de": {"job": {"id": "j1", "scheduled_at": utc(T0)}}}
    scrapyd = FakeScrapyd({"j1": "running"})
    out = run(FakeStore(states), scrapyd, now=T0 + 10 * HOUR)
    assert out["a.de"].action == "busy" and out["b.de"].action == "scheduled"
    assert [s[2]["start_urls"] for s in scrapyd.scheduled] == ["https://b.de/,https://sport.b.de/"]


def test_a_finished_run_is_recorded_and_sets_the_next_due_time():
    states = {"a.de": {"job": {"id": "j1", "scheduled_at": utc(T0)}},
              "b.de": {"next_due": utc(T0 + 5 * HOUR)}}
    store, scrapyd = FakeStore(states, new_articles={"a.de": 7}), FakeScrapyd({"j1": "finished"})
    out = run(store, scrapyd, now=T0 + HOUR / 2)
    assert store.counted == [("a.de", utc(T0))]
    a = store.states["a.de"]
    assert a["job"] is None and a["last_job"]["new_articles"] == 7
    assert a["history"] == [{"time": utc(T0), "changed": True, "new_articles": 7}]
    assert a["next_due"] == utc(T0 + HOUR)  # halve_double: one hour after the first run
    assert out["a.de"].action == "not_due" and out["a.de"].recorded["new_articles"] == 7
    assert out["b.de"].action == "not_due" and scrapyd.scheduled == []


def test_a_recorded_site_is_scheduled_again_once_due():
    history = [{"time": utc(T0), "changed": True, "new_articles": 9}]
    states = {"a.de": {"history": history, "job": {"id": "j2", "scheduled_at": utc(T0 + HOUR)}}}
    store = FakeStore(states, new_articles={"a.de": 0})
    scrapyd = FakeScrapyd({"j2": "finished"})
    out = run(store, scrapyd, now=T0 + 3 * HOUR + 1, limit=1)
    # unchanged second run: interval doubles to two hours after it -> due at T0 + 3h
    assert store.states["a.de"]["next_due"] == utc(T0 + 3 * HOUR)
    assert len(store.states["a.de"]["history"]) == 2
    # b.de (never crawled) comes first; limit=1 leaves a.de for the next pass
    assert out["b.de"].action == "scheduled" and out["a.de"].action == "not_due"


def test_a_job_scrapyd_forgot_counts_as_finished():
    states = {"a.de": {"job": {"id": "gone", "scheduled_at": utc(T0)}}}
    store = FakeStore(states, new_articles={"a.de": 1})
    out = run(store, FakeScrapyd(), now=T0 + 60)
    assert out["a.de"].recorded["status"] == "unknown"
    assert store.states["a.de"]["last_job"]["status"] == "unknown"


def test_dry_run_changes_nothing():
    states = {"a.de": {"job": {"id": "j1", "scheduled_at": utc(T0)}}}
    store, scrapyd = FakeStore(states, new_articles={"a.de": 2}), FakeScrapyd({"j1": "finished"})
    out = run(store, scrapyd, now=T0 + 10 * HOUR, dry_run=True)
    assert {d.action for d in out.values()} == {"due"}
    assert store.saves == 0 and scrapyd.scheduled == []


def test_a_refused_job_is_reported_and_the_pass_goes_on():
    scrapyd = FakeScrapyd(fail={"https://www.a.de/"})
    store = FakeStore()
    out = run(store, scrapyd)
    assert out["a.de"].action == "error" and "refused" in out["a.de"].error
    assert out["b.de"].action == "scheduled"
    assert "a.de" not in store.states


def test_unknown_estimator_raises():
    with pytest.raises(KeyError):
        run(FakeStore(), FakeScrapyd(), estimator="nope")


def test_client_takes_basic_auth_from_the_url():
    client = ScrapydClient("http://bob:s%40cret@127.0.0.1:6800")
    assert client.url == "http://127.0.0.1:6800/"
    assert client._auth == "Basic Ym9iOnNAY3JldA=="  # bob:s@cret


def test_unreachable_scrapyd_raises_scrapyd_error():
    from newscrawl.embedded import free_port

    with pytest.raises(ScrapydError, match="unreachable"):
        ScrapydClient(f"http://127.0.0.1:{free_port()}/", timeout=2).daemon_status()


def test_one_run_at_a_time_per_data_folder(tmp_path):
    with run_lock(tmp_path) as first:
        assert first is True
        with run_lock(tmp_path) as second:
            assert second is False
    with run_lock(tmp_path) as again:
        assert again is True


def test_cli_unknown_command(capsys):
    assert cli_main(["frobnicate"]) == 2
    assert "unknown command" in capsys.readouterr().err


def test_table_says_what_happened_to_each_site(capsys):
    from newscrawl.schedule import Decision, _print_table

    _print_table([
        Decision("a.de", "scheduled", ["https://a.de/"], job="j9"),
        Decision("b.de", "not_due", ["https://b.de/"], next_due=utc(T0 + 2 * HOUR).isoformat(),
                 recorded={"new_articles": 4}),
        Decision("c.de", "busy", ["https://c.de/"], job="j8"),
    ], T0)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["a.de", "scheduled", "job", "j9"]
    assert "(in 2.0 h); last run: 4 new article(s)" in lines[1]
    assert lines[-1] == "3 site(s): 1 scheduled, 1 busy, 1 not_due"
