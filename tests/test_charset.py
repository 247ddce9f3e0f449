"""Tests of newscrawl.algorithms.charset and middlewares.charset.CharsetMiddleware.

Unit tests build small byte strings; corpus tests read ../shared/corpus in place and skip,
naming the missing path, when it is absent.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from newscrawl.algorithms.charset import (
    decode_html,
    detect_encoding,
    normalize_label,
    prescan_meta_charset,
)

SET12 = "12_zh-content-extraction_gbk_raw"
SET06 = "06_trafilatura_eval"
#: The two pages of set 12 whose bytes are not valid GBK (found by decoding every page):
#: a bbs.zol.com.cn list page whose "..." truncations cut a double-byte character in two
#: (2 invalid sequences), and a cn.cl2000.com page with 12 lone lead bytes before `&quot;`.
INVALID_GBK_PAGES = {
    "6dc2d508-abb9-467c-bbea-1fedfcec5f9d.html": 2,
    "b70f455d-50d6-4c8c-a450-07d8e5ca2e06.html": 12,
}


def shared_path(*parts: str) -> Path:
    """A path inside ../shared (next to the repository); skips the test when it is missing."""
    path = Path(__file__).resolve().parents[1].parent / "shared"
    path = path.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus not available: {path} missing")
    return path


def _strip_wrapper(body: bytes) -> bytes:
    """Set 12 pages may start with a corpus wrapper line `<text id=...>`: not HTML."""
    if body.startswith(b"<text id="):
        return body.split(b"\n", 1)[1] if b"\n" in body else b""
    return body


def _squash(text: str) -> str:
    """Tags removed, entities unescaped, whitespace collapsed (for snippet look-ups)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", text)).split())


ZH = "北京市今天发布了新的公共交通政策。市民对明年起公交和地铁票价下调的消息表示欢迎。"
DE = "Grüße aus München – schöne Äpfel, süße Birnen und “Zitate” für 5 €."


def _page(body_text: str, *, head: str = "") -> str:
    return f"<html><head>{head}<title>t</title></head><body><p>{body_text}</p></body></html>"


# --- labels and prescan ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("utf-8", "utf-8"),
        ("UTF8", "utf-8"),
        ("iso-8859-1", "cp1252"),
        ("Latin1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("gb2312", "gb18030"),
        ("GBK", "gb18030"),
        ("x-gbk", "gb18030"),
        (" 'gb18030' ", "gb18030"),
        ("big5", "big5hkscs"),
        ("shift_jis", "cp932"),
        ("euc-kr", "cp949"),
        ("windows-1251", "cp1251"),
        ("utf-7", None),
        ("x-user-defined", None),
        ("no-such-charset", None),
        ("", None),
        (None, None),
    ],
)
def test_normalize_label(label: str | None, expected: str | None) -> None:
    assert normalize_label(label) == expected


def test_prescan_reads_meta_beyond_1024_and_4096_bytes() -> None:
    head = "<script>" + "var x = 1;\n" * 600 + "</script>" + '<meta charset="gbk">'
    body = _page(ZH, head=head).encode("gbk")
    assert body.index(b"<meta") > 4096
    assert prescan_meta_charset(body) == "gb18030"


def test_prescan_ignores_charset_in_script_and_comment() -> None:
    head = (
        '<script src="/a.js" charset="utf-8"></script>'
        '<script>var s = "<meta charset=utf-8>"; // charset=utf-8</script>'
        "<!-- <meta charset=\"koi8-r\"> -->"
        '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
    )
    assert prescan_meta_charset(_page(ZH, head=head).encode("gbk")) == "gb18030"


def test_prescan_needs_http_equiv_for_content_charset() -> None:
    head = '<meta name="description" content="charset=koi8-r"><meta charset="windows-1252">'
    assert prescan_meta_charset(_page("x", head=head).encode()) == "cp1252"


def test_prescan_stops_at_body_and_meta_utf16_means_utf8() -> None:
    assert prescan_meta_charset(b"<html><body><meta charset=gbk>") is None
    assert prescan_meta_charset(b'<meta charset="utf-16le">') == "utf-8"
    assert prescan_meta_charset(b'<?xml version="1.0" encoding="ISO-8859-1"?><html>') == "cp1252"


# --- detection -------------------------------------------------------------------------------


def test_bom_wins_over_header_and_meta() -> None:
    body = b"\xef\xbb\xbf" + _page(DE, head='<meta charset="iso-8859-1">').encode()
    assert detect_encoding(body, http_charset="iso-8859-1") == "utf-8"
    text, enc = decode_html(body, http_charset="iso-8859-1")
    assert enc == "utf-8" and not text.startswith("\ufeff") and DE in text
    body16 = b"\xff\xfe" + _page(DE).encode("utf-16-le")
    assert decode_html(body16, http_charset=None) == (_page(DE), "utf-16-le")


def test_header_that_lies_is_distrusted() -> None:
    # Latin-1 header, UTF-8 bytes
    utf8 = _page(DE).encode("utf-8")
    assert detect_encoding(utf8, http_charset="ISO-8859-1") == "utf-8"
    # UTF-8 header, GBK bytes (strict UTF-8 fails -> the Chinese test)
    gbk = _page(ZH).encode("gbk")
    assert detect_encoding(gbk, http_charset="text/html; charset=UTF-8") == "gb18030"
    # Latin-1 header, gb2312 meta, GBK bytes: the multi-byte declaration that decodes wins
    gbk_meta = _page(ZH, head='<meta charset="gb2312">').encode("gbk")
    assert detect_encoding(gbk_meta, http_charset="iso-8859-1") == "gb18030"


def test_header_that_holds_is_kept() -> None:
    assert detect_encoding(_page(ZH).encode("gbk"), http_charset="GBK") == "gb18030"
    assert detect_encoding(_page(DE).encode("cp1252"), http_charset="windows-1252") == "cp1252"
    body = _page("Новости дня: правительство объявило о новой политике.").encode("koi8-r")
    assert detect_encoding(body, http_charset="koi8-r") == "koi8-r"


def test_cp1252_bytes_under_utf8_meta() -> None:
    body = _page(DE, head='<meta charset="utf-8">').encode("cp1252")
    text, enc = decode_html(body, http_charset=None)
    assert enc == "cp1252"
    assert DE in text and "\ufffd" not in text


def test_mostly_utf8_page_with_stray_cp1252_bytes() -> None:
    # A UTF-8 page whose template kept a Latin-1 fragment: stray bytes decode as cp1252.
    body = (_page(DE * 5, head='<meta charset="utf-8">').encode("utf-8")
            + '<a title="Küchenblogs">x</a>'.encode("cp1252"))
    text, enc = decode_html(body, http_charset=None)
    assert enc == "utf-8"
    assert DE in text and "Küchenblogs" in text and "\ufffd" not in text


def test_gbk_without_any_declaration() -> None:
    text, enc = decode_html(_page(ZH).encode("gbk"), http_charset=None)
    assert enc == "gb18030" and ZH in text


@pytest.mark.parametrize(
    ("sample", "encoding"),
    [
        ("서울시는 오늘 새로운 대중교통 정책을 발표했다. 시민들은 버스와 지하철 요금이 내년부터 "
         "인하될 것이라는 소식에 환영의 뜻을 밝혔다.", "euc-kr"),
        ("東京都は今日、新しい公共交通の方針を発表しました。市民は来年からバスと地下鉄の運賃が"
         "引き下げられるというニュースを歓迎しています。", "shift_jis"),
        ("台北市今天發布了新的公共交通政策。市民對明年起公車和捷運票價調降的消息表示歡迎。"
         "有關負責人表示，這項政策將有助於緩解交通壅塞。", "big5"),
        ("Правительство сегодня объявило о новой политике в области общественного транспорта. "
         "Жители приветствовали новость о снижении цен на проезд.", "cp1251"),
    ],
)
def test_undeclared_non_chinese_legacy_pages_are_not_taken_for_gbk(
    sample: str, encoding: str
) -> None:
    text, enc = decode_html(_page(sample).encode(encoding), http_charset=None)
    assert enc != "gb18030"
    assert sample in text


def test_ascii_reports_the_declaration() -> None:
    assert detect_encoding(b"<html>hello</html>", http_charset="iso-8859-1") == "cp1252"
    assert detect_encoding(b'<meta charset="gbk"><p>hello', http_charset=None) == "gb18030"
    assert detect_encoding(b"<p>hello", http_charset=None) == "utf-8"


def test_invalid_bytes_never_raise() -> None:
    garbage = bytes(range(256)) * 20
    text, enc = decode_html(garbage, http_charset="utf-8")
    assert isinstance(text, str) and isinstance(enc, str)
    assert decode_html(b"", http_charset=None) == ("", "utf-8")
    assert decode_html(b"\x80\x81\xfe\xff", http_charset="no-such")[0]
    # a GBK page with one broken double-byte character: U+FFFD there, the rest intact
    body = _page(ZH * 3).encode("gbk") + b"\xd6<br>"
    text, enc = decode_html(body, http_charset=None)
    assert enc == "gb18030" and ZH in text and text.count("\ufffd") == 1


# --- corpus ----------------------------------------------------------------------------------


def test_set12_every_gbk_page_decodes_without_replacement_characters() -> None:
    """Every page of set 12, undeclared charset: no U+FFFD except the two invalid GBK pages,
    and each page contains the start of its ground-truth cleaned text."""
    original = shared_path("corpus", SET12, "original")
    cleaned = shared_path("corpus", SET12, "cleaned")
    pages = sorted(original.glob("*.html"))
    assert len(pages) == 35
    with_replacement: dict[str, int] = {}
    for page in pages:
        body = _strip_wrapper(page.read_bytes())
        text, enc = decode_html(body, http_charset=None)
        if "\ufffd" in text:
            with_replacement[page.name] = text.count("\ufffd")
        reference = (cleaned / (page.stem + ".txt")).read_text(encoding="utf-8")
        lines = [re.sub(r"\s+", "", line) for line in reference.splitlines()]
        probe = next(line for line in lines if len(line) >= 10)[:10]
        assert probe in re.sub(r"\s+", "", _squash(text)), (page.name, enc, probe)
    assert with_replacement == INVALID_GBK_PAGES
    for name in INVALID_GBK_PAGES:
        assert detect_encoding(_strip_wrapper((original / name).read_bytes()),
                               http_charset=None) == "gb18030"


def test_set06_non_utf8_pages_contain_their_snippets() -> None:
    base = shared_path("corpus", SET06)
    evaldata = json.loads((base / "evaldata.json").read_text(encoding="utf-8"))
    by_file = {v["file"]: v for v in evaldata.values()}
    checked = 0
    for page in sorted((base / "eval_selected").glob("*.html")):
        body = page.read_bytes()
        try:
            body.decode("utf-8")
            continue  # only the pages whose bytes are not UTF-8
        except UnicodeDecodeError:
            pass
        text, enc = decode_html(body, http_charset=None)
        squashed = _squash(text)
        for snippet in by_file[page.name].get("with", []):
            assert " ".join(snippet.split()) in squashed, (page.name, enc, snippet)
        checked += 1
    assert checked >= 20  # 21 non-UTF-8 pages, incl. the GB2312 Xinhua page


def test_set06_xinhua_page_whose_first_charset_is_a_scripts() -> None:
    page = shared_path("corpus", SET06, "eval_selected",
                       "archive.org.he.xinhuanet.com.25340717.html")
    body = page.read_bytes()
    first = re.search(rb"charset\s*=\s*[\"']?([\w-]+)", body)
    assert first is not None and first.group(1).lower() == b"utf-8"  # a <script charset=...>
    text, enc = decode_html(body, http_charset=None)
    assert enc == "gb18030"
    assert "话剧《约定无期限》河北各市巡演结束" in text


# --- downloader middleware -------------------------------------------------------------------
