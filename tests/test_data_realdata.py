"""Conversion of the real benchmark files in ../shared/data/benchmarks (skipped when absent)."""

import ast
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rllm.data.cli import deepcoder_main, deepscaler_main, run
from rllm.rewards import code_format_of

BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "data" / "benchmarks"
MATH_SUFFIX = " Let's think step by step and output the final answer within \\boxed{}."
MATH_COUNTS = {"aime": 30, "amc": 83, "math": 500, "minerva": 272, "olympiad_bench": 675}
CODE_COUNTS = {"codeforces": 408, "code_contests": 165, "leetcode": 200}

pytestmark = [
    pytest.mark.realdata,
    pytest.mark.skipif(not BENCHMARKS.is_dir(), reason=f"{BENCHMARKS} not present"),
]


def _expected_answer(answer):
    if isinstance(answer, list):
        return [_expected_answer(a) for a in answer]
    if isinstance(answer, float) and answer.is_integer():
        return str(int(answer))
    return str(answer).strip()


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("data")
    assert (
        run(
            deepscaler_main,
            [
                "--data-dir",
                str(data_dir),
                "--raw-dir",
                str(BENCHMARKS),
                "--datasets",
                *MATH_COUNTS,
                "--strict",
            ],
        )
        == 0
    )
    code = [f"test_{name}" for name in CODE_COUNTS]
    assert (
        run(
            deepcoder_main,
            ["--data-dir", str(data_dir), "--raw-dir", str(BENCHMARKS), "--datasets", *code, "--strict"],
        )
        == 0
    )
    return data_dir


@pytest.mark.parametrize("name", list(MATH_COUNTS))
def test_math_benchmark(converted, name):
    raw = json.loads((BENCHMARKS / "math" / f"{name}.json").read_text())
    rows = pq.read_table(converted / "deepscaler" / f"{name}.parquet").to_pylist()
    assert len(rows) == len(raw) == MATH_COUNTS[name]
    for index, (row, record) in enumerate(zip(rows, raw, strict=True)):
        assert row["prompt"] == [{"role": "user", "content": record["problem"] + MATH_SUFFIX}]
        assert row["reward_model"] == {"style": "rule", "ground_truth": _expected_answer(record["answer"])}
        assert row["extra_info"] == {"split": "test", "index": index}
        assert (row["data_source"], row["ability"]) == (name, "math")
    assert code_format_of(name) is None


@pytest.mark.parametrize("name", list(CODE_COUNTS))
def test_code_benchmark(converted, name):
    raw = json.loads((BENCHMARKS / "code" / f"{name}.json").read_text())
    rows = pq.read_table(converted / "deepcoder" / f"test_{name}.parquet").to_pylist()
    assert len(rows) == len(raw) == CODE_COUNTS[name]
    for row, record in zip(rows, raw, strict=True):
        assert row["prompt"] == [{"role": "user", "content": record["problem"]}]
        tests = record["tests"]
        if isinstance(tests, str):
            tests = ast.literal_eval(tests)
        assert json.loads(row["reward_model"]["ground_truth"]) == tests
        assert (row["data_source"], row["ability"]) == (name, "code")
    assert code_format_of(name) == name
