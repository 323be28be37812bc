"""A small, fast parser and evaluator for the LaTeX expressions answers are written in.

It covers what final answers almost always are — numbers, ``\\frac``, ``\\sqrt``, powers, ``\\pi``,
``e``, ``i``, variables (with subscripts), implicit multiplication, mixed numbers, ``|x|``,
trigonometric and logarithmic functions, ``n!`` and ``\\binom`` — and evaluates them in-process in
microseconds: exactly (``Fraction``) while the value stays rational, as a complex float otherwise.
Variables are replaced by fixed pseudo-random values, so two expressions that agree at several
points are taken to be the same function (polynomial identity testing).

Anything outside this subset raises :class:`Unsupported` so the caller can hand the comparison to
sympy in a worker process. Evaluation never blows up: exponents and factorials are bounded, and
anything too large or undefined raises :class:`EvalError`.
"""

from __future__ import annotations

import cmath
import functools
import math
import random
import re
from collections.abc import Callable
from fractions import Fraction

Value = Fraction | complex

MAX_LENGTH = 4000
MAX_DEPTH = 60
MAX_EXACT_POWER_BITS = 4096
MAX_FACTORIAL = 500
POINTS = 3


class Unsupported(ValueError):
    """The expression uses syntax this parser does not cover."""


class EvalError(ArithmeticError):
    """The expression has no finite value here (division by zero, overflow, too large)."""


_TOKEN = re.compile(r"\s*(\d+\.\d*|\.\d+|\d+|\\[a-zA-Z]+|\\[{}|,]|[a-zA-Z]|\S)")

_FUNCTIONS: dict[str, Callable[[complex], complex]] = {
    "sin": cmath.sin,
    "cos": cmath.cos,
    "tan": cmath.tan,
    "cot": lambda z: 1 / cmath.tan(z),
    "sec": lambda z: 1 / cmath.cos(z),
    "csc": lambda z: 1 / cmath.sin(z),
    "arcsin": cmath.asin,
    "arccos": cmath.acos,
    "arctan": cmath.atan,
    "sinh": cmath.sinh,
    "cosh": cmath.cosh,
    "tanh": cmath.tanh,
    "ln": cmath.log,
    "log": cmath.log,
    "exp": cmath.exp,
}
_CONSTANTS: dict[str, Value] = {
    "pi": complex(math.pi),
    "infty": complex(math.inf),
    "infinity": complex(math.inf),
}
_MULTIPLY = {"*", "\\cdot", "\\times"}
_DIVIDE = {"/", "\\div", ":"}
_OPEN_CLOSE = {"(": ")", "[": "]", "{": "}", "\\{": "\\}", "\\lfloor": "\\rfloor", "\\lceil": "\\rceil"}
_STARTS_PRIMARY = re.compile(r"\d|\.\d|[a-zA-Z]|\\[a-zA-Z]+|[(\[{]|\\\{")
_NOT_PRIMARY = {
    "\\cdot",
    "\\times",
    "\\div",
    "\\rfloor",
    "\\rceil",
    "\\}",
    "\\pm",
    "\\mp",
    "\\le",
    "\\ge",
    "\\ne",
}

_FUNCTION_LETTERS = {"f", "g", "h"}

Node = tuple


def tokenize(text: str) -> list[str]:
    """Split an expression into tokens; raises Unsupported when it is too long or too deep."""
    if len(text) > MAX_LENGTH:
        raise Unsupported("expression too long")
    tokens = _TOKEN.findall(text)
    depth = deepest = 0
    for token in tokens:
        if token in _OPEN_CLOSE:
            depth += 1
            deepest = max(deepest, depth)
        elif token in _OPEN_CLOSE.values():
            depth -= 1
    if deepest > MAX_DEPTH:
        raise Unsupported("expression nested too deeply")
    return tokens


class _Parser:
    """Recursive descent over the token list; builds nested tuples ``(op, *args)``."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise Unsupported(f"expected {expected!r}, found {token!r}")
        self.pos += 1
        return token

    def parse(self) -> Node:
        node = self.sum()
        if self.peek() is not None:
            raise Unsupported(f"unexpected {self.peek()!r}")
        return node

    def sum(self) -> Node:
        # Sums and products are n-ary so long chains stay shallow trees.
        terms = [self.product()]
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.product()
            terms.append(right if op == "+" else ("neg", right))
        return terms[0] if len(terms) == 1 else ("add", *terms)

    def product(self) -> Node:
        factors = [self.signed()]
        while True:
            token = self.peek()
            if token in _MULTIPLY:
                self.take()
                factors.append(self.signed())
            elif token in _DIVIDE:
                self.take()
                factors.append(("inv", self.signed()))
            elif token is not None and token not in _NOT_PRIMARY and _STARTS_PRIMARY.match(token):
                factors.append(self.power())
            else:
                return factors[0] if len(factors) == 1 else ("mul", *factors)

    def signed(self) -> Node:
        token = self.peek()
        if token == "-":
            self.take()
            return ("neg", self.signed())
        if token == "+":
            self.take()
            return self.signed()
        return self.power()

    def power(self) -> Node:
        base = self.postfix()
        if self.peek() == "^":
            self.take()
            return ("pow", base, self.script())
        return base

    def script(self) -> Node:
        """The argument of ``^`` or ``_``: a braced group or a single character or command."""
        token = self.peek()
        if token == "{":
            return self.group("{")
        if token in ("-", "+"):
            self.take()
            inner = self.script()
            return ("neg", inner) if token == "-" else inner
        if token is not None and (
            token.isdigit() and len(token) == 1 or token.isalpha() or token.startswith("\\")
        ):
            return self.postfix()
        if token is not None and token.isdigit():
            # x^23 means x^2 * 3 in LaTeX: only the first digit is the script.
            self.tokens[self.pos] = token[1:]
            return ("num", Fraction(int(token[0])))
        raise Unsupported("bad superscript or subscript")

    def postfix(self) -> Node:
        node = self.primary()
        while self.peek() == "!":
            self.take()
            node = ("fact", node)
        return node

    def group(self, opener: str) -> Node:
        self.take(opener)
        node = self.sum()
        self.take(_OPEN_CLOSE[opener])
        return node

    def argument(self) -> Node:
        if self.peek() != "{":
            raise Unsupported("expected a braced argument")
        return self.group("{")

    def primary(self) -> Node:
        token = self.peek()
        if token is None:
            raise Unsupported("unexpected end")
        if token[0].isdigit() or token[0] == ".":
            return self.number()
        if token in ("(", "[", "{", "\\lfloor", "\\lceil"):
            node = self.group(token)
            if token == "\\lfloor":
                return ("floor", node)
            if token == "\\lceil":
                return ("ceil", node)
            return node
        if token == "|":
            self.take()
            node = self.sum()
            self.take("|")
            return ("abs", node)
        if len(token) == 1 and token.isalpha():
            self.take()
            if self.peek() == "(" and (token.isupper() or token in _FUNCTION_LETTERS):
                # f(x), I(0), N(n): an unknown function applied, not f times x.
                return ("apply", token, self.group("("))
            return self.subscripted(token)
        if token.startswith("\\"):
            return self.command(token[1:])
        raise Unsupported(f"unexpected {token!r}")

    def number(self) -> Node:
        token = self.take()
        if self.peek() == "_":
            raise Unsupported("number with a base subscript")
        value = Fraction(token if token[0] != "." else "0" + token)
        if token.isdigit() and self.peek() == "\\frac" and self._integer_fraction_follows():
            # "1\frac{4}{5}" is the mixed number 1 + 4/5, as in the MATH data set.
            self.take()
            numerator = self.argument()
            denominator = self.argument()
            return ("add", ("num", value), ("mul", numerator, ("inv", denominator)))
        return ("num", value)

    def _integer_fraction_follows(self) -> bool:
        t = self.tokens[self.pos : self.pos + 7]
        return (
            len(t) == 7
            and t[1] == "{"
            and t[2].isdigit()
            and t[3] == "}"
            and t[4] == "{"
            and t[5].isdigit()
            and t[6] == "}"
        )

    def subscripted(self, name: str) -> Node:
        if self.peek() != "_":
            return ("var", name)
        self.take()
        if self.peek() == "{":
            start = self.pos
            self.group("{")
            return ("var", name + "_" + "".join(self.tokens[start : self.pos]))
        return ("var", name + "_" + self.take())

    def command(self, name: str) -> Node:
        self.take()
        if name == "frac":
            return ("mul", self.argument(), ("inv", self.argument()))
        if name == "sqrt":
            if self.peek() == "[":
                index = self.group("[")
                return ("pow", self.argument(), ("inv", index))
            return ("pow", self.argument(), ("num", Fraction(1, 2)))
        if name == "binom":
            return ("binom", self.argument(), self.argument())
        if name in _CONSTANTS:
            return ("num", _CONSTANTS[name])
        if name in _FUNCTIONS:
            return self.function(name)
        if name in (
            "alpha",
            "beta",
            "gamma",
            "delta",
            "theta",
            "phi",
            "lambda",
            "mu",
            "omega",
            "sigma",
            "tau",
        ):
            return self.subscripted("\\" + name)
        raise Unsupported(f"unsupported command \\{name}")

    def function(self, name: str) -> Node:
        power = None
        base = None
        if name == "log" and self.peek() == "_":
            self.take()
            base = self.script()
        if self.peek() == "^":
            self.take()
            power = self.script()
        if self.peek() == "(":
            arg = self.group("(")
        else:
            # "\sin 2x" applies to the implicit product that follows, up to the next function.
            factors = [self.power()]
            while (
                (token := self.peek()) is not None
                and token not in _NOT_PRIMARY
                and _STARTS_PRIMARY.match(token)
            ):
                if token.startswith("\\") and token[1:] in _FUNCTIONS:
                    break
                factors.append(self.power())
            arg = factors[0] if len(factors) == 1 else ("mul", *factors)
        if power == ("neg", ("num", Fraction(1))) and f"arc{name}" in _FUNCTIONS:
            # \sin^{-1} x is arcsin x, not 1 / sin x.
            name, power = f"arc{name}", None
        node: Node = ("call", name, arg)
        if base is not None:
            node = ("mul", node, ("inv", ("call", "ln", base)))
        return ("pow", node, power) if power is not None else node


def parse(text: str) -> Node:
    """Parse a normalised expression into a tree; raises Unsupported outside the subset."""
    tokens = tokenize(text)
    if not tokens:
        raise Unsupported("empty expression")
    try:
        return _Parser(tokens).parse()
    except RecursionError as error:
        raise Unsupported("expression nested too deeply") from error


def is_piecewise(node: Node) -> bool:
    """Whether the tree uses floor, ceiling, factorial or binomials (constant between integers)."""
    pending = [node]
    while pending:
        current = pending.pop()
        if current[0] in ("floor", "ceil", "fact", "binom"):
            return True
        pending.extend(child for child in current[1:] if isinstance(child, tuple))
    return False


def variables(node: Node) -> set[str]:
    """Names of the free variables in a tree."""
    found: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if current[0] == "var":
            found.add(current[1])
        else:
            pending.extend(child for child in current[1:] if isinstance(child, tuple))
    return found


@functools.lru_cache(maxsize=4096)
def _point(name: str, index: int) -> complex:
    """The value of variable ``name`` at sample point ``index``: fixed, irrational-looking."""
    if name == "e":
        return complex(math.e)
    if name == "i":
        return 1j
    rng = random.Random(f"{name}/{index}")
    magnitude = rng.uniform(0.35, 2.2)
    return complex(magnitude if rng.random() < 0.7 else -magnitude)


def _as_complex(value: Value) -> complex:
    return complex(value) if isinstance(value, Fraction) else value


def _power(base: Value, exponent: Value) -> Value:
    if isinstance(base, Fraction) and isinstance(exponent, Fraction) and exponent.denominator == 1:
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if bits * abs(exponent.numerator) <= MAX_EXACT_POWER_BITS:
            if base == 0 and exponent < 0:
                raise EvalError("division by zero")
            return base**exponent.numerator
    if (
        isinstance(base, Fraction)
        and isinstance(exponent, Fraction)
        and exponent.denominator == 2
        and base >= 0
    ):
        root_num, root_den = math.isqrt(base.numerator), math.isqrt(base.denominator)
        if root_num**2 == base.numerator and root_den**2 == base.denominator:
            return _power(Fraction(root_num, root_den), Fraction(exponent.numerator))
    b, x = _as_complex(base), _as_complex(exponent)
    if abs(x) > 1e4 or (abs(b) > 1e6 and abs(x) > 200):
        raise EvalError("power too large")
    if b == 0:
        if x.real > 0:
            return Fraction(0)
        raise EvalError("zero to a non-positive power")
    if x.imag == 0 and b.imag == 0 and b.real > 0:
        return complex(b.real**x.real)
    if x.imag == 0 and x.real == int(x.real) and b.imag == 0:
        return complex(b.real ** int(x.real))
    if x.imag == 0 and b.imag == 0 and b.real < 0 and x.real != 0:
        # Real odd roots of negatives: (-8)^(1/3) = -2, as a student means it.
        inverse = 1 / x.real
        if abs(inverse - round(inverse)) < 1e-12 and round(inverse) % 2 == 1:
            return complex(-((-b.real) ** x.real))
    return b**x


def _integer(value: Value, limit: int) -> int:
    if isinstance(value, Fraction) and value.denominator == 1 and 0 <= value <= limit:
        return int(value)
    raise EvalError("not a small non-negative integer")


def evaluate(node: Node, point: int = 0) -> Value:
    """The value of a tree with every variable at sample point ``point``.

    Raises EvalError for undefined or oversized values. Rational arithmetic stays exact.
    """
    try:
        value = _evaluate(node, point)
    except (ZeroDivisionError, OverflowError, ValueError, RecursionError) as error:
        raise EvalError(str(error) or type(error).__name__) from error
    if isinstance(value, complex) and (math.isnan(value.real) or math.isnan(value.imag)):
        raise EvalError("not a number")
    return value


def _evaluate(node: Node, point: int) -> Value:
    op = node[0]
    if op == "num":
        return node[1]
    if op == "var":
        return _point(node[1], point)
    if op == "call":
        return _FUNCTIONS[node[1]](_as_complex(_evaluate(node[2], point)))
    if op == "apply":
        # An unknown function stands for a fixed quadratic with name-derived coefficients: the
        # same name and argument give the same value on both sides, anything else differs.
        z = _as_complex(_evaluate(node[2], point))
        return _point(node[1] + "()", 0) + _point(node[1] + "()", 1) * z + _point(node[1] + "()", 2) * z * z
    args = [_evaluate(child, point) for child in node[1:]]
    if op in ("add", "mul"):
        if all(isinstance(arg, Fraction) for arg in args):
            exact = args[0]
            for arg in args[1:]:
                exact = exact + arg if op == "add" else exact * arg
            return exact
        total = _as_complex(args[0])
        for arg in args[1:]:
            total = total + _as_complex(arg) if op == "add" else total * _as_complex(arg)
        return total
    if op == "neg":
        return -args[0]
    if op == "inv":
        return 1 / args[0]
    if op == "pow":
        return _power(*args)
    if op == "abs":
        value = args[0]
        return abs(value) if isinstance(value, Fraction) else complex(abs(value))
    if op in ("floor", "ceil"):
        value = args[0]
        if isinstance(value, complex):
            if value.imag != 0 or not math.isfinite(value.real):
                raise EvalError("floor of a non-real")
            value = Fraction(value.real)
        return Fraction(math.floor(value) if op == "floor" else math.ceil(value))
    if op == "fact":
        return Fraction(math.factorial(_integer(args[0], MAX_FACTORIAL)))
    if op == "binom":
        n = _integer(args[0], 10**6)
        return Fraction(math.comb(n, _integer(args[1], n)))
    raise Unsupported(f"unknown node {op}")
