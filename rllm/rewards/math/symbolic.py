"""Symbolic checks with sympy, for the comparisons the in-process evaluator cannot make.

These functions can take unbounded time on hostile input (``simplify`` on a large expression,
``10^{10^{10}}``), so they are only ever called inside the worker process of :mod:`.timeout`, which
the caller kills when its deadline passes. LaTeX is parsed with ``latex2sympy2_extended`` (the
parser math-verify uses), with symbol case preserved.
"""

from __future__ import annotations

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig

_CONFIG = ConversionConfig(
    interpret_as_mixed_fractions=True,
    interpret_simple_eq_as_assignment=False,
    interpret_contains_as_eq=True,
    lowercase_symbols=False,
)


def to_sympy(latex: str) -> sympy.Basic:
    """Parse a normalised LaTeX answer into a sympy object (raises on syntax it cannot read)."""
    return latex2sympy(latex, conversion_config=_CONFIG, normalization_config=None)


def expressions_equal(a: str, b: str) -> bool:
    """Whether two LaTeX expressions (or equations) are mathematically equal."""
    x, y = to_sympy(a), to_sympy(b)
    if x == y:
        return True
    if isinstance(x, sympy.Eq) and isinstance(y, sympy.Eq):
        x, y = x.lhs - x.rhs, y.lhs - y.rhs
        if sympy.simplify(x - y) == 0 or sympy.simplify(x + y) == 0:
            return True
        return False
    if not (isinstance(x, sympy.Expr) and isinstance(y, sympy.Expr)):
        return False
    return sympy.simplify(x - y) == 0


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
