"""Pages that used to lose text or be stored as empty articles: HTML comments inside text,
control characters, bodies that are not HTML, DOMs deeper than the parser's limit."""

from __future__ import annotations

import gzip
import os

import pytest

from newscrawl.algorithms.extraction import (
    PARSER_MAX_DEPTH,
    extract_article,
    flatten_deep,
    sniff_html,
)
from newscrawl.algorithms.textcompare import body_matches
from tests.conftest import shared_path

SET04 = ("corpus", "04_fundus_multilingual_articles_gt")


def _page(body: str) -> str:
    return ("<html><head><title>Bridge plan agreed</title></head><body><article>"
            f"<h1>Bridge plan agreed</h1>{body}</article></body></html>")


PARAS = "".join(
    f"<p>Paragraph {i}: the committee met on Tuesday and agreed on plan {i} to rebuild the "
    f"bridge over the river by next spring, officials said in a statement.</p>" for i in range(6))


def test_text_after_a_comment_inside_an_element_is_kept():
    # React renders "Label<!-- -->: text"; the text after the marker used to be dropped
    body = PARAS + "".join(
        f"<p><span>Ressort {i}<!-- -->: Putin rüstet auf, Satellitenbilder zeigen Ring {i}</span> "
        f"und weitere Worte im Absatz {i}.</p>" for i in range(3))
    text = extract_article(_page(body), "https://example.com/a")["text"]
    assert "Ressort 0: Putin rüstet auf, Satellitenbilder zeigen Ring 0" in text


def test_real_page_with_comment_markers_keeps_its_body():
    # APNews 2023-04-28 (set 04): text between <!-- --> markers; F1 0.81 before comments were
    # removed at parse time, 0.95 after
    import json

    base = shared_path(*SET04, "us")
    gt = json.loads((base / "APNews.json").read_text(encoding="utf-8"))
    pages = sorted(p.name for p in base.glob("APNews_*.html.gz"))
    key = sorted(gt, key=lambda k: [int(x) for x in k.replace("V", "").split("_") if x])[
        pages.index("APNews_2023_04_28.html.gz")]
    html = gzip.decompress((base / "APNews_2023_04_28.html.gz").read_bytes())
    text = extract_article(html, "https://apnews.com/article/x")["text"]
    assert body_matches(text, gt[key]["body"])[1] >= 0.9


@pytest.mark.parametrize("char", ["\x1b", "\x01", "\x0b", "\x7f"])
def test_a_control_character_does_not_empty_the_article(char):
    html = _page(PARAS.replace("Tuesday", f"Tues{char}day", 1))
    text = extract_article(html, "https://example.com/a")["text"]
    assert "Paragraph 5" in text and "Tuesday" in text and char not in text


def test_a_dom_deeper_than_the_parser_limit_keeps_all_text():
    depth = 10_000
    html = ("<html><head><title>Deep</title></head><body><article><h1>Deep page</h1>" + PARAS
            + "<div>" * depth + "<p>The deepest paragraph of the page carries its own words here.</p>"
            + "</div>" * depth + "<p>After the deep part comes the closing paragraph of the article.</p>"
            "</article></body></html>")
    details: dict = {}
    res = extract_article(html, "https://example.com/a", _details=details)
    assert details["dom_flattened"] >= depth - PARSER_MAX_DEPTH
    assert details["dom_truncated"] is False
    assert "deepest paragraph" in res["text"] and "closing paragraph" in res["text"]


def test_flatten_deep_keeps_text_and_balanced_tags():
    html = ("<div><script>if (a<b) {}</script>" + "<div>" * 4 + "<p>a<br>b</p><script>if (x<y) {}</script>"
            + "</div>" * 5 + "<p>c</p>")
    flat, removed = flatten_deep(html, limit=2)
    assert removed == 4  # three divs and the deep script (its code is not page text)
    assert flat == "<div><script>if (a<b) {}</script><div><p>a<br>b</p></div></div><p>c</p>"


@pytest.mark.parametrize("body, why", [
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj <</Type /Catalog>>", "signature"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "signature"),
    (os.urandom(3) + bytes(range(256)) * 8, "binary"),
    (b"just some plain words, no markup at all", "no-markup"),
    (b"   ", "empty"),
    (b"<!doctype html><html><body><p>x\x1by</p></body></html>", None),
    ("<html><body><p>UTF-16 Seite</p></body></html>".encode("utf-16"), None),
])
def test_sniff_html(body, why):
    assert sniff_html(body) == why
