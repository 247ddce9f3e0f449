"""Scrapy downloader and spider middlewares of newscrawl (thin adapters over newscrawl.algorithms)."""
