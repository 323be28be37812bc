"""One sandbox run -> one test verdict (``reason`` and a short message)."""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from typing import Any

from .compare import outputs_match, values_match
from .problems import TestCase
from .sandbox import RunResult

PREVIEW = 200


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str
    message: str = ""


def completion_report(run: RunResult, nonce: str) -> dict | None:
    """The driver's report, or None if absent or not ours (the program ended the interpreter early
    or wrote to the report descriptor itself)."""
    try:
        report = json.loads(run.result)
    except ValueError:
        return None
    if not isinstance(report, dict) or report.get("nonce") != nonce:
        return None
    return report


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _failure(run: RunResult, report: dict | None) -> Verdict | None:
    """The verdict if the run failed before its output could be judged, else None."""
    if run.timed_out or run.signal == signal.SIGXCPU:
        return Verdict(
            False, "timeout", f"time limit exceeded after {run.wall:.2f} s wall / {run.cpu:.2f} s CPU"
        )
    if run.output_truncated or run.signal == signal.SIGXFSZ:
        return Verdict(False, "output_limit", "output or file size limit exceeded")
    status = report.get("status") if report else None
    if status == "compile_error":
        return Verdict(False, "compile_error", f"{report.get('exception')}: {report.get('message')}")
    if (report and report.get("exception") == "MemoryError") or run.stderr.rstrip().endswith("MemoryError"):
        return Verdict(False, "memory_limit", "memory limit exceeded")
    if run.signal is not None:
        return Verdict(False, "runtime_error", f"killed by {_signal_name(run.signal)}")
    if status == "test_error":
        return Verdict(False, "format_error", f"the test program is invalid: {report.get('message')}")
    if status in ("runtime_error", "missing_function"):
        return Verdict(
            False, "runtime_error", f"{report.get('exception', '')}: {report.get('message')}".lstrip(": ")
        )
    if status == "early_exit":
        return Verdict(False, "runtime_error", "the program exited before the tests finished")
    if run.exit_code != 0:
        tail = run.stderr.strip().splitlines()[-1:] or [""]
        return Verdict(False, "runtime_error", f"exit code {run.exit_code}: {tail[0][:PREVIEW]}")
    return None


def judge_case(case: TestCase, run: RunResult, nonce: str, float_tolerance: float | None) -> Verdict:
    """Verdict of a stdio or call-based test case."""
    report = completion_report(run, nonce)
    failure = _failure(run, report)
    if failure:
        return failure
    if case.mode == "stdio":
        if outputs_match(run.stdout, case.expected, float_tolerance):
            return Verdict(True, "correct")
        return Verdict(False, "wrong", f"expected {case.expected[:PREVIEW]!r}, got {run.stdout[:PREVIEW]!r}")
    if report is None:
        return Verdict(
            False, "runtime_error", "no completion report: the program ended the interpreter early"
        )
    if report.get("status") == "unserializable":
        return Verdict(False, "wrong", f"returned a value that is not JSON data: {report.get('message')}")
    expected = case.expected
    try:
        value: Any = json.loads(report["value"])
        matched = values_match(value, expected, float_tolerance) or (
            case.unwrap_list
            and isinstance(expected, list)
            and len(expected) == 1
            and values_match(value, expected[0], float_tolerance)
        )
    except (ValueError, TypeError, KeyError, RecursionError):  # a value nested beyond reason
        matched = False
    if matched:
        return Verdict(True, "correct")
    return Verdict(
        False, "wrong", f"expected {json.dumps(expected)[:PREVIEW]}, got {str(report.get('value'))[:PREVIEW]}"
    )


def judge_program(run: RunResult, nonce: str) -> Verdict:
    """Verdict of a check program or pytest module: it must report success, with our nonce."""
    report = completion_report(run, nonce)
    failure = _failure(run, report)
    if failure:
        return failure
    if report is None:
        return Verdict(
            False, "runtime_error", "no completion report: the program ended the interpreter early"
        )
    if report.get("status") == "wrong":
        failed = [line for line in run.stdout.splitlines() if line.startswith("FAILED ")]
        message = (
            report.get("message") or report.get("exception") or (failed[0] if failed else "pytest failure")
        )
        return Verdict(False, "wrong", f"a test failed: {message}"[:PREVIEW])
    if report.get("status") != "ok":
        return Verdict(False, "runtime_error", f"unexpected report {report.get('status')!r}")
    return Verdict(True, "correct")
