"""The project's Scrapy commands (``COMMANDS_MODULE``): ``crawl`` with honest exit statuses."""
