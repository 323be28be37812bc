"""Inequalities as sets of reals: ``5 \\ge x``, ``-x > -1``, ``1 \\le |z| \\le 2``.

``solution_set`` turns a chain of ``<``/``\\le``/``>``/``\\ge`` around one non-constant term into
that term and the intervals it ranges over, as :class:`~.structure.Group` intervals that compare
like any written interval. Orientation is normalised, a negated term flips its bounds and an
absolute value unfolds into two intervals; anything else (``x^2 < 4``) is left to sympy.
"""

from __future__ import annotations

import re

from rllm.rewards.math import expr
from rllm.rewards.math.structure import Group, Relation

INEQUALITIES = frozenset({"<", ">", "\\le", "\\ge"})

_FLIP = {"<": ">", ">": "<", "\\le": "\\ge", "\\ge": "\\le", "=": "=", "\\ne": "\\ne", "\\approx": "\\approx"}


def oriented(relation: Relation) -> tuple[tuple, tuple]:
    """The relation written with ``<``/``\\le`` (``a > b`` becomes ``b < a``)."""
    if any(op in (">", "\\ge") for op in relation.ops):
        return tuple(reversed(relation.terms)), tuple(_FLIP.get(op, op) for op in reversed(relation.ops))
    return relation.terms, relation.ops


def _constant(text: str) -> bool:
    try:
        tree = expr.parse(text)
    except expr.Unsupported:
        return False
    return not (expr.variables(tree) - {"e", "i"})


def _interval(low: str, low_closed: bool, high: str, high_closed: bool) -> Group:
    return Group("[" if low_closed else "(", "]" if high_closed else ")", (low, high))


def solution_set(relation: Relation) -> tuple[str, tuple[Group, ...]] | None:
    """``(variable, intervals)`` for ``a < x \\le b``-like relations, None for anything else.

    A negated variable flips the bounds (``-x < 1`` is ``x > -1``); an absolute value unfolds
    (``1 \\le |z| \\le 2`` is ``[-2,-1] \\cup [1,2]`` over ``z``).
    """
    if not set(relation.ops) <= INEQUALITIES:
        return None
    terms, ops = oriented(relation)
    if any(op in (">", "\\ge") for op in ops):
        return None
    constants = [_constant(term) for term in terms]
    if len(terms) == 3 and constants == [True, False, True]:
        low, variable, high = terms
        low_closed, high_closed = ops[0] == "\\le", ops[1] == "\\le"
    elif len(terms) == 2 and constants == [False, True]:
        variable, high = terms
        low, low_closed, high_closed = "-\\infty", False, ops[0] == "\\le"
    elif len(terms) == 2 and constants == [True, False]:
        low, variable = terms
        high, high_closed, low_closed = "\\infty", False, ops[0] == "\\le"
    else:
        return None
    if variable.startswith("-") and not _constant(variable[1:]):
        return variable[1:], (_interval(f"-({high})", high_closed, f"-({low})", low_closed),)
    inside = re.fullmatch(r"\|([^|]+)\|", variable)
    if inside:
        return _unfold_absolute(inside.group(1), low, low_closed, high, high_closed)
    return variable, (_interval(low, low_closed, high, high_closed),)


def _unfold_absolute(variable: str, low: str, low_closed: bool, high: str, high_closed: bool):
    """The solution set over ``variable`` of ``low < |variable| < high`` (closedness as given)."""
    try:
        low_value = complex(expr.evaluate(expr.parse(low)))
    except (expr.Unsupported, expr.EvalError):
        return None
    if low_value.imag != 0:
        return None
    if low_value.real < 0 or (low_value.real == 0 and not low_closed):
        # Only the upper bound constrains |x| < b: the symmetric interval.
        return variable, (_interval(f"-({high})", high_closed, high, high_closed),)
    if high == "\\infty":
        return variable, (
            _interval("-\\infty", False, f"-({low})", low_closed),
            _interval(low, low_closed, "\\infty", False),
        )
    return variable, (
        _interval(f"-({high})", high_closed, f"-({low})", low_closed),
        _interval(low, low_closed, high, high_closed),
    )
