"""Metrics: unbiased pass@k against brute-force enumeration, and summaries of hand-made samples."""

from __future__ import annotations

import itertools
import math

import pytest

from rllm.eval.metrics import k_values, pass_at_k, summarize


def brute_force_pass_at_k(outcomes: list[bool], k: int) -> float:
    """The fraction of size-k subsets of the samples that contain a correct one."""
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_pass_at_k_matches_enumeration(n):
    for c in range(n + 1):
        outcomes = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_force_pass_at_k(outcomes, k), abs=1e-12)


def test_pass_at_k_is_stable_for_large_n():
    # C(1024, 512) overflows a float; the product form must still give the exact value.
    value = pass_at_k(1024, 3, 512)
    exact = 1 - math.comb(1021, 512) / math.comb(1024, 512)
    assert value == pytest.approx(exact, rel=1e-12)
    assert pass_at_k(1024, 0, 512) == 0.0
    assert pass_at_k(1024, 1024, 1) == 1.0
    assert pass_at_k(16, 5, 1) == pytest.approx(5 / 16)


@pytest.mark.parametrize("args", [(4, 5, 1), (4, -1, 1), (4, 2, 0), (4, 2, 5)])
def test_pass_at_k_rejects_impossible_arguments(args):
    with pytest.raises(ValueError):
        pass_at_k(*args)


def test_k_values_are_powers_of_two_then_n():
    assert k_values(1) == [1]
    assert k_values(16) == [1, 2, 4, 8, 16]
    assert k_values(6) == [1, 2, 4, 6]


def sample(
    prompt, index, acc, *, source="aime", reason=None, thinking=10, solution=5, forced=False, truncated=False
):
    return {
        "prompt_index": prompt,
        "sample_index": index,
        "acc": acc,
        "reason": reason or ("correct" if acc else "wrong"),
        "data_source": source,
        "total_tokens": thinking + solution + 1,
        "thinking_tokens": thinking,
        "solution_tokens": solution,
        "forced_close": forced,
        "solution_truncated": truncated,
    }


def test_summary_of_known_samples():
    samples = [
        # prompt 0: 3 of 4 correct
        sample(0, 0, True, thinking=100, forced=True),
        sample(0, 1, True),
        sample(0, 2, False, reason="no_answer", truncated=True),
        sample(0, 3, True),
        # prompt 1 (another source): none correct
        sample(1, 0, False, source="amc", thinking=20),
        sample(1, 1, False, source="amc", reason="format_error"),
        sample(1, 2, False, source="amc"),
        sample(1, 3, False, source="amc", forced=True),
    ]
    m = summarize(samples, n=4)
    assert m["prompts"] == 2 and m["samples"] == 8 and m["n"] == 4
    assert m["avg@n"] == pytest.approx((3 / 4 + 0) / 2)
    assert m["pass@1"] == pytest.approx(m["avg@n"])
    assert m["pass@2"] == pytest.approx((brute_force_pass_at_k([1, 1, 0, 1], 2) + 0) / 2)
    assert m["pass@4"] == pytest.approx(0.5)
    assert m["mean_thinking_tokens"] == pytest.approx((100 + 10 * 5 + 20 + 10) / 8)
    assert m["median_thinking_tokens"] == 10.0
    assert m["mean_total_tokens"] == pytest.approx(m["mean_thinking_tokens"] + 5 + 1)
    assert m["forced_close_rate"] == pytest.approx(2 / 8)
    assert m["solution_truncated_rate"] == pytest.approx(1 / 8)
    assert m["format_error_rate"] == pytest.approx(2 / 8)
    assert m["reasons"] == {"correct": 3, "format_error": 1, "no_answer": 1, "wrong": 3}
    by_source = m["by_data_source"]
    assert set(by_source) == {"aime", "amc"}
    assert by_source["aime"]["avg@n"] == pytest.approx(0.75)
    assert by_source["amc"]["pass@4"] == 0.0


def test_summary_refuses_incomplete_prompts():
    with pytest.raises(ValueError, match="do not have n=2 samples"):
        summarize([sample(0, 0, True), sample(0, 1, True), sample(1, 0, False)], n=2)
