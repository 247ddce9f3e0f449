"""The search query language and tokenizer (newscrawl.search.query): pure functions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from newscrawl.search.query import And, Not, Or, Phrase, QueryError, parse, to_fts5, tokenize


def test_words_are_folded_and_cjk_runs_become_bigrams():
    assert tokenize("Massenschlägerei, ÄRGER!") == ["massenschlagerei", "arger"]
    assert tokenize("新华社北京电") == ["新华", "华社", "社北", "北京", "京电"]
    assert tokenize("東京で、テスト") == ["東京", "京で", "テス", "スト"]
    assert tokenize("한국어 뉴스") == ["한국", "국어", "뉴스"]
    assert tokenize("Ｆｕｌｌ-width ２０２６") == ["full", "width", "2026"]
    assert tokenize("a_b") == ["a", "b"]
    assert tokenize(None) == [] and tokenize("…—") == []


def test_operators_phrases_negation_and_grouping():
    w = lambda *t, p=False: Phrase(tuple(t), p)  # noqa: E731
    assert parse("Euroleague OR Massenschlägerei") == Or((w("euroleague"), w("massenschlagerei")))
    assert parse('"Berlin Marathon" -Hendel') == And((w("berlin", "marathon"), Not(w("hendel"))))
    assert parse("a b OR c") == And((w("a"), Or((w("b"), w("c")))))
    assert parse("(a AND b) OR c") == Or((And((w("a"), w("b"))), w("c")))
    assert parse("markt*") == w("markt", p=True)
    assert parse("台风") == w("台风")
    assert parse("新") == w("新", p=True)  # one CJK character: the bigrams it starts
    assert parse("Berlin-Marathon") == w("berlin", "marathon")  # one word, two tokens: a phrase
    assert parse("or and") == And((w("or"), w("and")))  # lower case: words


@pytest.mark.parametrize("query", ["", "   ", "NOT x", "-x", "…", "(a", "x OR -y"])
def test_queries_that_cannot_be_searched_are_query_errors(query):
    with pytest.raises(QueryError):
        to_fts5(parse(query))


def test_fts5_expression_quotes_every_token():
    assert to_fts5(parse('"Berlin Marathon" -Hendel')) == '("berlin" + "marathon") NOT ("hendel")'
    assert to_fts5(parse('NEAR title:x')) == '(("near") AND ("title" + "x"))'


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_text_parses_or_is_a_query_error(text):
    try:
        expression = to_fts5(parse(text))
    except QueryError:
        return
    assert expression.startswith("(")
