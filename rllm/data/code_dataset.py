"""Code datasets (DeepCoder train, LiveCodeBench / Codeforces / HumanEval+ tests) -> verl RL parquet.

``ground_truth`` is ``json.dumps(tests)``, with ``tests`` in the source's own shape (the graders
``json.loads`` it back):

    livecodebench, primeintellect, codeforces   list of test objects, each with ``input``, ``output``
                                                (LCB also ``testtype``: ``stdin`` | ``functional``)
    taco, apps, code_contests                   ``{"inputs": [...], "outputs": [...]}`` (+ ``fn_name``)
    leetcode                                    ``{"functional": "<check program>"}``
    humanevalplus, kodcode                      a string of test code

When a record's ``metadata`` holds a ``func_name`` (LiveCodeBench functional problems), the
metadata object is merged into the tests as the original did: each test object of a list gets a
``"metadata": {"func_name": ..., ...}`` key (a dict of tests gets one ``metadata`` key).
LiveCodeBench records with functional tests but no ``func_name`` are invalid.

Tests stored as a string in a structured format (Codeforces stores a Python literal) are parsed
with ``json.loads`` or else ``ast.literal_eval`` (never ``eval``) and stored as JSON.

Prompts: LiveCodeBench's instruction wrapper for ``livecodebench``; the ``problem`` text as is for
every other source. ``data_source`` is the source name (``livecodebench``, ``codeforces``, ...),
which the reward router maps to its grader.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from functools import partial
from typing import Any

from rllm.data.prompts import livecodebench_prompt, raw_prompt
from rllm.data.to_parquet import Part, rl_row
from rllm.data.validate import RecordError, require_mapping, require_text

# How each source stores its tests.
CASES = "cases"  # list of {input, output, ...}
IO_LISTS = "io_lists"  # {inputs: [...], outputs: [...]}
CHECK_PROGRAM = "check_program"  # {functional: "<check program>"}
SOURCE = "source"  # test code as a string

TEST_KINDS = {
    "livecodebench": CASES,
    "primeintellect": CASES,
    "codeforces": CASES,
    "taco": IO_LISTS,
    "apps": IO_LISTS,
    "code_contests": IO_LISTS,
    "leetcode": CHECK_PROGRAM,
    "humanevalplus": SOURCE,
    "kodcode": SOURCE,
}


@dataclass(frozen=True)
class CodeItem:
    """A validated record: the user prompt and ``ground_truth = json.dumps(tests)``."""

    prompt: str
    ground_truth: str


def check_code_record(record: Any, source: str) -> CodeItem:
    """Validate one raw record of ``source``; returns its prompt and JSON-encoded (merged) tests.

    Raises:
        RecordError: missing/mistyped fields, empty, unparsable or non-JSON tests, LCB functional
            tests without ``func_name``.
    """
    record = require_mapping(record)
    problem = require_text(record, "problem")
    if record.get("tests") is None:
        raise RecordError("missing_field", "no 'tests' field")
    tests = parse_tests(record["tests"], TEST_KINDS[source])
    metadata = _metadata(record)
    if source == "livecodebench":
        _require_func_name_if_functional(tests, metadata)
        prompt = livecodebench_prompt(problem, _starter_code(record))
    else:
        prompt = raw_prompt(problem)
    if "func_name" in metadata:
        tests = _merge_metadata(tests, metadata)
    return CodeItem(prompt, _to_json(tests))


def parse_tests(tests: Any, kind: str) -> Any:
    """Check ``tests`` against ``kind``; string-encoded structured tests are decoded first."""
    if kind == SOURCE:
        if not isinstance(tests, str):
            raise RecordError("wrong_type", f"'tests' is a {type(tests).__name__}, expected test code")
        if not tests.strip():
            raise RecordError("empty_tests", "'tests' is empty")
        return tests
    if isinstance(tests, str):
        tests = _decode(tests)
    if kind == CASES:
        _check_cases(tests)
    elif kind == IO_LISTS:
        _check_io_lists(tests)
    else:
        _check_program(tests)
    return tests


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise RecordError(
            "unparsable_tests", f"'tests' is neither JSON nor a Python literal ({type(exc).__name__})"
        ) from None


def _to_json(tests: Any) -> str:
    # A Python literal may hold values JSON cannot (sets, bytes, complex numbers).
    try:
        return json.dumps(tests)
    except (TypeError, ValueError) as exc:
        raise RecordError("unparsable_tests", f"'tests' cannot be stored as JSON ({exc})") from None


def _check_cases(tests: Any) -> None:
    if not isinstance(tests, list):
        raise RecordError("wrong_type", f"'tests' is a {type(tests).__name__}, expected a list of tests")
    if not tests:
        raise RecordError("empty_tests", "'tests' is an empty list")
    for i, test in enumerate(tests):
        if not isinstance(test, dict):
            raise RecordError("bad_tests", f"tests[{i}] is a {type(test).__name__}, expected an object")
        missing = [key for key in ("input", "output") if key not in test]
        if missing:
            raise RecordError("bad_tests", f"tests[{i}] has no {' or '.join(repr(k) for k in missing)}")


def _check_io_lists(tests: Any) -> None:
    if not isinstance(tests, dict):
        raise RecordError("wrong_type", f"'tests' is a {type(tests).__name__}, expected an object")
    inputs, outputs = tests.get("inputs"), tests.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise RecordError("bad_tests", "'tests' needs 'inputs' and 'outputs' lists")
    if not inputs:
        raise RecordError("empty_tests", "'tests.inputs' is empty")
    if len(inputs) != len(outputs):
        raise RecordError("bad_tests", f"{len(inputs)} inputs but {len(outputs)} outputs")


def _check_program(tests: Any) -> None:
    program = tests.get("functional") if isinstance(tests, dict) else None
    if not isinstance(program, str) or not program.strip():
        raise RecordError("bad_tests", "'tests' needs a non-empty 'functional' check program")


def _metadata(record: dict[str, Any]) -> dict[str, Any]:
    metadata = record.get("metadata") or {}
    if isinstance(metadata, str):
        # LiveCodeBench's upstream release stores metadata as a JSON string.
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError:
            raise RecordError("wrong_type", "'metadata' is a string that is not JSON") from None
    if not isinstance(metadata, dict):
        raise RecordError("wrong_type", f"'metadata' is a {type(metadata).__name__}, expected an object")
    return metadata


def _starter_code(record: dict[str, Any]) -> str | None:
    starter = record.get("starter_code")
    if starter is not None and not isinstance(starter, str):
        raise RecordError("wrong_type", f"'starter_code' is a {type(starter).__name__}, expected a string")
    return starter


def _require_func_name_if_functional(tests: list[dict], metadata: dict[str, Any]) -> None:
    if not any(test.get("testtype") == "functional" for test in tests):
        return
    name = metadata.get("func_name")
    if not isinstance(name, str) or not name.strip():
        raise RecordError("missing_func_name", "functional tests but no 'metadata.func_name'")


def _merge_metadata(tests: Any, metadata: dict[str, Any]) -> Any:
    if isinstance(tests, list):
        return [{**test, "metadata": metadata} for test in tests]
    if isinstance(tests, dict):
        return {**tests, "metadata": metadata}
    return tests


def _code_row(item: CodeItem, index: int, *, data_source: str, split: str) -> dict:
    return rl_row(
        data_source=data_source,
        content=item.prompt,
        ability="code",
        ground_truth=item.ground_truth,
        split=split,
        index=index,
    )


def code_part(source: str, split: str) -> Part:
    """The raw file of ``source`` for ``split``; its key (and single-part output) is ``<split>_<source>``."""
    return Part(
        f"{split}_{source}",
        f"{split}/code/{source}.json",
        partial(check_code_record, source=source),
        partial(_code_row, data_source=source, split=split),
    )


TEST_SOURCES = ("livecodebench", "codeforces", "humanevalplus", "code_contests", "leetcode", "taco")
TRAIN_SOURCES = ("primeintellect", "taco", "livecodebench", "kodcode")
# The original's training mix, in its order.
DEEPCODER_TRAIN = ("primeintellect", "taco", "livecodebench")
TRAIN_NAME = "deepcoder_train"

_TEST_PARTS = {source: code_part(source, "test") for source in TEST_SOURCES}
_TRAIN_PARTS = {source: code_part(source, "train") for source in TRAIN_SOURCES}

OUTPUTS: dict[str, list[Part]] = {
    **{part.key: [part] for part in _TEST_PARTS.values()},
    **{part.key: [part] for part in _TRAIN_PARTS.values()},
    TRAIN_NAME: [_TRAIN_PARTS[source] for source in DEEPCODER_TRAIN],
}
# What the original script wrote.
DEFAULT_OUTPUTS = (
    "test_livecodebench",
    "test_codeforces",
    "test_humanevalplus",
    *(f"train_{source}" for source in DEEPCODER_TRAIN),
    TRAIN_NAME,
)
