"""Command line of the evaluation: ``python -m rllm.eval`` (wrapped by scripts/eval/eval_model.sh).

The original's flags keep their meaning and defaults (``--n 1``, ``--max-length 32768``,
``--tp 1``, e1 mode with a 1024+1024 budget); new flags add the backend choice, budget sweeps, the
baseline modes, sampling settings and quick checks. ``--e1-mode True --e1-thinking-length T
--e1-solution-length S`` is the same run as ``--mode e1 --budgets T+S``; ``--e1-mode False`` is
``--mode none`` with ``--max-length``. User errors print one ``error: ...`` line and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rllm.budget import Budget, BudgetError, Mode, parse_tokens
from rllm.data.errors import DataError
from rllm.eval.dataset import load_dataset
from rllm.eval.engines import (
    BACKENDS,
    EngineError,
    check_model,
    default_backend,
    load_generator,
    model_identity,
)
from rllm.generation import SamplingConfig

DEFAULT_MODEL = str(Path.home() / "DeepScaleR-1.5B-Preview")
DEFAULT_BUDGET = (1024, 1024)  # the original's --e1-thinking-length / --e1-solution-length


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rllm.eval",
        description="Evaluate a reasoning model under E1 budgets: generate, grade, report.",
    )
    original = parser.add_argument_group("original eval_model.sh flags")
    original.add_argument(
        "--model", default=DEFAULT_MODEL, help="checkpoint directory or hub id (default: %(default)s)"
    )
    original.add_argument(
        "--datasets", nargs="+", default=["aime"], help="dataset names or parquet paths (default: aime)"
    )
    original.add_argument(
        "--output-dir", type=Path, help="where outputs go (default: ~/e1_eval/<model directory name>)"
    )
    original.add_argument("--n", type=int, default=1, help="samples per problem (default: 1)")
    original.add_argument(
        "--max-length", default="32768", help="response cap of --mode none (default: 32768)"
    )
    original.add_argument("--tp", type=int, default=1, help="tensor parallel size, vLLM (default: 1)")
    original.add_argument(
        "--e1-mode", help="True: e1 budgets (the default); False: unconstrained, --max-length"
    )
    original.add_argument("--e1-thinking-length", help="thinking budget t (tokens, e.g. 1024 or 1k)")
    original.add_argument("--e1-solution-length", help="solution budget s (tokens)")

    added = parser.add_argument_group("added flags")
    added.add_argument(
        "--backend", choices=BACKENDS, help="generation engine (default: vllm where installed, else hf)"
    )
    added.add_argument(
        "--data-dir", type=Path, help="where dataset parquet files are (default: the repo's data/)"
    )
    added.add_argument("--mode", choices=[m.value for m in Mode], help="budget mode (default: e1)")
    added.add_argument(
        "--budgets",
        help="comma-separated sweep, one engine for all: 0.5k+1k,1k+1k (e1/s1) or 4k,8k (none/truncate)",
    )
    added.add_argument("--temperature", type=float, default=0.6, help="(default: 0.6)")
    added.add_argument("--top-p", type=float, default=0.95, help="(default: 0.95)")
    added.add_argument("--top-k", type=int, default=-1, help="-1 disables top-k (default: -1)")
    added.add_argument("--seed", type=int, help="sampling seed (default: unseeded)")
    added.add_argument("--limit", type=int, help="evaluate only the first N problems of each dataset")
    added.add_argument(
        "--batch-size", type=int, default=64, help="prompts per generate call, HF backend (default: 64)"
    )
    added.add_argument(
        "--dtype", default="auto", help="model dtype: auto, bfloat16, float16, float32 (default: auto)"
    )
    added.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=0.8,
        help="vLLM memory fraction; on the CPU build, of system memory (default: 0.8, as the original)",
    )
    added.add_argument("--max-model-len", type=int, help="vLLM context length (default: the model's)")
    added.add_argument("--enforce-eager", action="store_true", help="vLLM: skip graph capture/compilation")
    added.add_argument(
        "--score-workers",
        type=int,
        default=8,
        help="grading threads (graders run their heavy work in their own processes); 0 grades inline",
    )
    added.add_argument("--no-progress", action="store_true", help="hide progress bars")
    added.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    return parser


def parse_bool(text: str, flag: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise BudgetError(f"{flag} {text!r}: write True or False")


def resolve_budgets(args: argparse.Namespace) -> list[Budget]:
    """The budgets of the run from the original flags and the added ones (see the module doc)."""
    e1_mode = parse_bool(args.e1_mode, "--e1-mode") if args.e1_mode is not None else None
    if args.mode is not None and e1_mode is not None and e1_mode != (args.mode in ("e1", "s1")):
        raise BudgetError(f"--e1-mode {args.e1_mode} contradicts --mode {args.mode}; pass only --mode")
    mode = Mode(args.mode or ("none" if e1_mode is False else "e1"))
    lengths = (args.e1_thinking_length, args.e1_solution_length)
    if args.budgets is not None:
        if any(v is not None for v in lengths):
            raise BudgetError(
                "--budgets replaces --e1-thinking-length/--e1-solution-length; pass one or the other"
            )
        texts = [t for t in (part.strip() for part in args.budgets.split(",")) if t]
        if not texts:
            raise BudgetError(f"--budgets {args.budgets!r} lists no budget; write e.g. 0.5k+1k,1k+1k")
        budgets = [Budget.parse(text, mode) for text in texts]
    elif mode in (Mode.E1, Mode.S1):
        if all(v is not None for v in lengths):
            budget = (
                parse_tokens(lengths[0], "--e1-thinking-length"),
                parse_tokens(lengths[1], "--e1-solution-length"),
            )
        elif e1_mode or any(v is not None for v in lengths):
            raise BudgetError(
                "--e1-mode True needs both --e1-thinking-length T and --e1-solution-length S (or --budgets T+S)"
            )
        else:
            budget = DEFAULT_BUDGET
        budgets = [Budget(budget[0], budget[1], mode)]
    else:
        budgets = [Budget(mode=mode, total=parse_tokens(args.max_length, "--max-length"))]
    return list(dict.fromkeys(budgets))


def resolve_output_dir(args: argparse.Namespace) -> Path:
    """``--output-dir``, or the original's default ``~/e1_eval/<model directory name>``."""
    return args.output_dir or Path.home() / "e1_eval" / Path(args.model.rstrip("/")).name


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except (BudgetError, DataError, EngineError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            f"\ninterrupted: every graded sample is saved under {resolve_output_dir(args) / 'records'}; "
            "re-run the same command to resume",
            file=sys.stderr,
        )
        return 130


def _run(args: argparse.Namespace) -> int:
    budgets = resolve_budgets(args)
    if args.limit is not None and args.limit < 1:
        raise BudgetError(f"--limit must be >= 1 problems, got {args.limit}")
    if args.score_workers < 0:
        raise BudgetError(f"--score-workers must be >= 0, got {args.score_workers}")
    sampling = SamplingConfig(
        n=args.n, temperature=args.temperature, top_p=args.top_p, top_k=args.top_k, seed=args.seed
    )
    check_model(args.model)
    datasets = [load_dataset(name, args.data_dir, args.limit) for name in dict.fromkeys(args.datasets)]
    backend = args.backend or default_backend()
    output_dir = resolve_output_dir(args)
    output_dir.mkdir(parents=True, exist_ok=True)

    from rllm.eval.runner import EvalConfig, Evaluation

    config = EvalConfig(
        model=args.model,
        model_identity=model_identity(args.model),
        backend=backend,
        output_dir=output_dir,
        budgets=budgets,
        sampling=sampling,
        limit=args.limit,
        score_workers=args.score_workers,
        progress=not args.no_progress,
        plots=not args.no_plots,
    )
    vllm_options = {
        "gpu_memory_utilization": args.gpu_memory_utilization,
        "enforce_eager": args.enforce_eager,
    }
    if args.max_model_len is not None:
        vllm_options["max_model_len"] = args.max_model_len
    generator = load_generator(
        backend,
        args.model,
        tp=args.tp,
        dtype=args.dtype,
        batch_size=args.batch_size,
        seed=args.seed,
        vllm_options=vllm_options,
    )
    result = Evaluation(config, generator).run(datasets)
    print(f"{result.generated} samples generated, {result.reused} reused; outputs in {output_dir}")
    return 0
