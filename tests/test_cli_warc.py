"""``newscrawl crawl --warc DIR`` and ``newscrawl import`` argument handling (newscrawl/cli.py)."""

from pathlib import Path

import pytest

from newscrawl.cli import crawl_args, import_args, main


def test_crawl_warc_becomes_the_setting_with_an_absolute_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args, data_dir = crawl_args(["https://a.example/", "--warc", "out", "--data-dir", "d"])
    assert args == ["-a", "start_urls=https://a.example/", "-s",
                    f"NEWSCRAWL_WARC_DIR={tmp_path / 'out'}"]
    assert data_dir == "d"
    assert crawl_args(["--warc=w", "x"])[0][-1] == f"NEWSCRAWL_WARC_DIR={tmp_path / 'w'}"
    with pytest.raises(ValueError, match="--warc needs a folder"):
        crawl_args(["https://a.example/", "--warc"])


def test_import_expands_folders_and_passes_options(tmp_path):
    for name in ("b.warc.gz", "a.warc", "c.warc.gz.open", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    single = tmp_path / "one.warc.gz"
    single.write_bytes(b"")
    paths, args, data_dir = import_args([str(tmp_path / "a.warc"), str(tmp_path), "--data-dir",
                                         "store", "-s", "LOG_LEVEL=INFO"])
    names = [Path(p).name for p in paths]
    assert names == ["a.warc", "b.warc.gz", "c.warc.gz.open", "one.warc.gz"]  # each once
    assert args[:2] == ["-s", "NEWSCRAWL_WARC_IMPORT=" + ",".join(paths)]
    assert args[2:] == ["-s", "LOG_LEVEL=INFO"] and data_dir == "store"


@pytest.mark.parametrize("argv, message", [
    (["import"], "give at least one WARC file"),
    (["import", "/no/such.warc.gz"], "no such file or folder"),
])
def test_import_refuses_bad_arguments_with_status_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
