"""Rewards with verl's ``compute_score`` signature.

verl calls ``compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)``
with keyword arguments (``reward.custom_reward_function``); the evaluation pipeline calls the same
function. Routing follows the original: the code sources below are graded by running the response's
last fenced code block in the sandbox; every other ``data_source`` (``""`` included, as in the
original's math parquet) is graded as math.

The result is a dict: ``score`` (float reward), ``acc`` (bool), ``reason`` (``correct``, ``wrong``,
``no_answer``, ``format_error``, ``timeout``, ``runtime_error``, ``compile_error``, ...), plus
grader-specific details (for code: per-test results).
"""

from __future__ import annotations

from typing import Any

CODE_SOURCES = frozenset(
    {
        "taco",
        "apps",
        "code_contests",
        "codeforces",
        "livecodebench",
        "kodcode",
        "leetcode",
        "primeintellect",
        "humanevalplus",
    }
)


def code_format_of(data_source: str) -> str | None:
    """The code format a ``data_source`` is graded with, or None for math.

    Data sources may carry a prefix or suffix (``test_livecodebench``, ``deepcoder/taco``): the
    first known code source contained in the name wins.
    """
    name = (data_source or "").lower()
    for source in sorted(CODE_SOURCES, key=len, reverse=True):
        if source in name:
            return source
    return None


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    **kwargs: Any,
) -> dict:
    """Grade one response; see the module docstring for the result's keys.

    ``kwargs`` are passed to the grader (for example ``correct_reward``, ``incorrect_reward``,
    ``require_think``); unknown ones are ignored so verl's extra keyword arguments never break a run.
    """
    code_format = code_format_of(data_source)
    if code_format is None:
        from rllm.rewards.math import grade_math

        return grade_math(solution_str, ground_truth, **kwargs)
    from rllm.rewards.code import grade_code

    return grade_code(code_format, solution_str, ground_truth, extra_info=extra_info, **kwargs)
