"""Code grading through the real sandbox: extraction, comparison, every format, concurrency."""

from __future__ import annotations

import json
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

from rllm.rewards import compute_score
from rllm.rewards.code import FORMATS, SandboxConfig, extract_code, grade_code, grade_code_batch
from rllm.rewards.code.compare import outputs_match, values_match
from rllm.rewards.code.problems import build_problem, load_ground_truth


def fenced(code: str, lang: str = "python") -> str:
    return f"Reasoning...\n</think>\nHere is the program:\n```{lang}\n{code}\n```\nDone."


# -- extraction ---------------------------------------------------------------------------------


def test_extract_takes_the_last_closed_block():
    response = "```python\nprint(1)\n```\ntext\n```py\nprint(2)\n```\n```python\nprint(3)"
    assert extract_code(response) == "print(2)"


@pytest.mark.parametrize(
    "response", ["", None, "no code at all", "```python\nprint(1)", "```python\n\n```", "inline ```x``` only"]
)
def test_extract_none(response):
    assert extract_code(response) is None


def test_extract_plain_and_indented_fences():
    assert extract_code("```\na = 1\nprint(a)\n```") == "a = 1\nprint(a)"
    assert extract_code("1. step\n   ```python\n   x = 1\n   ```\n") == "   x = 1"


def test_no_code_reason():
    result = grade_code("livecodebench", "I think the answer is 42.", json.dumps([]))
    assert result["reason"] == "no_code" and result["score"] == 0.0 and result["acc"] is False


# -- comparison ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "actual,expected,tol,ok",
    [
        ("1 2\n3\n", "1 2\n3", None, True),
        ("  1   2 \r\n3\n\n", "1 2\n3", None, True),
        ("1 2 3", "1 2\n3", None, False),
        ("1.50", "1.5", None, True),
        ("0.3333333", "0.333333333", None, False),
        ("0.3333333", "0.333333333", 1e-6, True),
        ("1000001", "1000000", 1e-6, False),
        ("YES", "yes", None, False),
        ("", "", None, True),
        ("1_000", "1000", None, False),
    ],
)
def test_outputs_match(actual, expected, tol, ok):
    assert outputs_match(actual, expected, tol) is ok


def test_values_match():
    assert values_match([1, [2, 3]], [1, [2, 3]])
    assert not values_match(True, "true")
    assert values_match(0.1 + 0.2, 0.3, 1e-9) and not values_match(0.1 + 0.2, 0.3)
    assert not values_match(True, 1.5, 1e-6)


# -- ground truth -------------------------------------------------------------------------------


def test_ground_truth_decoding():
    tests = [{"input": "1", "output": "2"}]
    assert load_ground_truth(json.dumps(tests)) == tests
    assert load_ground_truth(repr(tests)) == tests  # Codeforces: a Python literal string
    assert load_ground_truth(json.dumps(json.dumps(tests))) == tests
    assert load_ground_truth(tests) is tests


def test_at_most_15_tests_with_the_longest_inputs():
    inputs = [str(i) * (i + 1) for i in range(20)]
    problem = build_problem("taco", {"inputs": inputs, "outputs": inputs}, None, FORMATS["taco"].max_tests)
    assert problem.total_cases == 20 and len(problem.cases) == 15
    assert [c.index for c in problem.cases] == list(range(19, 4, -1))


@pytest.mark.parametrize(
    "fmt,gt",
    [
        ("taco", "{not json"),
        ("taco", json.dumps({"inputs": ["1"]})),
        ("codeforces", json.dumps([{"input": "1"}])),
        ("livecodebench", json.dumps([{"input": "1", "output": "1", "testtype": "functional"}])),
        ("livecodebench", json.dumps(42)),
        ("leetcode", json.dumps({"other": 1})),
        ("primeintellect", json.dumps([])),
        ("codeforces", repr([{"input": "1", "output": "1"}, "junk"])),
        ("taco", repr({"fn_name": "f", "inputs": [[{1, 2}]], "outputs": [[1]]})),  # a set is not JSON
        ("taco", "[" * 100000),
    ],
)
def test_malformed_ground_truth_is_a_format_error(fmt, gt):
    result = grade_code(fmt, fenced("print(1)"), gt)
    assert result["reason"] == "format_error" and result["message"] and result["score"] == 0.0


def test_unknown_format_is_a_format_error():
    result = grade_code("brainfuck", fenced("print(1)"), "[]")
    assert result["reason"] == "format_error" and "brainfuck" in result["message"]


# -- formats ------------------------------------------------------------------------------------

SUM_STDIN = "a, b = map(int, input().split())\nprint(a + b)"
SUM_WRONG = "a, b = map(int, input().split())\nprint(a - b)"
IO = {"inputs": ["1 2\n", "10 -3\n", "0 0\n"], "outputs": ["3\n", "7\n", "0\n"]}


@pytest.mark.parametrize("fmt", ["taco", "apps", "code_contests"])
def test_inputs_outputs_stdio(fmt):
    assert grade_code(fmt, fenced(SUM_STDIN), json.dumps(IO))["reason"] == "correct"
    wrong = grade_code(fmt, fenced(SUM_WRONG), json.dumps(IO))
    assert wrong["reason"] == "wrong" and wrong["score"] == 0.0
    assert [t["passed"] for t in wrong["tests"]] == [False]  # stops at the first failure


def test_taco_call_based():
    tests = {"fn_name": "add", "inputs": [[1, 2], [[1], [2]]], "outputs": [[3], [[1, 2]]]}
    assert (
        grade_code("taco", fenced("def add(a, b):\n    return a + b"), json.dumps(tests))["reason"]
        == "correct"
    )
    result = grade_code("taco", fenced("def add(a, b):\n    return 0"), json.dumps(tests))
    assert result["reason"] == "wrong"
    missing = grade_code("taco", fenced("def plus(a, b):\n    return a + b"), json.dumps(tests))
    assert missing["reason"] == "runtime_error"


def test_codeforces_literal_tests_and_float_tolerance():
    tests = repr([{"input": "3\n", "output": "0.333333333\n"}, {"input": "4\n", "output": "0.25"}])
    ok = grade_code("codeforces", fenced("print(f'{1 / int(input()):.7f}')"), tests)
    assert ok["reason"] == "correct", ok
    bad = grade_code("codeforces", fenced("print(f'{1 / int(input()):.2f}')"), tests)
    assert bad["reason"] == "wrong"


def test_primeintellect_stdio_and_call():
    stdio = [{"input": "1 2", "output": "3"}]
    assert grade_code("primeintellect", fenced(SUM_STDIN), json.dumps(stdio))["acc"]
    call = [{"input": [2, 5], "output": [7], "fn_name": "add"}]
    assert grade_code("primeintellect", fenced("def add(a, b):\n    return a + b"), json.dumps(call))["acc"]
    assert not grade_code("primeintellect", fenced("def add(a, b):\n    return a * b"), json.dumps(call))[
        "acc"
    ]


def test_livecodebench_stdin():
    tests = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]
    assert grade_code("livecodebench", fenced(SUM_STDIN), json.dumps(tests))["acc"]
    assert grade_code("livecodebench", fenced(SUM_WRONG), json.dumps(tests))["reason"] == "wrong"


LCB_FUNCTIONAL = [
    {
        "input": "[1, 2, 3]\n2",
        "output": "[3, 4, 5]",
        "testtype": "functional",
        "metadata": {"func_name": "shift"},
    },
    {"input": "[]\n7", "output": "[]", "testtype": "functional", "metadata": {"func_name": "shift"}},
]


def test_livecodebench_functional_class_solution():
    good = "class Solution:\n    def shift(self, nums: List[int], k: int) -> List[int]:\n        return [x + k for x in nums]"
    assert grade_code("livecodebench", fenced(good), json.dumps(LCB_FUNCTIONAL))["reason"] == "correct"
    tuple_result = good.replace("return [x + k for x in nums]", "return tuple(x + k for x in nums)")
    assert grade_code("livecodebench", fenced(tuple_result), json.dumps(LCB_FUNCTIONAL))["acc"]
    bad = good.replace("x + k", "x - k")
    assert grade_code("livecodebench", fenced(bad), json.dumps(LCB_FUNCTIONAL))["reason"] == "wrong"


def test_livecodebench_functional_name_from_extra_info():
    tests = [{k: v for k, v in t.items() if k != "metadata"} for t in LCB_FUNCTIONAL]
    code = "def shift(nums, k):\n    return [x + k for x in nums]"
    extra = {"metadata": json.dumps({"func_name": "shift"})}
    assert grade_code("livecodebench", fenced(code), json.dumps(tests), extra)["acc"]


LEETCODE = {
    "functional": "def check(candidate):\n    assert candidate(nums=[3, 1, 2]) == [1, 2, 3]\n"
    "    assert candidate(nums=[]) == []\n\n\ncheck(Solution().sortIt)"
}


def test_leetcode():
    good = "class Solution:\n    def sortIt(self, nums: List[int]) -> List[int]:\n        return list(SortedList(nums))"
    assert grade_code("leetcode", fenced(good), json.dumps(LEETCODE))["reason"] == "correct"
    bad = "class Solution:\n    def sortIt(self, nums):\n        return nums"
    result = grade_code("leetcode", fenced(bad), json.dumps(LEETCODE))
    assert result["reason"] == "wrong" and "AssertionError" in result["message"]
    crash = "class Solution:\n    def sortIt(self, nums):\n        return nums[10]"
    assert grade_code("leetcode", fenced(crash), json.dumps(LEETCODE))["reason"] == "runtime_error"


def test_main_block_of_a_check_format_does_not_run():
    code = "class Solution:\n    def sortIt(self, nums):\n        return sorted(nums)\n\nif __name__ == '__main__':\n    input()"
    assert grade_code("leetcode", fenced(code), LEETCODE)["acc"]


HUMANEVAL_TEST = """
import numpy as np

def assertion(out, exp, atol):
    if isinstance(exp, float):
        assert np.allclose(out, exp, atol=atol)
    else:
        assert out == exp

def check(candidate):
    inputs = [[1.0, 2.0], [0.5, 0.25], [3, 4]]
    results = [3.0, 0.75, 7]
    for inp, exp in zip(inputs, results):
        assertion(candidate(*inp), exp, 1e-6)

check(add)
"""


def test_humanevalplus():
    assert grade_code(
        "humanevalplus", fenced("def add(a, b):\n    return a + b"), json.dumps(HUMANEVAL_TEST)
    )["acc"]
    result = grade_code("humanevalplus", fenced("def add(a, b):\n    return a"), HUMANEVAL_TEST)
    assert result["reason"] == "wrong"
    slow = "import time\ndef add(a, b):\n    time.sleep(5)\n    return a + b"
    assert grade_code("humanevalplus", fenced(slow), HUMANEVAL_TEST)["reason"] == "timeout"  # 1 s x 3 inputs


KODCODE_TEST = """
import pytest
from solution import reverse_words

def test_simple():
    assert reverse_words("a b c") == "c b a"

@pytest.mark.parametrize("text", ["", "x"])
def test_trivial(text):
    assert reverse_words(text) == text

def test_type():
    with pytest.raises(AttributeError):
        reverse_words(None)
"""


def test_kodcode_pytest():
    good = "def reverse_words(s):\n    return ' '.join(s.split()[::-1])"
    assert grade_code("kodcode", fenced(good), json.dumps(KODCODE_TEST))["reason"] == "correct"
    bad = "def reverse_words(s):\n    return s"
    assert grade_code("kodcode", fenced(bad), KODCODE_TEST)["reason"] == "wrong"


def test_compile_and_runtime_errors_and_timeout():
    tests = json.dumps(IO)
    assert grade_code("taco", fenced("def f(:\n    pass"), tests)["reason"] == "compile_error"
    assert grade_code("taco", fenced("print(1 / 0)"), tests)["reason"] == "runtime_error"
    looping = grade_code("taco", fenced("while True: pass"), tests, timeout_per_test=0.5)
    assert looping["reason"] == "timeout" and looping["tests"][0]["time"] < 3


def test_rewards_and_unknown_kwargs():
    tests = json.dumps(IO)
    good = grade_code(
        "taco", fenced(SUM_STDIN), tests, correct_reward=2.5, incorrect_reward=-1, some_verl_kwarg=1
    )
    bad = grade_code("taco", fenced(SUM_WRONG), tests, correct_reward=2.5, incorrect_reward=-1)
    assert (good["score"], bad["score"]) == (2.5, -1.0)
    assert good["num_tests"] == 3 and good["num_run"] == 3 and all(t["passed"] for t in good["tests"])


def test_compute_score_routes_code_sources():
    result = compute_score(
        data_source="livecodebench",
        solution_str=fenced(SUM_STDIN),
        ground_truth=json.dumps([{"input": "2 2", "output": "4", "testtype": "stdin"}]),
    )
    assert result["acc"] and result["score"] == 1.0


def test_custom_module_list():
    code = "import sortedcontainers\nprint('ok')"
    tests = json.dumps({"inputs": [""], "outputs": ["ok"]})
    assert grade_code("taco", fenced(code), tests)["acc"]
    config = SandboxConfig(modules=(), preload=(), workers=1)
    result = grade_code("taco", fenced(code), tests, sandbox=config)
    assert result["reason"] == "runtime_error" and "sortedcontainers" in result["message"]


# -- concurrency --------------------------------------------------------------------------------


def _task(i: int) -> dict:
    code = SUM_STDIN if i % 2 == 0 else SUM_WRONG
    return {"code_format": "taco", "solution_str": fenced(code), "ground_truth": json.dumps(IO)}


def _grade_task(i: int) -> bool:
    return grade_code(**_task(i))["acc"]


def test_batch_api_keeps_order():
    results = grade_code_batch([_task(i) for i in range(12)], workers=2)
    assert [r["acc"] for r in results] == [i % 2 == 0 for i in range(12)]


def test_from_threads():
    results: dict[int, bool] = {}

    def work(i: int) -> None:
        results[i] = _grade_task(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: i % 2 == 0 for i in range(8)}


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_from_a_process_pool(method):
    _grade_task(0)  # the parent has live fork servers when it forks
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context(method)) as pool:
        assert list(pool.map(_grade_task, range(4))) == [True, False, True, False]
    assert _grade_task(2)  # and still uses its own afterwards


@pytest.mark.slow
def test_from_ray_workers():
    ray = pytest.importorskip("ray")
    tasks = [_task(i) for i in range(3)]

    def grade_in_worker(task: dict) -> bool:  # defined here so Ray ships it by value
        from rllm.rewards.code import grade_code as grade

        return grade(**task)["acc"]

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(grade_in_worker)
        assert ray.get([remote.remote(task) for task in tasks]) == [True, False, True]
    finally:
        ray.shutdown()


@pytest.mark.parametrize(
    "code",
    [
        "import threading\nthreading.stack_size(2**26)\n"
        "def main():\n    a, b = map(int, input().split())\n    print(a + b)\n"
        "threading.Thread(target=main).start()",
        "import atexit, sys\nout = []\natexit.register(lambda: sys.stdout.write(''.join(out)))\n"
        "a, b = map(int, input().split())\nout.append(f'{a + b}\\n')",
        "import sys\na, b = map(int, sys.stdin.buffer.read().split())\nsys.stdout.write(str(a + b))\nsys.exit(0)",
        "a, b = map(int, input().split())\nprint(a + b)\nexit()",
    ],
    ids=["main-in-a-thread", "output-at-exit", "buffer-io-and-exit", "exit-builtin"],
)
def test_stdio_program_shapes(code):
    assert grade_code("taco", fenced(code), json.dumps(IO))["reason"] == "correct"
