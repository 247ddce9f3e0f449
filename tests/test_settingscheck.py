"""newscrawl.settingscheck: unknown NEWSCRAWL_* names and bad values, before anything opens."""

import pytest

from newscrawl.addon import default_settings
from newscrawl.settingscheck import SettingsError, check_values, unknown_arguments, unknown_settings

KNOWN = default_settings()


def test_unknown_names_get_the_closest_known_name():
    assert unknown_settings(["NEWSCRAWL_DEPHT", "NEWSCRAWL_STRATEGY", "NEWSCRAWL_QQQQQQQQQQQQQQQ",
                             "DOWNLOAD_DELAY"], KNOWN) == [
        ("NEWSCRAWL_DEPHT", "NEWSCRAWL_DEPTH"), ("NEWSCRAWL_QQQQQQQQQQQQQQQ", None)]


@pytest.mark.parametrize("given, message", [
    ({"NEWSCRAWL_DEPTH": "abc"}, "NEWSCRAWL_DEPTH must be a whole number, got 'abc'"),
    ({"NEWSCRAWL_DEPTH": -2}, "NEWSCRAWL_DEPTH must be >= 0, got -2"),
    ({"NEWSCRAWL_BUDGET": "lots"}, "NEWSCRAWL_BUDGET must be a whole number"),
    ({"NEWSCRAWL_MONGO_TIMEOUT": "soon"}, "NEWSCRAWL_MONGO_TIMEOUT must be a number, got 'soon'"),
    ({"NEWSCRAWL_REVISIT_ENABLED": "maybe"}, "NEWSCRAWL_REVISIT_ENABLED must be True or False"),
    ({"NEWSCRAWL_STRATEGY": "BFS"}, "NEWSCRAWL_STRATEGY must be one of bfs, dfs, best, got 'BFS'"),
    ({"NEWSCRAWL_UPDATE_MODE": "copy"}, "NEWSCRAWL_UPDATE_MODE must be one of inplace, shadow"),
])
def test_bad_values_are_one_clear_error(given, message):
    with pytest.raises(SettingsError, match=message) as info:
        check_values(given, KNOWN)
    assert "\n" not in str(info.value)


def test_good_values_and_unknown_names_pass():
    check_values({"NEWSCRAWL_DEPTH": "3", "NEWSCRAWL_REVISIT_ENABLED": "False",
                  "NEWSCRAWL_UPDATE_MODE": "SHADOW", "NEWSCRAWL_MONGO_TIMEOUT": "2.5",
                  "NEWSCRAWL_DEPHT": "x", "NEWSCRAWL_MONGO_URI": None}, KNOWN)


def test_a_json_setting_that_is_not_json_is_refused_by_name():
    import pytest

    from newscrawl.addon import default_settings
    from newscrawl.settingscheck import SettingsError, check_values

    with pytest.raises(SettingsError, match="NEWSCRAWL_NEWSRANK_WEIGHTS must be JSON"):
        check_values({"NEWSCRAWL_NEWSRANK_WEIGHTS": "abc"}, default_settings())
    check_values({"NEWSCRAWL_NEWSRANK_WEIGHTS": '{"image": 0.5}'}, default_settings())


def test_unknown_spider_arguments_get_the_closest_known_name():
    known = ["start_urls", "seeds", "depth", "strategy", "budget", "now", "watch", "for", "rate"]
    assert unknown_arguments(["dpeth", "strat", "zzzzzz", "depth", "_job"], known) == [
        ("dpeth", "depth"), ("strat", "strategy"), ("zzzzzz", None)]
