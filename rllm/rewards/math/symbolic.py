"""Symbolic checks with sympy, for the comparisons the in-process evaluator cannot make.

These functions can take unbounded time on hostile input (``simplify`` on a large expression,
``10^{10^{10}}``), so they are only ever called inside the worker process of :mod:`.timeout`, which
the caller kills when its deadline passes. LaTeX is parsed with ``latex2sympy2_extended`` (the
parser math-verify uses), with symbol case preserved.
"""

from __future__ import annotations

import functools
import random

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig

_CONFIG = ConversionConfig(
    interpret_as_mixed_fractions=True,
    interpret_simple_eq_as_assignment=False,
    interpret_contains_as_eq=True,
    lowercase_symbols=False,
)


@functools.lru_cache(maxsize=1024)
def to_sympy(latex: str) -> sympy.Basic:
    """Parse a normalised LaTeX answer into a sympy object (raises on syntax it cannot read).

    Cached: in RL training the same reference answer is graded for every sample of its prompt,
    and parsing is the slow part (tens of milliseconds).
    """
    return latex2sympy(latex, conversion_config=_CONFIG, normalization_config=None)


def _differ_somewhere(difference: sympy.Expr) -> bool:
    """Whether ``difference`` is clearly non-zero at some integer point (cheap falsification:
    integers also turn sums with symbolic bounds into finite ones)."""
    symbols = sorted(difference.free_symbols, key=str)
    for seed in range(2):
        rng = random.Random(seed)
        point = {symbol: rng.randint(2, 9) for symbol in symbols}
        try:
            value = complex(difference.subs(point).doit().evalf(30))
        except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
            continue
        if abs(value) > 1e-9:
            return True
    return False


def _zero(difference: sympy.Expr) -> bool:
    return not _differ_somewhere(difference) and sympy.simplify(difference) == 0


def expressions_equal(a: str, b: str) -> bool:
    """Whether two LaTeX expressions (or equations) are mathematically equal."""
    x, y = to_sympy(a), to_sympy(b)
    if x == y:
        return True
    if isinstance(x, sympy.Eq) and isinstance(y, sympy.Eq):
        x, y = x.lhs - x.rhs, y.lhs - y.rhs
        return _zero(x - y) or _zero(x + y)
    if not (isinstance(x, sympy.Expr) and isinstance(y, sympy.Expr)):
        return False
    return _zero(x - y)


def _as_set(value: sympy.Basic) -> sympy.Set:
    if isinstance(value, sympy.Set):
        return value
    if isinstance(value, sympy.Eq) and isinstance(value.rhs, sympy.Set):
        return value.rhs
    if isinstance(value, sympy.Tuple) and len(value) == 2:
        return sympy.Interval.open(*value)
    if isinstance(value, (sympy.core.relational.Relational, sympy.And, sympy.Or)):
        return value.as_set()
    raise ValueError("not a set of reals")


def sets_equal(a: str, b: str) -> bool:
    """Whether two answers (intervals, unions, inequalities) describe the same set of reals."""
    return _as_set(to_sympy(a)) == _as_set(to_sympy(b))


OPERATIONS = {"expressions_equal": expressions_equal, "sets_equal": sets_equal}
