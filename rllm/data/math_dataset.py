"""Math datasets (DeepScaleR train, the five math benchmarks) -> verl RL parquet.

Raw records need ``problem`` (string) and ``answer``: a string, a number (AMC stores floats), or a
list of acceptable answers (Minerva, OlympiadBench). The ground truth is the answer as text with
surrounding whitespace removed; integral floats are written without the ``.0`` (``142.0`` ->
``"142"``) so string-level comparison in the grader works as well as numeric comparison; lists
stay lists of strings. ``data_source`` is the benchmark name (``deepscaler`` for training data):
none of them contains a code source name, so the reward router grades them all as math.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

from rllm.data.prompts import math_prompt
from rllm.data.to_parquet import Part, rl_row
from rllm.data.validate import RecordError, require_mapping, require_text

TEST_SETS = ("aime", "amc", "math", "minerva", "olympiad_bench")
TRAIN_NAME = "deepscaler_train"
TRAIN_SOURCE = "deepscaler"
# The original's training file (rllm/data/train/math/deepscaler.json, DeepScaleR-Preview's set).
TRAIN_RAW = "train/math/deepscaler.json"


@dataclass(frozen=True)
class MathItem:
    problem: str
    answer: str | list[str]


def check_math_record(record: Any) -> MathItem:
    """Validate one raw math record; raises :class:`RecordError` if it cannot be used."""
    record = require_mapping(record)
    problem = require_text(record, "problem")
    if record.get("answer") is None:
        raise RecordError("missing_field", "no 'answer' field")
    return MathItem(problem, normalize_answer(record["answer"]))


def normalize_answer(value: Any) -> str | list[str]:
    """An answer as stripped text, or a list of them; ``empty_answer``/``wrong_type`` otherwise."""
    if isinstance(value, list):
        if not value:
            raise RecordError("empty_answer", "'answer' is an empty list")
        return [_answer_text(v, f"'answer[{i}]'") for i, v in enumerate(value)]
    return _answer_text(value, "'answer'")


def _answer_text(value: Any, what: str) -> str:
    # bool is an int subclass; a true/false answer is a data error, not the number 1/0.
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RecordError("wrong_type", f"{what} is a {type(value).__name__}, expected a string or number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError("wrong_type", f"{what} is {value}")
        text = str(int(value)) if value.is_integer() else repr(value)
    else:
        text = str(value).strip()
    if not text:
        raise RecordError("empty_answer", f"{what} is empty")
    return text


def _math_row(item: MathItem, index: int, *, data_source: str, split: str) -> dict:
    return rl_row(
        data_source=data_source,
        content=math_prompt(item.problem),
        ability="math",
        ground_truth=item.answer,
        split=split,
        index=index,
    )


def math_part(key: str, data_source: str, split: str, raw: str) -> Part:
    """A math input file whose rows carry ``data_source`` and ``split``."""
    return Part(key, raw, check_math_record, partial(_math_row, data_source=data_source, split=split))


OUTPUTS: dict[str, list[Part]] = {
    **{name: [math_part(name, name, "test", f"test/math/{name}.json")] for name in TEST_SETS},
    TRAIN_NAME: [math_part(TRAIN_NAME, TRAIN_SOURCE, "train", TRAIN_RAW)],
}
DEFAULT_OUTPUTS = (*TEST_SETS, TRAIN_NAME)
