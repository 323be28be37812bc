"""``python -m rllm.eval``: see :mod:`rllm.eval.cli`."""

import sys

from rllm.eval.cli import main

sys.exit(main())
