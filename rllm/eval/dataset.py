"""Evaluation datasets: a verl RL parquet file read into prompts and grading inputs.

A row needs ``prompt`` (chat messages ``[{"role", "content"}, ...]``) and ``reward_model``
(``{"ground_truth": ...}``); ``data_source`` and ``extra_info`` are optional (math grading is the
default route, as in the original).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rllm.data.errors import DataError
from rllm.data.paths import find_dataset


@dataclass(frozen=True)
class EvalItem:
    """One problem: what the model is asked and what its answers are graded against."""

    index: int
    prompt: list[dict[str, str]]
    data_source: str
    ground_truth: Any
    extra_info: dict[str, Any]


@dataclass
class EvalDataset:
    """A dataset resolved by name, its rows (after ``limit``) and a hash of the file's bytes."""

    name: str
    path: Path
    frame: pd.DataFrame
    items: list[EvalItem]
    content_hash: str

    @property
    def size(self) -> int:
        return len(self.items)


def load_dataset(name: str, data_dir: Path | str | None = None, limit: int | None = None) -> EvalDataset:
    """Resolve ``name`` with :func:`rllm.data.paths.find_dataset` and read its first ``limit`` rows.

    Raises:
        DataError: unknown dataset (the message lists what is available), unreadable file,
            missing columns or malformed prompts; the message names the file and row.
    """
    path = find_dataset(name, data_dir)
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise DataError(f"cannot read {path}: {exc}") from exc
    missing = [column for column in ("prompt", "reward_model") if column not in frame.columns]
    if missing:
        raise DataError(f"{path} is not a verl RL parquet: missing column(s) {', '.join(missing)}")
    if limit is not None:
        frame = frame.iloc[:limit]
    frame = frame.reset_index(drop=True)
    if frame.empty:
        raise DataError(f"{path} has no rows to evaluate")
    items = [_item(path, i, row) for i, row in enumerate(frame.to_dict("records"))]
    stem = path.name.removesuffix(".parquet")
    return EvalDataset(name=stem, path=path, frame=frame, items=items, content_hash=file_sha256(path))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _item(path: Path, index: int, row: dict[str, Any]) -> EvalItem:
    messages = plain(row["prompt"])
    if (
        not isinstance(messages, list)
        or not messages
        or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages
        )
    ):
        raise DataError(
            f"{path} row {index}: 'prompt' must be a non-empty list of {{role, content}} messages"
        )
    reward_model = plain(row["reward_model"])
    if not isinstance(reward_model, dict) or "ground_truth" not in reward_model:
        raise DataError(f"{path} row {index}: 'reward_model' has no 'ground_truth'")
    extra_info = plain(row.get("extra_info")) or {}
    data_source = row.get("data_source")
    return EvalItem(
        index=index,
        prompt=messages,
        data_source="" if data_source is None else str(data_source),
        ground_truth=reward_model["ground_truth"],
        extra_info=extra_info if isinstance(extra_info, dict) else {},
    )


def plain(value: Any) -> Any:
    """Parquet values as plain Python: numpy arrays become lists (recursively), NaN-free."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
