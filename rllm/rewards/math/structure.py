"""The shape of a normalised answer: lists, tuples, intervals, sets, matrices, relations.

``parse_answer`` turns a canonical answer string into a tuple of top-level items. Items are
separated by ``,`` (and by ``;`` or ``\\cup``, and by ``and``/``or`` which normalisation turned into
commas); with ``;`` present, ``;`` separates solutions and ``,`` the components of one solution
(``p=5,q=2;p=7,q=2``). A ``\\pm`` expands an item into two. Each item is one of the node types
below; scalar expressions stay strings and are compared by :mod:`.equivalence`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_PLUS_MINUS = 2

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_RELATION = re.compile(r"\\(?:le|ge|ne|approx|in|equiv)(?![a-zA-Z])|=|<|>")
_PLUS_MINUS = re.compile(r"\\(pm|mp)(?![a-zA-Z])")
_SCAN = re.compile(r"\\[a-zA-Z]+|\\.|[^\\()\[\]{}=<>,;]+|.", re.S)
_MATRIX = re.compile(r"^\\begin\{([pbBvV]?matrix|array)\}(?:\{[^{}]*\})?(.*)\\end\{\1\}$", re.S)


@dataclass(frozen=True)
class Group:
    """A bracketed list: tuple or interval ``(a,b]``, or a set when ``opener`` is ``\\{``."""

    opener: str
    closer: str
    items: tuple


@dataclass(frozen=True)
class Matrix:
    """A matrix or vector from a ``pmatrix``-like environment, as rows of cells."""

    rows: tuple


@dataclass(frozen=True)
class Relation:
    """A chain ``a op b op c`` of ``=``, ``<``, ``>``, ``\\le``, ``\\ge``, ``\\ne``, ``\\approx``, ``\\in``."""

    terms: tuple
    ops: tuple


@dataclass(frozen=True)
class Labeled:
    """``label = value``, where the left side only names the value (``x = 5``, ``(p,q) = (3,2)``)."""

    label: str
    value: object


def _depth_changes(text: str):
    """Yield ``(index, depth_before, token)`` for each token: a bracket (``\\{`` and ``\\}`` count), a
    command, a separator or relation character, or a run of characters that are none of these."""
    depth = 0
    for match in _SCAN.finditer(text):
        token = match.group(0)
        yield match.start(), depth, token
        if token in ("(", "[", "{", "\\{"):
            depth += 1
        elif token in (")", "]", "}", "\\}"):
            depth -= 1


def split_top(text: str, separators: tuple[str, ...]) -> list[str]:
    """Split at separators that are outside every bracket; empty pieces are dropped."""
    pieces = []
    start = 0
    for index, depth, token in _depth_changes(text):
        if depth == 0 and token in separators:
            pieces.append(text[start:index])
            start = index + len(token)
    pieces.append(text[start:])
    return [piece for piece in pieces if piece]


def _enclosing(text: str) -> tuple[str, str] | None:
    """``(opener, closer)`` when one bracket pair encloses the whole string, else None."""
    if not text:
        return None
    opener = "\\{" if text.startswith("\\{") else text[0]
    if opener not in ("(", "[", "\\{"):
        return None
    closer = "\\}" if text.endswith("\\}") else text[-1]
    if closer not in (")", "]", "\\}") or (opener == "\\{") != (closer == "\\}"):
        return None
    for index, depth, _token in _depth_changes(text):
        if depth == 0 and index > 0 and index < len(text) - len(closer):
            return None
    return opener, closer


def _is_label(text: str) -> bool:
    """Whether the left side of ``=`` merely names the value (``x``, ``f(x)``, ``|AB|``, ``(p,q)``)."""
    bare = re.sub(r"_\{[^{}]*\}|_.", "", text)
    return (
        bool(re.search(r"[a-zA-Z]", bare))
        and not re.search(r"[-+^=<>]|\\(?:le|ge|sqrt|sum|int|cdot|times)(?![a-zA-Z])", bare)
        and not bare[0].isdigit()
    )


def _expand_plus_minus(text: str) -> list[str]:
    count = len(_PLUS_MINUS.findall(text))
    if count == 0 or count > MAX_PLUS_MINUS:
        return [text]
    results = [text]
    for _ in range(count):
        expanded = []
        for item in results:
            match = _PLUS_MINUS.search(item)
            first, second = ("+", "-") if match.group(1) == "pm" else ("-", "+")
            expanded += [item[: match.start()] + sign + item[match.end() :] for sign in (first, second)]
        results = expanded
    return [re.sub(r"^\+", "", item.replace("(+", "(").replace(",+", ",")) for item in results]


def parse_item(text: str) -> object:
    """One item: a Group, Matrix, Relation, Labeled or a scalar expression string."""
    matrix = _MATRIX.match(text)
    if matrix:
        rows = [row for row in re.split(r"\\\\", matrix.group(2)) if row.strip()]
        return Matrix(tuple(tuple(cell.strip() for cell in row.split("&")) for row in rows))
    parts = []
    ops = []
    start = 0
    for index, depth, token in _depth_changes(text):
        if depth == 0 and _RELATION.fullmatch(token):
            parts.append(text[start:index].strip())
            ops.append(token)
            start = index + len(token)
    if ops:
        parts.append(text[start:].strip())
        if len(ops) == 1 and ops[0] in ("=", "\\approx", "\\in") and _is_label(parts[0]) and parts[1]:
            return Labeled(parts[0], parse_item(parts[1]))
        return Relation(tuple(parts), tuple(ops))
    brackets = _enclosing(text)
    if brackets:
        opener, closer = brackets
        inner = text[len(opener) : len(text) - len(closer)]
        separators = (",",) if split_top(inner, (",",)) != [inner] else (";",)
        items = tuple(parse_item(piece) for piece in split_top(inner, separators))
        if len(items) == 1 and opener != "\\{":
            return items[0]
        return Group(opener, closer, items)
    return text


def parse_answer_items(text: str) -> list:
    """Top-level items of an answer without solution grouping (see the module docstring)."""
    items = []
    for piece in split_top(text, (",", "\\cup")):
        items += [parse_item(expanded) for expanded in _expand_plus_minus(piece)]
    return items


def parse_answer(text: str) -> tuple:
    """The top-level items of a normalised answer string."""
    solutions = split_top(text, (";",))
    if len(solutions) <= 1:
        return tuple(parse_answer_items(text))
    items = []
    for solution in solutions:
        parts = parse_answer_items(solution)
        if len(parts) == 1:
            items.append(parts[0])
        else:
            values = tuple(part.value if isinstance(part, Labeled) else part for part in parts)
            items.append(Group("(", ")", values))
    return tuple(items)
