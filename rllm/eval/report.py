"""Writing evaluation outputs: dataset parquet with responses, cf_elo_calc results, summary.json,
pass.csv and the printed table. File locations are defined in :mod:`rllm.eval.layout`.

Every file is written to a temporary name and renamed, so an interrupted run never leaves a
half-written output behind.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rllm.eval import layout

# pass.csv rows are identified by these columns; a re-run replaces its own rows.
PASS_KEY = ("model_path", "dataset", "mode", "budget")


def write_dataset_outputs(
    directory: Path, dataset: str, frame: pd.DataFrame, records: Sequence[Mapping[str, Any]], n: int
) -> None:
    """``<dataset>.parquet`` (rows + ``responses`` + ``scores``) and ``results_<dataset>.json``.

    ``records`` must hold exactly ``n`` samples for each of the frame's rows.
    """
    responses: list[list[str]] = [[""] * n for _ in range(len(frame))]
    scores: list[list[float]] = [[0.0] * n for _ in range(len(frame))]
    outcomes: list[list[int]] = [[0] * n for _ in range(len(frame))]
    for record in records:
        p, s = record["prompt_index"], record["sample_index"]
        responses[p][s] = record["response"]
        scores[p][s] = float(record["score"])
        outcomes[p][s] = int(bool(record["acc"]))
    out = frame.copy()
    out["responses"] = responses
    out["scores"] = scores
    directory.mkdir(parents=True, exist_ok=True)
    _atomic(layout.dataset_parquet(directory, dataset), lambda tmp: out.to_parquet(tmp, index=False))
    write_json(layout.results_json(directory, dataset), outcomes)


def write_json(path: Path, payload: Any) -> None:
    _atomic(path, lambda tmp: Path(tmp).write_text(json.dumps(payload, indent=1, sort_keys=False) + "\n"))


def merge_summary(path: Path, model: str, entries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Add ``entries`` (each with ``dataset`` and ``budget_key``) to the summary at ``path``.

    Entries of earlier runs for other datasets/budgets are kept, so one output directory can
    accumulate a budget sweep over several invocations.
    """
    summary: dict[str, Any] = {"model": model, "datasets": {}}
    if path.exists():
        try:
            summary = json.loads(path.read_text())
        except json.JSONDecodeError:
            summary = {"model": model, "datasets": {}}
    summary["model"] = model
    for entry in entries:
        summary.setdefault("datasets", {}).setdefault(entry["dataset"], {})[entry["budget_key"]] = dict(entry)
    write_json(path, summary)
    return summary


def pass_row(entry: Mapping[str, Any]) -> dict[str, Any]:
    """One pass.csv row: the original's columns first, then budget and token columns."""
    metrics = entry["metrics"]
    n = metrics["n"]
    row = {
        "model_path": entry["model"],
        "dataset": entry["dataset"],
        "pass@1": metrics["avg@n"],
        f"pass@{n}": metrics[f"pass@{n}"],
        "mode": entry["mode"],
        "budget": entry["budget_key"],
        "n": n,
        "prompts": metrics["prompts"],
    }
    for field in ("total_tokens", "thinking_tokens", "solution_tokens"):
        row[f"mean_{field}"] = metrics[f"mean_{field}"]
    row["forced_close_rate"] = metrics["forced_close_rate"]
    row["solution_truncated_rate"] = metrics["solution_truncated_rate"]
    return row


def update_pass_csv(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Upsert ``rows`` into ``path`` keyed by :data:`PASS_KEY` (columns are the union, in order)."""
    existing: list[dict[str, Any]] = []
    if path.exists():
        with open(path, newline="") as handle:
            existing = list(csv.DictReader(handle))
    new = [dict(row) for row in rows]
    replaced = {tuple(str(row.get(k, "")) for k in PASS_KEY) for row in new}
    kept = [row for row in existing if tuple(str(row.get(k, "")) for k in PASS_KEY) not in replaced]
    merged = kept + new
    columns: list[str] = []
    for row in merged:
        columns += [key for key in row if key not in columns]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, restval="")
    writer.writeheader()
    writer.writerows(merged)
    _atomic(path, lambda tmp: Path(tmp).write_text(buffer.getvalue()))


def format_table(entries: Sequence[Mapping[str, Any]]) -> str:
    """A fixed-width table, one line per (dataset, budget)."""
    header = (
        "dataset",
        "budget",
        "n",
        "prompts",
        "avg@n",
        "pass@n",
        "tokens",
        "think",
        "solve",
        "forced",
        "trunc",
        "fmt_err",
    )
    lines = [header]
    for entry in entries:
        m = entry["metrics"]
        pass_n = m[f"pass@{m['n']}"]
        lines.append(
            (
                entry["dataset"],
                entry["budget_key"],
                str(m["n"]),
                str(m["prompts"]),
                f"{m['avg@n']:.4f}",
                f"{pass_n:.4f}",
                f"{m['mean_total_tokens']:.1f}",
                f"{m['mean_thinking_tokens']:.1f}",
                f"{m['mean_solution_tokens']:.1f}",
                f"{m['forced_close_rate']:.1%}",
                f"{m['solution_truncated_rate']:.1%}",
                f"{m['format_error_rate']:.1%}",
            )
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    rendered = [
        "  ".join(
            cell.ljust(w) if i < 2 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in lines
    ]
    rendered.insert(1, "-" * len(rendered[0]))
    return "\n".join(rendered)


def _atomic(path: Path, write: Any) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
