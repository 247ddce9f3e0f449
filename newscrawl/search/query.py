"""The search query language, the tokenizer shared by the index and the alerts, and a matcher.

Tokenizer (:func:`tokenize`): NFKC, lower case, diacritics removed (``Massenschlägerei`` and
``massenschlagerei`` are one word), words are runs of letters and digits. Han, kana and Hangul
are written without spaces between words, so every run of them is indexed as its overlapping
character bigrams (``新华社`` → ``新华 华社``), as Lucene's ``CJKBigramFilter`` and
Elasticsearch's ``cjk`` analyzer do; a single CJK character alone is its own token. A query word
is tokenized the same way, and a word that yields several tokens is searched as a phrase of them,
so a two-character Chinese query (``台风``) is one bigram and any length of CJK query matches
where its characters are adjacent. A one-character CJK query matches the bigrams it starts (a
prefix query): an occurrence as the last character of a run is missed (documented limit).

Query language (:func:`parse`):

* ``word`` — the word (all of its tokens, adjacent); ``word*`` — words starting with it;
* ``"a phrase"`` — the words adjacent and in order;
* juxtaposition and ``AND`` — both; ``OR`` — either (binds tighter than ``AND``, as in web search
  engines: ``a b OR c`` is ``a AND (b OR c)``; the FTS5 expression is fully parenthesised); ``NOT x`` or ``-x`` — without ``x``;
  parentheses group. ``AND``/``OR``/``NOT`` are operators only in capitals (``or`` is a word).

A query must keep at least one word that is not negated (``NOT x`` alone is refused: FTS5's
``NOT`` is binary, and a query for "everything but x" is no search).

The tree becomes an FTS5 ``MATCH`` expression (:func:`to_fts5`; SQLite's "Full-text Query
Syntax", https://sqlite.org/fts5.html §3). Alerts run the same expression over the index,
restricted to the articles just stored, so an alert fires for exactly the articles a search lists.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Union

#: Han (with extensions A and compatibility), hiragana, katakana, Hangul syllables.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")
#: A word: letters and digits (no underscore); CJK runs are split out of it afterwards.
_WORD = re.compile(r"[^\W_]+")
#: Query lexemes: a quoted phrase, a parenthesis, or a run of other non-space characters.
_LEXEME = re.compile(r'"([^"]*)"?|(\()|(\))|([^\s()"]+)')


def _fold(text: str) -> str:
    """NFKC, lower case, and combining marks removed (NFD, then category Mn dropped) from every
    character outside Han, kana and Hangul (whose marks are letters: で is not て, and NFD
    would split Hangul syllables into jamo)."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFKC", text).lower():
        if ch.isascii() or _CJK_CHAR.match(ch):
            out.append(ch)
        else:
            out.extend(c for c in unicodedata.normalize("NFD", ch)
                       if unicodedata.category(c) != "Mn")
    return "".join(out)


def tokenize(text: str | None) -> list[str]:
    """The index tokens of ``text`` in order (see the module docstring); ``[]`` for None.

    >>> tokenize("Die Massenschlägerei in der Euroleague")
    ['die', 'massenschlagerei', 'in', 'der', 'euroleague']
    >>> tokenize("新华社北京电 iPhone15手机")
    ['新华', '华社', '社北', '北京', '京电', 'iphone15', '手机']
    """
    if not text:
        return []
    out: list[str] = []
    for word in _WORD.findall(_fold(text)):
        pos = 0
        for run in _CJK_RUN.finditer(word):
            if run.start() > pos:
                out.append(word[pos:run.start()])
            chars = run.group(0)
            if len(chars) == 1:
                out.append(chars)
            else:
                out.extend(chars[i:i + 2] for i in range(len(chars) - 1))
            pos = run.end()
        if pos < len(word):
            out.append(word[pos:])
    return out


# -- the query tree -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Phrase:
    """Tokens that must be adjacent and in order; ``prefix``: the last one is a prefix."""
    tokens: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True)
class And:
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    part: Node


Node = Union[Phrase, And, Or, Not]


class QueryError(ValueError):
    """A query that cannot be searched (empty, unbalanced, only negated words)."""


def _lex(query: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in _LEXEME.finditer(query):
        phrase, lpar, rpar, word = m.groups()
        if phrase is not None:
            out.append(("phrase", phrase))
        elif lpar:
            out.append(("(", "("))
        elif rpar:
            out.append((")", ")"))
        elif word in ("AND", "OR", "NOT"):
            out.append((word, word))
        elif word:
            if word.startswith("-") and len(word) > 1:
                out.append(("NOT", "-"))
                word = word[1:]
            out.append(("word", word))
    return out


def _leaf(kind: str, text: str) -> Phrase | None:
    """The phrase of a word or quoted text; None when it holds no token (punctuation only)."""
    prefix = kind == "word" and text.endswith("*")
    tokens = tuple(tokenize(text))
    if not tokens:
        return None
    if not prefix and len(tokens) == 1 and _CJK_RUN.fullmatch(tokens[0]) and len(tokens[0]) == 1:
        prefix = True  # one CJK character: the bigrams it starts (module docstring)
    return Phrase(tokens, prefix)


class _Parser:
    """Recursive descent: ``and := unary+ (AND? unary)*``, ``or := not (OR not)*``,
    ``not := NOT not | atom``, ``atom := leaf | ( and )``."""

    def __init__(self, lexemes: list[tuple[str, str]]) -> None:
        self.lx, self.i = lexemes, 0

    def peek(self) -> str | None:
        return self.lx[self.i][0] if self.i < len(self.lx) else None

    def parse_and(self) -> Node | None:
        parts: list[Node] = []
        while self.peek() not in (None, ")"):
            if self.peek() == "AND":
                self.i += 1
                continue
            node = self.parse_or()
            if node is not None:
                parts.append(node)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(tuple(parts))

    def parse_or(self) -> Node | None:
        parts = [self.parse_not()]
        while self.peek() == "OR":
            self.i += 1
            parts.append(self.parse_not())
        kept = [p for p in parts if p is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else Or(tuple(kept))

    def parse_not(self) -> Node | None:
        if self.peek() == "NOT":
            self.i += 1
            inner = self.parse_not()
            return Not(inner) if inner is not None else None
        return self.parse_atom()

    def parse_atom(self) -> Node | None:
        kind = self.peek()
        if kind is None or kind == ")":
            return None
        text = self.lx[self.i][1]
        self.i += 1
        if kind == "(":
            inner = self.parse_and()
            if self.peek() != ")":
                raise QueryError("unbalanced parenthesis: a '(' is not closed")
            self.i += 1
            return inner
        if kind in ("AND", "OR"):  # an operator without a left side: a word after all
            return _leaf("word", text.lower())
        return _leaf(kind, text)


def _positive(node: Node) -> bool:
    """True when ``node`` can match on its own (is not a pure negation)."""
    if isinstance(node, Phrase):
        return True
    if isinstance(node, Not):
        return False
    if isinstance(node, Or):
        return all(_positive(p) for p in node.parts)
    return any(_positive(p) for p in node.parts)


def parse(query: str) -> Node:
    """Parse a search query (module docstring).

    Raises:
        QueryError: no searchable word, a lone negation (``NOT x``, or an ``OR`` with a
            negated side), or an unbalanced parenthesis.

    >>> parse('Euroleague OR Massenschlägerei')
    Or(parts=(Phrase(tokens=('euroleague',), prefix=False), Phrase(tokens=('massenschlagerei',), prefix=False)))
    """
    parser = _Parser(_lex(query))
    node = parser.parse_and()
    while parser.peek() == ")":  # a stray ')' : skip it and go on
        parser.i += 1
        more = parser.parse_and()
        if more is not None:
            node = more if node is None else And((node, more))
    if node is None:
        raise QueryError(f"no word to search for in {query!r}")
    if not _positive(node):
        raise QueryError("a query needs a word that is not negated (NOT x alone lists "
                         "everything but x)")
    return node


# -- FTS5 ---------------------------------------------------------------------------------------

def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def to_fts5(node: Node) -> str:
    """The FTS5 ``MATCH`` expression of a parsed query (tokens quoted, so no token is read as
    an FTS5 keyword or column filter).

    Raises:
        QueryError: a negation that is not beside a positive part (see :func:`parse`).

    >>> to_fts5(parse('"Berlin Marathon" -Hendel'))
    '("berlin" + "marathon") NOT ("hendel")'
    """
    if isinstance(node, Phrase):
        body = " + ".join(_quote(t) for t in node.tokens)
        return f"({body}{'*' if node.prefix else ''})"
    if isinstance(node, Or):
        return "(" + " OR ".join(to_fts5(p) for p in node.parts) + ")"
    if isinstance(node, Not):
        raise QueryError("NOT needs a positive part beside it")
    positives = [to_fts5(p) for p in node.parts if not isinstance(p, Not)]
    negatives = [to_fts5(p.part) for p in node.parts if isinstance(p, Not)]
    if not positives:
        raise QueryError("NOT needs a positive part beside it")
    text = positives[0] if len(positives) == 1 else "(" + " AND ".join(positives) + ")"
    for neg in negatives:
        text = f"{text} NOT {neg}"
    return text
