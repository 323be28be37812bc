"""Accuracy and speed of the math grader, side by side with math-verify in the same run.

Each case of ``math_cases.jsonl`` and ``math500_variants.jsonl`` is ``{pred, gold, equal, note}``
where ``pred`` is a bare answer. Both graders see the same input: the response ``\\boxed{pred}``
against the reference ``gold`` (math-verify: ``verify(parse("\\boxed{gold}"),
parse("\\boxed{pred}"))``). Both are warmed up before timing. Prints, per set and grader:
accuracy, false positives (graded correct but not equal), false negatives, cases/s and the slowest
case; then our throughput as a multiple of math-verify's and whether the project's goals are met
(accuracy >= 99% with zero false positives, >= 5x math-verify, no case over 2 s).

    python benchmarks/math_grader.py [--data-dir ../shared/data/graders] [--no-math-verify]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rllm.rewards.math import grade_math, warm_up

SETS = ("math_cases.jsonl", "math500_variants.jsonl")
GOAL_ACCURACY = 0.99
GOAL_SPEEDUP = 5.0
GOAL_SLOWEST_SECONDS = 2.0
DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "graders"


@dataclass
class Result:
    """Verdicts and per-case times of one grader on one set."""

    correct: int = 0
    false_positives: list = field(default_factory=list)
    false_negatives: list = field(default_factory=list)
    seconds: float = 0.0
    slowest: tuple = (0.0, None)

    def accuracy(self, total: int) -> float:
        return self.correct / total


def load_cases(path: Path) -> list[dict]:
    """Cases of one JSONL file; exits with a clear message when it is missing or malformed."""
    if not path.is_file():
        sys.exit(f"error: {path} not found (pass --data-dir pointing at the shared graders folder)")
    cases = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            cases.append({"pred": str(case["pred"]), "gold": str(case["gold"]), "equal": bool(case["equal"])})
        except (json.JSONDecodeError, KeyError) as error:
            sys.exit(f"error: {path}:{number}: not a {{pred, gold, equal}} record ({error})")
    return cases


def run(grader: Callable[[str, str], bool], cases: list[dict]) -> Result:
    result = Result()
    for case in cases:
        start = time.perf_counter()
        verdict = grader(case["pred"], case["gold"])
        elapsed = time.perf_counter() - start
        result.seconds += elapsed
        if elapsed > result.slowest[0]:
            result.slowest = (elapsed, case)
        if verdict == case["equal"]:
            result.correct += 1
        elif verdict:
            result.false_positives.append(case)
        else:
            result.false_negatives.append(case)
    return result


def ours(pred: str, gold: str) -> bool:
    return grade_math(f"\\boxed{{{pred}}}", gold)["acc"]


def math_verify_grader() -> Callable[[str, str], bool] | None:
    try:
        from math_verify import parse, verify
    except ImportError:
        return None

    def grade(pred: str, gold: str) -> bool:
        return bool(verify(parse(f"\\boxed{{{gold}}}"), parse(f"\\boxed{{{pred}}}")))

    return grade


def report(name: str, result: Result, total: int, verbose: bool) -> None:
    slow_seconds, slow_case = result.slowest
    slow = f"{slow_case['pred']!r} vs {slow_case['gold']!r}" if slow_case else "-"
    print(
        f"  {name:<12} accuracy {result.accuracy(total):7.2%}  false positives {len(result.false_positives):3d}"
        f"  false negatives {len(result.false_negatives):3d}  {total / result.seconds:8.1f} cases/s"
        f"  slowest {slow_seconds * 1000:7.1f} ms ({slow})"
    )
    if verbose:
        for kind, cases in (("FP", result.false_positives), ("FN", result.false_negatives)):
            for case in cases:
                print(f"      {kind} {case['pred']!r} vs {case['gold']!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="folder with the JSONL sets")
    parser.add_argument("--no-math-verify", action="store_true", help="time our grader only")
    parser.add_argument("--verbose", action="store_true", help="list every misgraded case")
    args = parser.parse_args()

    reference = None if args.no_math_verify else math_verify_grader()
    if reference is None and not args.no_math_verify:
        print("math-verify is not installed (pip install math-verify): timing our grader only")
    warm_up(wait=True)
    ours("1", "1")
    if reference is not None:
        reference("1", "1")

    goals_met = True
    for name in SETS:
        cases = load_cases(args.data_dir / name)
        print(f"{name}: {len(cases)} cases")
        mine = run(ours, cases)
        report("rllm", mine, len(cases), args.verbose)
        goals_met &= (
            mine.accuracy(len(cases)) >= GOAL_ACCURACY
            and not mine.false_positives
            and mine.slowest[0] <= GOAL_SLOWEST_SECONDS
        )
        if reference is not None:
            theirs = run(reference, cases)
            report("math-verify", theirs, len(cases), args.verbose)
            speedup = theirs.seconds / mine.seconds
            print(f"  throughput ratio rllm / math-verify: {speedup:.1f}x")
            goals_met &= speedup >= GOAL_SPEEDUP
    print(
        f"goals (>= {GOAL_ACCURACY:.0%}, zero false positives, <= {GOAL_SLOWEST_SECONDS} s per case", end=""
    )
    print(
        f"{f', >= {GOAL_SPEEDUP:.0f}x math-verify' if reference else ''}): {'met' if goals_met else 'NOT met'}"
    )
    return 0 if goals_met else 1


if __name__ == "__main__":
    sys.exit(main())
