"""The code grader on the real sets in ../shared/data (skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rllm.rewards.code import FORMATS, grade_code_batch
from rllm.rewards.code.problems import build_problem

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CASES = DATA / "graders" / "leetcode_cases.jsonl"
BENCHMARKS = DATA / "benchmarks" / "code"

pytestmark = [pytest.mark.realdata, pytest.mark.skipif(not DATA.is_dir(), reason=f"{DATA} not present")]


def _fenced(code: str) -> str:
    return f"</think>\n```python\n{code}\n```"


def test_all_leetcode_references_pass():
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    assert len(cases) == 200
    tasks = [
        {
            "code_format": "leetcode",
            "solution_str": _fenced(case["solution"]),
            "ground_truth": json.dumps({"functional": case["functional_test"]}),
        }
        for case in cases
    ]
    results = grade_code_batch(tasks)
    rejected = {
        case["problem_id"]: r["message"] for case, r in zip(cases, results, strict=True) if not r["acc"]
    }
    assert rejected == {}


def test_leetcode_benchmark_references_pass_and_empty_solutions_fail():
    records = json.loads((BENCHMARKS / "leetcode.json").read_text())
    good = [
        {
            "code_format": "leetcode",
            "solution_str": _fenced(r["solutions"]),
            "ground_truth": json.dumps(r["tests"]),
        }
        for r in records
    ]
    empty = [{**task, "solution_str": _fenced("class Solution:\n    pass")} for task in good[:20]]
    results = grade_code_batch(good + empty)
    assert sum(r["acc"] for r in results[: len(good)]) == len(good)
    assert not any(r["acc"] for r in results[len(good) :])


@pytest.mark.parametrize("fmt", ["codeforces", "code_contests"])
def test_stdio_benchmarks_parse(fmt):
    records = json.loads((BENCHMARKS / f"{fmt}.json").read_text())
    for record in records:
        problem = build_problem(
            fmt,
            json.dumps(record["tests"]) if not isinstance(record["tests"], str) else record["tests"],
            None,
            FORMATS[fmt].max_tests,
        )
        assert 1 <= len(problem.cases) <= 15
        assert all(case.mode == "stdio" for case in problem.cases)


def test_a_real_codeforces_problem():
    record = json.loads((BENCHMARKS / "codeforces.json").read_text())[0]
    assert "minimum of $x$ and $y$" in record["problem"]
    code = (
        "for _ in range(int(input())):\n    x, y = map(int, input().split())\n    print(min(x, y), max(x, y))"
    )
    wrong = code.replace("min(x, y), max(x, y)", "x, y")
    results = grade_code_batch(
        [
            {"code_format": "codeforces", "solution_str": _fenced(c), "ground_truth": record["tests"]}
            for c in (code, wrong)
        ]
    )
    assert [r["reason"] for r in results] == ["correct", "wrong"]
