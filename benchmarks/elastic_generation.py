"""What enforcing the E1 budget costs, measured side by side in one run on one engine.

The workloads, on the same prompts, samples and sampling settings:

- single: the single-pass budget (one request per sample, logits processor);
- two-phase: the backend's two-phase mode (phase 1 to ``</think>``/``t``, append, phase 2 up to
  ``s``; on vLLM each sample's phase 2 starts when its own phase 1 ends);
- original (vLLM): the original's code path, two ``LLM.generate`` calls with a barrier between
  the phases (transformers' two-phase mode already has that barrier, per batch);
- plain: unconstrained generation of exactly the tokens the single pass emitted, per sample
  (vLLM: ``ignore_eos=True, max_tokens=`` that sample's count; transformers: ``none`` mode up to
  the single pass's longest sample, since a batch runs until its longest row ends anyway).

Ratios printed: (a) single / original two-phase (goal <= 0.9), also single / two-phase mode, and
(b) single / plain (goal <= 1.05).
Each repeat runs the workloads in alternating order on fresh prompts; the prefix cache is reset
before every vLLM run so no run reuses another's prompt blocks. A ratio is the median over repeats
of the ratio within a repeat (paired, so load from other processes cancels out as far as it can).

Usage: ``python benchmarks/elastic_generation.py [--backend vllm|hf] [--prompts 64] [--n 4]
[--thinking 96] [--solution 32] [--repeats 5] [--closing]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import string
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rllm.budget import Budget, SampleRecord
from rllm.generation import SamplingConfig, encode_prompts
from rllm.testing.tiny_model import build_tiny_model


def build_long_thinking_model(out: Path) -> Path:
    """The small tiny model with its ``</think>`` and EOS output rows zeroed, so it rarely closes
    thinking or stops: most samples run into both budgets, the case where the budget does the most
    work. (The test model is tuned the other way, to close and stop often.)"""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoTokenizer

    build_tiny_model(out, "small", seed=0)
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    weights = load_file(str(out / "model.safetensors"))
    with torch.no_grad():
        for token in (tokenizer.convert_tokens_to_ids("</think>"), tokenizer.eos_token_id):
            weights["lm_head.weight"][token] = 0.0
    save_file(weights, str(out / "model.safetensors"), metadata={"format": "pt"})
    return out


def random_prompts(count: int, seed: int) -> list[list[dict[str, str]]]:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + " +-*/=()"
    return [[{"role": "user", "content": "".join(rng.choices(alphabet, k=rng.randint(20, 120)))}] for _ in range(count)]


def emitted(record: SampleRecord, budget: Budget) -> int:
    """Tokens the engine produced for a single-pass record: the record plus the stripped stopping EOS
    of a solution that reached its budget before the request's max_tokens did."""
    longest = budget.max_new_tokens() - 1
    return record.total_tokens + int(record.solution_truncated and record.total_tokens < longest)


class VLLMWorkloads:
    def __init__(self, model: Path, args: argparse.Namespace):
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(args.kv_space))
        from rllm.generation.vllm import VLLMGenerator

        self.single = VLLMGenerator(
            model, dtype=args.dtype, enforce_eager=args.eager, max_model_len=2048, seed=0
        )
        self.two_phase = self.single.sharing_engine(two_phase=True)

    def reset(self) -> None:
        self.single.llm.reset_prefix_cache()

    def original(self, prompts: list, budget: Budget, sampling: SamplingConfig) -> int:
        """The original's two-phase: all phase-1 requests, a barrier, then all phase-2 requests."""
        from vllm import SamplingParams

        tokens = self.single.special_tokens(budget)
        encoded = [ids for ids in encode_prompts(self.single.tokenizer, prompts) for _ in range(sampling.n)]

        def params(k: int, **kwargs) -> SamplingParams:
            seed = None if sampling.seed is None else sampling.seed + k
            return SamplingParams(
                temperature=sampling.temperature, top_p=sampling.top_p, seed=seed, detokenize=False, **kwargs
            )

        first = self.single.llm.generate(
            [{"prompt_token_ids": ids} for ids in encoded],
            [params(k, max_tokens=budget.thinking, stop_token_ids=[tokens.think_close]) for k in range(len(encoded))],
            use_tqdm=False,
        )
        continued = []
        for ids, output in zip(encoded, first, strict=True):
            thinking = list(output.outputs[0].token_ids)
            if thinking and thinking[-1] in tokens.eos:
                thinking = thinking[:-1]
            if not thinking or thinking[-1] != tokens.think_close:
                thinking.append(tokens.think_close)
            continued.append(ids + thinking)
        second = self.single.llm.generate(
            [{"prompt_token_ids": ids} for ids in continued],
            [params(k, max_tokens=budget.solution) for k in range(len(continued))],
            use_tqdm=False,
        )
        return sum(len(c) - len(p) + len(o.outputs[0].token_ids) for c, p, o in zip(continued, encoded, second, strict=True))

    def plain(self, prompts: list, records: list[SampleRecord], budget: Budget, sampling: SamplingConfig) -> int:
        """Unconstrained generation of each sample's emitted token count, through the engine's step loop."""
        from vllm import SamplingParams
        from vllm.sampling_params import RequestOutputKind

        engine = self.single.engine
        encoded = encode_prompts(self.single.tokenizer, prompts)
        for k, record in enumerate(records):
            params = SamplingParams(
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                seed=None if sampling.seed is None else sampling.seed + k,
                max_tokens=emitted(record, budget),
                ignore_eos=True,
                detokenize=False,
                output_kind=RequestOutputKind.FINAL_ONLY,
            )
            engine.add_request(f"plain-{k}", {"prompt_token_ids": encoded[record.prompt_index]}, params)
        total = 0
        while engine.has_unfinished_requests():
            total += sum(len(o.outputs[0].token_ids) for o in engine.step())
        return total


class HFWorkloads:
    def __init__(self, model: Path, args: argparse.Namespace):
        import torch

        from rllm.generation.hf import HFGenerator

        self.single = HFGenerator.from_pretrained(model, dtype=torch.float32, batch_size=args.hf_batch)
        self.two_phase = HFGenerator(self.single.model, self.single.tokenizer, batch_size=args.hf_batch, two_phase=True)

    def reset(self) -> None:
        return None

    def plain(self, prompts: list, records: list[SampleRecord], budget: Budget, sampling: SamplingConfig) -> int:
        longest = max(emitted(r, budget) for r in records)
        return sum(r.total_tokens for r in self.single.generate(prompts, Budget(mode="none", total=longest), sampling))


def timed(run: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    tokens = run()
    return time.perf_counter() - start, tokens


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["vllm", "hf"], default="vllm")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--thinking", type=int, default=96)
    parser.add_argument("--solution", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--dtype", default="float32", help="vLLM dtype (auto downcasts to bfloat16 on the CPU)")
    parser.add_argument("--eager", action=argparse.BooleanOptionalAction, default=True,
                        help="vLLM enforce_eager (--no-eager compiles: minutes of start-up on a small CPU)")
    parser.add_argument("--kv-space", type=int, default=2, help="VLLM_CPU_KVCACHE_SPACE in GiB")
    parser.add_argument("--hf-batch", type=int, default=64, help="prompts per transformers generate call")
    parser.add_argument("--closing", action="store_true",
                        help="use the test model, which often closes thinking early, instead of one that runs into t")
    parser.add_argument("--model", type=Path, help="an existing model directory (default: build the small tiny model)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        if args.model is not None:
            model = args.model
        elif args.closing:
            model = build_tiny_model(Path(tmp) / "small", "small", seed=0)
        else:
            model = build_long_thinking_model(Path(tmp) / "small")
        workloads = (VLLMWorkloads if args.backend == "vllm" else HFWorkloads)(model, args)
        budget = Budget(args.thinking, args.solution)
        sampling = SamplingConfig(n=args.n, temperature=args.temperature, top_p=0.95, seed=0)
        workloads.single.generate(random_prompts(4, seed=-1), budget, sampling)  # warm-up, untimed

        times: dict[str, list[float]] = {name: [] for name in ("single", "two-phase", "original", "plain")}
        tokens: dict[str, int] = {}
        for repeat in range(args.repeats):
            prompts = random_prompts(args.prompts, seed=repeat)
            sampling = SamplingConfig(n=args.n, temperature=args.temperature, top_p=0.95, seed=repeat)
            # Per-request seeds make the timed single pass repeat this untimed one, whose lengths
            # plain needs before it may run first.
            workloads.reset()
            records = workloads.single.generate(prompts, budget, sampling)
            runs: dict[str, Callable[[], int]] = {
                "single": lambda p=prompts, s=sampling: sum(emitted(r, budget) for r in workloads.single.generate(p, budget, s)),
                "two-phase": lambda p=prompts, s=sampling: sum(
                    r.total_tokens for r in workloads.two_phase.generate(p, budget, s)
                ),
                "plain": lambda p=prompts, s=sampling, rs=records: workloads.plain(p, rs, budget, s),
            }
            if isinstance(workloads, VLLMWorkloads):
                runs["original"] = lambda p=prompts, s=sampling: workloads.original(p, budget, s)
            order = list(runs) if repeat % 2 == 0 else list(reversed(runs))
            for name in order:
                workloads.reset()
                seconds, count = timed(runs[name])
                times[name].append(seconds)
                tokens[name] = count
        forced = sum(r.forced_close for r in records) / len(records)
        truncated = sum(r.solution_truncated for r in records) / len(records)

    median = {name: statistics.median(values) for name, values in times.items() if values}
    print(
        f"\nbackend={args.backend} prompts={args.prompts} n={args.n} budget={budget.label} "
        f"T={args.temperature} repeats={args.repeats}; forced </think> in {forced:.0%} of samples, "
        f"solution at its budget in {truncated:.0%}"
    )
    print(f"{'workload':<10} {'median s':>9} {'tokens':>8} {'tok/s':>8}  all runs (s)")
    for name, seconds in median.items():
        runs_text = " ".join(f"{v:.2f}" for v in times[name])
        print(f"{name:<10} {seconds:>9.2f} {tokens[name]:>8} {tokens[name] / seconds:>8.0f}  {runs_text}")

    def ratio(other: str) -> float:
        return statistics.median(a / b for a, b in zip(times["single"], times[other], strict=True))

    reference = "original" if "original" in median else "two-phase"
    ratio_a, ratio_b = ratio(reference), ratio("plain")
    print(f"(a) single / original two-phase = {ratio_a:.3f}  (goal <= 0.9: {'met' if ratio_a <= 0.9 else 'NOT met'})")
    if reference == "original":
        print(f"    single / two-phase mode     = {ratio('two-phase'):.3f}")
    print(f"(b) single / plain              = {ratio_b:.3f}  (goal <= 1.05: {'met' if ratio_b <= 1.05 else 'NOT met'})")


if __name__ == "__main__":
    main()
