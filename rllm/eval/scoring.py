"""Grading samples concurrently with generation.

:class:`ScoringPool` runs a ``compute_score``-shaped function in a pool of threads. Submissions
return immediately; the callback fires in a pool thread when the grade is ready, so the caller
can store each sample as soon as it is graded while the engine keeps generating.

Why threads and not processes: both graders already isolate their heavy work in processes of
their own (the math grader's sympy worker with its kill-on-deadline timeout, the code grader's
sandbox fork servers), so a grading thread mostly waits; the in-thread part of math grading is
about 0.1 ms per answer. Spawned grader processes re-import the package (seconds of CPU each)
and fight the engine for the cores of a small machine: measured with
``benchmarks/eval_pipeline.py``, they cost more than all the grading they did.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from rllm.rewards import compute_score

ScoreFn = Callable[..., dict]
Callback = Callable[[dict[str, Any]], None]

GRADER_ERROR = "grader_error"


def grade(
    score_fn: ScoreFn, data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None
) -> dict[str, Any]:
    """Call ``score_fn`` and normalise its result to ``{"score", "acc", "reason", "details"}``.

    A grader exception is not a wrong answer: it yields ``reason="grader_error"`` (score 0) with
    the message in ``details``, so it is counted and reported rather than silently zeroed.
    """
    try:
        result = score_fn(
            data_source=data_source,
            solution_str=solution_str,
            ground_truth=ground_truth,
            extra_info=extra_info,
        )
    except Exception as exc:  # any grader bug must surface as a counted grader_error
        return {"score": 0.0, "acc": False, "reason": GRADER_ERROR, "details": {"error": repr(exc)}}
    if isinstance(result, int | float):
        result = {"score": float(result), "acc": float(result) > 0}
    score = float(result.get("score", 0.0))
    if math.isnan(score):
        score = 0.0
    details = {k: v for k, v in result.items() if k not in ("score", "acc", "reason")}
    acc = bool(result.get("acc", score > 0))
    return {
        "score": score,
        "acc": acc,
        "reason": str(result.get("reason", "correct" if acc else "wrong")),
        "details": details,
    }


class ScoringPool:
    """A pool of ``workers`` grading threads (``workers=0``: grade inline, in the caller's thread)."""

    def __init__(self, workers: int, score_fn: ScoreFn = compute_score):
        self.workers = workers
        self.score_fn = score_fn
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending: set[Future] = set()
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="grader") if workers > 0 else None

    def submit(
        self,
        data_source: str,
        solution_str: str,
        ground_truth: Any,
        extra_info: dict | None,
        callback: Callback,
    ) -> None:
        """Grade one response; ``callback(result)`` runs once with the :func:`grade` result."""
        args = (self.score_fn, data_source, solution_str, ground_truth, extra_info)
        if self._executor is None:
            callback(grade(*args))
            return
        with self._lock:
            future = self._executor.submit(grade, *args)
            self._pending.add(future)
        future.add_done_callback(lambda done: self._finish(done, callback))

    def _finish(self, future: Future, callback: Callback) -> None:
        try:
            if not future.cancelled():  # dropped by close(cancel=True): an in-flight sample, not a result
                callback(future.result())  # grade() never raises: grader failures are results
        finally:
            with self._lock:
                self._pending.discard(future)
                self._idle.notify_all()

    def wait(self) -> None:
        """Block until every submission's callback has run."""
        with self._lock:
            while self._pending:
                self._idle.wait()

    def close(self, cancel: bool = False) -> None:
        """Stop the workers; ``cancel=True`` drops queued grades (used on Ctrl-C)."""
        if self._executor is not None:
            self._executor.shutdown(wait=not cancel, cancel_futures=cancel)

    def __enter__(self) -> ScoringPool:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(cancel=exc_type is not None)
