"""Pure algorithms: plain data in, plain data out.

Nothing here imports Scrapy, Twisted, pymongo or redis, so every module is unit-testable and
benchmarkable on its own.
"""
