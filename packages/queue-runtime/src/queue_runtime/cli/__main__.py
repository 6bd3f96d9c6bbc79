"""``python -m queue_runtime.cli``: the ``queue-runtime`` command."""

import sys

from queue_runtime.cli import main

sys.exit(main())
