"""Per-format grading defaults (the original's where it had one)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FormatSpec:
    """How one code format is graded.

    time_limit: seconds per test case; for ``humanevalplus`` per input of the check program, for
        ``kodcode`` per test function, for ``leetcode`` for the whole check program.
    max_tests: run at most this many test cases, the ones with the longest inputs (None: all).
    float_tolerance: tolerance for non-integer numbers in outputs (None: exact by value).
    """

    time_limit: float
    max_tests: int | None = None
    float_tolerance: float | None = None


_STDIO_FAMILY = FormatSpec(time_limit=12.0, max_tests=15, float_tolerance=1e-6)

FORMATS: dict[str, FormatSpec] = {
    "taco": _STDIO_FAMILY,
    "apps": _STDIO_FAMILY,
    "code_contests": _STDIO_FAMILY,
    "codeforces": _STDIO_FAMILY,
    "primeintellect": _STDIO_FAMILY,
    "livecodebench": FormatSpec(time_limit=6.0),
    "leetcode": FormatSpec(time_limit=30.0),
    "humanevalplus": FormatSpec(time_limit=1.0),
    "kodcode": FormatSpec(time_limit=5.0),
}
