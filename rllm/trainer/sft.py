"""Supervised fine-tuning (warm start) of a causal LM on prompt/response pairs, on one device.

Input: a parquet with ``prompt`` (chat messages) and ``response`` (the text that follows the
chat template's generation prompt, e.g. ``steps</think>\\n\\nThe answer is \\boxed{6}.``). The
loss is the mean cross-entropy over response tokens (EOS appended); prompt tokens are masked.

Usage: ``python -m rllm.trainer.sft --model DIR --data sft.parquet --output-dir OUT --steps 1000``
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

import pandas as pd
import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer

from rllm.generation import encode_prompts


def tokenize_pairs(tokenizer, frame: pd.DataFrame) -> list[tuple[list[int], int]]:
    """(token ids of prompt + response + EOS, number of prompt tokens) per row."""
    prompts = encode_prompts(tokenizer, [list(p) for p in frame["prompt"]])
    examples = []
    for prompt_ids, response in zip(prompts, frame["response"], strict=True):
        response_ids = tokenizer.encode(response, add_special_tokens=False) + [tokenizer.eos_token_id]
        examples.append((prompt_ids + response_ids, len(prompt_ids)))
    return examples


def collate(examples: list[tuple[list[int], int]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded input ids, attention mask and labels (-100 on prompt and padding)."""
    width = max(len(ids) for ids, _ in examples)
    input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    for row, (ids, prompt_len) in enumerate(examples):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        labels[row, prompt_len : len(ids)] = torch.tensor(ids[prompt_len:])
        attention[row, : len(ids)] = 1
    return {"input_ids": input_ids, "attention_mask": attention, "labels": labels}


def learning_rate(step: int, steps: int, peak: float, warmup: int) -> float:
    """Linear warm-up to ``peak`` over ``warmup`` steps, then cosine decay to 10% of it."""
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train(
    model_path: str | Path,
    data_path: str | Path,
    output_dir: str | Path,
    *,
    steps: int = 1000,
    batch_size: int = 32,
    lr: float = 1e-3,
    warmup: int = 50,
    weight_decay: float = 0.0,
    seed: int = 0,
    log_every: int = 50,
) -> Path:
    """Fine-tune and save the model and tokenizer to ``output_dir``; returns it.

    Writes ``sft_log.jsonl`` (step, loss, lr) there as it goes.
    """
    random.seed(seed)
    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    model = AutoModelForCausalLM.from_pretrained(str(model_path), dtype=torch.float32)
    model.train()
    examples = tokenize_pairs(tokenizer, pd.read_parquet(data_path))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    order: list[int] = []
    with open(out / "sft_log.jsonl", "w") as log, tqdm(range(steps), desc="sft", unit="step") as bar:
        for step in bar:
            if len(order) < batch_size:
                order += random.sample(range(len(examples)), len(examples))
            batch, order = [examples[i] for i in order[:batch_size]], order[batch_size:]
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(step, steps, lr, warmup)
            loss = model(**collate(batch, pad_id)).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            bar.set_postfix(loss=f"{loss.item():.3f}")
            if step % log_every == 0 or step == steps - 1:
                log.write(json.dumps({"step": step, "loss": loss.item(), "lr": optimizer.param_groups[0]["lr"]}) + "\n")
                log.flush()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    if (Path(model_path) / "generation_config.json").exists():
        model.generation_config.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Supervised warm start on prompt/response pairs.")
    parser.add_argument("--model", required=True, help="Hugging Face model directory to start from")
    parser.add_argument("--data", required=True, help="parquet with 'prompt' (chat messages) and 'response'")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for flag, path in (("--model", args.model), ("--data", args.data)):
        if not Path(path).exists():
            sys.exit(f"sft: {flag} {path} does not exist")
    columns = set(pd.read_parquet(args.data).columns)
    if not {"prompt", "response"} <= columns:
        sys.exit(f"sft: {args.data} needs columns 'prompt' and 'response', found {sorted(columns)}")
    out = train(args.model, args.data, args.output_dir, steps=args.steps, batch_size=args.batch_size,
                lr=args.lr, warmup=args.warmup, weight_decay=args.weight_decay, seed=args.seed)
    print(f"sft: wrote {out}")


if __name__ == "__main__":
    main()
