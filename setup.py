"""Packaging for scrapyd eggs and ``pip install -e .``.

Packages are named explicitly — the top-level packages and every sub-package of ``newscrawl``
(``find_packages`` limited to them: tests and benchmarks are not shipped) — and the ``scrapy``
entry point names the settings module, as scrapyd expects.
"""

from setuptools import find_packages, setup

#: Top-level packages of the project (Scrapy components: extensions, spiders, middlewares,
#: pipelines; everything else lives in newscrawl and its sub-packages).
TOP_LEVEL = ["newscrawl", "extensions", "spiders", "middlewares", "pipelines"]

setup(
    name="newscrawl",
    version="0.1.0",
    description="Incremental news crawler on Scrapy: link classification, NewsPageRank, MongoDB",
    python_requires=">=3.11",
    packages=find_packages(include=[*TOP_LEVEL, "newscrawl.*"]),
    package_data={"newscrawl": ["py.typed"]},  # PEP 561: the package ships its type hints
    entry_points={
        "scrapy": ["settings = newscrawl.settings"],
        "console_scripts": ["newscrawl = newscrawl.cli:main"],  # newscrawl schedule|report
    },
    zip_safe=False,
)
