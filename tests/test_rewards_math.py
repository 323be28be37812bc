"""The math grader: extraction, each equivalence class (true and false), the grade_math contract,
pathological inputs, process-based timeouts, and calls from threads, processes and Ray."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

from rllm.rewards import compute_score
from rllm.rewards.math import answers_equal, grade_math, reference_answers, warm_up
from rllm.rewards.math.extract import answer_of, last_boxed, solution_part
from rllm.rewards.math.grader import WorkerOracle
from rllm.rewards.math.timeout import CheckTimeout, WorkerFailed, WorkerPool, default_pool

# Loose bound for "returns quickly": generous because the test machine is shared; a hang or a
# quadratic blow-up takes far longer.
QUICK = 10.0
# A check sympy cannot finish: the integer-point falsification sees zeros (sin(pi n) = 0 at every
# integer), so the worker goes on to simplify a huge rational function (minutes).
HARD_FOR_SYMPY = "\\sum_{k=1}^{n}\\sin(\\pi n)\\frac{(x+1)^{40}(y-3)^{33}}{(x-1)^{35}(y+2)^{29}}"
HARD_GOLD = "\\sum_{k=1}^{n}(x+2)^{5}\\sin(\\pi n)"


def symbolic_equal(pred: str, gold: str) -> bool:
    """answers_equal with the production oracle (sympy in the worker pool)."""
    return answers_equal(pred, gold, WorkerOracle(default_pool(), time.monotonic() + 30))


def boxed(answer: str) -> str:
    return f"<think>reasoning</think>The answer is $\\boxed{{{answer}}}$."


# Extraction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so \\boxed{5}.", "5"),
        ("\\boxed{1} then \\boxed{2}", "2"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),
        ("\\boxed {7}", "7"),
        ("\\boxed 5$", "5"),
        ("\\fbox{x+1}", "x+1"),
        ("\\boxed{a}\\fbox{b}", "b"),
        ("no box here", None),
        ("\\boxed{\\frac{1}{2}", None),
        ("\\boxed{1} and a broken \\boxed{2", None),
        ("\\boxedx", None),
    ],
)
def test_last_boxed(text, expected):
    assert last_boxed(text) == expected


def test_solution_part_uses_text_after_first_think_end():
    assert solution_part("a</think>b</think>c") == "b</think>c"
    assert solution_part("no tag") == "no tag"
    assert solution_part("no tag", require_think=True) is None


def test_answer_in_thinking_is_ignored_when_think_end_present():
    assert answer_of("\\boxed{1}</think>no answer") == (None, "no_answer")
    assert answer_of("\\boxed{1}</think>\\boxed{2}") == ("2", None)


def test_missing_think_end():
    assert answer_of("\\boxed{3}") == ("3", None)
    assert answer_of("\\boxed{3}", require_think=True) == (None, "format_error")


# Equivalence classes ------------------------------------------------------------------------

EQUAL = {
    "integers": [("-5", "-5"), ("007", "7"), ("-0", "0")],
    "decimals": [(".4", "0.4"), ("1000.0", "1000"), ("4.0", "4"), ("0.25", "\\frac{1}{4}")],
    "fractions": [
        ("\\frac{10}{9}", "10/9"),
        ("\\dfrac{2}{4}", "\\frac12"),
        ("\\tfrac{1}{3}", "1/3"),
        ("\\cfrac{1}{3}", "\\frac{1}{3}"),
        ("\\frac94\\pi", "\\frac{9}{4}\\pi"),
        ("\\frac{-1}{2}", "-\\frac12"),
    ],
    "mixed numbers": [
        ("1\\frac{4}{5}", "\\frac{9}{5}"),
        ("137 \\frac{1}{2}", "275/2"),
        ("-2\\frac12", "-2.5"),
    ],
    "rounded decimals": [
        ("0.0833333333333333", "\\frac{1}{12}"),
        ("4.1231", "\\sqrt{17}"),
        ("2.6667", "8/3"),
    ],
    "percentages": [("28\\%", "28"), ("28 percent", "28\\%"), ("50\\%", "0.5"), ("20 \\%", "20")],
    "degrees": [("90^\\circ", "90"), ("30°", "30^{\\circ}"), ("45^{\\circ}", "45"), ("{106^\\circ}", "106")],
    "units and text": [
        ("\\frac{1}{3} \\text{meters}", "1/3"),
        ("15\\mbox{ cm}^2", "15"),
        ("12 cm", "12"),
        ("\\$18.90", "18.9"),
        ("$15000 \\text{ kcal m}^{-2} \\text{yr}^{-1}$", "15000"),
        ("{864 \\mbox{ inches}^2}", "864"),
        ("\\text{Evelyn}", "Evelyn"),
        ("\\text{Even}", "even"),
    ],
    "thousands separators": [
        ("7,425,000", "7425000"),
        ("1 000", "1000"),
        ("14{,}916", "14916"),
        ("11,\\! 111,\\! 100", "11111100"),
    ],
    "trailing punctuation": [("17.", "17"), ("x+1.", "x+1"), ("(1,2);", "(1,2)")],
    "tuples and intervals": [
        ("(1,4.5)", "(1,\\frac{9}{2})"),
        ("\\left( 3, \\frac{\\pi}{2} \\right)", "(3,\\frac{\\pi}{2})"),
        ("[0,1)", "[0, 1)"),
        ("(-\\infty, 1) \\cup (2, \\infty)", "(2,\\infty)\\cup(-\\infty,1)"),
        ("x \\in [-2,7]", "[-2, 7]"),
        ("(0;0;0)", "(0,0,0)"),
    ],
    "lists and sets": [
        ("1,2,3", "3, 2, 1"),
        ("\\{1,2\\}", "\\{2,1\\}"),
        ("(1,2),(3,4)", "(3,4),(1,2)"),
        ("6 \\text{ and } 8", "8, 6"),
        ("(11,7)or(7,11)", "(7,11),(11,7)"),
        ("\\{-12, -11\\}", "-12;-11"),
        ("1 \\pm \\sqrt{2}", "1-\\sqrt{2}, 1+\\sqrt{2}"),
        ("{1,3}", "(1,3)"),
        ("(3,17,3,7),(3,3,2,3),(3,17,3,7)", "(3,3,2,3),(3,17,3,7)"),
    ],
    "matrices": [
        ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}"),
        (
            "\\begin{pmatrix}-1/3\\\\2/3\\end{pmatrix}",
            "\\begin{pmatrix} -\\frac13 \\\\ \\frac23 \\end{pmatrix}",
        ),
        ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1,2)"),
    ],
    "equations": [
        ("x=5", "5"),
        ("k = \\frac{1}{3}", "1/3"),
        ("1", "f(x)=1"),
        ("(3,2)", "(p,q)=(3,2)"),
        ("y=-\\frac{1}{2}x+\\frac{3}{4}", "2x+4y-3=0"),
        ("x^2/16 + y^2/12 = 1/4", "x^2/4 + y^2/3 = 1"),
        ("a_{37} = 19, a_3 = 2", "a_3 = 2, a_{37} = 19"),
    ],
    "inequalities": [
        ("5 \\geq x", "x \\leq 5"),
        ("-x > -1", "x < 1"),
        ("x \\ge 2", "[2,\\infty)"),
        ("-2 \\le x \\le 7", "x \\in [-2,7]"),
        ("0<f(x)<1", "(0,1)"),
        ("z \\in [-\\frac{3}{2}, -1] \\cup [1, \\frac{3}{2}]", "1\\leq|z|\\leq \\frac{3}{2}"),
        ("|x| > 2", "(-\\infty,-2)\\cup(2,\\infty)"),
    ],
    "symbolic expressions": [
        ("x^2+2x+1", "(x+1)^2"),
        ("\\frac{x}{7}+\\frac{2}{7}", "\\frac{x+2}{7}"),
        ("\\sec^2(y)", "\\tan^2(y)+1"),
        ("2\\sqrt{2}", "\\sqrt{8}"),
        ("3 \\cdot \\sqrt{13}", "3\\sqrt{13}"),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"),
        ("\\log_2 8", "3"),
        ("2^{100}", "1267650600228229401496703205376"),
        ("5!", "120"),
        ("\\binom{5}{2}", "10"),
    ],
    "complex numbers": [("7i + -2", "-2 + 7i"), ("6-5i", "6 - 5i"), ("e^{i\\pi}", "-1")],
    "multiple choice": [("E", "\\text{(E)}"), ("\\text{(C)}", "\\text{C}"), ("(B)", "B")],
    "bases": [("204_5", "204_{5}"), ("204", "204_5")],
    "scientific notation": [
        ("3.3e-10", "3.3\\times 10^{-10}"),
        ("6.43 \\times 10^{16}", "6.43\\cdot10^{16}"),
    ],
}

DIFFERENT = {
    "integers": [("-5", "5"), ("12", "13"), ("AZYUK2A", "2")],
    "decimals": [("1.01", "1"), ("3.21", "3.22")],
    "fractions": [("\\frac{14}{4}", "\\frac{14}{3}"), ("-\\frac{3}{2}", "\\frac{3}{2}")],
    "mixed numbers": [("1\\frac{4}{5}", "\\frac{4}{5}")],
    "rounded decimals": [("0.33", "\\frac13"), ("3.9996", "4"), ("4.13", "\\sqrt{17}")],
    "percentages": [("29\\%", "28")],
    "degrees": [("121^\\circ", "120^\\circ"), ("-90^\\circ", "90^\\circ")],
    "units and text": [("\\text{Navin}", "\\text{Evelyn}"), ("\\text{odd}", "even"), ("5 apples", "5")],
    "thousands separators": [("1,251", "1215"), ("1,000", "1")],
    "trailing punctuation": [("17.", "18")],
    "tuples and intervals": [
        ("[0,1)", "[0,9)"),
        ("[0,9)", "(0,9)"),
        ("(1,2)", "(2,1)"),
        ("-[0,1)", "1"),
        ("(0.6,2.6)", "(\\frac{3}{5},\\frac{8}{3})"),
        ("(-\\infty, 1) \\cup (2, \\infty)", "(-\\infty,1]\\cup(2,\\infty)"),
    ],
    "lists and sets": [
        ("1", "1,-2"),
        ("3, 5", "3, 5, 7"),
        ("{1,3}", "(3,1)"),
        ("2021", "\\pm 2021"),
        ("(1,2),(3,4)", "(1,2),(4,3)"),
        ("16,3,1,1", "16,3,3,1"),
    ],
    "matrices": [
        ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{pmatrix}1&2\\\\4&3\\end{pmatrix}"),
        ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "(1,2,3,4)"),
    ],
    "equations": [
        ("0", "a +3z = 0"),
        ("1", "2x + z = 1"),
        ("y=2x+3", "y=3x+2"),
        ("D = (0, 1.5)", "D = (0, 1)"),
        ("a=2, b=19", "a=19, b=2"),
    ],
    "inequalities": [
        ("x > -1", "x < 1"),
        ("x > 2", "[2,\\infty)"),
        ("x < 3", "x \\le 3"),
        ("z \\in [-2, -1] \\cup [1, \\frac{3}{2}]", "1\\leq|z|\\leq \\frac{3}{2}"),
        ("|x| < 2", "[-2, 2]"),
    ],
    "symbolic expressions": [
        ("x^2+2x+1", "(x-1)^2"),
        ("(+5)(b+2)", "(a+5)(b+2)"),
        ("x+1", "x+2n+1"),
        ("f(y)", "f(x)"),
        ("\\frac{34}{16}+\\frac{\\sqrt{1358}}{16}", "4"),
        ("4\\sqrt{2}", "4"),
        ("2^{100}", "1267650600228229401496703205377"),
        ("0", "I(0)e^{-\\frac{t}{RC}}"),
        ("N(n)=\\lfloor\\frac{2n}{7}\\rfloor+1", "N(n)=\\lfloor\\frac{2n}{3}\\rfloor+1"),
        ("\\lceil n/2\\rceil+1", "2"),
        ("10^{400}", "10^{400}+1"),
        ("10^{400}", "\\pi"),
    ],
    "complex numbers": [("3-4i", "3+4i"), ("7+9i", "6+9i")],
    "multiple choice": [("\\text{E}", "d"), ("B", "\\text{(A)}"), ("e", "E")],
    "bases": [("1112122_3", "1112112_3"), ("54", "204_5")],
    "scientific notation": [("3.3e-10", "3.4\\times 10^{-10}"), ("1.325 \\times 10^{-27}", "0")],
}


@pytest.mark.parametrize(
    ("pred", "gold"),
    [pytest.param(p, g, id=f"{kind}: {p} = {g}") for kind, cases in EQUAL.items() for p, g in cases],
)
def test_equal_answers(pred, gold):
    assert answers_equal(pred, gold)
    assert grade_math(boxed(pred), gold)["reason"] == "correct"


@pytest.mark.parametrize(
    ("pred", "gold"),
    [pytest.param(p, g, id=f"{kind}: {p} != {g}") for kind, cases in DIFFERENT.items() for p, g in cases],
)
def test_different_answers(pred, gold):
    assert not answers_equal(pred, gold)
    assert grade_math(boxed(pred), gold)["reason"] == "wrong"


def test_every_equivalence_class_has_true_and_false_cases():
    assert set(EQUAL) == set(DIFFERENT)


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k", "F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}", True),
        ("F_n = \\sum_{k=0}^{n-2} F_k F_{n-k-2}", "F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}", False),
        ("x^2 < 4", "(-2, 2)", True),
        ("x^2 < 4", "(-2, 3)", False),
        ("\\int_0^1 x^2 dx", "\\frac{1}{3}", True),
        ("\\int_0^1 x^2 dx", "\\frac{1}{2}", False),
    ],
)
def test_symbolic_fallback_in_worker(pred, gold, expected):
    assert symbolic_equal(pred, gold) is expected
    assert answers_equal(pred, gold) is False  # without the worker these stay undecided -> wrong


# grade_math contract ------------------------------------------------------------------------


def test_result_keys_and_rewards():
    result = grade_math(boxed("4"), "4")
    assert result == {"score": 1.0, "acc": True, "reason": "correct", "extracted": "4"}
    wrong = grade_math(boxed("5"), "4", correct_reward=2.0, incorrect_reward=-1.0)
    assert (wrong["score"], wrong["acc"], wrong["reason"], wrong["extracted"]) == (-1.0, False, "wrong", "5")
    assert grade_math(boxed("4"), "4", correct_reward=2.0)["score"] == 2.0


def test_format_errors_and_missing_answers():
    assert grade_math("\\boxed{4}", "4", require_think=True)["reason"] == "format_error"
    assert grade_math("\\boxed{4}", "4")["reason"] == "correct"
    no_answer = grade_math("<think>x</think>the answer is 4", "4", incorrect_reward=-0.5)
    assert (no_answer["reason"], no_answer["score"], no_answer["extracted"]) == ("no_answer", -0.5, None)
    format_error = grade_math("\\boxed{4}", "4", require_think=True, format_error_reward=-1.0)
    assert format_error["score"] == -1.0


def test_unknown_keyword_arguments_are_ignored():
    assert grade_math(boxed("4"), "4", data_source="math", extra_info={"x": 1}, whatever=3)["acc"]


@pytest.mark.parametrize(
    ("ground_truth", "answer"),
    [
        ("4", "4"),
        (4, "4"),
        (4.0, "4"),
        (2.5, "\\frac52"),
        (np.int64(4), "4"),
        (np.float64(0.5), "1/2"),
        (["3", "4"], "4"),
        (("3", 4), "4"),
        (np.array(["3", "4"]), "4"),
        ("The answer is \\boxed{\\frac{1}{2}}.", "0.5"),
        ([["1"], ["4"]], "4"),
    ],
)
def test_ground_truth_forms(ground_truth, answer):
    assert grade_math(boxed(answer), ground_truth)["acc"]


def test_ground_truth_list_needs_any_match():
    assert not grade_math(boxed("5"), ["3", "4"])["acc"]


@pytest.mark.parametrize(("ground_truth", "error"), [([], ValueError), (None, TypeError), (True, TypeError)])
def test_bad_ground_truth_is_a_clear_error(ground_truth, error):
    with pytest.raises(error, match="ground_truth"):
        grade_math(boxed("1"), ground_truth)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="solution_str"):
        grade_math(None, "1")
    with pytest.raises(ValueError, match="timeout"):
        grade_math(boxed("1"), "1", timeout=0)
    with pytest.raises(ValueError, match="pool size"):
        WorkerPool(0)


def test_reference_answers_flatten():
    assert reference_answers([1, "\\boxed{2}", np.array([3.5])]) == ["1", "2", "3.5"]


def test_compute_score_routes_math_sources():
    for source in ("", "math", "aime", "olympiad_bench"):
        result = compute_score(data_source=source, solution_str=boxed("\\frac{1}{2}"), ground_truth="0.5")
        assert result["acc"] and result["score"] == 1.0


# Pathological input -------------------------------------------------------------------------

_LONG = "+".join(f"x_{{{i}}}^{{{i % 7 + 1}}}" for i in range(400))

PATHOLOGICAL = {
    "power tower": ("10^{10^{10}}", "10^{10^{11}}"),
    "power tower vs small": ("10^{10^{10}}", "1"),
    "huge power": ("2^{999999999}", "2"),
    "huge factorial": ("99999999!", "1"),
    "5000-character expression": (_LONG[:5000], _LONG[:4990]),
    "5000-character sum": ("\\sum_{k=1}^{n}" + _LONG[:4000], "\\sum_{k=1}^{n}" + _LONG[:3990]),
    "deep braces": ("{" * 3000 + "1" + "}" * 3000, "2"),
    "deep parentheses": ("(" * 3000 + "1" + ")" * 3000, "1"),
    "deep fractions": ("\\frac{1}{" * 400 + "2" + "}" * 400, "1"),
    "unbalanced gold": ("1", "\\frac{1}{2"),
    "unbalanced parentheses": ("((1,2)", "(1,2)"),
    "division by zero": ("\\frac{1}{0}", "\\infty"),
    "zero to a negative power": ("0^{-1}", "1"),
    "division by zero in sympy": ("\\int_0^1 \\frac{1}{0} dx", "1"),
    "many plus-minus": ("\\pm1\\pm2\\pm3\\pm4", "1"),
    "long lists": (",".join(map(str, range(400))), ",".join(map(str, range(399, -1, -1)))),
    "long different lists": (",".join(map(str, range(300))), ",".join(map(str, range(1, 301)))),
    "garbage": ("\\\\\\{{)(][^^__", "1"),
}


@pytest.mark.parametrize(("pred", "gold"), list(PATHOLOGICAL.values()), ids=list(PATHOLOGICAL))
def test_pathological_inputs_return_quickly(pred, gold):
    start = time.monotonic()
    result = grade_math(boxed(pred), gold)
    assert time.monotonic() - start < QUICK
    assert result["reason"] in ("correct", "wrong", "timeout", "no_answer")


def test_pathological_responses():
    for response in ("\\boxed{1}" * 20000, "a" * 1_000_000 + "\\boxed{1}", "\\boxed{" * 5000):
        start = time.monotonic()
        grade_math(response, "1")
        assert time.monotonic() - start < QUICK


def test_identical_long_answers_are_equal():
    assert grade_math(boxed(_LONG[:5000]), _LONG[:5000])["acc"]


# Time bounds and concurrency ----------------------------------------------------------------


def test_symbolic_timeout_is_enforced_and_the_pool_recovers():
    warm_up(wait=True)
    start = time.monotonic()
    result = grade_math(boxed(HARD_FOR_SYMPY), HARD_GOLD, timeout=0.5)
    assert result["reason"] == "timeout" and result["score"] == 0.0
    assert time.monotonic() - start < QUICK
    assert symbolic_equal("\\int_0^1 x^2 dx", "\\frac{1}{3}")


def test_worker_pool_call_times_out():
    pool = WorkerPool(1)
    try:
        with pytest.raises(CheckTimeout):
            pool.call("expressions_equal", [HARD_FOR_SYMPY, HARD_GOLD], 0.5)
        assert pool.call("expressions_equal", ["\\int_0^1 x dx", "\\frac{1}{2}"], 30) is True
    finally:
        pool.close()


def test_a_worker_killed_from_outside_is_replaced():
    pool = WorkerPool(1)
    try:
        assert pool.call("expressions_equal", ["\\int_0^1 x dx", "\\frac{1}{2}"], 30) is True
        (worker,) = pool._idle
        os.kill(worker.process.pid, signal.SIGKILL)  # as the OOM killer would
        worker.process.wait()
        with pytest.raises(WorkerFailed):
            pool.call("expressions_equal", ["\\int_0^1 x dx", "\\frac{1}{2}"], 30)
        assert pool.call("expressions_equal", ["\\int_0^1 x dx", "\\frac{1}{2}"], 30) is True
    finally:
        pool.close()


def test_timeout_works_off_the_main_thread():
    # signal.alarm would silently do nothing here.
    results = []
    thread = threading.Thread(
        target=lambda: results.append(grade_math(boxed(HARD_FOR_SYMPY), HARD_GOLD, timeout=0.5))
    )
    start = time.monotonic()
    thread.start()
    thread.join(QUICK)
    assert not thread.is_alive()
    assert results[0]["reason"] == "timeout"
    assert time.monotonic() - start < QUICK


MIXED = [
    ("\\frac{1}{2}", "0.5", True),
    ("x^2+2x+1", "(x+1)^2", True),
    ("\\int_0^1 x^2 dx", "\\frac{1}{3}", True),
    ("\\int_0^1 x^2 dx", "\\frac{1}{2}", False),
    ("3", "4", False),
    ("(1,2)", "(2,1)", False),
    ("x^2 < 4", "(-2, 2)", True),
] * 3


def _grade_case(case: tuple) -> bool:
    pred, gold, _ = case
    return grade_math(boxed(pred), gold, timeout=30)["acc"]


def test_thread_pool():
    with ThreadPoolExecutor(max_workers=8) as executor:
        verdicts = list(executor.map(_grade_case, MIXED))
    assert verdicts == [expected for _, _, expected in MIXED]


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_process_pool(method):
    warm_up(wait=True)  # a parent with a live worker must not hand it to forked children
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as executor:
        verdicts = list(executor.map(_grade_case, MIXED))
    assert verdicts == [expected for _, _, expected in MIXED]


def test_daemonic_multiprocessing_pool():
    # multiprocessing.Pool workers are daemonic and may not start multiprocessing children.
    with multiprocessing.get_context("fork").Pool(2) as pool:
        verdicts = pool.map(_grade_case, MIXED[:7])
    assert verdicts == [expected for _, _, expected in MIXED[:7]]


@pytest.mark.slow
def test_ray_worker():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        # grade_math itself is the remote function: Ray workers import it from the package.
        grade = ray.remote(grade_math)
        results = ray.get([grade.remote(boxed(p), g, timeout=30) for p, g, _ in MIXED[:7]], timeout=300)
        timed_out = ray.get(grade.remote(boxed(HARD_FOR_SYMPY), HARD_GOLD, timeout=0.5), timeout=300)
    finally:
        ray.shutdown()
    assert [result["acc"] for result in results] == [expected for _, _, expected in MIXED[:7]]
    assert timed_out["reason"] == "timeout"
