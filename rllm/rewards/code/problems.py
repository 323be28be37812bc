"""Ground truth (the raw ``tests`` of each format, usually JSON-encoded) -> what to run."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

#: Cases ("stdio" / "call"), one check program ("check", run in the program's namespace), or a
#: pytest module importing the program as ``solution`` ("pytest").
CASES, CHECK, PYTEST = "cases", "check", "pytest"


class GroundTruthError(ValueError):
    """The ground truth is not a valid test specification for its format."""


@dataclass(frozen=True)
class TestCase:
    """One test. ``stdio``: ``stdin`` -> ``expected`` text. ``call``: ``func_name(*args)`` -> ``expected``."""

    index: int
    mode: str
    stdin: str = ""
    expected: Any = None
    args: list | None = None
    func_name: str | None = None
    unwrap_list: bool = False  # taco: an expected ``[x]`` also accepts ``x``

    @property
    def input_size(self) -> int:
        return len(self.stdin) if self.mode == "stdio" else len(json.dumps(self.args))


@dataclass(frozen=True)
class Problem:
    """``kind``: CASES, CHECK or PYTEST; ``cases``: the cases to run (after the cap);
    ``total_cases``: how many the ground truth has (1 for a check or pytest program)."""

    kind: str
    cases: tuple[TestCase, ...] = ()
    total_cases: int = 1
    test_code: str = ""
    units: int = 1  # time-limit multiplier of a check/pytest program (inputs, test functions)


def load_ground_truth(raw: Any) -> Any:
    """Decode JSON (or a Python literal, as in the Codeforces set) until it is not a string."""
    value = raw
    for _ in range(3):
        if not isinstance(value, str | bytes):
            return value
        try:
            value = json.loads(value)
            continue
        except (ValueError, RecursionError):
            pass
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return value
    return value


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value) if not isinstance(value, int | float) else str(value)


def _json_lines(value: Any) -> list:
    """Call-based arguments: a list already, or one JSON value per line (LiveCodeBench)."""
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        return [value]
    args = []
    for line in value.split("\n"):
        if not line.strip():
            continue
        try:
            args.append(json.loads(line))
        except (ValueError, RecursionError):
            try:
                args.append(ast.literal_eval(line))
            except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
                raise GroundTruthError(f"call-based input line is not JSON: {line[:80]!r}") from exc
    return args


def _json_value(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _func_name_from(tests: Any, extra_info: dict | None) -> str | None:
    candidates: list[Any] = []
    if isinstance(tests, dict):
        candidates += [tests.get("fn_name"), tests.get("func_name"), tests.get("metadata")]
    if isinstance(tests, list) and tests and isinstance(tests[0], dict):
        candidates += [tests[0].get("fn_name"), tests[0].get("func_name"), tests[0].get("metadata")]
    if extra_info:
        candidates += [extra_info.get("fn_name"), extra_info.get("func_name"), extra_info.get("metadata")]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip().startswith("{"):
            candidate = _json_value(candidate)
        if isinstance(candidate, dict):
            candidate = candidate.get("func_name") or candidate.get("fn_name")
        if isinstance(candidate, str) and candidate.isidentifier():
            return candidate
    return None


def _cap(cases: list[TestCase], max_tests: int | None) -> tuple[TestCase, ...]:
    """At most ``max_tests`` cases: the longest inputs, longest first (the original's choice)."""
    if max_tests is None or len(cases) <= max_tests:
        return tuple(cases)
    return tuple(sorted(cases, key=lambda c: c.input_size, reverse=True)[:max_tests])


def _inputs_outputs(tests: dict, fmt: str, extra_info: dict | None) -> list[TestCase]:
    inputs, outputs = tests.get("inputs"), tests.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise GroundTruthError(f"{fmt}: tests need equally long 'inputs' and 'outputs' lists")
    func_name = _func_name_from(tests, extra_info)
    if func_name:
        return [
            TestCase(
                i, "call", args=_json_lines(x), expected=_json_value(y), func_name=func_name, unwrap_list=True
            )
            for i, (x, y) in enumerate(zip(inputs, outputs, strict=True))
        ]
    return [
        TestCase(i, "stdio", stdin=_text(x), expected=_text(y))
        for i, (x, y) in enumerate(zip(inputs, outputs, strict=True))
    ]


def _records(tests: list, fmt: str, extra_info: dict | None) -> list[TestCase]:
    """``[{input, output, testtype?, fn_name?}]`` (Codeforces, PrimeIntellect, LiveCodeBench)."""
    cases = []
    func_name = _func_name_from(tests, extra_info)
    for i, test in enumerate(tests):
        if not isinstance(test, dict) or "input" not in test or "output" not in test:
            raise GroundTruthError(f"{fmt}: test {i} is not an {{input, output}} record")
        functional = test.get("testtype") == "functional" or (
            test.get("testtype") is None and (test.get("fn_name") or test.get("func_name"))
        )
        if functional:
            name = _func_name_from(test, None) or func_name
            if not name:
                raise GroundTruthError(
                    f"{fmt}: functional test {i} without a function name (metadata.func_name)"
                )
            cases.append(
                TestCase(
                    i,
                    "call",
                    args=_json_lines(test["input"]),
                    expected=_json_value(test["output"]),
                    func_name=name,
                    unwrap_list=fmt != "livecodebench",
                )
            )
        else:
            cases.append(TestCase(i, "stdio", stdin=_text(test["input"]), expected=_text(test["output"])))
    return cases


def _count_inputs(test_code: str) -> int:
    """Inputs of a HumanEval+ check program: the ``inputs = [...]`` literal, else its asserts."""
    try:
        tree = ast.parse(test_code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return 1
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "inputs" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            return max(1, len(node.value.elts))
    return max(1, sum(isinstance(node, ast.Assert) for node in ast.walk(tree)))


def _code_field(tests: Any, fmt: str, keys: tuple[str, ...]) -> str:
    if isinstance(tests, str):
        return tests
    if isinstance(tests, dict):
        for key in keys:
            if isinstance(tests.get(key), str):
                return tests[key]
    raise GroundTruthError(f"{fmt}: expected test code (a string or a dict with {' / '.join(keys)})")


def build_problem(fmt: str, ground_truth: Any, extra_info: dict | None, max_tests: int | None) -> Problem:
    """What to run for ``fmt`` (a key of ``FORMATS``); raises GroundTruthError on malformed input."""
    tests = load_ground_truth(ground_truth)
    if fmt == "leetcode":
        return Problem(CHECK, test_code=_code_field(tests, fmt, ("functional", "test")))
    if fmt == "humanevalplus":
        code = _code_field(tests, fmt, ("test", "functional"))
        return Problem(CHECK, test_code=code, units=_count_inputs(code))
    if fmt == "kodcode":
        code = _code_field(tests, fmt, ("test", "tests"))
        return Problem(PYTEST, test_code=code, units=max(1, len(re.findall(r"^\s*def test_", code, re.M))))
    if isinstance(tests, dict) and isinstance(tests.get("tests"), list | dict):
        extra_info = {**(extra_info or {}), **{k: v for k, v in tests.items() if k != "tests"}}
        tests = tests["tests"]
    if not isinstance(tests, dict | list):
        raise GroundTruthError(f"{fmt}: tests must be a list of records or an {{inputs, outputs}} dict")
    try:
        cases = (
            _inputs_outputs(tests, fmt, extra_info)
            if isinstance(tests, dict)
            else _records(tests, fmt, extra_info)
        )
        for case in cases:
            if case.mode == "call":
                json.dumps(case.args)  # arguments travel to the sandbox as JSON
    except GroundTruthError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise GroundTruthError(f"{fmt}: malformed tests ({type(exc).__name__}: {exc})") from exc
    if not cases:
        raise GroundTruthError(f"{fmt}: no test cases")
    return Problem(CASES, cases=_cap(cases, max_tests), total_cases=len(cases))
