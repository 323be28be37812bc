"""Command-line front ends of ``scripts/data/*.py``: argument parsing, output, exit status.

Every user mistake (bad flag value, missing file, invalid data under ``--strict``) ends in one
``error: ...`` line on stderr and exit status 1 (argparse's own usage errors exit with 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rllm.data import code_dataset, download, math_dataset
from rllm.data.errors import DataError
from rllm.data.paths import CODE_SUBDIR, MATH_SUBDIR, default_data_dir, raw_dir
from rllm.data.to_parquet import Part, convert, exit_status


def run(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Call ``main``, turning a :class:`DataError` or Ctrl-C into one line and status 1 / 130."""
    try:
        return main(argv)
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def download_main(argv: Sequence[str] | None = None) -> int:
    """``scripts/data/download_datasets.py``."""
    parser = argparse.ArgumentParser(
        description="Download the raw training/test JSON files into <data-dir>/raw/{train,test}/{math,code}/.",
    )
    _add_data_dir(parser)
    parser.add_argument(
        "--source",
        metavar="URL_OR_DIR",
        help="fetch <source>/<file name> from this HTTP(S) URL or local directory instead of Google Drive",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help=f"download only these files (of: {', '.join(f.name for f in download.RAW_FILES)})",
    )
    args = parser.parse_args(argv)
    files = download.select_files(args.only)
    outcomes = download.download_all(args.data_dir, files, source=args.source)
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        listing = "; ".join(f"{o.file.name} ({o.error})" for o in failed)
        print(f"error: {len(failed)} of {len(outcomes)} files failed: {listing}", file=sys.stderr)
        return 1
    return 0


def deepscaler_main(argv: Sequence[str] | None = None) -> int:
    """``scripts/data/deepscaler_dataset.py``."""
    return _convert_main(
        argv,
        description="Convert the math datasets (DeepScaleR train, aime/amc/math/minerva/olympiad_bench) to parquet.",
        outputs=math_dataset.OUTPUTS,
        defaults=math_dataset.DEFAULT_OUTPUTS,
        subdir=MATH_SUBDIR,
    )


def deepcoder_main(argv: Sequence[str] | None = None) -> int:
    """``scripts/data/deepcoder_dataset.py``."""
    return _convert_main(
        argv,
        description="Convert the code datasets (DeepCoder train, LiveCodeBench/Codeforces/HumanEval+ tests) to parquet.",
        outputs=code_dataset.OUTPUTS,
        defaults=code_dataset.DEFAULT_OUTPUTS,
        subdir=CODE_SUBDIR,
    )


def _convert_main(
    argv: Sequence[str] | None,
    *,
    description: str,
    outputs: Mapping[str, Sequence[Part]],
    defaults: Sequence[str],
    subdir: str,
) -> int:
    parser = argparse.ArgumentParser(description=description)
    _add_data_dir(parser)
    parser.add_argument("--raw-dir", type=Path, help="raw JSON tree (default: <data-dir>/raw)")
    parser.add_argument(
        "--output-dir",
        "--local-dir",
        "--local_dir",
        dest="output_dir",
        type=Path,
        help=f"where the parquet files go (default: <data-dir>/{subdir})",
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=list(outputs),
        default=list(defaults),
        metavar="NAME",
        help=f"outputs to build (default: {' '.join(defaults)}; all: {' '.join(outputs)})",
    )
    parser.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="read dataset NAME from PATH instead of the raw tree (repeatable), e.g. deepscaler_train=my.json",
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail on the first invalid record or missing input"
    )
    parser.add_argument(
        "--max-issues",
        type=int,
        default=20,
        metavar="N",
        help="skipped records listed per file (default 20; 0 lists all)",
    )
    args = parser.parse_args(argv)
    if args.max_issues < 0:
        parser.error("--max-issues must be 0 (all) or more")
    outcomes = convert(
        outputs,
        dict.fromkeys(args.datasets),
        raw_dir=args.raw_dir or raw_dir(args.data_dir),
        output_dir=args.output_dir or args.data_dir / subdir,
        overrides=_parse_inputs(args.input),
        strict=args.strict,
        max_issues=args.max_issues or None,
    )
    return exit_status(outcomes, echo=lambda line: print(line, file=sys.stderr))


def _add_data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help="data directory (default: $E1_DATA_DIR or data/ in the repository; now %(default)s)",
    )


def _parse_inputs(pairs: Sequence[str]) -> dict[str, Path]:
    inputs = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise DataError(f"--input {pair}: expected NAME=PATH")
        inputs[name] = Path(path).expanduser()
    return inputs
