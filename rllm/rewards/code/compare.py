"""Output comparison, after LiveCodeBench: line-wise, whitespace-tolerant, numbers by value."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_FLOATY = re.compile(r"[.eE]")


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _number(token: str) -> Decimal | None:
    if not _NUMBER.fullmatch(token):
        return None
    try:
        return Decimal(token)
    except InvalidOperation:
        return None


def _tokens_match(actual: str, expected: str, float_tolerance: float | None) -> bool:
    got, want = actual.split(), expected.split()
    if len(got) != len(want):
        return False
    for a, e in zip(got, want, strict=True):
        if a == e:
            continue
        x, y = _number(a), _number(e)
        if x is None or y is None:
            return False
        if x == y:
            continue
        # Tolerance only between non-integers: "1000001" must never equal "1000000".
        if float_tolerance is None or not (_FLOATY.search(a) or _FLOATY.search(e)):
            return False
        if abs(x - y) > Decimal(float_tolerance) * max(Decimal(1), abs(y)):
            return False
    return True


def outputs_match(actual: str, expected: str, float_tolerance: float | None = None) -> bool:
    """Whether a program's stdout matches the expected output.

    Both are stripped and split into lines, each line stripped; the line counts must agree. Lines
    are equal as text or token by token (split on whitespace), numeric tokens by value (``1.50`` =
    ``1.5``). With ``float_tolerance`` (say 1e-6), tokens written as non-integers may also differ
    by ``tol * max(1, |expected|)`` (the usual "absolute or relative error" checker).
    """
    got, want = _lines(actual), _lines(expected)
    if len(got) != len(want):
        return False
    return all(a == e or _tokens_match(a, e, float_tolerance) for a, e in zip(got, want, strict=True))


def values_match(actual: Any, expected: Any, float_tolerance: float | None = None) -> bool:
    """Whether a function's JSON-decoded return value equals the expected value.

    Tuples were already made lists on the way out. Floats (not bools or ints) may differ by
    ``float_tolerance`` relative/absolute when it is given, recursively inside lists and dicts.
    """
    if actual == expected:
        return True
    if float_tolerance is None:
        return False
    if isinstance(actual, float) or isinstance(expected, float):
        if isinstance(actual, bool) or isinstance(expected, bool):
            return False
        if isinstance(actual, int | float) and isinstance(expected, int | float):
            return math.isclose(actual, expected, rel_tol=float_tolerance, abs_tol=float_tolerance)
        return False
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(
            values_match(a, e, float_tolerance) for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(
            values_match(actual[k], expected[k], float_tolerance) for k in actual
        )
    return False
