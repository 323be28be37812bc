"""Decide whether a predicted answer means the same as a reference answer.

The comparison runs in-process and is fast: canonical strings first (:mod:`.normalize`), then the
answer's shape (:mod:`.structure`), then scalar values with the small evaluator in :mod:`.expr`.
Only what that evaluator cannot parse (sums, integrals, inequalities that need solving) is handed
to an :class:`Oracle` — in production a sympy worker process with a hard timeout — and without an
oracle such comparisons count as not equal.

Rules worth knowing:

* lists compare in order or as sets (repeated elements do not matter); ``1,3`` equals the tuple
  ``(1,3)`` but not ``(3,1)``; ``\\{1,3\\}`` equals ``3,1``;
* tuples and intervals compare element-wise and need the same brackets; sets ignore order;
* ``x = 5`` equals ``5`` when the left side only names the value (``x``, ``f(x)``, ``|AB|``,
  ``(p,q)``), never when it is an expression (``a + 3z = 0`` is not ``0``); two equations are equal
  when one is a non-zero multiple of the other;
* inequalities compare as the interval they describe (``5 \\ge x`` is ``x \\le 5`` is
  ``(-\\infty, 5]``);
* a decimal written with ``d`` places matches a value it rounds to when it has at least three
  significant digits (``2.6667`` is ``8/3``; ``0.33`` is not ``1/3``);
* a percentage matches the bare number and its hundredth (``28\\%`` is ``28`` and ``0.28``);
* ``204_5`` compares digits and base, never the decimal value;
* words compare case-insensitively (``\\text{Even}`` is ``even``), single letters exactly.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from fractions import Fraction
from typing import Protocol

from rllm.rewards.math import expr
from rllm.rewards.math.inequalities import INEQUALITIES, oriented, solution_set
from rllm.rewards.math.normalize import normalize
from rllm.rewards.math.structure import Group, Labeled, Matrix, Relation, parse_answer

RELATIVE_TOLERANCE = 1e-9
ZERO_TOLERANCE = 1e-12
MIN_ROUNDED_DIGITS = 3
# Beyond these sizes answers are compared by exact structure only: no real answer comes close, and
# a hostile one must not cost seconds.
MAX_NESTING = 100
MAX_PAIRINGS = 10_000
MAX_SCALAR_CHECKS = 5_000

_DECIMAL = re.compile(r"-?(\d*)\.(\d+)")
_BASED = re.compile(r"(\d[0-9A-Za-z]*)_\{?([2-9]|[12]\d|3[0-6])\}?")
_WORDS = re.compile(r"[A-Za-z][A-Za-z ]*")
_PLAIN_VARIABLE = re.compile(r"(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?\w+\}?)?")


class Oracle(Protocol):
    """Symbolic checks for what the in-process evaluator cannot decide."""

    def expressions_equal(self, a: str, b: str) -> bool | None:
        """Whether two scalar LaTeX expressions are equal; None when undecided."""

    def sets_equal(self, a: str, b: str) -> bool | None:
        """Whether two answers describe the same set of reals; None when undecided."""


def answers_equal(pred: str, gold: str, oracle: Oracle | None = None) -> bool:
    """Whether answer ``pred`` means the same as reference answer ``gold``."""
    p, g = normalize(pred), normalize(gold)
    if not p or not g:
        return False
    if p == g:
        return True
    if _nesting(p) > MAX_NESTING or _nesting(g) > MAX_NESTING:
        return False
    comparator = _Comparator(oracle)
    pred_items, gold_items = parse_answer(p), parse_answer(g)
    try:
        if comparator.lists(pred_items, gold_items):
            return True
    except _TooMuchWork:
        return False
    if (
        oracle is not None
        and comparator.needs_sets
        and (_has_inequality(pred_items) or _has_inequality(gold_items))
    ):
        return bool(oracle.sets_equal(p, g))
    return False


def _nesting(text: str) -> int:
    """The deepest bracket nesting in ``text`` (a cheap guard before recursive parsing)."""
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


def _has_inequality(items: tuple) -> bool:
    return any(isinstance(item, Relation) and set(item.ops) <= INEQUALITIES for item in items)


def _close(a: expr.Value, b: expr.Value) -> bool:
    """Exact for rationals; otherwise relative, so 3.3e-10 and 3.4e-10 stay apart, with a tiny
    absolute floor for float noise around zero (sin(pi) is 1.2e-16)."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    try:
        a, b = complex(a), complex(b)
    except OverflowError:  # a rational beyond float range
        return False
    if not (math.isfinite(abs(a)) and math.isfinite(abs(b))):
        return a == b
    return abs(a - b) <= max(RELATIVE_TOLERANCE * max(abs(a), abs(b)), ZERO_TOLERANCE)


def _rounds_to(text: str, value: expr.Value) -> bool:
    """Whether decimal literal ``text`` is ``value`` rounded to the places it shows."""
    match = _DECIMAL.fullmatch(text)
    if not match:
        return False
    significant = (match.group(1) + match.group(2)).lstrip("0")
    if len(significant) < MIN_ROUNDED_DIGITS:
        return False
    if isinstance(value, Fraction):
        real = value
    elif value.imag != 0 or not math.isfinite(value.real):
        return False
    else:
        real = Fraction(value.real)
    places = len(match.group(2))
    return abs(Fraction(text) - real) <= Fraction(1, 2 * 10**places) * (1 + RELATIVE_TOLERANCE)


def _difference(left: str, right: str) -> expr.Node:
    return ("add", expr.parse(left), ("neg", expr.parse(right)))


class _TooMuchWork(Exception):
    """Raised inside a comparison whose answers are too large to match element by element."""


class _Comparator:
    """Structural comparison of parsed answers; remembers whether a set check could still help."""

    def __init__(self, oracle: Oracle | None) -> None:
        self.oracle = oracle
        self.needs_sets = False
        # Structural matching may ask the same scalar question several times; symbolic answers
        # are expensive, so each pair is decided once.
        self._decided: dict[tuple[str, str], bool] = {}
        self._sampled: dict[str, tuple[bool, tuple] | None] = {}

    # Lists of items -------------------------------------------------------------------------

    def lists(self, a: tuple, b: tuple) -> bool:
        if len(a) == len(b) and all(self.items(x, y) for x, y in zip(a, b, strict=True)):
            return True
        if all(isinstance(x, Labeled) for x in a + b):
            return self.unordered(a, b)
        a, b = _values(a), _values(b)
        if len(a) == len(b) and all(self.items(x, y) for x, y in zip(a, b, strict=True)):
            return True
        for one, many in ((a, b), (b, a)):
            if len(one) == 1 and len(many) > 1 and isinstance(one[0], Group):
                group = one[0]
                if group.opener == "\\{" and self.unordered(group.items, many):
                    return True
                # "1,3" is the tuple (1,3) written without parentheses; "[1,3]" is an interval.
                if (group.opener, group.closer) == ("(", ")") and len(group.items) == len(many):
                    if all(self.items(x, y) for x, y in zip(group.items, many, strict=True)):
                        return True
            if len(one) == 1 and isinstance(one[0], Relation) and set(one[0].ops) <= INEQUALITIES:
                solved = solution_set(one[0])
                if solved is not None and self.unordered(solved[1], many):
                    return True
                self.needs_sets |= solved is None or not _PLAIN_VARIABLE.fullmatch(solved[0])
        return self.unordered(a, b)

    def unordered(self, a: tuple, b: tuple) -> bool:
        """Equality up to order: as multisets when both sides have as many elements (``16,3,3,1``
        is not ``16,3,1,1``), as sets otherwise (a solution listed twice is still one solution)."""
        if len(a) * len(b) > MAX_PAIRINGS:
            return Counter(a) == Counter(b) if len(a) == len(b) else set(a) == set(b)
        if len(a) == len(b):
            unmatched = list(b)
            for x in a:
                match = next((index for index, y in enumerate(unmatched) if self.items(x, y)), None)
                if match is None:
                    return False
                del unmatched[match]
            return True
        return all(any(self.items(x, y) for y in b) for x in a) and all(
            any(self.items(y, x) for x in a) for y in b
        )

    # Single items ---------------------------------------------------------------------------

    def items(self, x: object, y: object) -> bool:
        if x == y:
            return True
        if isinstance(x, Labeled) and isinstance(y, Labeled):
            if _same_label(x.label, y.label) and self.items(x.value, y.value):
                return True
            if isinstance(x.value, str) and isinstance(y.value, str):
                return self.equations(
                    Relation((x.label, x.value), ("=",)), Relation((y.label, y.value), ("=",))
                )
            return False
        for labeled, other in ((x, y), (y, x)):
            if isinstance(labeled, Labeled):
                if isinstance(other, Relation) and isinstance(labeled.value, str):
                    return self.relations(Relation((labeled.label, labeled.value), ("=",)), other)
                return self.items(labeled.value, other)
        if isinstance(x, str) and isinstance(y, str):
            return self.scalars(x, y)
        if isinstance(x, Group) and isinstance(y, Group):
            return self.groups(x, y)
        if isinstance(x, Matrix) or isinstance(y, Matrix):
            return self.matrices(x, y)
        if isinstance(x, Relation) and isinstance(y, Relation):
            return self.relations(x, y)
        if isinstance(x, Relation) and isinstance(y, Group):
            return self.relation_vs_interval(x, y)
        if isinstance(y, Relation) and isinstance(x, Group):
            return self.relation_vs_interval(y, x)
        return False

    def groups(self, x: Group, y: Group) -> bool:
        if "\\{" in (x.opener, y.opener):
            return x.opener == y.opener and self.unordered(x.items, y.items)
        if (x.opener, x.closer) != (y.opener, y.closer):
            return False
        return len(x.items) == len(y.items) and all(
            self.items(a, b) for a, b in zip(x.items, y.items, strict=True)
        )

    def matrices(self, x: object, y: object) -> bool:
        def cells(item: object) -> tuple | None:
            if isinstance(item, Matrix):
                return item.rows
            if isinstance(item, Group) and item.opener in ("(", "["):
                return tuple((cell,) for cell in item.items)
            return None

        a, b = cells(x), cells(y)
        if a is None or b is None:
            return False
        if isinstance(x, Group) or isinstance(y, Group):
            a, b = _flat_vector(a), _flat_vector(b)
            if a is None or b is None:
                return False
        return (
            len(a) == len(b)
            and all(len(r) == len(s) for r, s in zip(a, b, strict=True))
            and all(self.items(p, q) for r, s in zip(a, b, strict=True) for p, q in zip(r, s, strict=True))
        )

    # Relations ------------------------------------------------------------------------------

    def relations(self, x: Relation, y: Relation) -> bool:
        if set(x.ops) == {"="} and set(y.ops) == {"="}:
            return self.equations(x, y)
        a, b = solution_set(x), solution_set(y)
        if a is not None and b is not None:
            if a[0] == b[0]:
                return self.unordered(a[1], b[1])
            self.needs_sets = True
            return False
        return oriented(x) == oriented(y) or (
            len(x.ops) == len(y.ops)
            and oriented(x)[1] == oriented(y)[1]
            and all(self.scalars(p, q) for p, q in zip(oriented(x)[0], oriented(y)[0], strict=True))
        )

    def equations(self, x: Relation, y: Relation) -> bool:
        """Equal when ``lhs - rhs`` of one is a non-zero constant multiple of the other's."""
        if len(x.terms) != 2 or len(y.terms) != 2:
            return len(x.terms) == len(y.terms) and all(
                self.scalars(p, q) for p, q in zip(x.terms, y.terms, strict=True)
            )
        try:
            f, g = _difference(*x.terms), _difference(*y.terms)
        except expr.Unsupported:
            f = g = None
        if f is None or expr.is_piecewise(f) or expr.is_piecewise(g):
            # Sampling cannot compare these (see _samples): side by side, with the oracle's help.
            return all(self.scalars(p, q) for p, q in zip(x.terms, y.terms, strict=True))
        ratio = None
        for point in range(expr.POINTS):
            try:
                fv, gv = complex(expr.evaluate(f, point)), complex(expr.evaluate(g, point))
            except (expr.EvalError, OverflowError):
                return False
            if abs(fv) <= ZERO_TOLERANCE and abs(gv) <= ZERO_TOLERANCE:
                continue
            if abs(gv) <= ZERO_TOLERANCE:
                return False
            if ratio is None:
                ratio = fv / gv
                if abs(ratio) <= ZERO_TOLERANCE:
                    return False
            elif not _close(ratio, fv / gv):
                return False
        return True

    def relation_vs_interval(self, relation: Relation, group: Group) -> bool:
        solved = solution_set(relation)
        if solved is None:
            return False
        variable, intervals = solved
        if len(intervals) == 1 and self.groups(intervals[0], group):
            return True
        # Over a plain variable the interval is the whole answer; over x^2 it still has to be
        # solved for x.
        self.needs_sets |= not _PLAIN_VARIABLE.fullmatch(variable)
        return False

    # Scalars --------------------------------------------------------------------------------

    def scalars(self, a: str, b: str) -> bool:
        if a == b:
            return True
        key = (a, b)
        if key not in self._decided:
            if len(self._decided) >= 2 * MAX_SCALAR_CHECKS:
                raise _TooMuchWork
            self._decided[key] = self._decided[(b, a)] = self._scalars_or_percent(a, b)
        return self._decided[key]

    def _scalars_or_percent(self, a: str, b: str) -> bool:
        if a.endswith("\\%") and b.endswith("\\%"):
            return self._scalars(a[:-2], b[:-2])
        return any(self._scalars(x, y) for x in _percent_readings(a) for y in _percent_readings(b))

    def _scalars(self, a: str, b: str) -> bool:
        based_a, based_b = _based_number(a), _based_number(b)
        if based_a or based_b:
            return _same_based(based_a, a, based_b, b)
        if _is_words(a) or _is_words(b):
            return a.replace(" ", "").lower() == b.replace(" ", "").lower()
        samples_a, samples_b = self._samples(a), self._samples(b)
        if samples_a is None or samples_b is None:
            # A comma left inside an item (-[0,1), a malformed tuple) is no scalar for sympy either.
            if "," in a or "," in b or self.oracle is None:
                return False
            return bool(self.oracle.expressions_equal(a, b))
        (constant_a, values_a), (constant_b, values_b) = samples_a, samples_b
        if None in values_a or None in values_b:
            return False
        if constant_a and constant_b:
            va, vb = values_a[0], values_b[0]
            return _close(va, vb) or _rounds_to(a, vb) or _rounds_to(b, va)
        return all(_close(va, vb) for va, vb in zip(values_a, values_b, strict=True))

    def _samples(self, text: str) -> tuple[bool, tuple] | None:
        """``(is_constant, values at the sample points)`` of an expression, None if unparsable.

        A value is None where the expression is undefined. Memoised: unordered matching of long
        lists compares each element with many others.
        """
        if text not in self._sampled:
            try:
                tree = expr.parse(text)
            except expr.Unsupported:
                self._sampled[text] = None
                return None
            constant = not (expr.variables(tree) - {"e", "i"})
            if not constant and expr.is_piecewise(tree):
                # floor(2n/3)+1 is 1 at every small sample point: sampling cannot tell it from 1.
                self._sampled[text] = None
                return None
            values = []
            for point in range(1 if constant else expr.POINTS):
                try:
                    values.append(expr.evaluate(tree, point))
                except expr.EvalError:
                    values.append(None)
            self._sampled[text] = (constant, tuple(values * expr.POINTS if constant else values))
        return self._sampled[text]


def _percent_readings(text: str) -> list[str]:
    """``28\\%`` may mean 28 or 0.28; anything else means itself."""
    if text.endswith("\\%") and len(text) > 2:
        bare = text[:-2]
        return [bare, f"\\frac{{{bare}}}{{100}}"]
    return [text]


def _values(items: tuple) -> tuple:
    """Items with their labels dropped."""
    return tuple(item.value if isinstance(item, Labeled) else item for item in items)


def _same_label(a: str, b: str) -> bool:
    return a.replace(" ", "").lower() == b.replace(" ", "").lower()


def _flat_vector(rows: tuple) -> tuple | None:
    """A one-row or one-column matrix as a column; None for a genuine matrix."""
    if all(len(row) == 1 for row in rows):
        return rows
    if len(rows) == 1:
        return tuple((cell,) for cell in rows[0])
    return None


def _is_words(text: str) -> bool:
    """Whether ``text`` is a word answer (``even``, ``Evelyn``) rather than an expression."""
    return (
        bool(_WORDS.fullmatch(text)) and bool(re.search(r"[A-Za-z]{3}", text)) and not text.startswith("\\")
    )


def _based_number(text: str) -> tuple[str, int] | None:
    """``(digits, base)`` for a number written in a base, ``204_5`` or ``2A_{16}``; else None."""
    match = _BASED.fullmatch(text)
    if not match:
        return None
    digits, base = match.group(1).upper(), int(match.group(2))
    try:
        int(digits, base)
    except ValueError:
        return None
    return digits, base


def _same_based(based_a: tuple | None, a: str, based_b: tuple | None, b: str) -> bool:
    """Same digits in the same base; a bare digit string matches (the base was left out), but
    the decimal value never does: ``54`` is not an answer to "write 54 in base 5"."""
    digits_a, base_a = based_a or (a.upper(), None)
    digits_b, base_b = based_b or (b.upper(), None)
    return digits_a == digits_b and (base_a == base_b or None in (base_a, base_b))
