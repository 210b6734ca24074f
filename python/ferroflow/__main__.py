"""``python -m ferroflow``: the same as the ``ferroflow`` command."""

import sys

from ferroflow.cli import main

sys.exit(main())
