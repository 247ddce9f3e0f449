"""Packaging for scrapyd eggs and ``pip install -e .`` (``make setup`` runs it: the ``newscrawl``
command in the virtualenv, working from any directory).

Packages are listed explicitly (tests and benchmarks are not shipped; a test checks that every
package of the tree is listed) and the ``scrapy`` entry point names the settings module, as
scrapyd expects.
"""

from setuptools import setup

setup(
    name="newscrawl",
    version="0.1.0",
    description="Incremental news crawler on Scrapy: link classification, NewsPageRank, MongoDB",
    python_requires=">=3.11",
    packages=["newscrawl", "newscrawl.algorithms", "newscrawl.distributed", "newscrawl.embedded",
              "newscrawl.store", "newscrawl.commands", "newscrawl.search", "newscrawl.warc",
              "extensions", "spiders", "middlewares", "pipelines"],
    package_data={"newscrawl": ["py.typed"]},  # PEP 561: the package ships its type hints
    entry_points={
        "scrapy": ["settings = newscrawl.settings"],
        "console_scripts": ["newscrawl = newscrawl.cli:main"],  # newscrawl crawl|report|export|schedule
    },
    # `newscrawl export --format parquet` only (pyarrow is about 170 MB installed)
    extras_require={"parquet": ["pyarrow==26.0.1"]},
    zip_safe=False,
)
