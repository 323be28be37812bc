"""Throughput of the sandboxed code grader against a fresh ``python3`` subprocess per program.

Runs the LeetCode reference solutions of ``../shared/data/graders/leetcode_cases.jsonl`` (each with
its ``check`` program) three ways in the same run and prints programs/s and ratios:
  - baseline: one fresh ``python3`` process per program, one at a time, no sandbox;
  - the grader (``grade_code_batch``, sandbox on) with one fork server;
  - the grader with one fork server per CPU (the default).
Every way must accept all references.

    .venv/bin/python benchmarks/code_grader.py [--cases PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rllm.rewards.code import SandboxConfig, close_pools, grade_code, grade_code_batch
from rllm.rewards.code.sandbox.preamble import PREAMBLE

DEFAULT_CASES = (
    Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "graders" / "leetcode_cases.jsonl"
)


def load(path: Path, limit: int | None) -> list[dict]:
    with open(path) as fh:
        cases = [json.loads(line) for line in fh if line.strip()]
    return cases[:limit] if limit else cases


def baseline(cases: list[dict]) -> tuple[float, int]:
    """Seconds and accepted count: each program in a fresh interpreter, sequentially."""
    accepted = 0
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        for i, case in enumerate(cases):
            path = os.path.join(tmp, f"p{i}.py")
            with open(path, "w") as fh:
                fh.write(PREAMBLE + "\n" + case["solution"] + "\n" + case["functional_test"] + "\n")
            proc = subprocess.run([sys.executable, path], capture_output=True, timeout=30)
            accepted += proc.returncode == 0
        return time.perf_counter() - start, accepted


def grader(cases: list[dict], workers: int) -> tuple[float, int]:
    """Seconds and accepted count through ``grade_code_batch`` (fork servers already warm)."""
    config = SandboxConfig(workers=workers)
    tasks = [
        {
            "code_format": "leetcode",
            "solution_str": f"```python\n{case['solution']}\n```",
            "ground_truth": json.dumps({"functional": case["functional_test"]}),
        }
        for case in cases
    ]
    warm = [tasks[0]] * workers
    grade_code_batch(warm, sandbox=config)
    start = time.perf_counter()
    results = grade_code_batch(tasks, sandbox=config)
    elapsed = time.perf_counter() - start
    for case, result in zip(cases, results, strict=True):
        if not result["acc"]:
            print(f"  rejected problem {case['problem_id']}: {result['reason']}: {result['message'][:200]}")
    return elapsed, sum(r["acc"] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    parser.add_argument("--limit", type=int, default=None, help="use only the first N cases")
    args = parser.parse_args()
    if not args.cases.exists():
        sys.exit(f"error: {args.cases} not found; pass --cases PATH to leetcode_cases.jsonl")
    cases = load(args.cases, args.limit)
    n = len(cases)
    cpus = os.cpu_count() or 1
    start = time.perf_counter()
    grade_code("leetcode", "```python\npass\n```", {"functional": "pass"})
    print(f"fork server start-up (one-off): {time.perf_counter() - start:.2f} s")

    base_s, base_ok = baseline(cases)
    one_s, one_ok = grader(cases, workers=1)
    all_s, all_ok = grader(cases, workers=cpus)
    close_pools()
    base_rate = n / base_s
    load_avg = os.getloadavg()[0]
    print(f"{n} programs, {cpus} CPUs, load average {load_avg:.1f}, baseline interpreter {sys.executable}")
    print(f"{'mode':44} {'programs/s':>10} {'x baseline':>10} {'accepted':>9}")
    rows = [
        ("baseline: fresh python3 per program, 1 core", n / base_s, base_ok),
        ("grader, sandbox on, 1 fork server", n / one_s, one_ok),
        (f"grader, sandbox on, {cpus} fork servers", n / all_s, all_ok),
    ]
    for label, rate, ok in rows:
        print(f"{label:44} {rate:10.1f} {rate / base_rate:10.2f} {ok:>5}/{n}")


if __name__ == "__main__":
    main()
