"""``python -m kafkalite`` is the ``kafkalite`` command."""

import sys

from kafkalite.cli import main

sys.exit(main())
