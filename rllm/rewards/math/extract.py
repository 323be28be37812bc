"""Locate the final answer in a model response.

The answer is the argument of the *last* ``\\boxed{...}`` (or ``\\fbox{...}``, or the unbraced
form ``\\boxed 5``) in the solution part of the response. Braces are matched, so nested groups
such as ``\\boxed{\\frac{1}{2}}`` come out whole; an unclosed box yields no answer rather than a
guess.
"""

from __future__ import annotations

import re

THINK_END = "</think>"

_BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)(?![a-zA-Z])")


def solution_part(response: str, require_think: bool = False) -> str | None:
    """The text the answer is taken from, or None when the response has the wrong format.

    With a ``</think>`` the solution is what follows its first occurrence. Without one, the whole
    response is the solution (verl decodes with ``skip_special_tokens=True``, which may drop the
    tag) unless ``require_think`` asks for the original's rule that a missing tag is a format error.
    """
    _, sep, tail = response.partition(THINK_END)
    if sep:
        return tail
    return None if require_think else response


def _braced_argument(text: str, start: int) -> str | None:
    """The content of the brace group opening at ``text[start] == "{"``, or None if unclosed."""
    depth = 0
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2  # an escaped brace \{ or \} does not open or close a group
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i]
        i += 1
    return None


def _unbraced_argument(text: str, start: int) -> str | None:
    """The argument of ``\\boxed 5``-style usage: the token up to whitespace, ``$`` or end."""
    match = re.compile(r"\s*([^\s$]+)").match(text, start)
    return match.group(1) if match else None


def last_boxed(text: str) -> str | None:
    """The argument of the last ``\\boxed``/``\\fbox`` in ``text``, or None if there is none.

    A box whose braces never close does not count; an earlier well-formed box is not used in its
    place, because the model's final answer is the last one it wrote.
    """
    commands = list(_BOX_COMMAND.finditer(text))
    if not commands:
        return None
    end = commands[-1].end()
    rest = text[end:]
    stripped = rest.lstrip()
    if stripped.startswith("{"):
        return _braced_argument(text, end + len(rest) - len(stripped))
    if rest[:1].isspace():
        return _unbraced_argument(text, end)
    return None


def answer_of(response: str, require_think: bool = False) -> tuple[str | None, str | None]:
    """``(answer, problem)``: the boxed answer, or None with ``"format_error"``/``"no_answer"``."""
    solution = solution_part(response, require_think)
    if solution is None:
        return None, "format_error"
    answer = last_boxed(solution)
    if answer is None or not answer.strip():
        return None, "no_answer"
    return answer.strip(), None
