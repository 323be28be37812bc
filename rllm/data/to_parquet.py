"""Raw JSON records -> verl RL parquet rows, and the driver that converts whole datasets.

Row shape (one per problem; what verl's ``RLHFDataset`` and reward manager read)::

    data_source   string   benchmark / source name; the reward router grades code sources by it
    prompt        list<struct<role: string, content: string>>   [{"role": "user", "content": ...}]
    ability       string   "math" | "code"
    reward_model  struct<style: string, ground_truth: string | list<string>>   style is "rule"
    extra_info    struct<split: string, index: int64>   index = position of the record in its raw file

``ground_truth`` is a string column, or a list-of-strings column when any record of the output has
several acceptable answers (then single answers are written as one-element lists: a column has one
type, and graders accept both forms).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rllm.data.errors import DataError
from rllm.data.raw import load_records
from rllm.data.validate import ValidationReport, validate_records

Echo = Callable[[str], None]


def rl_row(
    *, data_source: str, content: str, ability: str, ground_truth: Any, split: str, index: int
) -> dict:
    """One verl RL row (see the module docstring); the prompt is a single user message."""
    return {
        "data_source": data_source,
        "prompt": [{"role": "user", "content": content}],
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": ground_truth},
        "extra_info": {"split": split, "index": index},
    }


def rl_schema(ground_truth_type: pa.DataType) -> pa.Schema:
    """The parquet schema of :func:`rl_row` rows with the given ``ground_truth`` type."""
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", pa.list_(message)),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", ground_truth_type)])),
            ("extra_info", pa.struct([("split", pa.string()), ("index", pa.int64())])),
        ]
    )


def write_rl_parquet(rows: Sequence[dict], path: Path) -> Path:
    """Write rows atomically (temp file in the same directory, then rename) and return ``path``.

    Ground truths that mix strings and lists are written as lists (see the module docstring).
    """
    ground_truths = [row["reward_model"]["ground_truth"] for row in rows]
    if any(isinstance(gt, list) for gt in ground_truths):
        gt_type: pa.DataType = pa.list_(pa.string())
        rows = [_as_list_ground_truth(row) for row in rows]
    else:
        gt_type = pa.string()
    table = pa.Table.from_pylist(list(rows), schema=rl_schema(gt_type))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        pq.write_table(table, tmp)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _as_list_ground_truth(row: dict) -> dict:
    gt = row["reward_model"]["ground_truth"]
    if isinstance(gt, list):
        return row
    return {**row, "reward_model": {**row["reward_model"], "ground_truth": [gt]}}


@dataclass(frozen=True)
class Part:
    """One raw input file and how its records become rows.

    ``key`` names the part on the command line (``--input KEY=PATH``) and is also the name of the
    output a part has on its own; ``raw`` is its path relative to the raw directory.
    """

    key: str
    raw: str
    check: Callable[[Any], Any]
    row: Callable[[Any, int], dict]


@dataclass
class Outcome:
    """The result for one output dataset: written ``path`` and row count, or ``error``."""

    name: str
    path: Path | None = None
    rows: int = 0
    error: str | None = None


def resolve_input(part: Part, raw_dir: Path, overrides: Mapping[str, Path]) -> Path:
    """The raw file for ``part``: an override, ``<raw_dir>/<raw>``, or for test sets also
    ``<raw_dir>/<category>/<file>`` (the benchmarks layout, without the ``test/`` level)."""
    if part.key in overrides:
        return Path(overrides[part.key])
    primary = raw_dir / part.raw
    if primary.exists() or not part.raw.startswith("test/"):
        return primary
    flat = raw_dir / part.raw.removeprefix("test/")
    return flat if flat.exists() else primary


def convert(
    outputs: Mapping[str, Sequence[Part]],
    selected: Iterable[str],
    *,
    raw_dir: Path,
    output_dir: Path,
    overrides: Mapping[str, Path] | None = None,
    strict: bool = False,
    max_issues: int | None = 20,
    echo: Echo = print,
) -> list[Outcome]:
    """Convert each selected output (its parts concatenated in order) to ``<output_dir>/<name>.parquet``.

    Every input file gets a summary line (kept/skipped by reason) and a line per skipped record
    (up to ``max_issues``). A missing or unreadable input, or an output left with no rows, makes
    that output's :class:`Outcome` carry an ``error`` and the others are still written. All inputs
    are read and validated before anything is written, so under ``strict`` a failure writes nothing.

    Raises:
        DataError: under ``strict``, on the first invalid record, unusable input or empty output.
    """
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - {p.key for parts in outputs.values() for p in parts})
    if unknown:
        raise DataError(f"--input names unknown dataset(s) {', '.join(unknown)}; known: {', '.join(outputs)}")
    # Parts shared by several outputs (train_taco and deepcoder_train) are read once.
    done: dict[str, list[dict] | DataError] = {}
    planned: list[tuple[Outcome, list[dict]]] = []
    for name in selected:
        outcome, rows = Outcome(name), []
        for part in outputs[name]:
            if part.key not in done:
                path = resolve_input(part, raw_dir, overrides)
                done[part.key] = _convert_part(part, path, strict, max_issues, echo)
            result = done[part.key]
            if isinstance(result, DataError):
                outcome.error = str(result)
                break
            rows.extend(result)
        if outcome.error is None and not rows:
            outcome.error = "no valid records"
        if outcome.error is not None and strict:
            raise DataError(f"{name}: {outcome.error}")
        planned.append((outcome, rows))
    for outcome, rows in planned:
        if outcome.error is None:
            outcome.path = write_rl_parquet(rows, output_dir / f"{outcome.name}.parquet")
            outcome.rows = len(rows)
            echo(f"wrote {outcome.path} ({outcome.rows} rows)")
        else:
            echo(f"skipped {outcome.name}: {outcome.error}")
    return [outcome for outcome, _ in planned]


def _convert_part(
    part: Part, path: Path, strict: bool, max_issues: int | None, echo: Echo
) -> list[dict] | DataError:
    try:
        if not path.exists():
            raise DataError(
                f"no raw file at {path} (fetch it with scripts/data/download_datasets.py, "
                f"or pass --raw-dir or --input {part.key}=PATH)"
            )
        records = load_records(path)
    except DataError as exc:
        if strict:
            raise
        return exc
    items, report = validate_records(str(path), records, part.check)
    _echo_report(report, max_issues, echo)
    report.raise_if_strict(strict)
    return [part.row(item, index) for index, item in items]


def _echo_report(report: ValidationReport, max_issues: int | None, echo: Echo) -> None:
    echo(report.summary())
    for line in report.details(max_issues):
        echo(line)


def exit_status(outcomes: Sequence[Outcome], echo: Echo = print) -> int:
    """0 when every output was written; otherwise 1, after one line naming what was not."""
    failed = [o for o in outcomes if o.error is not None]
    if not failed:
        return 0
    listing = "; ".join(f"{o.name} ({o.error})" for o in failed)
    echo(f"error: {len(failed)} of {len(outcomes)} datasets not written: {listing}")
    return 1
