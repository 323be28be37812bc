"""Plot one or more evaluation output directories on shared axes.

Usage: ``python -m rllm.eval.plot DIR [DIR ...] --out PLOTS_DIR [--labels NAME ...]``

Each ``DIR`` is an ``--output-dir`` of ``python -m rllm.eval`` (it holds ``summary.json``); each
becomes one line/bar group, labelled by ``--labels`` or else by the directory name.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rllm.eval import layout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rllm.eval.plot", description=__doc__.splitlines()[0])
    parser.add_argument(
        "dirs", nargs="+", type=Path, help="evaluation output directories (with summary.json)"
    )
    parser.add_argument("--out", type=Path, required=True, help="directory to write the PNG files into")
    parser.add_argument(
        "--labels", nargs="+", help="one legend label per directory (default: directory names)"
    )
    args = parser.parse_args(argv)
    if args.labels and len(args.labels) != len(args.dirs):
        parser.error(f"--labels needs one label per directory ({len(args.dirs)}), got {len(args.labels)}")
    summaries = {}
    for i, directory in enumerate(args.dirs):
        path = directory / layout.SUMMARY
        if not path.is_file():
            print(f"error: {path} not found; is {directory} an evaluation --output-dir?", file=sys.stderr)
            return 1
        label = args.labels[i] if args.labels else (directory.resolve().name or str(directory))
        summaries[label] = json.loads(path.read_text())
    from rllm.eval.plots import write_run_plots

    written = write_run_plots(args.out, summaries)
    if not written:
        print("error: the summaries hold no results to plot", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
