"""Build the math parquet files (<data-dir>/deepscaler/*.parquet) from the raw JSON; see --help."""

import sys

from rllm.data.cli import deepscaler_main, run

if __name__ == "__main__":
    sys.exit(run(deepscaler_main))
