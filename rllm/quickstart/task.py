"""A synthetic reasoning task with verifiable answers: last-digit arithmetic chains.

A problem starts from a digit and applies a chain of ``+d``/``-d`` operations, keeping only the
last digit after each one; the answer is the final digit. Each step is a small lookup, but the
answer depends on every step in order (the state is carried), so a small model that writes the
steps down solves it and one that must answer at once is left guessing (10% by chance).

Chain-of-thought traces come in two styles, as real reasoning models ramble or not:

- concise: ``7+5=2`` per step;
- verbose: ``7+5=2, check 2-5=7`` per step (the same state, about twice the tokens).

Warm-starting on a mix of both gives a model that sometimes thinks verbosely; under a tight
thinking budget only concise thinking finishes, which is the pressure E1 training acts on.

Rows are written in verl's RL parquet format and graded by the project's math reward.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rllm.data.prompts import math_prompt

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
        ops = ", ".join(f"{'+' if d > 0 else '-'}{abs(d)}" for d in self.operations)
        return f"Start with {self.start}. Apply {ops}, keeping only the last digit each time. What is the result?"

    def thinking(self, verbose: bool) -> str:
        """The worked steps, one per line (the text between the prompt's ``<think>`` and ``</think>``)."""
        lines, value = [], self.start
        for operand, state in zip(self.operations, self.states, strict=True):
            step = f"{value}{'+' if operand > 0 else '-'}{abs(operand)}={state}"
            if verbose:
                step += f", check {state}{'-' if operand > 0 else '+'}{abs(operand)}={value}"
            lines.append(step)
            value = state
        return "\n".join(lines) + "\n"

    def response(self, verbose: bool) -> str:
        """A full response after the generation prompt: thinking, ``</think>``, the boxed answer."""
        return f"{self.thinking(verbose)}</think>\n\nThe answer is \\boxed{{{self.answer}}}."


def sample_problems(count: int, min_steps: int, max_steps: int, seed: int) -> list[Problem]:
    """``count`` random problems with ``min_steps..max_steps`` operations (inclusive), operands 1..9."""
    if not 1 <= min_steps <= max_steps:
        raise ValueError(f"need 1 <= min_steps <= max_steps, got {min_steps}..{max_steps}")
    rng = random.Random(seed)
    problems = []
    for _ in range(count):
        steps = rng.randint(min_steps, max_steps)
        operations = tuple(rng.choice((1, -1)) * rng.randint(1, 9) for _ in range(steps))
        problems.append(Problem(rng.randint(0, 9), operations))
    return problems


def to_rl_rows(problems: list[Problem], split: str) -> pd.DataFrame:
    """verl RL rows: the math prompt of the original, a rule-based ground truth."""
    return pd.DataFrame(
        [
            {
                "data_source": DATA_SOURCE,
                "prompt": [{"role": "user", "content": math_prompt(p.question)}],
                "ability": "math",
                "reward_model": {"style": "rule", "ground_truth": str(p.answer)},
                "extra_info": {"split": split, "index": i, "steps": len(p.operations)},
            }
            for i, p in enumerate(problems)
        ]
    )


def to_sft_rows(problems: list[Problem], verbose_fraction: float, seed: int) -> pd.DataFrame:
    """Supervised rows (``prompt`` chat messages, ``response`` text), a mix of trace styles."""
    rng = random.Random(seed)
    return pd.DataFrame(
        [
            {
                "prompt": [{"role": "user", "content": math_prompt(p.question)}],
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
    min_steps: int = 3,
    max_steps: int = 8,
    verbose_fraction: float = 0.5,
    seed: int = 0,
) -> dict[str, Path]:
    """Write ``sft.parquet``, ``train.parquet`` (RL prompts) and ``test.parquet``; return their paths.

    Test problems are drawn with a different seed; SFT and RL share the training distribution.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train = sample_problems(train_size, min_steps, max_steps, seed)
    test = sample_problems(test_size, min_steps, max_steps, seed + 1_000_003)
    paths = {"sft": out / "sft.parquet", "train": out / "train.parquet", "test": out / "test.parquet"}
    to_sft_rows(train, verbose_fraction, seed).to_parquet(paths["sft"])
    to_rl_rows(train, "train").to_parquet(paths["train"])
    to_rl_rows(test, "test").to_parquet(paths["test"])
    return paths
