"""Build the code parquet files (<data-dir>/deepcoder/*.parquet) from the raw JSON; see --help."""

import sys

from rllm.data.cli import deepcoder_main, run

if __name__ == "__main__":
    sys.exit(run(deepcoder_main))
