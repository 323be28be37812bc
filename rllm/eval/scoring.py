"""Grading samples concurrently with generation.

:class:`ScoringPool` runs a ``compute_score``-shaped function in worker processes (the code
grader runs sandboxed subprocesses and may take seconds; the math grader is CPU-bound Python and
would fight generation for the GIL in a thread). Submissions return immediately; the callback
fires in a pool thread when the grade is ready, so the caller can store each sample as soon as it
is graded while the engine keeps generating.

Workers are started with ``spawn``: the parent holds torch/vLLM threads, and forking a
multi-threaded process can deadlock the child.
"""

from __future__ import annotations

import math
import multiprocessing
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
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


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C (sent to the whole foreground process group) to the parent, which
    stops them; otherwise every worker would print its own KeyboardInterrupt traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class ScoringPool:
    """A pool of ``workers`` grader processes (``workers=0``: grade inline, in the caller's thread).

    A worker that dies (for example killed by the OOM killer) breaks a ``ProcessPoolExecutor``; the
    pool is then restarted and the lost submissions retried once before they count as grader errors.
    """

    def __init__(self, workers: int, score_fn: ScoreFn = compute_score):
        self.workers = workers
        self.score_fn = score_fn
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._pending: set[Future] = set()
        self._idle = threading.Condition(self._lock)

    def _ensure_executor(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self._executor

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
        if self.workers == 0:
            callback(grade(*args))
            return
        self._submit(args, callback, retries=1)

    def _submit(self, args: tuple, callback: Callback, retries: int) -> None:
        with self._lock:
            executor = self._ensure_executor()
            try:
                future = executor.submit(grade, *args)
            except BrokenProcessPool:
                self._executor = None
                executor = self._ensure_executor()
                future = executor.submit(grade, *args)
            self._pending.add(future)
        future.add_done_callback(lambda done: self._finish(done, executor, args, callback, retries))

    def _finish(
        self, future: Future, executor: ProcessPoolExecutor, args: tuple, callback: Callback, retries: int
    ) -> None:
        try:
            if future.cancelled():  # dropped by close(cancel=True): an in-flight sample, not a result
                return
            error = future.exception()
            if error is None:
                callback(future.result())
            elif isinstance(error, BrokenProcessPool) and retries > 0:
                with self._lock:
                    if self._executor is executor:
                        self._executor = None
                self._submit(args, callback, retries - 1)
            else:
                callback(
                    {"score": 0.0, "acc": False, "reason": GRADER_ERROR, "details": {"error": repr(error)}}
                )
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
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=not cancel, cancel_futures=cancel)

    def __enter__(self) -> ScoringPool:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.close(cancel=exc_type is not None)
