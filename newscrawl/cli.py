"""The ``newscrawl`` command: ``newscrawl schedule ...`` and ``newscrawl report ...``.

Installed as a console script by ``setup.py`` (``newscrawl = newscrawl.cli:main``); without
installing, ``python -m newscrawl schedule ...`` does the same from the project folder.

* ``schedule`` — ask scrapyd to crawl the sites that are due (:mod:`newscrawl.schedule`);
* ``report`` — per-site counts and top articles of the store (:mod:`newscrawl.report`).
"""

from __future__ import annotations

import sys

USAGE = """usage: newscrawl COMMAND [options]

commands:
  schedule   ask scrapyd to crawl the sites of a seeds file that are due (--help for options)
  report     per-site counts and the top articles of the store (--help for options)
"""


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a subcommand; returns its exit status (2 for an unknown command)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "schedule":
        from newscrawl.schedule import main as schedule_main

        return schedule_main(rest, prog="newscrawl schedule")
    if command == "report":
        from newscrawl.report import main as report_main

        return report_main(rest)
    print(f"newscrawl: unknown command {command!r}\n{USAGE}", end="", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
