"""``grade_math``: the reward for one math response against its reference answer(s)."""

from __future__ import annotations

import logging
import numbers
import re
import time
from collections.abc import Iterable
from typing import Any

from rllm.rewards.math.equivalence import answers_equal
from rllm.rewards.math.extract import answer_of, last_boxed
from rllm.rewards.math.timeout import CheckTimeout, WorkerFailed, WorkerPool, default_pool

_log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 1.5
MAX_SYMBOLIC_LENGTH = 600

# sympy evaluates 10^{10^{10}} or 100000! eagerly and never returns: such input is not sent at all.
_TOO_BIG_FOR_SYMPY = re.compile(r"\^\s*\{[^{}]*\^|\^\s*\{?\s*\d{4,}|\d{4,}\s*!")


class WorkerOracle:
    """Symbolic checks in the worker pool, all sharing one deadline."""

    def __init__(self, pool: WorkerPool, deadline: float) -> None:
        self.pool = pool
        self.deadline = deadline
        self.timed_out = False

    def _call(self, op: str, a: str, b: str) -> bool | None:
        if self.timed_out:
            return None
        if any(len(s) > MAX_SYMBOLIC_LENGTH or _TOO_BIG_FOR_SYMPY.search(s) for s in (a, b)):
            return None
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            self.timed_out = True
            return None
        try:
            return self.pool.call(op, [a, b], remaining)
        except CheckTimeout:
            self.timed_out = True
        except WorkerFailed:
            pass
        return None

    def expressions_equal(self, a: str, b: str) -> bool | None:
        return self._call("expressions_equal", a, b)

    def sets_equal(self, a: str, b: str) -> bool | None:
        return self._call("sets_equal", a, b)


def reference_answers(ground_truth: Any) -> list[str]:
    """The accepted answers in ``ground_truth``: a string (boxed or not), a number, or a list,
    tuple or array of them. Raises TypeError/ValueError with a one-line message otherwise."""
    if isinstance(ground_truth, str):
        boxed = last_boxed(ground_truth) if "\\boxed" in ground_truth or "\\fbox" in ground_truth else None
        return [boxed if boxed is not None else ground_truth]
    if isinstance(ground_truth, bool):
        raise TypeError("ground_truth must be a string, a number or a list of them, not bool")
    if isinstance(ground_truth, numbers.Integral):
        return [str(int(ground_truth))]
    if isinstance(ground_truth, numbers.Real):
        value = float(ground_truth)
        return [str(int(value)) if value.is_integer() else repr(value)]
    if hasattr(ground_truth, "tolist") and not isinstance(ground_truth, (bytes, dict)):
        ground_truth = ground_truth.tolist()  # numpy arrays and scalars, as parquet loads them
        if not isinstance(ground_truth, list):
            return reference_answers(ground_truth)
    if isinstance(ground_truth, Iterable) and not isinstance(ground_truth, (bytes, dict)):
        answers = [answer for item in ground_truth for answer in reference_answers(item)]
        if not answers:
            raise ValueError("ground_truth is an empty list: give at least one reference answer")
        return answers
    raise TypeError(
        f"ground_truth must be a string, a number or a list of them, not {type(ground_truth).__name__}"
    )


def grade_math(
    solution_str: str,
    ground_truth: Any,
    *,
    require_think: bool = False,
    correct_reward: float = 1.0,
    incorrect_reward: float = 0.0,
    format_error_reward: float | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    **_: Any,
) -> dict:
    """Grade a math response: its last boxed answer against every reference answer.

    Returns ``{"score", "acc", "reason", "extracted"}`` where ``reason`` is ``correct``, ``wrong``,
    ``no_answer`` (no complete ``\\boxed{}``), ``format_error`` (``require_think`` and no
    ``</think>``) or ``timeout`` (the symbolic check needed for a verdict ran past ``timeout``
    seconds; scored as wrong). Unknown keyword arguments are ignored. Safe to call from threads,
    process pools and Ray workers.
    """
    if not isinstance(solution_str, str):
        raise TypeError(f"solution_str must be a string, not {type(solution_str).__name__}")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    references = reference_answers(ground_truth)
    answer, problem = answer_of(solution_str, require_think)
    if problem is not None:
        # As the original: a missing answer is scored like a format error.
        score = incorrect_reward if format_error_reward is None else format_error_reward
        return {"score": float(score), "acc": False, "reason": problem, "extracted": None}
    oracle = WorkerOracle(default_pool(), time.monotonic() + timeout)
    for reference in references:
        try:
            equal = answers_equal(answer, reference, oracle)
        except Exception:  # one odd answer must not end a multi-day training run
            _log.warning(
                "math grader failed on %r vs %r; counted as wrong",
                answer[:200],
                reference[:200],
                exc_info=True,
            )
            equal = False
        if equal:
            return {"score": float(correct_reward), "acc": True, "reason": "correct", "extracted": answer}
    reason = "timeout" if oracle.timed_out else "wrong"
    return {"score": float(incorrect_reward), "acc": False, "reason": reason, "extracted": answer}


def warm_up(wait: bool = False) -> None:
    """Start a symbolic worker now, so the first check that needs sympy does not wait for it.

    With ``wait``, block until it is ready (about a second: the import of sympy).
    """
    default_pool().start(wait)
