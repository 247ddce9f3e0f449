"""newscrawl: an incremental news crawler built on Scrapy.

Pure algorithms live in :mod:`newscrawl.algorithms` (no Scrapy, Twisted, pymongo or redis
imports); the one module that talks to MongoDB is :mod:`newscrawl.store`; every default is in
:mod:`newscrawl.defaults`.
"""

__version__ = "0.1.0"
