"""Item pipeline: a WARC ``metadata`` record of what newscrawl learned of each page.

After the stories pipeline (story ids) and before storage, every page item (article, node,
feed or sitemap) becomes one JSON ``metadata`` record that refers to the page's response record
(``WARC-Refers-To``): the page context (entry URL, StartURL, link class, role, depth, referer),
the NewsPageRank features and weight, the story id, the publication date with its source and
confidence, and the feeds or sitemaps that named the article (``sources``, news-crawl#18).
See docs/warc.md for the fields.

Off unless ``NEWSCRAWL_WARC_DIR`` is set and ``NEWSCRAWL_WARC_METADATA`` is on.
"""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter

from extensions.warc import WarcExtension
from newscrawl.components import require_enabled, require_extension

#: Item fields copied into the metadata record (text, minhash and links stay in the store).
METADATA_FIELDS = ("url", "fp", "kind", "site", "host", "entry_url", "start_url", "link_class",
                   "role", "depth", "referer", "features", "parent_weight", "r0", "weight",
                   "title", "status", "encoding", "fetched_at", "canonical_url", "published",
                   "published_source", "published_confidence", "modified", "language",
                   "story_id", "sources", "feed_format", "entries", "new_entries",
                   "link_counts", "role_counts")


class WarcMetadataPipeline:
    """One metadata record per page item (module docstring)."""

    def __init__(self, warc: WarcExtension) -> None:
        self.warc = warc

    @classmethod
    def from_crawler(cls, crawler: Any) -> WarcMetadataPipeline:
        warc = require_extension(crawler, WarcExtension)
        require_enabled(crawler.settings, "NEWSCRAWL_WARC_METADATA")
        return cls(warc)

    def process_item(self, item: Any, spider: Any = None) -> Any:
        adapter = ItemAdapter(item)
        url = adapter.get("url")
        if url:
            data = {name: adapter.get(name) for name in METADATA_FIELDS if adapter.get(name) is not None}
            self.warc.writer.write_metadata(url, {"newscrawl": data}, kind=adapter.get("kind"))
            self.warc.inc("metadata")
        return item
