"""newscrawl.warc (pure): records as received, revisits, metadata, rotation, files cut short."""

import base64
import gzip
import hashlib
import json
import os
from datetime import datetime, timezone

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.checker import Checker

from newscrawl.warc import Exchange, RotatingWarcWriter
from newscrawl.warc.reader import WarcArchive, last_captures
from newscrawl.warc.records import PROFILE_SERVER_NOT_MODIFIED, TRANSFER_DECODED, metadata_fields
from newscrawl.warc.writer import warc_filename

WHEN = datetime(2026, 12, 4, 18, 0, tzinfo=timezone.utc)
HTML = ("<html><head><title>Bericht</title></head><body><p>Über den Haushalt</p></body></html>" * 30).encode()
GZ = gzip.compress(HTML, mtime=0)


def sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def exchange(url="http://news.test/a.html", *, status=200, method="GET", body=GZ, headers=None,
             transfer_decoded=None):
    return Exchange(url=url, method=method, request_headers=[("Accept-Encoding", "gzip, deflate")],
                    status=status, body=body, date=WHEN, ip_address="127.0.0.1",
                    response_headers=headers if headers is not None else [
                        ("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "gzip"),
                        ("Content-Length", str(len(body))), ("ETag", '"v1"')],
                    transfer_decoded=transfer_decoded)


def records(path):
    with open(path, "rb") as f:
        return [(r.rec_type, r.rec_headers, r.http_headers, r.content_stream().read() if r.rec_type
                 == "metadata" else r.raw_stream.read()) for r in ArchiveIterator(f)]


def check(paths):
    """warcio check over ``paths``: exit code 0 when every record and digest is valid."""
    class Args:
        inputs = [str(p) for p in paths]
        verbose = False
    checker = Checker(Args())
    checker.process_all()
    return checker.exit_value


def test_response_payload_is_the_gzip_stream_and_digests_match(tmp_path):
    w = RotatingWarcWriter(tmp_path, threaded=False)
    ex = exchange()
    w.write_exchange(ex)
    [path] = w.close()
    assert check([path]) == 0
    kinds = records(path)
    assert [k for k, *_ in kinds] == ["warcinfo", "request", "response"]
    _, req_h, req_http, _ = kinds[1]
    _, resp_h, resp_http, payload = kinds[2]
    assert payload == GZ  # the bytes on the wire, not the decompressed page
    assert resp_h.get_header("WARC-Payload-Digest") == sha1_b32(GZ)
    assert resp_http.get_header("Content-Encoding") == "gzip"
    assert resp_h.get_header("WARC-IP-Address") == "127.0.0.1"
    assert resp_h.get_header("WARC-Concurrent-To") == req_h.get_header("WARC-Record-ID")
    assert req_h.get_header("WARC-Concurrent-To") == resp_h.get_header("WARC-Record-ID")
    assert req_http.protocol == "GET" and req_http.get_header("Host") == "news.test"
    assert resp_h.protocol == "WARC/1.1"


def test_dechunked_body_says_so_and_drops_transfer_encoding(tmp_path):
    w = RotatingWarcWriter(tmp_path, threaded=False)
    w.write_exchange(exchange(headers=[("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")],
                              body=HTML, transfer_decoded="chunked"))
    [path] = w.close()
    assert check([path]) == 0
    _, rec, http, payload = records(path)[2]
    assert rec.get_header(TRANSFER_DECODED) == "chunked"
    assert http.get_header("Transfer-Encoding") is None and payload == HTML


def test_304_and_head_are_revisits_referring_to_the_last_capture(tmp_path):
    w = RotatingWarcWriter(tmp_path, threaded=False)
    full_id = w.write_exchange(exchange())
    w.write_exchange(exchange(status=304, body=b"", headers=[("ETag", '"v1"')]))
    w.write_exchange(exchange(method="HEAD", body=b""))
    w.write_exchange(exchange("http://news.test/never-fetched.html", status=304, body=b"", headers=[]))
    [path] = w.close()
    assert check([path]) == 0
    revisits = [r for r in records(path) if r[0] == "revisit"]
    assert len(revisits) == 3
    for _, rec, http, _ in revisits[:2]:
        assert rec.get_header("WARC-Profile") == PROFILE_SERVER_NOT_MODIFIED
        assert rec.get_header("WARC-Refers-To") == full_id
        assert rec.get_header("WARC-Refers-To-Target-URI") == "http://news.test/a.html"
        assert rec.get_header("WARC-Refers-To-Date") == "2026-12-04T18:00:00.000000Z"
    assert revisits[0][2].get_statuscode() == "304"
    assert revisits[2][1].get_header("WARC-Refers-To") is None  # no earlier capture known


def test_metadata_record_refers_to_the_response(tmp_path):
    w = RotatingWarcWriter(tmp_path, threaded=False)
    rid = w.write_exchange(exchange())
    w.write_metadata("http://news.test/a.html", {"newscrawl": {"story_id": "ab", "published": WHEN}},
                     kind="article", when=WHEN)
    [path] = w.close()
    _, rec, _, body = records(path)[-1]
    assert rec.get_header("WARC-Type") == "metadata" and rec.get_header("WARC-Refers-To") == rid
    assert rec.get_header("Content-Type") == "application/warc-fields"  # not a capture for pywb
    assert body.endswith(b"\r\n") and body.count(b"\r\n") == 1
    assert json.loads(metadata_fields(body)["newscrawl"]) == {
        "story_id": "ab", "published": "2026-12-04T18:00:00+00:00"}
    assert WarcArchive([path]).metadata["http://news.test/a.html"]["story_id"] == "ab"


def test_rotation_by_size_and_age_with_names_and_warcinfo(tmp_path):
    now = [1_800_000_000.0]
    w = RotatingWarcWriter(tmp_path, max_bytes=4000, max_age=60, host="worker-1",
                           clock=lambda: now[0], threaded=False)
    for i in range(6):
        w.write_exchange(exchange(f"http://news.test/{i}.html"))  # ~1.3 KB each
    by_size = len(w.closed) + 1
    now[0] += 61
    w.write_exchange(exchange("http://news.test/late.html"))
    files = w.close()
    assert len(files) == by_size + 1 >= 3
    for path in files:
        assert path.name.startswith("newscrawl-") and path.name.endswith("-worker-1.warc.gz")
        assert path.stat().st_size <= 4000
        assert records(path)[0][0] == "warcinfo"
    assert [p.name.split("-")[2] for p in files] == [f"{i:05d}" for i in range(1, len(files) + 1)]
    assert check(files) == 0
    assert not list(tmp_path.glob("*.open"))


def test_threaded_writer_writes_everything_on_close(tmp_path):
    w = RotatingWarcWriter(tmp_path)
    for i in range(200):
        w.write_exchange(exchange(f"http://news.test/{i}.html"))
    assert w.open_path is None or w.open_path.name.endswith(".warc.gz.open")
    files = w.close()
    assert w.records == 1 + 400 and w.errors == 0
    assert sum(1 for p in files for r in records(p) if r[0] == "response") == 200


def test_a_file_cut_mid_record_is_read_to_its_last_whole_record(tmp_path):
    w = RotatingWarcWriter(tmp_path, threaded=False)
    for i in range(5):
        w.write_exchange(exchange(f"http://news.test/{i}.html"))
    [path] = w.close()
    cut = tmp_path / "cut" / (path.name + ".open")
    cut.parent.mkdir()
    data = path.read_bytes()
    cut.write_bytes(data[: len(data) - 300])  # the last response record loses its end
    archive = WarcArchive([cut])
    assert len(archive.captures) == 4
    assert archive.skipped == {"truncated_last_record": 1}
    assert archive.answer("http://news.test/3.html").body == HTML  # decoded for the parser
    assert set(last_captures([cut])) == {f"http://news.test/{i}.html" for i in range(4)}


def test_reader_counts_what_it_skips(tmp_path):
    w = RotatingWarcWriter(tmp_path, threaded=False)
    w.write_exchange(exchange())
    w.write_metadata("http://news.test/a.html", {"other": 1})
    [path] = w.close()
    archive = WarcArchive([path, tmp_path / "missing.warc.gz"])
    assert archive.kinds == {"warcinfo": 1, "request": 1, "response": 1, "metadata": 1}
    assert archive.skipped == {"metadata_not_newscrawl": 1, "unreadable_file": 1}
    answer = archive.answer("http://news.test/a.html")
    assert answer.status == 200 and answer.body == HTML
    assert all(n.lower() not in ("content-encoding", "content-length") for n, _ in answer.headers)


def test_filename_is_unique_per_writer_in_one_folder(tmp_path):
    a = RotatingWarcWriter(tmp_path, host="h", clock=lambda: 1_800_000_000.0, threaded=False)
    b = RotatingWarcWriter(tmp_path, host="h", clock=lambda: 1_800_000_000.0, threaded=False)
    a.write_exchange(exchange())
    b.write_exchange(exchange())  # same time, same serial: the second takes the next serial
    names = {p.name for p in a.close() + b.close()}
    assert len(names) == 2
    assert warc_filename(datetime(2027, 1, 2, 3, 4, 5, tzinfo=timezone.utc), 7, "a b/c") == \
        "newscrawl-20270102030405000000-00007-a_b_c.warc.gz"


@pytest.mark.parametrize("bad", [b"\x00not gzip at all", b""])
def test_foreign_garbage_is_a_counted_skip(tmp_path, bad):
    path = tmp_path / "bad.warc.gz"
    path.write_bytes(bad)
    archive = WarcArchive([path])
    assert not archive.captures


def test_a_failed_write_is_counted_and_the_next_record_begins_a_new_file(tmp_path, monkeypatch):
    w = RotatingWarcWriter(tmp_path, threaded=False)
    w.write_exchange(exchange("http://news.test/0.html"))
    real_write = os.write

    def disk_full(fd, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("newscrawl.warc.writer.os.write", disk_full)
    w.write_exchange(exchange("http://news.test/1.html"))
    monkeypatch.setattr("newscrawl.warc.writer.os.write", real_write)
    w.write_exchange(exchange("http://news.test/2.html"))
    files = w.close()
    assert w.errors == 2  # the request and response records of 1.html
    assert len(files) == 1 and check(files) == 0
    assert set(WarcArchive(files).captures) == {"http://news.test/2.html"}
    [abandoned] = tmp_path.glob("*.warc.gz.open")
    assert set(WarcArchive([abandoned]).captures) == {"http://news.test/0.html"}


@pytest.mark.parametrize("level", [-1, 10])
def test_gzip_level_out_of_range_is_refused(tmp_path, level):
    with pytest.raises(ValueError, match="0-9"):
        RotatingWarcWriter(tmp_path, level=level, threaded=False)


def test_captures_of_earlier_files_are_recalled_before_later_records(tmp_path):
    w = RotatingWarcWriter(tmp_path / "run1", threaded=False)
    first = w.write_exchange(exchange())
    earlier = w.close()
    later = RotatingWarcWriter(tmp_path / "run2")  # threaded: the recall runs in its thread
    later.recall(lambda: last_captures(earlier))
    later.write_exchange(exchange(status=304, body=b"", headers=[("ETag", '"v1"')]))
    [path] = later.close()
    [revisit] = [r for r in records(path) if r[0] == "revisit"]
    assert revisit[1].get_header("WARC-Refers-To") == first
