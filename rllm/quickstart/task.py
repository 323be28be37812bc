"""A synthetic reasoning task with verifiable answers: last-digit arithmetic chains.

A problem starts from a digit and applies a chain of distinct ``+d``/``-d`` operations (``d`` in
``1..max_operand``), keeping only the last digit after each one; the answer is the final digit. Each step is a small lookup, but the
answer depends on every step in order (the state is carried), so a small model that writes the
steps down solves it and one that must answer at once is left guessing (10% by chance).

Chain-of-thought traces come in two styles, as real reasoning models ramble or not:

- concise: ``7+3=0`` per step;
- verbose: ``7+3=0;0-3=7`` per step (the step, then a check undoing it: the same state, twice
  the tokens).

Warm-starting on a mix of both gives a model that sometimes thinks verbosely; under a tight
thinking budget only concise thinking finishes, which is the pressure E1 training acts on.

Usage: ``python -m rllm.quickstart.task --out DIR [--train-size 2000 --test-size 200 --max-operand 3]``

Why these choices: the quickstart's 0.2M-parameter model learns the mod-10 table of ``+-1..3``
(60 facts) in a few CPU-minutes, but in that time not the ``+-1..9`` one (180 facts); distinct operations
let it find its next operation in the question by matching the one it just wrote.

Rows are written in verl's RL parquet format and graded by the project's math reward. The
question is written tersely (``7 +3 -1 +2 =?``) and the original's math instruction ("Let's think
step by step and output the final answer within \\boxed{}.") is left out: on a CPU every prompt
token costs training time, and a model that only ever sees this task gains nothing from it.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rllm.data.to_parquet import rl_row

DATA_SOURCE = "digit_chain"


@dataclass(frozen=True)
class Problem:
    start: int
    operations: tuple[int, ...]  # signed operands, e.g. (+5, -3)

    @property
    def states(self) -> list[int]:
        """The digit after each operation (the answer is the last)."""
        states, value = [], self.start
        for operand in self.operations:
            value = (value + operand) % 10
            states.append(value)
        return states

    @property
    def answer(self) -> int:
        return self.states[-1]

    @property
    def question(self) -> str:
        ops = " ".join(f"{'+' if d > 0 else '-'}{abs(d)}" for d in self.operations)
        return f"{self.start} {ops} =?"

    def thinking(self, verbose: bool) -> str:
        """The worked steps, one per line (the text between the prompt's ``<think>`` and ``</think>``)."""
        lines, value = [], self.start
        for operand, state in zip(self.operations, self.states, strict=True):
            step = f"{value}{'+' if operand > 0 else '-'}{abs(operand)}={state}"
            if verbose:
                step += f";{state}{'-' if operand > 0 else '+'}{abs(operand)}={value}"
            lines.append(step)
            value = state
        return "\n".join(lines) + "\n"

    def response(self, verbose: bool) -> str:
        """A full response after the generation prompt: thinking, ``</think>``, the boxed answer."""
        return f"{self.thinking(verbose)}</think>\n\nThe answer is \\boxed{{{self.answer}}}."


def operands(max_operand: int) -> tuple[int, ...]:
    """The signed operations ``+1, -1, ..., +max_operand, -max_operand``."""
    return tuple(sign * d for d in range(1, max_operand + 1) for sign in (1, -1))


def sample_problems(count: int, min_steps: int, max_steps: int, seed: int, max_operand: int = 3) -> list[Problem]:
    """``count`` random problems with ``min_steps..max_steps`` operations (inclusive), operands
    ``1..max_operand`` with either sign.

    The operations of a problem are distinct, so each one is identified by the one before it:
    a small model finds its next operation in the question by matching the last one it wrote.
    """
    if not 1 <= max_operand <= 9:
        raise ValueError(f"need 1 <= --max-operand <= 9, got {max_operand}")
    choices = operands(max_operand)
    if not 1 <= min_steps <= max_steps <= len(choices):
        raise ValueError(f"need 1 <= --min-steps <= --max-steps <= {len(choices)} (two signs per operand), "
                         f"got {min_steps}..{max_steps}")
    rng = random.Random(seed)
    problems = []
    for _ in range(count):
        steps = rng.randint(min_steps, max_steps)
        operations = tuple(rng.sample(choices, steps))
        problems.append(Problem(rng.randint(0, 9), operations))
    return problems


def to_rl_rows(problems: list[Problem], split: str) -> pd.DataFrame:
    """verl RL rows: the terse question as the user message, a rule-based ground truth."""
    rows = []
    for i, p in enumerate(problems):
        row = rl_row(data_source=DATA_SOURCE, content=p.question, ability="math", ground_truth=str(p.answer),
                     split=split, index=i)
        row["extra_info"]["steps"] = len(p.operations)
        rows.append(row)
    return pd.DataFrame(rows)


def to_sft_rows(problems: list[Problem], verbose_fraction: float, seed: int) -> pd.DataFrame:
    """Supervised rows (``prompt`` chat messages, ``response`` text), a mix of trace styles."""
    rng = random.Random(seed)
    return pd.DataFrame(
        [
            {
                "prompt": [{"role": "user", "content": p.question}],
                "response": p.response(verbose=rng.random() < verbose_fraction),
            }
            for p in problems
        ]
    )


def write_task(
    out_dir: str | Path,
    *,
    train_size: int = 2000,
    test_size: int = 200,
    min_steps: int = 2,
    max_steps: int = 5,
    verbose_fraction: float = 0.5,
    max_operand: int = 3,
    seed: int = 0,
) -> dict[str, Path]:
    """Write ``sft.parquet``, ``train.parquet`` (RL prompts) and ``test.parquet``; return their paths.

    Test problems are drawn with a different seed; SFT and RL share the training distribution.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train = sample_problems(train_size, min_steps, max_steps, seed, max_operand)
    test = sample_problems(test_size, min_steps, max_steps, seed + 1_000_003, max_operand)
    paths = {"sft": out / "sft.parquet", "train": out / "train.parquet", "test": out / "test.parquet"}
    to_sft_rows(train, verbose_fraction, seed).to_parquet(paths["sft"])
    to_rl_rows(train, "train").to_parquet(paths["train"])
    to_rl_rows(test, "test").to_parquet(paths["test"])
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m rllm.quickstart.task",
        description="Write the digit-chain task: sft.parquet, train.parquet and test.parquet.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", required=True, help="directory to write the parquet files to")
    parser.add_argument("--train-size", type=int, default=2000, help="problems for SFT and RL")
    parser.add_argument("--test-size", type=int, default=200, help="held-out problems for evaluation")
    parser.add_argument("--min-steps", type=int, default=2, help="fewest operations per problem")
    parser.add_argument("--max-steps", type=int, default=5, help="most operations per problem")
    parser.add_argument("--verbose-fraction", type=float, default=0.5,
                        help="fraction of SFT traces written in the verbose style")
    parser.add_argument("--max-operand", type=int, default=3, help="operations are +-1 .. +-this")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.train_size < 1 or args.test_size < 1:
        sys.exit(f"task: --train-size and --test-size must be >= 1, got {args.train_size} and {args.test_size}")
    if not 0.0 <= args.verbose_fraction <= 1.0:
        sys.exit(f"task: --verbose-fraction must be in [0, 1], got {args.verbose_fraction}")
    try:
        paths = write_task(args.out, train_size=args.train_size, test_size=args.test_size,
                           min_steps=args.min_steps, max_steps=args.max_steps,
                           verbose_fraction=args.verbose_fraction, max_operand=args.max_operand,
                           seed=args.seed)
    except ValueError as error:
        sys.exit(f"task: {error}")
    print(f"task: wrote {', '.join(str(p) for p in paths.values())}")


if __name__ == "__main__":
    main()
