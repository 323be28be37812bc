"""``grade_code``: extract the response's program, run it against the tests in the sandbox."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .extract import extract_code
from .formats import FORMATS, FormatSpec
from .problems import CASES, PYTEST, GroundTruthError, Problem, TestCase, build_problem
from .sandbox import ForkServer, RunResult, SandboxConfig, SandboxError, get_pool
from .verdict import Verdict, judge_case, judge_program

#: A fork server that dies mid-job is restarted and the job retried this many times.
SANDBOX_RETRIES = 1


def _result(
    passed: bool, reason: str, message: str, correct_reward: float, incorrect_reward: float, **details: Any
) -> dict:
    return {
        "score": float(correct_reward if passed else incorrect_reward),
        "acc": passed,
        "reason": reason,
        "message": message,
        **details,
    }


def _run(server: ForkServer, job: dict) -> RunResult | Verdict:
    """Run a job; a ``sandbox_error`` verdict if the fork server fails on every attempt."""
    error: SandboxError | None = None
    for _ in range(1 + SANDBOX_RETRIES):
        try:
            return server.run(dict(job))
        except SandboxError as exc:  # the server restarts itself on the next run
            error = exc
    return Verdict(False, "sandbox_error", str(error)[:500])


def _case_job(case: TestCase, code: str, time_limit: float) -> dict:
    job = {"code": code, "time_limit": time_limit, "preamble": True}
    if case.mode == "stdio":
        job.update(mode="script", stdin=case.stdin)
    else:
        job.update(mode="call", func_name=case.func_name, args=json.dumps(case.args))
    return job


def _detail(index: int, verdict: Verdict, run: RunResult | None) -> dict:
    detail = {"index": index, "passed": verdict.passed, "reason": verdict.reason, "message": verdict.message}
    if run is not None:
        detail.update(
            time=round(run.wall, 4), cpu=round(run.cpu, 4), exit_code=run.exit_code, signal=run.signal
        )
    return detail


def _grade(
    server: ForkServer, problem: Problem, code: str, spec: FormatSpec, time_limit: float
) -> list[dict]:
    """Per-test details, stopping at the first failure."""
    details = []
    if problem.kind == CASES:
        for case in problem.cases:
            nonce = secrets.token_hex(16)
            outcome = _run(server, {**_case_job(case, code, time_limit), "nonce": nonce})
            if isinstance(outcome, Verdict):
                details.append(_detail(case.index, outcome, None))
                break
            verdict = judge_case(case, outcome, nonce, spec.float_tolerance)
            details.append(_detail(case.index, verdict, outcome))
            if not verdict.passed:
                break
        return details
    nonce = secrets.token_hex(16)
    job = {
        "mode": "pytest" if problem.kind == PYTEST else "check",
        "code": code,
        "test_code": problem.test_code,
        "time_limit": time_limit * problem.units,
        "preamble": problem.kind != PYTEST,
        "nonce": nonce,
    }
    outcome = _run(server, job)
    verdict = outcome if isinstance(outcome, Verdict) else judge_program(outcome, nonce)
    return [_detail(0, verdict, None if isinstance(outcome, Verdict) else outcome)]


def grade_code(
    code_format: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    *,
    correct_reward: float = 1.0,
    incorrect_reward: float = 0.0,
    timeout_per_test: float | None = None,
    max_tests: int | None = None,
    sandbox: SandboxConfig | None = None,
    **_ignored: Any,
) -> dict:
    """Grade one response on one problem: all tests must pass (stopping at the first failure).

    code_format: one of ``FORMATS`` (taco, apps, code_contests, codeforces, livecodebench,
        kodcode, leetcode, primeintellect, humanevalplus).
    solution_str: the model's response; its last fenced code block is the program.
    ground_truth: the format's raw tests, JSON-encoded (as in the parquet), a Python-literal
        string (Codeforces) or already decoded.
    timeout_per_test: seconds per test (see ``FormatSpec.time_limit``); default: the format's.
    max_tests: cap on test cases (the longest inputs are kept); default: the format's; 0 = all.
    sandbox: limits and importable modules (default ``SandboxConfig()``).
    Unknown keyword arguments are ignored (verl passes its own).

    Returns ``{"score", "acc", "reason", "message", "tests": [per-test details], ...}``; ``reason`` is
    ``correct``, ``wrong``, ``no_code``, ``format_error``, ``compile_error``, ``runtime_error``,
    ``timeout``, ``memory_limit``, ``output_limit`` or ``sandbox_error``. Never raises on bad input.
    """
    rewards = (correct_reward, incorrect_reward)
    spec = FORMATS.get(code_format)
    if spec is None:
        known = ", ".join(sorted(FORMATS))
        return _result(
            False, "format_error", f"unknown code format {code_format!r} (known: {known})", *rewards, tests=[]
        )
    code = extract_code(solution_str)
    if code is None:
        return _result(False, "no_code", "no fenced code block in the response", *rewards, tests=[])
    cap = spec.max_tests if max_tests is None else (max_tests or None)
    try:
        problem = build_problem(
            code_format, ground_truth, extra_info if isinstance(extra_info, dict) else None, cap
        )
    except GroundTruthError as exc:
        return _result(False, "format_error", str(exc), *rewards, tests=[])
    time_limit = float(timeout_per_test if timeout_per_test is not None else spec.time_limit)
    with get_pool(sandbox).server() as server:
        details = _grade(server, problem, code, spec, time_limit)
    failed = next((d for d in details if not d["passed"]), None)
    passed = failed is None and bool(details)
    reason = "correct" if passed else (failed["reason"] if failed else "format_error")
    message = "" if passed else (failed["message"] if failed else "no tests")
    return _result(
        passed,
        reason,
        message,
        *rewards,
        tests=details,
        num_tests=problem.total_cases,
        num_run=len(details),
        format=code_format,
    )


def grade_code_batch(
    tasks: Iterable[Mapping[str, Any]],
    *,
    workers: int | None = None,
    sandbox: SandboxConfig | None = None,
    **kwargs: Any,
) -> list[dict]:
    """Grade many responses in parallel, one problem per fork server; results in input order.

    Each task is a mapping with ``code_format``, ``solution_str``, ``ground_truth`` and optionally
    ``extra_info``; ``kwargs`` go to every ``grade_code`` call. ``workers`` (default: the sandbox's,
    i.e. the number of CPUs) is the number of programs running at once.
    """
    config = sandbox or SandboxConfig()
    if workers:
        config = config.with_(workers=workers)
    tasks = list(tasks)

    def one(task: Mapping[str, Any]) -> dict:
        return grade_code(
            task["code_format"],
            task["solution_str"],
            task["ground_truth"],
            task.get("extra_info"),
            sandbox=config,
            **kwargs,
        )

    with ThreadPoolExecutor(max_workers=config.worker_count) as executor:
        return list(executor.map(one, tasks))
