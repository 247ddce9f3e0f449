"""newscrawl.seeds: entry URLs from ``-a start_urls=`` and seeds files."""

import pytest

from newscrawl.seeds import entry_problem, parse_entries, read_entry_urls, split_start_urls


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
    assert [s.entry for s in skipped] == ["http://", "not a url", "ftp://x/", "https:///path"]
    assert [(s.line, s.reason) for s in skipped] == [(2, "no_host"), (3, "space"), (4, "not_http"),
                                                    (5, "no_host")]
    assert f"Skipping {seeds} line 2 'http://': the URL has no host" in caplog.text


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
    with pytest.raises(ValueError, match=r"no valid entry URL \(2 skipped; first: .*line 1 'http://'"):
        read_entry_urls(seeds=str(seeds))


@pytest.mark.parametrize("entry, expected", [
    ("www.sina.com.cn/", ("http://www.sina.com.cn/", None)),
    ("https://a.example/x y", ("https://a.example/x y", "space")),
    ("ftp://files.example/", ("ftp://files.example/", "not_http")),
    ("https:///path", ("https:///path", "no_host")),
    ("javascript:alert(1)", ("javascript:alert(1)", "not_http")),
    ("data:text/html,<b>x</b>", ("data:text/html,<b>x</b>", "not_http")),
    ("tel:+493012345", ("tel:+493012345", "not_http")),
    ("about:blank", ("about:blank", "not_http")),
    ("mailto:x@example.org", ("mailto:x@example.org", "not_http")),
    ("http:example.org/a", ("http:example.org/a", "not_http")),
    ("http://127.0.0.1:99999/", ("http://127.0.0.1:99999/", "bad_port")),
    ("http://127.0.0.1:0/", ("http://127.0.0.1:0/", "bad_port")),
    ("http://167772161/", ("http://167772161/", "numeric_host")),
    ("http://0x7f.1/", ("http://0x7f.1/", "numeric_host")),
    ("http://010.0.0.1/", ("http://010.0.0.1/", "numeric_host")),
    ("localhost:8080/x", ("http://localhost:8080/x", None)),
    ("http://10.0.0.1/", ("http://10.0.0.1/", None)),
])
def test_entry_problem(entry, expected):
    assert entry_problem(entry) == expected


@pytest.mark.parametrize("text, expected", [
    ("https://a.example/x,28", ["https://a.example/x,28"]),
    ("https://www.heise.de/,https://www.zeit.de/index", ["https://www.heise.de/", "https://www.zeit.de/index"]),
    ("www.heise.de, www.zeit.de/index,", ["www.heise.de", "www.zeit.de/index"]),
    ("https://a.example/list,b.html,https://b.example/", ["https://a.example/list,b.html", "https://b.example/"]),
    ("https://a.example/a,,https://b.example/", ["https://a.example/a", "https://b.example/"]),
    ("https://a.example/x,javascript:alert(1)", ["https://a.example/x", "javascript:alert(1)"]),
])
def test_commas_split_only_between_urls(text, expected):
    assert split_start_urls(text) == expected


def test_a_comma_inside_a_url_path_stays(tmp_path):
    assert read_entry_urls("https://www.example.org/politik/a,28,https://b.example/") == [
        "https://www.example.org/politik/a,28", "https://b.example/"]


def test_every_bad_line_is_a_skip_with_its_line_number_and_reason(tmp_path, caplog):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("https://good.example/\njavascript:void(0)\ndata:text/html,x\ntel:+4930\n"
                     "about:blank\nmailto:x@example.org\nhttp://167772161/\n"
                     "http://a.example:99999/\n# comment\nhttps://good2.example/a,28\n")
    with caplog.at_level("WARNING"):
        entries = parse_entries(seeds=seeds)
    assert entries.urls == ["https://good.example/", "https://good2.example/a,28"]
    assert [(s.line, s.reason) for s in entries.skipped] == [
        (2, "not_http"), (3, "not_http"), (4, "not_http"), (5, "not_http"), (6, "not_http"),
        (7, "numeric_host"), (8, "bad_port")]
    assert f"{seeds} line 6 'mailto:x@example.org'" in caplog.text


def test_credentials_leave_the_url_and_reach_no_log_line(caplog):
    with caplog.at_level("DEBUG"):
        entries = parse_entries("http://ann:s3cret@127.0.0.1:8080/a;jsessionid=99?PHPSESSID=1,"
                                "ftp://bob:t0psecret@files.example/,bob:pw2@x.example/")
    assert entries.urls == ["http://127.0.0.1:8080/a"]
    assert entries.credentials == {"http://127.0.0.1:8080": ("ann", "s3cret")}
    assert "t0psecret" not in caplog.text and "pw2" not in caplog.text
    assert [s.entry for s in entries.skipped] == ["ftp://files.example/", "x.example/"]


def test_entry_urls_are_canonical_like_links():
    assert read_entry_urls("https://a.example/;jsessionid=0A/news/?sid=4&b=2&a=1#top") == [
        "https://a.example/news/?a=1&b=2"]


def test_opaque_schemes_that_look_like_host_and_port_are_refused():
    from newscrawl.seeds import entry_problem

    for entry in ("tel:110", "sms:12345", "fax:1234", "callto:123", "TEL:030123456"):
        assert entry_problem(entry)[1] == "not_http", entry
    assert entry_problem("example.org:8080/a")[1] is None
