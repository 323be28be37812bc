"""Rewrite a LaTeX answer into a canonical string.

Normalisation removes what never changes an answer's meaning — ``$`` and ``\\left``/``\\right``,
spacing commands, ``\\dfrac``/``\\tfrac`` spellings, ``\\text{}`` wrappers, degree signs,
currency signs, trailing units and punctuation, thousands separators — and spells the rest one way
(``\\frac12`` becomes ``\\frac{1}{2}``, ``\\geq`` becomes ``\\ge``, ``and``/``or`` become commas).
Whitespace is removed except where it separates a command from a following letter (``\\cot x``).

Percent signs and words all become ``\\%``, which the comparison reads as "28 or 0.28". The result is
compared as a string first and then parsed by :mod:`.structure`.
"""

from __future__ import annotations

import re

_TEXT_COMMANDS = (
    "text",
    "textbf",
    "textit",
    "textrm",
    "textnormal",
    "textsf",
    "texttt",
    "mbox",
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathnormal",
    "operatorname",
    "boldsymbol",
    "bm",
    "hbox",
)
_TEXT_COMMAND = re.compile(r"\\(" + "|".join(_TEXT_COMMANDS) + r")\s*\{")

# Units and other trailing words that carry no value. Only dropped after a value.
_UNIT_WORDS = frozenset(
    """
    unit units cm m km mm meter meters metre metres mi mile miles ft foot feet in inch inches yd yard
    yards sq square cubic cm2 m2 degree degrees deg rad radian radians second seconds sec s minute
    minutes min hour hours hr hrs h day days week weeks month months year years g kg gram grams mg
    lb lbs pound pounds oz ounce ounces l liter liters litre litres ml gallon gallons cent cents
    dollar dollars yuan euro euros people students points mph kph hz khz mhz ghz ev kev mev kj kw
    kwh pa kpa nm mol cal kcal
    """.split()
)

_SYMBOL_SYNONYMS = (
    (re.compile(r"\\(?:dfrac|tfrac|cfrac)(?![a-zA-Z])"), r"\\frac"),
    (re.compile(r"\\(?:dbinom|tbinom)(?![a-zA-Z])"), r"\\binom"),
    (re.compile(r"\\(?:leqslant|leq|le)(?![a-zA-Z])"), r"\\le "),
    (re.compile(r"\\(?:geqslant|geq|ge)(?![a-zA-Z])"), r"\\ge "),
    (re.compile(r"\\(?:neq|ne)(?![a-zA-Z])"), r"\\ne "),
    (re.compile(r"\\lt(?![a-zA-Z])"), "<"),
    (re.compile(r"\\gt(?![a-zA-Z])"), ">"),
    (re.compile(r"<="), r"\\le "),
    (re.compile(r">="), r"\\ge "),
    (re.compile(r"!="), r"\\ne "),
    (re.compile(r"\\(?:lbrace)(?![a-zA-Z])"), r"\\{"),
    (re.compile(r"\\(?:rbrace)(?![a-zA-Z])"), r"\\}"),
    (re.compile(r"\\(?:lvert|rvert|vert|mid)(?![a-zA-Z])"), "|"),
    (re.compile(r"\\(?:ast|star)(?![a-zA-Z])"), "*"),
    (re.compile(r"\\(?:emptyset|varnothing)(?![a-zA-Z])"), r"\\{\\}"),
    (re.compile(r"\\(?:displaystyle|textstyle|scriptstyle)(?![a-zA-Z])"), ""),
    (re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|bigg|Bigg)(?:\.|(?![a-zA-Z]))"), ""),
)

_UNICODE = str.maketrans(
    {
        "−": "-",
        "–": "-",
        "×": r"\times ",
        "·": r"\cdot ",
        "÷": r"\div ",
        "≤": r"\le ",
        "≥": r"\ge ",
        "≠": r"\ne ",
        "π": r"\pi ",
        "∞": r"\infty ",
        "√": r"\sqrt ",
        "∪": r"\cup ",
        "∈": r"\in ",
        "°": "",
        "\u00a0": " ",
    }
)

_SPACING = re.compile(r"(?<!\\)\\(?:quad|qquad|enspace|thinspace|medspace|thickspace|[,:;! ])|~")
_DEGREES = re.compile(r"\^\s*(?:\{\s*\\circ\s*\}|\\circ)|\\circ(?![a-zA-Z])|\\degree(?![a-zA-Z])")
_PERCENT = re.compile(r"\s*(?:\\?%|\b(?:percentage|percent|pct)\b)")
_CURRENCY = re.compile(r"\\\$|\$|\\(?:euro|pounds|yen)(?![a-zA-Z])")
_AND_OR = re.compile(r"(?<![a-zA-Z\\])(?:and|or)(?![a-zA-Z])")
_MISSING_BRACES = re.compile(r"\\(frac|sqrt|binom)\s*(?![\s{\[])(\\[a-zA-Z]+|[^\\])")
_SECOND_ARG = re.compile(r"\\(frac|binom)(\{[^{}]*\})\s*(?!\{)(\\[a-zA-Z]+|[^\\\s])")
_THOUSANDS_EXPLICIT = re.compile(r"(\d)(?:\{,\}|,\\!\s*)(?=\d{3})")
_THOUSANDS_WHOLE = re.compile(r"-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?|-?[1-9]\d{0,2}(?: \d{3})+(?:\.\d+)?")
_UNIT_POWER = r"(?:\^\s*(?:\{\s*-?\d+\s*\}|-?\d))?"
_ONLY_UNITS_LEFT = re.compile(
    rf"\s*{_UNIT_POWER}(?:\s*\\(?:{'|'.join(_TEXT_COMMANDS)})\s*\{{[a-zA-Z .~]*\}}{_UNIT_POWER})*\s*[.,;]?\s*"
)
_TRAILING_UNITS = re.compile(rf"^(.*?[\d}})])\s+((?:[a-zA-Z]+\s+)*[a-zA-Z]+)\s*{_UNIT_POWER}$")
# Only a whole answer like 3.3e-10 is E notation; inside an expression 2e-1 may mean 2e - 1.
_E_NOTATION = re.compile(r"^(-?\d+(?:\.\d+)?)[eE]([-+]?\d+)$")
_COMMAND_GAP = re.compile(r"(\\[a-zA-Z]+)\s+(?=[a-zA-Z0-9])")
_WHITESPACE = re.compile(r"\s+")


def _matching_brace(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start``, or -1 if it never closes."""
    depth = 0
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _unwrap_text(text: str) -> str:
    """Replace ``\\text{...}``-like wrappers by their content.

    Wrappers of plain words that follow a value and end the answer are units or annotations and
    are dropped (``5 \\text{ cm}^2``, ``15000 \\text{ kcal m}^{-2} \\text{yr}^{-1}``); ``and`` and ``or``
    inside a wrapper become list separators.
    """
    while True:
        match = _TEXT_COMMAND.search(text)
        if not match:
            return text
        open_at = match.end() - 1
        close_at = _matching_brace(text, open_at)
        if close_at < 0:
            return text
        content = text[open_at + 1 : close_at].strip()
        before, after = text[: match.start()], text[close_at + 1 :]
        # Words in a wrapper after a value and at the very end are a unit or an annotation.
        is_unit = (
            before.strip()
            and _ONLY_UNITS_LEFT.fullmatch(after)
            and re.fullmatch(r"[a-zA-Z][a-zA-Z .~]*", content)
            and content not in ("and", "or")
        )
        if is_unit:
            text = before
        elif content in ("and", "or", ","):
            text = f"{before},{after}"
        else:
            text = f"{before} {content} {after}"


def _strip_outer_braces(text: str) -> str:
    """``{{5}}`` -> ``5``; ``{1}+{2}`` is left alone. Linear in the length of ``text``."""
    closing_of: dict[int, int] = {}
    openers: list[int] = []
    for index, char in enumerate(text):
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            openers.append(index)
        elif char == "}" and openers and (index == 0 or text[index - 1] != "\\"):
            closing_of[openers.pop()] = index
    layers = 0
    while layers < len(text) // 2 and closing_of.get(layers) == len(text) - 1 - layers:
        layers += 1
    return text[layers : len(text) - layers].strip() if layers else text


def _drop_trailing_units(text: str) -> str:
    match = _TRAILING_UNITS.match(text)
    if not match:
        return text
    value, words = match.group(1), match.group(2).split()
    # One-letter units (m, s, g) only after a digit and in lower case: "M^{6}" is a variable.
    if all(_is_unit_word(word, after_digit=value[-1].isdigit()) for word in words):
        return value
    return text


def _is_unit_word(word: str, after_digit: bool) -> bool:
    if len(word) == 1:
        return after_digit and word in _UNIT_WORDS
    return word.lower() in _UNIT_WORDS


def _add_missing_braces(text: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\sqrt3`` -> ``\\sqrt{3}``, ``\\frac{270}7`` -> ..."""
    for _ in range(8):
        fixed = _MISSING_BRACES.sub(lambda m: f"\\{m.group(1)}{{{m.group(2)}}}", text)
        fixed = _SECOND_ARG.sub(lambda m: f"\\{m.group(1)}{m.group(2)}{{{m.group(3)}}}", fixed)
        if fixed == text:
            return text
        text = fixed
    return text


def normalize(answer: str) -> str:
    """The canonical form of one answer string (see the module docstring)."""
    text = _strip_outer_braces(answer.translate(_UNICODE).strip())
    for pattern, replacement in _SYMBOL_SYNONYMS:
        text = pattern.sub(replacement, text)
    text = _THOUSANDS_EXPLICIT.sub(r"\1", text)
    text = _SPACING.sub(" ", text)
    text = _CURRENCY.sub("", text)
    text = _unwrap_text(text)
    text = _DEGREES.sub("", text)
    text = _PERCENT.sub(r"\\%", text)
    text = _AND_OR.sub(",", text).strip()
    text = re.sub(r"[.,;\s]+$", "", text)
    text = _drop_trailing_units(text)
    text = re.sub(r"[.,;\s]+$", "", text)
    text = re.sub(r"^[,;\s]+", "", text)
    if _THOUSANDS_WHOLE.fullmatch(text):
        text = text.replace(",", "").replace(" ", "")
    text = _E_NOTATION.sub(r"\1\\times10^{\2}", text)
    text = _add_missing_braces(text)
    # A NUL marks the one space that must survive: between a control word and a letter.
    text = _COMMAND_GAP.sub("\\1\0", text)
    text = _WHITESPACE.sub("", text).replace("\0", " ")
    text = _strip_outer_braces(text)
    return text
