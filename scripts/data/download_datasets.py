"""Download the raw datasets (Google Drive, or --source URL_OR_DIR) into <data-dir>/raw; see --help."""

import sys

from rllm.data.cli import download_main, run

if __name__ == "__main__":
    sys.exit(run(download_main))
