#!/usr/bin/env python3
"""Cache the Codeforces API responses of every contest in a metadata file, for offline rating.

    python scripts/deepcoder/benchmark/cf_prefetch.py --metadata metadata_cf.json [--cache-dir DIR]

Re-running resumes: cached contests are not fetched again. See ``--help``.
"""

import sys

from rllm.codeforces.cli import prefetch_main

if __name__ == "__main__":
    sys.exit(prefetch_main())
