"""The math grader's goal on the shared grader sets in ../shared/data/graders (skipped when absent):
accuracy >= 99% with zero false positives, no case slower than 2 s. Throughput against math-verify
is measured by benchmarks/math_grader.py, not here (timing ratios do not belong in a test)."""

import json
import time
from pathlib import Path

import pytest

from rllm.rewards.math import grade_math, warm_up

GRADERS = Path(__file__).resolve().parents[2] / "shared" / "data" / "graders"
SETS = ["math_cases.jsonl", "math500_variants.jsonl"]
SLOWEST_SECONDS = 2.0

pytestmark = [
    pytest.mark.realdata,
    pytest.mark.skipif(not GRADERS.is_dir(), reason=f"{GRADERS} not present"),
]


@pytest.mark.parametrize("name", SETS)
def test_accuracy_and_no_false_positives(name):
    cases = [json.loads(line) for line in (GRADERS / name).read_text().splitlines() if line.strip()]
    warm_up(wait=True)
    false_positives, false_negatives, slow = [], [], []
    for case in cases:
        start = time.monotonic()
        verdict = grade_math(f"\\boxed{{{case['pred']}}}", case["gold"])["acc"]
        if time.monotonic() - start > SLOWEST_SECONDS:
            slow.append(case)
        if verdict and not case["equal"]:
            false_positives.append(case)
        elif not verdict and case["equal"]:
            false_negatives.append(case)
    accuracy = 1 - (len(false_positives) + len(false_negatives)) / len(cases)
    assert not false_positives, false_positives
    assert accuracy >= 0.99, false_negatives
    assert not slow, slow
