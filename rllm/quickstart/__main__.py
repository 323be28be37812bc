"""``python -m rllm.quickstart --out DIR [--preset default|ci] [overrides]``: the whole E1 pipeline
in miniature on a CPU (see :mod:`rllm.quickstart.pipeline` for the stages), then the report in
``DIR/report``. Re-running with the same settings skips the stages that are done.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

from rllm.quickstart.pipeline import PRESETS, Layout, QuickstartError, Settings, parse_budget, run

HELP = {
    "seed": "seed of the task, the model's init, SFT, sampling and GRPO",
    "train_size": "training problems (SFT traces and RL prompts)",
    "test_size": "held-out problems for every evaluation",
    "min_steps": "fewest operations per problem",
    "max_steps": "most operations per problem",
    "verbose_fraction": "fraction of SFT traces in the verbose style",
    "max_operand": "operations are +-1 .. +-this (mod-10 digits)",
    "model_size": "rllm.testing.tiny_model size to build and warm-start",
    "sft_steps": "SFT optimizer steps",
    "sft_batch_size": "SFT sequences per step",
    "sft_lr": "SFT peak learning rate",
    "solution_budget": "solution budget s of every e1/s1 evaluation (truncate uses t+s)",
    "max_length": "response cap of the unconstrained (--mode none) evaluation",
    "eval_n": "samples per test problem in every evaluation",
    "temperature": "sampling temperature of evaluation and GRPO rollouts",
    "grpo_steps": "GRPO steps (one rollout batch each)",
    "grpo_batch_size": "prompts per GRPO step",
    "grpo_n": "samples per prompt (the GRPO group)",
    "grpo_lr": "GRPO learning rate",
    "kl_coef": "weight of the KL loss to the warm-started model",
    "threads": "torch threads (1 is fastest for these tiny models on a busy machine)",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rllm.quickstart",
        description="Elastic Reasoning in miniature on a CPU: task, warm start, budgeted eval, E1 GRPO, report.",
    )
    parser.add_argument("--out", type=Path, default=Path("outputs/quickstart"),
                        help="output directory (default: %(default)s)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="default",
                        help="default: within 15 minutes on 2 busy cores (5 measured at load 2-4); ci: under a minute")
    overrides = parser.add_argument_group("overrides (default: the preset's value)")
    for f in fields(Settings):
        if f.name in HELP:
            overrides.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), help=HELP[f.name])
    overrides.add_argument("--thinking-budgets", help="comma-separated thinking budgets t of the sweep, e.g. 8,16,24")
    overrides.add_argument("--train-budget", help="E1 training budget t*+s*, e.g. 24+16")
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    settings = PRESETS[args.preset]
    changes = {f.name: getattr(args, f.name) for f in fields(Settings)
               if f.name in HELP and getattr(args, f.name) is not None}
    if args.thinking_budgets is not None:
        try:
            changes["thinking_budgets"] = tuple(int(t) for t in args.thinking_budgets.split(",") if t.strip())
        except ValueError:
            raise QuickstartError(f"--thinking-budgets {args.thinking_budgets!r}: write integers, e.g. 8,16,24") from None
    if args.train_budget is not None:
        changes["train_thinking"], changes["train_solution"] = parse_budget(args.train_budget, "--train-budget")
    settings = replace(settings, **changes)
    settings.check()
    return settings


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    try:
        settings = settings_from(args)
        records = run(settings, args.out)
        from rllm.quickstart.report import write_report

        report = write_report(settings, Layout(args.out), records)
    except QuickstartError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"[quickstart] done in {time.perf_counter() - started:.0f} s; report: {report / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
