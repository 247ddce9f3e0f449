"""Declared charsets checked against the bytes: a UTF-8 page with a few bad bytes stays UTF-8;
a lying single-byte (or GBK) declaration loses to what the bytes are. Real pages of the shared
corpus are re-encoded in memory (sets 04, 06, 12; read in place, skipped without them)."""

from __future__ import annotations

import gzip
import re

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse

from middlewares.charset import CharsetMiddleware
from newscrawl.algorithms.charset import decode_html, invalid_utf8
from tests.conftest import component_crawler, shared_path

SET04 = "04_fundus_multilingual_articles_gt"


def _fundus(country: str, name: str) -> str:
    return gzip.decompress(shared_path("corpus", SET04, country, name).read_bytes()).decode("utf-8")


def _without_meta_charset(html: str) -> str:
    return re.sub(r"<meta[^>]*charset[^>]*>", "", html, flags=re.I)


def test_declared_utf8_with_a_few_invalid_bytes_stays_utf8():
    # a German article (set 04) with a short umlaut-poor stretch followed by three corrupt bytes:
    # before, the share of bad bytes in the window sent the page to the statistical guess and it
    # was stored as cp1251 ("GrГ¶Гџenordnung")
    html = _without_meta_charset(_fundus("de", "BR_2024_04_22.html.gz"))
    body = html.encode("utf-8")
    cut = body.index(b"<body")
    body = (body[:cut] + "<p>Größenordnung, schöne Grüße</p>".encode("utf-8")
            + b"<p>\xff\xfe\xfa</p>" + body[cut:])
    ascii_only = re.sub(rb"[\x80-\xff]", b"", body[cut + 60:])  # few valid characters after
    body = body[: cut + 60] + ascii_only
    for header in ("utf-8", "text/html; charset=utf-8"):
        text, enc = decode_html(body, http_charset=header)
        assert enc == "utf-8" and "Größenordnung" in text and "GrГ¶Гџenordnung" not in text
    assert invalid_utf8(body) == 3


@pytest.mark.parametrize("codec", ["koi8-r", "cp1251"])
def test_lying_latin1_header_loses_to_cyrillic_bytes(codec):
    html = _fundus("ru", "Kommersant_2025_05_14.html.gz")
    words = re.findall(r"[А-Яа-яЁё]{6,}", html)[:20]
    assert len(words) == 20
    body = _without_meta_charset(html).encode(codec, "replace")
    text, enc = decode_html(body, http_charset="iso-8859-1")
    assert enc != "cp1252"
    assert all(w in text for w in words)
    # the page's own <meta> names the encoding: it wins over the lying header
    declared = _without_meta_charset(html).replace("<head>", f'<head><meta charset="{codec}">', 1)
    assert declared.count(f'<meta charset="{codec}">') == 1
    text, enc = decode_html(declared.encode(codec, "replace"),
                            http_charset="text/html; charset=iso-8859-1")
    assert enc == codec and all(w in text for w in words)


def test_lying_gbk_or_cyrillic_header_loses_to_a_latin_page():
    # set 06: cp1252 bytes under a UTF-8 <meta>; a "gbk" header used to pair each umlaut with the
    # next ASCII letter into a Chinese character
    page = shared_path("corpus", "06_trafilatura_eval", "eval_selected", "badische-zeitung.de-Wohnungssuche.html")
    body = page.read_bytes()
    for header in ("gbk", "windows-1251", "iso-8859-1", None):
        text, enc = decode_html(body, http_charset=header)
        assert enc == "cp1252", header
        assert "Wohnungssuche" in text and "\ufffd" not in text


def test_lying_latin1_header_loses_to_gbk_bytes():
    path = shared_path("corpus", "12_zh-content-extraction_gbk_raw", "original",
                       "2bac7fb2-efbd-4444-99c8-51c72acf5c7d.html")
    body = path.read_bytes().split(b"\n", 1)[1]
    text, enc = decode_html(body, http_charset="iso-8859-1")
    assert enc == "gb18030" and "更新" in text


def test_middleware_counts_invalid_utf8_and_keeps_utf8():
    crawler = component_crawler()
    mw = CharsetMiddleware.from_crawler(crawler)
    body = ("<html><head><meta charset='utf-8'><title>t</title></head><body><p>"
            + "Größenordnung " * 20 + "</p></body></html>").encode("utf-8").replace(b"</p>", b"\xff\xfe</p>")
    url = "https://example.com/a"
    request = Request(url)
    response = HtmlResponse(url, body=body, headers={"Content-Type": "text/html; charset=utf-8"},
                            request=request)
    out = mw.process_response(request, response)
    assert "Größenordnung" in out.text and out.text.count("\ufffd") == 2
    stats = crawler.stats.get_stats()
    assert stats["newscrawl/charset/invalid_utf8"] == 1
    assert stats["newscrawl/charset/replacement_chars"] == 2
