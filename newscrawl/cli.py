"""The ``newscrawl`` command: ``crawl``, ``report``, ``export`` and ``schedule``.

Installed as a console script by ``setup.py`` (``newscrawl = newscrawl.cli:main``; ``make setup``
and ``pip install -e .`` put it into the virtualenv), so it works from any directory; without
installing, ``python -m newscrawl COMMAND ...`` does the same from the project folder.

* ``crawl`` — ``scrapy crawl news`` with the project's settings from any directory
  (:func:`crawl_main`); bare URLs become ``-a start_urls=``, ``--watch`` is ``-a watch=1``;
* ``report`` — per-site counts, freshness and top stories; ``--html FILE`` for the charts
  (:mod:`newscrawl.report`);
* ``export`` — stored articles as JSON lines, CSV or Parquet (:mod:`newscrawl.export`);
* ``search`` / ``article`` — find stored articles by words, read one (:mod:`newscrawl.searching`);
* ``alert`` — saved searches that notify a webhook or a file (:mod:`newscrawl.alerting`);
* ``schedule`` — ask scrapyd to crawl the sites that are due (:mod:`newscrawl.schedule`);
* ``import`` — fill the store from WARC files as a crawl would (:func:`import_main`,
  ``spiders/warcimport.py``; ``crawl --warc DIR`` writes them: docs/warc.md).

Every command reading a store refuses a data folder that does not exist (exit status 2, one
line) instead of starting an empty store there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

USAGE = """usage: newscrawl COMMAND [options]

commands:
  crawl      crawl news entry URLs into the store: newscrawl crawl URL [URL...] [--watch]
             [--data-dir DIR] [scrapy crawl options: -a NAME=VALUE, -s NAME=VALUE, -O FILE ...]
  report     per-site counts, freshness and top stories of the store (--html FILE for charts)
  export     stored articles as jsonl, csv or parquet (--since, --site, --versions)
  search     full-text search of the stored articles: newscrawl search 'words OR "a phrase"'
  article    one stored article with its text, times, weight and versions: newscrawl article URL
  alert      saved searches that fire to a webhook or a file: newscrawl alert add NAME QUERY ...
  schedule   ask scrapyd to crawl the sites of a seeds file that are due
  import     fill the store from WARC files as a crawl would: newscrawl import FILE.warc.gz|DIR ...
  (COMMAND --help for the options of each)
"""

#: ``scrapy crawl`` options that take a value (passed through as they are).
_VALUE_OPTIONS = frozenset({"-a", "-s", "--set", "-o", "--output", "-O", "--overwrite-output",
                            "-t", "--output-format", "--logfile", "-L", "--loglevel", "--pidfile"})

CRAWL_USAGE = """usage: newscrawl crawl [URL ...] [--watch] [--data-dir DIR] [--warc DIR] [scrapy crawl options]

Runs `scrapy crawl news` with the project's settings from any directory. Bare URLs are the
entries (-a start_urls=URL,URL); --watch keeps crawling (-a watch=1; with -a for=1h, -a rate=N);
--data-dir DIR is the embedded store folder (-s NEWSCRAWL_DATA_DIR=DIR; none given: env
NEWSCRAWL_DATA_DIR, else ./data); --warc DIR writes what is fetched as WARC files there
(-s NEWSCRAWL_WARC_DIR=DIR, docs/warc.md). Every
other argument is passed to `scrapy crawl news` (-a seeds=FILE, -a depth=N, -s NAME=VALUE,
-O items.jsonl, --loglevel INFO ...). Exit status: 0 a good run, 1 a failed run, 2 a run that
could not start (see `scrapy crawl`).
"""


def crawl_args(argv: list[str]) -> tuple[list[str], str | None]:
    """Translate ``newscrawl crawl`` arguments to ``scrapy crawl news`` arguments.

    Returns ``(scrapy_args, data_dir)``: bare URLs joined into one ``-a start_urls=``,
    ``--watch`` as ``-a watch=1``, ``--warc DIR`` as ``-s NEWSCRAWL_WARC_DIR=`` (absolute),
    ``--data-dir DIR`` taken out (None when absent); every other argument kept in order.

    Raises:
        ValueError: an option that needs a value is last.
    """
    out: list[str] = []
    urls: list[str] = []
    data_dir: str | None = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--watch":
            out += ["-a", "watch=1"]
        elif arg == "--warc" or arg.startswith("--warc="):
            if "=" in arg:
                folder = arg.split("=", 1)[1]
            else:
                if i + 1 >= len(argv):
                    raise ValueError("--warc needs a folder")
                i += 1
                folder = argv[i]
            out += ["-s", f"NEWSCRAWL_WARC_DIR={Path(folder).resolve()}"]
        elif arg == "--data-dir" or arg.startswith("--data-dir="):
            if "=" in arg:
                data_dir = arg.split("=", 1)[1]
            else:
                if i + 1 >= len(argv):
                    raise ValueError("--data-dir needs a folder")
                i += 1
                data_dir = argv[i]
        elif arg in _VALUE_OPTIONS:
            if i + 1 >= len(argv):
                raise ValueError(f"{arg} needs a value")
            out += [arg, argv[i + 1]]
            i += 1
        elif not arg.startswith("-"):
            urls.append(arg)
        else:
            out.append(arg)
        i += 1
    if urls:
        out = ["-a", "start_urls=" + ",".join(urls), *out]
    return out, data_dir


def crawl_main(argv: list[str], *, spider: str = "news", translated: list[str] | None = None,
               data_dir: str | None = None) -> int:
    """``newscrawl crawl``: run the project's ``crawl`` command (:mod:`newscrawl.commands.crawl`)
    in this process, from any directory; return its exit status.

    The settings module is ``newscrawl.settings`` unless ``SCRAPY_SETTINGS_MODULE`` names
    another; ``--data-dir DIR`` is ``-s NEWSCRAWL_DATA_DIR=DIR`` (absolute), so it ranks as a
    setting given on the command line (:mod:`newscrawl.embedded.uri`: one precedence).
    """
    if translated is not None:
        args = translated
    elif argv and argv[0] in ("-h", "--help"):
        print(CRAWL_USAGE, end="")
        return 0
    else:
        try:
            args, data_dir = crawl_args(argv)
        except ValueError as exc:
            print(f"newscrawl crawl: {exc}\n{CRAWL_USAGE}", end="", file=sys.stderr)
            return 2
    if spider == "news" and not any(a.startswith(("start_urls=", "seeds=")) for a in args):
        print(f"newscrawl crawl: give at least one entry URL (or -a seeds=FILE)\n{CRAWL_USAGE}",
              end="", file=sys.stderr)
        return 2
    if data_dir is not None:
        data_dir = str(Path(data_dir).resolve())
        args += ["-s", f"NEWSCRAWL_DATA_DIR={data_dir}"]
    else:  # a folder given as a setting is the one to name at the end
        given = [v.split("=", 1)[1] for k, v in zip(args, args[1:])
                 if k in ("-s", "--set") and v.startswith("NEWSCRAWL_DATA_DIR=")]
        data_dir = given[-1] if given else None
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "newscrawl.settings")
    from scrapy.cmdline import execute

    try:
        execute(["scrapy", "crawl", spider, *args])
    except SystemExit as exc:  # execute() always ends with sys.exit(status)
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    else:  # pragma: no cover - execute() does not return
        status = 0
    if status == 0 and not (os.environ.get("NEWSCRAWL_MONGO_URI") or os.environ.get("MONGO_URI")):
        from newscrawl.embedded import resolve_data_dir

        folder = Path(resolve_data_dir(data_dir)).resolve()
        print(f"\nResults: embedded store in {folder}\n"
              f"  newscrawl report --data-dir {folder}\n"
              f"  newscrawl report --data-dir {folder} --html report.html\n"
              f"  newscrawl export --data-dir {folder} --format csv -o articles.csv")
    return status


IMPORT_USAGE = """usage: newscrawl import FILE.warc[.gz]|DIR ... [--data-dir DIR] [--warc DIR] [scrapy crawl options]

Fills the store from WARC files as a crawl would (`scrapy crawl warcimport`, answered from the
archive, nothing sent): newscrawl's own files (their entries and page context), CC-NEWS and other
ISO 28500 files (every archived HTML page). A folder stands for its *.warc, *.warc.gz files
(and the *.warc.gz.open file a killed crawl left).
Progress and counts of the records skipped and why are logged (stats newscrawl/warcimport/...).
"""


def import_args(argv: list[str]) -> tuple[list[str], list[str], str | None]:
    """Split ``newscrawl import`` arguments: ``(WARC paths, scrapy crawl arguments, data dir)``.
    A folder is replaced by its ``*.warc``, ``*.warc.gz`` and ``*.warc.gz.open`` files (sorted;
    ``.open``: the file a killed crawl was writing, read up to its last whole record).

    Raises:
        ValueError: a path that does not exist, no WARC file, an option without its value.
    """
    paths: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in _VALUE_OPTIONS or arg in ("--data-dir", "--warc"):
            if i + 1 >= len(argv):
                raise ValueError(f"{arg} needs a value")
            rest += [arg, argv[i + 1]]
            i += 1
        elif arg.startswith("-"):
            rest.append(arg)
        else:
            path = Path(arg)
            if path.is_dir():
                paths += sorted(str(p.resolve()) for p in path.iterdir()
                                if p.name.endswith((".warc", ".warc.gz", ".warc.gz.open")))
            elif path.is_file():
                paths.append(str(path.resolve()))
            else:
                raise ValueError(f"no such file or folder: {arg}")
        i += 1
    paths = list(dict.fromkeys(paths))  # a file named twice is read once
    if not paths:
        raise ValueError("give at least one WARC file (or a folder of them)")
    if any("," in p for p in paths):
        raise ValueError("WARC paths must not contain a comma")
    args, data_dir = crawl_args(rest)
    return paths, ["-s", "NEWSCRAWL_WARC_IMPORT=" + ",".join(paths), *args], data_dir


def import_main(argv: list[str]) -> int:
    """``newscrawl import``: run the ``warcimport`` spider over WARC files; its exit status."""
    if argv and argv[0] in ("-h", "--help"):
        print(IMPORT_USAGE, end="")
        return 0
    try:
        _, args, data_dir = import_args(argv)
    except ValueError as exc:
        print(f"newscrawl import: {exc}\n{IMPORT_USAGE}", end="", file=sys.stderr)
        return 2
    return crawl_main([], spider="warcimport", translated=args, data_dir=data_dir)


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a subcommand; returns its exit status (2 for an unknown command)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "crawl":
        return crawl_main(rest)
    if command == "import":
        return import_main(rest)
    if command == "schedule":
        from newscrawl.schedule import main as schedule_main

        return schedule_main(rest, prog="newscrawl schedule")
    if command == "report":
        from newscrawl.report import main as report_main

        return report_main(rest)
    if command in ("search", "article", "alert"):
        from newscrawl import alerting, searching

        run = {"search": searching.search_main, "article": searching.article_main,
               "alert": alerting.main}[command]
        return run(rest, prog=f"newscrawl {command}")
    if command == "export":
        from newscrawl.export import main as export_main

        return export_main(rest)
    print(f"newscrawl: unknown command {command!r}\n{USAGE}", end="", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
