"""newscrawl.seeds: entry URLs from ``-a start_urls=`` and seeds files."""

import pytest

from newscrawl.seeds import entry_problem, read_entry_urls


def test_entry_urls_from_argument_and_seeds_file(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# portals\nhttps://www.qq.com/\n\nwww.sina.com.cn/  # no scheme\nhttps://www.qq.com/\n"
                     "junk line here\nftp://files.example/\n")
    assert read_entry_urls("https://a.example/, https://b.example/", str(seeds)) == [
        "https://a.example/", "https://b.example/", "https://www.qq.com/", "http://www.sina.com.cn/"]


@pytest.mark.parametrize("kwargs, message", [
    ({}, "give entry URLs"),
    ({"seeds": "/nonexistent/seeds.txt"}, "cannot read seeds file"),
    ({"start_urls": "http://"}, "no host"),
])
def test_bad_entry_arguments_fail_clearly(kwargs, message):
    with pytest.raises(ValueError, match=message):
        read_entry_urls(**kwargs)


def test_bad_seed_lines_are_skipped_and_reported(tmp_path, caplog):
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes("\ufeffhttps://www.qq.com/\nhttp://\nnot a url\nftp://x/\nhttps:///path\n"
                      "www.sina.com.cn/\n".encode("utf-8"))
    skipped = []
    with caplog.at_level("WARNING"):
        urls = read_entry_urls(seeds=str(seeds), skipped=skipped)
    assert urls == ["https://www.qq.com/", "http://www.sina.com.cn/"]  # BOM dropped
    assert [entry for entry, _ in skipped] == ["http://", "not a url", "ftp://x/", "https:///path"]
    assert "Skipping entry 'http://'" in caplog.text


def test_seeds_file_not_utf8_is_one_clear_error(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes("https://www.qq.com/\nhttps://www.heise.de/Stra\u00dfe\n".encode("latin-1"))
    with pytest.raises(ValueError) as info:
        read_entry_urls(seeds=str(seeds))
    message = str(info.value)
    assert str(seeds) in message and "not UTF-8" in message
    assert "byte offset 45 (line 2)" in message and "0xdf" in message and "\n" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_only_bad_seed_lines_is_a_clear_error(tmp_path):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://\nftp://x/\n# comment\n")
    with pytest.raises(ValueError, match=r"no valid entry URL \(2 skipped; first: 'http://'"):
        read_entry_urls(seeds=str(seeds))


@pytest.mark.parametrize("entry, expected", [
    ("www.sina.com.cn/", ("http://www.sina.com.cn/", None)),
    ("https://a.example/x y", ("https://a.example/x y", "a URL has no spaces")),
    ("ftp://files.example/", ("ftp://files.example/", "only http and https URLs are crawled")),
    ("https:///path", ("https:///path", "the URL has no host")),
])
def test_entry_problem(entry, expected):
    assert entry_problem(entry) == expected
