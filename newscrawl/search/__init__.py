"""Full-text search and saved-search alerts over the stored articles (issue 22).

* :mod:`newscrawl.search.query` — pure: the query language (words, ``"phrases"``, ``prefix*``,
  ``AND`` / ``OR`` / ``NOT`` / ``-word``, parentheses) and the multilingual tokenizer (CJK
  bigrams), translated to an FTS5 expression;
* :mod:`newscrawl.search.index` — the SQLite FTS5 index in the data folder (standard library
  ``sqlite3``): upsert, catch-up sync from the store, rebuild, ranked queries with filters;
* :mod:`newscrawl.search.alerts` — saved searches, once-per-story bookkeeping, webhook (HMAC
  signed, retried with backoff) and JSON-lines delivery, digests.

No Scrapy, Twisted or pymongo import here: the crawl hands plain article documents in.
"""
