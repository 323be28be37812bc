#!/usr/bin/env python3
"""Estimate a model's Codeforces rating and percentile from its attempt results.

    python scripts/deepcoder/benchmark/cf_elo_calc.py --results_path results_test_codeforces.json --pass_n 1 \
        --metadata metadata_cf.json --ratings ratings_2024.json [--offline] [--json report.json]

See ``--help`` and :mod:`rllm.codeforces`.
"""

import sys

from rllm.codeforces.cli import rate_main

if __name__ == "__main__":
    sys.exit(rate_main())
