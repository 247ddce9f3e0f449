"""``python -m newscrawl schedule|report ...``: the ``newscrawl`` command without installing it."""

import sys

from newscrawl.cli import main

sys.exit(main())
