"""Per-record validation: each kind of bad record is caught, named and counted; good ones are cleaned."""

import json
from pathlib import Path

import pytest

from rllm.data.code_dataset import check_code_record
from rllm.data.errors import DataError
from rllm.data.math_dataset import check_math_record, normalize_answer
from rllm.data.validate import RecordError, validate_records

INVALID = Path(__file__).parent / "fixtures" / "data" / "invalid"


def _load(name):
    return json.loads((INVALID / name).read_text())


def test_math_file_with_bad_records_is_reported_per_record_with_counts():
    items, report = validate_records("math.json", _load("math.json"), check_math_record)
    assert [index for index, _ in items] == [0, 10]
    assert items[1][1].answer == ["1", "2"]
    assert [(i.index, i.reason) for i in report.issues] == [
        (1, "missing_field"),
        (2, "empty_answer"),
        (3, "wrong_type"),
        (4, "missing_field"),
        (5, "wrong_type"),
        (6, "empty_answer"),
        (7, "wrong_type"),
        (8, "missing_field"),
        (9, "wrong_type"),
    ]
    assert report.summary() == (
        "math.json: kept 2 of 11, skipped 9 (empty_answer: 2, missing_field: 3, wrong_type: 4)"
    )
    assert report.details()[0] == "  record 1: missing_field: no 'answer' field"
    assert len(report.details(limit=3)) == 4
    assert report.details(limit=3)[-1] == "  ... and 6 more (--max-issues 0 lists all)"


def test_strict_turns_the_first_bad_record_into_one_line():
    _, report = validate_records("math.json", _load("math.json"), check_math_record)
    report.raise_if_strict(False)
    with pytest.raises(DataError) as err:
        report.raise_if_strict(True)
    message = str(err.value)
    assert message.startswith("math.json: kept 2 of 11, skipped 9")
    assert "first: record 1: no 'answer' field" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("  204 ", "204"),
        (142.0, "142"),
        (0.5, "0.5"),
        (-3.0, "-3"),
        (7, "7"),
        (["9.6\n"], ["9.6"]),
        (["3e8\n", 300000000], ["3e8", "300000000"]),
    ],
)
def test_answers_are_normalized_to_comparable_text(answer, expected):
    assert normalize_answer(answer) == expected


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty_answer"),
        ([], "empty_answer"),
        (["1", " "], "empty_answer"),
        (float("nan"), "wrong_type"),
        ({"a": 1}, "wrong_type"),
        (False, "wrong_type"),
    ],
)
def test_bad_answers(answer, reason):
    with pytest.raises(RecordError) as err:
        normalize_answer(answer)
    assert err.value.reason == reason


def test_codeforces_literal_tests_are_parsed_without_eval(tmp_path, monkeypatch):
    items, report = validate_records(
        "codeforces.json", _load("codeforces.json"), lambda r: check_code_record(r, "codeforces")
    )
    assert [index for index, _ in items] == [0]
    assert json.loads(items[0][1].ground_truth) == [{"input": "1", "output": "1"}]
    assert [(i.index, i.reason) for i in report.issues] == [
        (1, "unparsable_tests"),
        (2, "unparsable_tests"),
        (3, "empty_tests"),
        (4, "bad_tests"),
        (5, "missing_field"),
        (6, "wrong_type"),
    ]
    assert report.issues[3].detail == "tests[0] has no 'output'"


def test_livecodebench_functional_tests_need_a_func_name():
    items, report = validate_records(
        "lcb.json", _load("livecodebench.json"), lambda r: check_code_record(r, "livecodebench")
    )
    assert [index for index, _ in items] == [2]
    assert [(i.index, i.reason) for i in report.issues] == [(0, "missing_func_name"), (1, "wrong_type")]


def test_livecodebench_func_name_is_merged_into_every_test():
    record = {
        "problem": "Q",
        "starter_code": "class Solution:\n    def f(self):\n        ",
        "tests": [{"input": "1", "output": "2", "testtype": "functional"}] * 2,
        "metadata": {"func_name": "f"},
    }
    tests = json.loads(check_code_record(record, "livecodebench").ground_truth)
    merged = {"input": "1", "output": "2", "testtype": "functional", "metadata": {"func_name": "f"}}
    assert tests == [merged, merged]
    # The raw record is not modified.
    assert "metadata" not in record["tests"][0]


def test_metadata_given_as_json_string_is_decoded():
    record = {
        "problem": "Q",
        "tests": [{"input": "1", "output": "1", "testtype": "functional"}],
        "metadata": '{"func_name": "g"}',
    }
    tests = json.loads(check_code_record(record, "livecodebench").ground_truth)
    assert tests[0]["metadata"] == {"func_name": "g"}


@pytest.mark.parametrize(
    ("source", "tests", "reason"),
    [
        ("taco", {"inputs": ["1"], "outputs": []}, "bad_tests"),
        ("taco", {"inputs": [], "outputs": []}, "empty_tests"),
        ("taco", ["not", "a", "dict"], "wrong_type"),
        ("code_contests", {"inputs": ["1"]}, "bad_tests"),
        ("leetcode", {"functional": "  "}, "bad_tests"),
        ("humanevalplus", "", "empty_tests"),
        ("humanevalplus", ["assert True"], "wrong_type"),
        ("kodcode", 3, "wrong_type"),
        ("primeintellect", [1, 2], "bad_tests"),
    ],
)
def test_bad_tests_per_format(source, tests, reason):
    with pytest.raises(RecordError) as err:
        check_code_record({"problem": "P", "tests": tests}, source)
    assert err.value.reason == reason


def test_json_string_tests_are_accepted_for_structured_formats():
    item = check_code_record({"problem": "P", "tests": '{"inputs": ["1"], "outputs": ["2"]}'}, "taco")
    assert json.loads(item.ground_truth) == {"inputs": ["1"], "outputs": ["2"]}


def test_literal_values_json_cannot_hold_are_reported():
    with pytest.raises(RecordError) as err:
        check_code_record({"problem": "P", "tests": "[{'input': {1, 2}, 'output': b'x'}]"}, "codeforces")
    assert err.value.reason == "unparsable_tests"
