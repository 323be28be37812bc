"""Where a single-device GRPO step spends its time, and what the E1 budget costs the rollout.

Builds a random Qwen2 (``rllm.testing.tiny_model``, ``--size tiny|small``) and a synthetic math task
in a temporary directory, then, in one run:

1. **step split**: ``--steps`` training steps of :class:`rllm.trainer.local.Trainer` (after one
   warm-up step); prints the median seconds of rollout / reward / update and their shares;
2. **budget overhead**: on the same prompts, side by side and alternating, (a) the E1 rollout
   (``HFGenerator``: single pass, budget logits processor, records built) and (b) a plain
   ``generate`` of exactly as many decoding steps as (a) took, EOS ignored (``min_new_tokens =
   max_new_tokens``, as vLLM's ``ignore_eos``), same rows, same sampling, responses decoded. Prints the median ratio
   a / b; the goal is <= 1.05 (the budget adds at most 5% to a rollout of the same token count).

    python benchmarks/train_step.py [--size small] [--steps 3] [--repeats 9] [--batch-size 4] [--n 4] [--budget 64+32]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

from rllm.budget import Budget, SampleRecord
from rllm.generation import SamplingConfig, encode_prompts
from rllm.generation.hf import HFGenerator
from rllm.testing.tiny_model import build_tiny_model
from rllm.trainer.local import TrainConfig, Trainer

GOAL_RATIO = 1.05
PHASES = ("rollout", "reward", "update")


def write_task(path: Path, count: int) -> Path:
    """``count`` "What is a+b?" problems as a verl RL parquet."""
    rows = [
        {
            "data_source": "synthetic_add",
            "prompt": [{"role": "user", "content": f"What is {i}+{i + 3}? Let's think step by step."}],
            "reward_model": {"style": "rule", "ground_truth": str(2 * i + 3)},
            "extra_info": {"index": i},
        }
        for i in range(count)
    ]
    pd.DataFrame(rows).to_parquet(path)
    return path


def decoding_steps(records: list[SampleRecord]) -> int:
    """Decoding steps ``generate`` ran for these records: the longest row's emitted tokens,
    counting the EOS that stops a truncated solution (forced, then stripped from the record)."""
    return max(len(r.token_ids) + int(r.solution_truncated) for r in records)


@torch.no_grad()
def plain_generate(generator: HFGenerator, prompts: list, steps: int, sampling: SamplingConfig) -> list[str]:
    """Unconstrained sampling of exactly ``steps`` tokens per row (EOS ignored, no budget), decoded
    to text as any rollout must be for its rewards."""
    encoded = encode_prompts(generator.tokenizer, prompts)
    width = max(len(ids) for ids in encoded)
    input_ids = torch.full((len(encoded), width), generator.pad_id, dtype=torch.long)
    attention = torch.zeros_like(input_ids)
    for row, ids in enumerate(encoded):
        input_ids[row, width - len(ids) :] = torch.tensor(ids)
        attention[row, width - len(ids) :] = 1
    # The same call HFGenerator makes, minus the budget processor, plus the EOS ban.
    out = generator.model.generate(
        input_ids=input_ids.to(generator.model.device),
        attention_mask=attention.to(generator.model.device),
        max_new_tokens=steps,
        min_new_tokens=steps,
        do_sample=True,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        top_k=None,
        num_return_sequences=sampling.n,
        eos_token_id=list(generator.tokens.eos),
        pad_token_id=generator.pad_id,
        return_dict_in_generate=True,
    )
    return generator.tokenizer.batch_decode(out.sequences[:, width:], skip_special_tokens=True)


def step_split(trainer: Trainer, repeats: int) -> dict[str, list[float]]:
    """Seconds per phase of ``repeats`` training steps, after one untimed warm-up step."""
    times: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for repeat in range(repeats + 1):
        metrics = trainer.train_step()
        trainer.step += 1
        if repeat:
            for phase in PHASES:
                times[phase].append(metrics[f"timing/{phase}_s"])
    return times


def budget_overhead(
    generator: HFGenerator, prompts: list, budget: Budget, sampling: SamplingConfig, repeats: int
) -> tuple[dict[str, list[float]], int]:
    """Ratios E1 rollout / plain rollout of the same decoding steps, by CPU time of this process
    (steady on a shared machine) and by wall time, and the number of decoding steps.

    Pairs alternate their order (E1 first, then plain first) so a drift in machine load does not
    favour either side; a first pair only warms both paths up.
    """
    count = decoding_steps(generator.generate(prompts, budget, sampling))
    plain_generate(generator, prompts, count, sampling)
    ratios: dict[str, list[float]] = {"cpu": [], "wall": []}
    for repeat in range(repeats):
        spent = {}
        for side in ("e1", "plain") if repeat % 2 == 0 else ("plain", "e1"):
            cpu, wall = time.process_time(), time.perf_counter()
            if side == "e1":
                count = decoding_steps(generator.generate(prompts, budget, sampling))
            else:
                plain_generate(generator, prompts, count, sampling)
            spent[side] = (time.process_time() - cpu, time.perf_counter() - wall)
        ratios["cpu"].append(spent["e1"][0] / spent["plain"][0])
        ratios["wall"].append(spent["e1"][1] / spent["plain"][1])
    return ratios, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small", choices=["tiny", "small"], help="random Qwen2 size")
    parser.add_argument("--steps", type=int, default=3, help="timed training steps for the split")
    parser.add_argument("--repeats", type=int, default=9, help="timed E1/plain rollout pairs")
    parser.add_argument("--batch-size", type=int, default=4, help="prompts per step")
    parser.add_argument("--n", type=int, default=4, help="samples per prompt")
    parser.add_argument("--budget", default="64+32", help="E1 budget THINKING+SOLUTION")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (1 is steadiest on a shared machine)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = TrainConfig(
            model=str(build_tiny_model(root / "model", args.size, seed=0)),
            train_data=str(write_task(root / "train.parquet", 32)),
            output_dir=str(root / "out"),
            batch_size=args.batch_size,
            n=args.n,
            micro_batch_size=args.n,
            budget=args.budget,
            temperature=1.0,
            device="cpu",
            progress=False,
        )
        trainer = Trainer(config)
        print(
            f"model: random Qwen2 '{args.size}', {sum(p.numel() for p in trainer.model.parameters()) / 1e6:.1f}M "
            f"params; {args.batch_size} prompts x n={args.n}; budget {config.budget_plan.label}; "
            f"{torch.get_num_threads()} threads; medians of {args.steps} steps and {args.repeats} rollout pairs"
        )

        times = step_split(trainer, args.steps)
        medians = {phase: statistics.median(values) for phase, values in times.items()}
        total = sum(medians.values())
        print("\nGRPO step split (s)        median   share")
        for phase in PHASES:
            print(f"  {phase:<24} {medians[phase]:7.3f}  {medians[phase] / total:6.1%}")
        print(f"  {'step':<24} {total:7.3f}")

        prompts = [task.prompt for task in trainer.train_tasks[: args.batch_size]]
        sampling = SamplingConfig(n=args.n, temperature=1.0, top_p=1.0, seed=0)
        ratios, steps = budget_overhead(
            trainer.generator, prompts, config.budget_plan, sampling, args.repeats
        )
        print(f"\nrollout time, E1 budget / unconstrained at the same token count ({steps} decoding steps)")
        for clock, values in ratios.items():
            print(
                f"  {clock:<5} per pair: {', '.join(f'{r:.3f}' for r in values)}  median {statistics.median(values):.3f}"
            )
        ratio = statistics.median(ratios["cpu"])
        verdict = "meets" if ratio <= GOAL_RATIO else "misses"
        print(f"  median CPU-time ratio {ratio:.3f}: {verdict} the goal <= {GOAL_RATIO}")


if __name__ == "__main__":
    main()
