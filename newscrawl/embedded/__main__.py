"""``python -m newscrawl.embedded``: see :mod:`newscrawl.embedded.cli`."""

import logging
import sys

from newscrawl.embedded.cli import main

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    sys.exit(main())
