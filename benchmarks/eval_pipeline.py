"""Benchmark: a full evaluation (generation + grading + outputs) against generation alone.

Both are measured in one run, on the same inputs, with the same engine object and seed, so the
generated tokens are identical; the ratio ``full / generation`` is the cost grading and writing
add on top of generation. The pipeline grades each sample as soon as the engine yields it, in
grading threads, so only the grading of the last batch and the output files should show.

Engine: the transformers backend on the tiny random Qwen2 (built locally), CPU, float32, with
several batches per dataset (the HF backend yields a batch at a time; vLLM yields per request).

Grading load, honestly: the tiny model writes random text, which graders reject in microseconds
(no boxed answer, no code block), so grading it would measure nothing. The full evaluation
therefore grades each *real generated response with the problem's reference appended*: for the
math set (MATH problems) ``\\boxed{reference answer}``, for the code set (LeetCode problems) the
reference solution in a fenced block, which the real code grader runs in the real sandbox against
the problem's real tests. That is the grading work of a model that solved every problem (the
printed accuracy is ~1.0, proving the sandbox ran). Generation is never faked: the generation-only
measurement and the full evaluation run the same real engine on the same prompts.

Measurement: per set, ``--repeats`` pairs of (generation alone, full evaluation) run back to back
in alternating order, so both halves of a pair see the same background load on a shared machine;
the reported ratio is the median of the pair ratios. The columns also show the fastest time of
each, and ``serial/gen``: generation followed by grading the same samples alone (what the pipeline
would cost without the overlap).

Usage: .venv/bin/python benchmarks/eval_pipeline.py [--prompts 12] [--n 4] [--budget 512+256]
       [--batch-size 4] [--score-workers 1] [--repeats 3]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from rllm.budget import Budget
from rllm.data.prompts import math_prompt
from rllm.data.to_parquet import rl_row
from rllm.eval.dataset import load_dataset
from rllm.eval.runner import EvalConfig, Evaluation
from rllm.eval.scoring import ScoringPool
from rllm.generation import SamplingConfig
from rllm.generation.hf import HFGenerator
from rllm.rewards import compute_score
from rllm.testing.tiny_model import build_tiny_model

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "benchmarks"


def score_with_reference(data_source: str, solution_str: str, ground_truth, extra_info: dict | None) -> dict:
    """The real grader on the generated response followed by the problem's reference (see above)."""
    reference = (extra_info or {})["reference"]
    if (extra_info or {}).get("kind") == "code":
        appended = f"{solution_str}\n\n```python\n{reference}\n```"
    else:
        appended = f"{solution_str}\n\\boxed{{{reference}}}"
    return compute_score(
        data_source=data_source, solution_str=appended, ground_truth=ground_truth, extra_info=extra_info
    )


def row(source: str, content: str, ground_truth: str, index: int, kind: str, reference: str) -> dict:
    """A verl RL row whose ``extra_info`` also carries what :func:`score_with_reference` appends."""
    rl = rl_row(data_source=source, content=content, ability=kind, ground_truth=ground_truth, split="test", index=index)
    rl["extra_info"].update(kind=kind, reference=reference)
    return rl


def build_sets(directory: Path, prompts: int) -> None:
    math = json.loads((SHARED / "math" / "math.json").read_text())[:prompts]
    rows = [
        row("math", math_prompt(r["problem"]), str(r["answer"]), i, "math", str(r["answer"]))
        for i, r in enumerate(math)
    ]
    pq.write_table(pa.Table.from_pylist(rows), directory / "bench_math.parquet")
    leetcode = json.loads((SHARED / "code" / "leetcode.json").read_text())[:prompts]
    rows = []
    for i, r in enumerate(leetcode):
        tests = ast.literal_eval(r["tests"]) if isinstance(r["tests"], str) else r["tests"]
        rows.append(row("leetcode", r["problem"], json.dumps(tests), i, "code", r["solutions"]))
    pq.write_table(pa.Table.from_pylist(rows), directory / "bench_code.parquet")


def time_generation(generator, dataset, budget, sampling) -> tuple[float, list]:
    start = time.perf_counter()
    records = list(generator.iter_generate([item.prompt for item in dataset.items], budget, sampling))
    elapsed = time.perf_counter() - start
    assert len(records) == dataset.size * sampling.n
    return elapsed, records


def time_grading(records: list, dataset, workers: int) -> float:
    """Grading alone, after generation: what a serial pipeline would add."""
    start = time.perf_counter()
    with ScoringPool(workers, score_with_reference) as pool:
        for record in records:
            item = dataset.items[record.prompt_index]
            pool.submit(item.data_source, record.text, item.ground_truth, item.extra_info, lambda grade: None)
        pool.wait()
    return time.perf_counter() - start


def time_full_eval(generator, dataset, config) -> tuple[float, dict]:
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        result = Evaluation(config, generator, out=devnull).run([dataset])
    elapsed = time.perf_counter() - start
    assert result.generated == dataset.size * config.sampling.n and result.reused == 0
    return elapsed, result.entries[0]["metrics"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=12, help="problems per set")
    parser.add_argument("--n", type=int, default=4, help="samples per problem")
    parser.add_argument("--budget", default="512+256", help="e1 budget T+S")
    parser.add_argument("--batch-size", type=int, default=4, help="prompts per HF generate call")
    parser.add_argument("--score-workers", type=int, default=1, help="grading threads")
    parser.add_argument("--repeats", type=int, default=3, help="measurement pairs per set (median ratio)")
    args = parser.parse_args()

    budget = Budget.parse(args.budget)
    sampling = SamplingConfig(n=args.n, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model_dir = build_tiny_model(root / "model", "tiny", seed=0)
        generator = HFGenerator.from_pretrained(model_dir, dtype=torch.float32, batch_size=args.batch_size)
        (root / "data").mkdir()
        build_sets(root / "data", args.prompts)
        generator.generate([[{"role": "user", "content": "warm up"}]], budget, SamplingConfig(n=1, seed=0))
        print(
            f"tiny model, HF backend, {args.prompts} problems x n={args.n}, budget {budget.label}, "
            f"batch {args.batch_size} prompts, {args.score_workers} grading threads"
        )
        print(
            f"{'set':<5} {'gen s':>7} {'grade s':>8} {'full s':>7} {'full/gen':>9} {'serial/gen':>11} {'avg@n':>6}"
        )
        ratios = []
        for name in ("bench_math", "bench_code"):
            dataset = load_dataset(name, root / "data")
            generation, grading, full, pairs, metrics = [], [], [], [], {}
            for repeat in range(args.repeats):
                config = EvalConfig(
                    model=str(model_dir),
                    model_identity=str(model_dir),
                    backend="hf",
                    output_dir=root / f"out_{name}_{repeat}",
                    budgets=[budget],
                    sampling=sampling,
                    score_workers=args.score_workers,
                    progress=False,
                    score_fn=score_with_reference,
                )
                # Adjacent measurements in alternating order: both see the same background load.
                if repeat % 2:
                    full_s, metrics = time_full_eval(generator, dataset, config)
                    gen_s, records = time_generation(generator, dataset, budget, sampling)
                else:
                    gen_s, records = time_generation(generator, dataset, budget, sampling)
                    full_s, metrics = time_full_eval(generator, dataset, config)
                generation.append(gen_s)
                full.append(full_s)
                pairs.append(full_s / gen_s)
                grading.append(time_grading(records, dataset, args.score_workers))
            gen_s, grade_s, full_s = min(generation), min(grading), min(full)
            label = name.removeprefix("bench_")
            ratio = statistics.median(pairs)
            ratios.append((label, ratio))
            print(
                f"{label:<5} {gen_s:>7.2f} {grade_s:>8.2f} {full_s:>7.2f} {ratio:>9.3f} "
                f"{(gen_s + grade_s) / gen_s:>11.3f} {metrics['avg@n']:>6.2f}  {metrics['reasons']}"
            )
        print("full eval / generation alone: " + ", ".join(f"{label} {ratio:.3f}" for label, ratio in ratios))


if __name__ == "__main__":
    main()
