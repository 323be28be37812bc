"""GRPO with budget-constrained rollout on a single device (CPU or one GPU), in one file.

    python -m rllm.trainer.local --model PATH --train-data train.parquet --val-data val.parquet \\
        --output-dir runs/e1 --budget 1k+1k --steps 200 --batch-size 8 --n 8

One step:

1. **rollout** ``batch_size`` prompts x ``n`` samples with the E1 budget (transformers backend:
   thinking capped at ``t`` tokens, ``</think>`` forced if missing, solution capped at ``s``);
2. **reward** every response with ``compute_score`` (verl's signature; the response is decoded as
   verl does, ``skip_special_tokens=True``); GRPO advantages normalise rewards within each prompt's
   group of ``n``. Solutions cut at their budget are counted (``rollout/truncated_frac``) and, with
   ``--truncated-reward R``, rewarded ``R`` instead of graded (overlong handling; off by default,
   as in the original, which graded whatever text was there);
3. **old log-probs**: a no-grad forward of the rollout policy (and of the frozen reference model
   when ``--kl-coef > 0``) before any update, so the PPO ratio of later updates is real;
4. **update**: ``ppo_epochs`` passes over the batch in mini-batches of ``mini_batch_size``
   prompts (>= 2 optimizer steps per rollout by default, so clipping matters); each mini-batch is
   split into micro-batches of ``micro_batch_size`` samples whose losses are normalised by the
   mini-batch's token count (token-mean over the mini-batch, as verl does); gradients are
   clipped and AdamW steps;
5. validation (budgeted, every ``val_every`` steps), metrics (console, ``metrics.jsonl``,
   optional TensorBoard / Weights & Biases) and a crash-safe checkpoint (``save_every``).

The loss is verl's (see :mod:`rllm.trainer.grpo_loss`). Tokens the budget *forced* (a
``</think>`` appended at the thinking budget, an s1 cue) are context but get no policy gradient;
``--train-on-forced-tokens`` restores the original's behaviour of training on them.

Resuming (``--resume`` or ``--resume PATH``) restores model, optimizer, random states and step;
the prompts of step ``k`` are a pure function of (seed, k), so the data order resumes too and a
resumed run is identical to an uninterrupted one on CPU.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import importlib.util
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rllm.budget import Budget, BudgetError, Mode, SampleRecord
from rllm.generation import SamplingConfig, encode_prompts
from rllm.trainer import checkpoint as ckpt
from rllm.trainer.grpo_loss import LossConfig, grpo_advantages, grpo_loss

RewardFn = Callable[..., Any]


class TrainError(Exception):
    """A user error (flag, path, data); ``main`` prints it as one line, without a traceback."""


# --------------------------------------------------------------------------- configuration


@dataclass
class TrainConfig:
    """Everything a run depends on; the CLI flags are these fields with dashes."""

    model: str
    train_data: str
    output_dir: str
    val_data: str | None = None
    steps: int = 100
    batch_size: int = 8  # prompts per step
    n: int = 8  # samples per prompt
    mini_batch_size: int | None = None  # prompts per optimizer step; default: batch_size // 2
    micro_batch_size: int = 4  # samples per forward/backward
    ppo_epochs: int = 1
    lr: float = 1e-6
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    kl_coef: float = 0.001
    kl_type: str = "low_var_kl"
    clip_ratio: float = 0.2
    clip_ratio_high: float | None = None  # default: clip_ratio
    temperature: float = 0.6
    top_p: float = 1.0
    budget: str | None = None  # "1k+1k"; or thinking_length/solution_length
    thinking_length: int | None = None
    solution_length: int | None = None
    mode: str = "e1"
    train_on_forced_tokens: bool = False
    truncated_reward: float | None = None
    reward_fn: str = "rllm.rewards:compute_score"
    val_every: int = 10
    val_before_train: bool = True
    val_n: int = 1
    val_temperature: float = 0.6
    val_top_p: float = 0.95
    save_every: int = 10
    resume: str | None = None  # "latest" or a checkpoint directory
    seed: int = 0
    device: str = "cuda" if torch.cuda.is_available() else "cpu"
    dtype: str = "float32"
    rollout_batch_size: int = 16  # prompts per generate call
    tensorboard: bool = False
    wandb_project: str | None = None
    progress: bool = True
    budget_plan: Budget = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.mini_batch_size = self.mini_batch_size or max(1, self.batch_size // 2)
        self.clip_ratio_high = self.clip_ratio if self.clip_ratio_high is None else self.clip_ratio_high
        self.budget_plan = _parse_budget(self)
        positive = ("steps", "batch_size", "n", "mini_batch_size", "micro_batch_size", "ppo_epochs")
        for name in (*positive, "val_every", "save_every", "val_n", "rollout_batch_size"):
            if getattr(self, name) < 1:
                raise TrainError(f"--{_flag(name)} must be >= 1, got {getattr(self, name)}")
        if self.batch_size % self.mini_batch_size:
            raise TrainError(
                f"--batch-size {self.batch_size} is not a multiple of --mini-batch-size {self.mini_batch_size}"
            )
        for name in ("lr", "grad_clip", "temperature", "val_temperature"):
            if getattr(self, name) <= 0:
                raise TrainError(f"--{_flag(name)} must be > 0, got {getattr(self, name)}")
        for name in ("top_p", "val_top_p"):
            if not 0 < getattr(self, name) <= 1:
                raise TrainError(f"--{_flag(name)} must be in (0, 1], got {getattr(self, name)}")
        if self.kl_coef < 0 or not 0 < self.clip_ratio < 1 or not 0 < self.clip_ratio_high:
            raise TrainError("need --kl-coef >= 0, 0 < --clip-ratio < 1 and --clip-ratio-high > 0")
        if self.kl_type.removesuffix("+") not in _KL_TYPES:
            raise TrainError(
                f"--kl-type {self.kl_type!r} is not one of {sorted(_KL_TYPES)} (optionally with a +)"
            )
        if self.dtype not in _DTYPES:
            raise TrainError(f"--dtype {self.dtype!r} is not one of {sorted(_DTYPES)}")

    @property
    def loss(self) -> LossConfig:
        return LossConfig(
            clip_ratio_low=self.clip_ratio,
            clip_ratio_high=self.clip_ratio_high,  # type: ignore[arg-type]
            kl_coef=self.kl_coef,
            kl_type=self.kl_type,
        )

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "budget_plan"} | {
            "budget": self.budget_plan.label
        }


_KL_TYPES = {"low_var_kl", "k3", "kl", "k1", "mse", "k2", "abs"}  # verl's kl_penalty estimators
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _parse_budget(config: TrainConfig) -> Budget:
    """The rollout budget from ``--budget`` or ``--thinking-length/--solution-length``."""
    if config.mode not in {m.value for m in Mode}:
        raise TrainError(f"--mode {config.mode!r} is not one of {[m.value for m in Mode]}")
    mode = Mode(config.mode)
    split = config.thinking_length is not None or config.solution_length is not None
    if config.budget is not None and split:
        raise TrainError("give either --budget or --thinking-length/--solution-length, not both")
    if split and mode in (Mode.NONE, Mode.TRUNCATE):
        raise TrainError(f"--mode {mode.value} takes a total: use --budget, e.g. --budget 2k")
    try:
        if split:
            return Budget(config.thinking_length, config.solution_length, mode)
        return Budget.parse(config.budget or "1k+1k", mode)
    except BudgetError as error:
        raise TrainError(str(error)) from None


def parse_args(argv: Sequence[str] | None = None) -> TrainConfig:
    parser = argparse.ArgumentParser(
        prog="python -m rllm.trainer.local",
        description="Single-device GRPO with E1 budget-constrained rollout.",
    )
    defaults = TrainConfig.__dataclass_fields__
    add = parser.add_argument
    add("--model", required=True, help="Hugging Face model directory (or hub id) to train")
    add("--train-data", required=True, help="verl RL parquet: data_source, prompt, reward_model.ground_truth")
    add("--val-data", help="verl RL parquet for validation (optional)")
    add("--output-dir", required=True, help="checkpoints, metrics.jsonl and logs go here")
    for name, kind, text in [
        ("steps", int, "training steps (one rollout batch each)"),
        ("batch_size", int, "prompts per step"),
        ("n", int, "samples per prompt (the GRPO group)"),
        ("mini_batch_size", int, "prompts per optimizer step (default: batch-size / 2)"),
        ("micro_batch_size", int, "samples per forward/backward (gradient accumulation)"),
        ("ppo_epochs", int, "passes over each rollout batch"),
        ("lr", float, "AdamW learning rate"),
        ("weight_decay", float, "AdamW weight decay"),
        ("grad_clip", float, "max gradient norm"),
        ("kl_coef", float, "weight of the KL loss to the initial model (0: no KL, no reference model)"),
        ("kl_type", str, "verl kl_penalty estimator: low_var_kl (k3), kl (k1), mse (k2), abs"),
        ("clip_ratio", float, "PPO clip: ratio kept in [1 - c, 1 + c_high]"),
        ("clip_ratio_high", float, "upper PPO clip (default: --clip-ratio)"),
        ("temperature", float, "rollout temperature (also divides the logits of the loss, as verl)"),
        ("top_p", float, "rollout top-p"),
        ("budget", str, "THINKING+SOLUTION for e1/s1 (default: 1k+1k), a total for none/truncate, e.g. 2k"),
        ("thinking_length", int, "thinking budget in tokens (with --solution-length)"),
        ("solution_length", int, "solution budget in tokens (with --thinking-length)"),
        ("mode", str, "e1 | s1 | truncate | none"),
        ("truncated_reward", float, "reward for samples whose solution hit its budget (default: graded)"),
        ("reward_fn", str, "reward function as module:function or file.py:function"),
        ("val_every", int, "validate every this many steps"),
        ("val_n", int, "samples per validation prompt"),
        ("val_temperature", float, "validation temperature"),
        ("val_top_p", float, "validation top-p"),
        ("save_every", int, "checkpoint every this many steps (and at the end)"),
        ("seed", int, "seed of data order, rollout sampling and everything else"),
        ("device", str, "torch device"),
        ("dtype", str, "float32 | bfloat16 | float16"),
        ("rollout_batch_size", int, "prompts per generate call"),
        ("wandb_project", str, "log to this Weights & Biases project (needs wandb)"),
    ]:
        default = defaults[name].default
        shown = text if default is None else f"{text} (default: %(default)s)"
        add(f"--{_flag(name)}", type=kind, default=default, help=shown)
    add("--train-on-forced-tokens", action="store_true", help="give forced tokens policy gradient (original)")
    add(
        "--no-val-before-train",
        dest="val_before_train",
        action="store_false",
        help="skip validation at step 0",
    )
    add(
        "--resume",
        nargs="?",
        const="latest",
        help="resume from the latest checkpoint in --output-dir, or PATH",
    )
    add("--tensorboard", action="store_true", help="also log to TensorBoard (needs tensorboard)")
    add("--no-progress", dest="progress", action="store_false", help="no progress bar")
    return TrainConfig(**vars(parser.parse_args(argv)))


# --------------------------------------------------------------------------- data and rewards


@dataclass(frozen=True)
class Task:
    """One parquet row: the chat prompt and what the reward function needs."""

    prompt: list[dict[str, str]]
    data_source: str
    ground_truth: Any
    extra_info: dict[str, Any]


def load_tasks(path: str | Path, flag: str) -> list[Task]:
    """Rows of a verl RL parquet; a missing file or column is a :class:`TrainError` naming it."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise TrainError(f"{flag} {path}: no such file (expected a verl RL parquet)")
    try:
        frame = pd.read_parquet(path)
    except Exception as error:  # pyarrow raises several types for a non-parquet file
        raise TrainError(f"{flag} {path}: not a readable parquet file ({error})") from None
    missing = {"prompt", "reward_model"} - set(frame.columns)
    if missing or frame.empty:
        raise TrainError(
            f"{flag} {path}: {'missing columns ' + str(sorted(missing)) if missing else 'no rows'}"
        )
    tasks = []
    for i, row in enumerate(frame.to_dict("records")):
        reward_model = row["reward_model"]
        if not isinstance(reward_model, dict) or "ground_truth" not in reward_model:
            raise TrainError(f"{flag} {path}: row {i} has no reward_model.ground_truth")
        try:
            prompt = [{"role": m["role"], "content": m["content"]} for m in row["prompt"]]
        except (KeyError, TypeError):
            raise TrainError(
                f"{flag} {path}: row {i}'s prompt is not a list of {{role, content}} messages"
            ) from None
        tasks.append(
            Task(
                prompt=prompt,
                data_source=str(row.get("data_source") or ""),
                ground_truth=_plain(reward_model["ground_truth"]),
                extra_info=_plain(row.get("extra_info")) or {},
            )
        )
    return tasks


def _plain(value: Any) -> Any:
    """numpy arrays from parquet list columns as Python lists (graders expect JSON-like values)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def step_prompts(step: int, batch_size: int, num_tasks: int, seed: int) -> list[int]:
    """Task indices of training step ``step`` (0-based): consecutive slices of a fresh seeded
    permutation per epoch. A pure function of its arguments, so a resumed run sees the same data."""
    indices: list[int] = []
    position, stop = step * batch_size, (step + 1) * batch_size
    while position < stop:  # a batch may straddle two epochs
        epoch, offset = divmod(position, num_tasks)
        take = min(stop - position, num_tasks - offset)
        order = np.random.default_rng([seed, epoch]).permutation(num_tasks)
        indices += order[offset : offset + take].tolist()
        position += take
    return indices


def load_reward_fn(spec: str) -> RewardFn:
    """``module:function`` or ``path/to/file.py:function`` (verl's ``custom_reward_function``)."""
    target, _, name = spec.rpartition(":")
    if not target or not name:
        raise TrainError(f"--reward-fn {spec!r}: write module:function or file.py:function")
    try:
        if target.endswith(".py"):
            module_spec = importlib.util.spec_from_file_location(Path(target).stem, target)
            if module_spec is None or not Path(target).is_file():
                raise TrainError(f"--reward-fn {spec!r}: no such file {target}")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)  # type: ignore[union-attr]
        else:
            module = importlib.import_module(target)
        return getattr(module, name)
    except (ImportError, AttributeError) as error:
        raise TrainError(f"--reward-fn {spec!r}: {error}") from None


def score(
    record: SampleRecord, task: Task, reward_fn: RewardFn, truncated_reward: float | None
) -> tuple[float, bool]:
    """(reward, correct) of one sample. A reward function may return a float or verl's dict with
    ``score`` (and ``acc``). ``truncated_reward`` replaces the reward of a solution cut at its budget."""
    result = reward_fn(
        data_source=task.data_source,
        solution_str=record.text,
        ground_truth=task.ground_truth,
        extra_info=task.extra_info,
    )
    value = float(result["score"] if isinstance(result, dict) else result)
    correct = bool(result.get("acc", value > 0)) if isinstance(result, dict) else value > 0
    if truncated_reward is not None and record.solution_truncated:
        value = truncated_reward
    return value, correct


# --------------------------------------------------------------------------- rollout batch


@dataclass
class Rollout:
    """A rollout laid out for the forward pass. ``B = prompts * n`` rows, prompt-major; ``P``
    prompt columns (left-padded) then ``R`` response columns (right-padded).

    ``response_mask`` (B, R) is 1 on every response token; ``loss_mask`` (B, R) on the tokens that
    get policy gradient (sampled ones; forced ones too with ``--train-on-forced-tokens``).
    ``old_log_probs`` / ``ref_log_probs`` / ``advantages`` are (B, R), filled before the update.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    response_mask: torch.Tensor
    loss_mask: torch.Tensor
    group: list[int]
    rewards: torch.Tensor
    old_log_probs: torch.Tensor | None = None
    ref_log_probs: torch.Tensor | None = None
    advantages: torch.Tensor | None = None

    @property
    def response_width(self) -> int:
        return self.response_mask.shape[1]

    def to(self, device: torch.device | str) -> Rollout:
        """The per-row tensors on ``device`` (where the loss is computed: the model's device)."""
        for name in ("input_ids", "attention_mask", "response_mask", "loss_mask", "rewards"):
            setattr(self, name, getattr(self, name).to(device))
        return self

    def rows(self, start: int, stop: int) -> dict[str, torch.Tensor | None]:
        """The per-row tensors of rows ``start:stop``."""
        names = ("input_ids", "attention_mask", "loss_mask", "old_log_probs", "ref_log_probs", "advantages")
        return {k: None if getattr(self, k) is None else getattr(self, k)[start:stop] for k in names}


def build_rollout(
    prompt_ids: list[list[int]],
    records: list[SampleRecord],
    rewards: list[float],
    pad_id: int,
    train_on_forced: bool,
) -> Rollout:
    """Lay out ``records`` (prompt-major, ``record.prompt_index`` into ``prompt_ids``) as a batch."""
    prompt_width = max(len(prompt_ids[r.prompt_index]) for r in records)
    response_width = max(1, max(len(r.token_ids) for r in records))
    rows = len(records)
    input_ids = torch.full((rows, prompt_width + response_width), pad_id, dtype=torch.long)
    attention = torch.zeros_like(input_ids)
    response_mask = torch.zeros((rows, response_width))
    loss_mask = torch.zeros((rows, response_width))
    for row, record in enumerate(records):
        prompt, response = prompt_ids[record.prompt_index], record.token_ids
        input_ids[row, prompt_width - len(prompt) : prompt_width] = torch.tensor(prompt)
        input_ids[row, prompt_width : prompt_width + len(response)] = torch.tensor(response, dtype=torch.long)
        attention[row, prompt_width - len(prompt) : prompt_width + len(response)] = 1
        response_mask[row, : len(response)] = 1
        sampled = [train_on_forced or not forced for forced in record.forced_mask]
        loss_mask[row, : len(response)] = torch.tensor(sampled, dtype=torch.float32)
    return Rollout(
        input_ids=input_ids,
        attention_mask=attention,
        response_mask=response_mask,
        loss_mask=loss_mask,
        group=[r.prompt_index for r in records],
        rewards=torch.tensor(rewards, dtype=torch.float32),
    )


def response_log_probs(
    model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, response_width: int, temperature: float
) -> torch.Tensor:
    """Log-probability (b, R) of each response token under ``model``, logits divided by
    ``temperature`` as verl's actor does. Positions follow the attention mask, as in ``generate``."""
    device = model.device
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(
        input_ids=input_ids.to(device),
        attention_mask=attention_mask.to(device),
        position_ids=position_ids.to(device),
        logits_to_keep=response_width + 1,  # the logits predicting the R response tokens
        use_cache=False,
    ).logits[:, :-1]
    logits = logits.float() / temperature
    targets = input_ids[:, -response_width:].to(device)
    return logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - logits.logsumexp(-1)


@torch.no_grad()
def batched_log_probs(
    model: Any, rollout: Rollout, micro_batch_size: int, temperature: float
) -> torch.Tensor:
    """:func:`response_log_probs` of every row, without gradient, in micro-batches."""
    parts = []
    for start in range(0, rollout.input_ids.shape[0], micro_batch_size):
        rows = rollout.rows(start, start + micro_batch_size)
        parts.append(
            response_log_probs(
                model, rows["input_ids"], rows["attention_mask"], rollout.response_width, temperature
            )
        )
    return torch.cat(parts)


# --------------------------------------------------------------------------- update


def update_policy(
    model: Any, optimizer: torch.optim.Optimizer, rollout: Rollout, config: TrainConfig
) -> dict[str, float]:
    """``ppo_epochs`` passes of mini-batch updates over ``rollout``; returns averaged metrics.

    Each mini-batch (``mini_batch_size * n`` rows, whole groups, in order) is one optimizer step
    on the accumulated gradient of :func:`accumulate_gradients`, clipped to ``grad_clip``.
    """
    actor = config.loss.actor_config()
    params = [p for p in model.parameters() if p.requires_grad]
    rows_per_mini = config.mini_batch_size * config.n  # type: ignore[operator]
    totals: dict[str, list[float]] = defaultdict(list)
    for _ in range(config.ppo_epochs):
        for start in range(0, rollout.input_ids.shape[0], rows_per_mini):
            optimizer.zero_grad(set_to_none=True)
            metrics = accumulate_gradients(model, rollout, start, start + rows_per_mini, config, actor)
            if not metrics:  # every token of the mini-batch was forced: nothing to learn from
                continue
            grad_norm = torch.nn.utils.clip_grad_norm_(params, config.grad_clip).item()
            if math.isfinite(grad_norm):  # as verl: a non-finite gradient skips the step
                optimizer.step()
            metrics |= {"grad_norm": grad_norm, "skipped_steps": float(not math.isfinite(grad_norm))}
            for key, value in metrics.items():
                totals[key].append(value)
    metrics = {f"actor/{key}": float(np.mean(values)) for key, values in totals.items()}
    metrics["actor/optimizer_steps"] = float(len(totals["loss"]) - sum(totals["skipped_steps"]))
    return metrics


def accumulate_gradients(
    model: Any, rollout: Rollout, start: int, stop: int, config: TrainConfig, actor: Any = None
) -> dict[str, float]:
    """Backward the GRPO loss of rows ``start:stop`` (one mini-batch) in micro-batches of
    ``micro_batch_size`` rows, adding to the parameters' ``.grad``.

    Every micro-batch's loss is its token *sum* over the mini-batch's loss-token count, so the
    accumulated gradient is that of the token-mean over the whole mini-batch, however it is split
    (not a mean of per-micro-batch means, which over-weights tokens of short micro-batches).
    Returns the mini-batch's loss, KL loss and token-weighted clip metrics; ``{}`` if it has no
    loss tokens.
    """
    num_tokens = rollout.loss_mask[start:stop].sum().item()
    if num_tokens == 0:
        return {}
    totals: dict[str, float] = defaultdict(float)
    for micro in range(start, min(stop, rollout.input_ids.shape[0]), config.micro_batch_size):
        rows = rollout.rows(micro, min(micro + config.micro_batch_size, stop))
        log_probs = response_log_probs(
            model, rows["input_ids"], rows["attention_mask"], rollout.response_width, config.temperature
        )
        loss, metrics = grpo_loss(
            log_probs,
            rows["old_log_probs"],
            rows["advantages"],
            rows["loss_mask"],
            batch_num_tokens=num_tokens,
            config=config.loss,
            actor=actor,
            ref_log_probs=rows["ref_log_probs"],
        )
        loss.backward()
        totals["loss"] += loss.item()
        totals["pg_loss"] += metrics["pg_loss"]
        weight = rows["loss_mask"].sum().item() / num_tokens  # clip metrics are micro-batch token means
        for key in ("pg_clipfrac", "pg_clipfrac_lower", "ppo_kl"):
            totals[key] += weight * metrics[key]
        if "kl_loss" in metrics:
            totals["kl_loss"] += metrics["kl_loss"]  # already normalised by the mini-batch's tokens
    return dict(totals)


# --------------------------------------------------------------------------- metrics


def sample_metrics(
    prefix: str, records: list[SampleRecord], rewards: list[float], correct: list[bool], n: int
) -> dict:
    """Reward, accuracy and budget statistics of ``records`` (prompt-major, ``n`` per prompt)."""
    solved = np.asarray(correct, dtype=float).reshape(-1, n).mean(axis=1)
    return {
        f"{prefix}/reward": float(np.mean(rewards)),
        f"{prefix}/acc": float(np.mean(correct)),
        f"{prefix}/solve_none": float(np.mean(solved == 0)),
        f"{prefix}/solve_all": float(np.mean(solved == 1)),
        f"{prefix}/thinking_tokens": float(np.mean([r.thinking_tokens for r in records])),
        f"{prefix}/solution_tokens": float(np.mean([r.solution_tokens for r in records])),
        f"{prefix}/response_tokens": float(np.mean([r.total_tokens for r in records])),
        f"{prefix}/forced_close_frac": float(np.mean([r.forced_close for r in records])),
        f"{prefix}/eos_in_thinking_frac": float(np.mean([r.eos_in_thinking for r in records])),
        f"{prefix}/truncated_frac": float(np.mean([r.solution_truncated for r in records])),
    }


class MetricsLog:
    """Appends one JSON object per step to ``metrics.jsonl``; mirrors to TensorBoard / wandb.

    Lines of steps after ``start_step`` (logged by a run that crashed before its next checkpoint)
    are dropped, so a resumed run's log reads as if it had never stopped.
    """

    def __init__(self, config: TrainConfig, output_dir: Path, start_step: int):
        self.path = output_dir / "metrics.jsonl"
        if self.path.exists():
            lines = self.path.read_text().splitlines(keepends=True) if start_step else []
            self.path.write_text("".join(x for x in lines if json.loads(x)["step"] <= start_step))
        self.writers: list[Any] = []
        if config.tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise TrainError(
                    "--tensorboard needs the tensorboard package: pip install tensorboard"
                ) from None
            self.writers.append(SummaryWriter(str(output_dir / "tensorboard")))
        self.wandb = None
        if config.wandb_project:
            try:
                import wandb
            except ImportError:
                raise TrainError("--wandb-project needs the wandb package: pip install wandb") from None
            self.wandb = wandb.init(
                project=config.wandb_project, config=config.to_dict(), dir=str(output_dir)
            )

    def write(self, step: int, metrics: dict[str, float]) -> None:
        with self.path.open("a") as out:
            out.write(json.dumps({"step": step, **metrics}) + "\n")
        for writer in self.writers:
            for key, value in metrics.items():
                writer.add_scalar(key, value, step)
        if self.wandb is not None:
            self.wandb.log(metrics, step=step)

    def close(self) -> None:
        for writer in self.writers:
            writer.close()
        if self.wandb is not None:
            self.wandb.finish()


# --------------------------------------------------------------------------- the trainer


class Trainer:
    """Owns the models, optimizer and data of one run; :meth:`fit` is the training loop."""

    def __init__(self, config: TrainConfig):
        from transformers.utils import logging as hf_logging

        from rllm.generation.hf import HFGenerator

        hf_logging.disable_progress_bar()  # per-checkpoint "Writing model shards" bars drown ours
        self.config = config
        self.output_dir = Path(config.output_dir)
        try:
            self.output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise TrainError(f"--output-dir {self.output_dir}: cannot create it ({error.strerror})") from None
        self.train_tasks = load_tasks(config.train_data, "--train-data")
        self.val_tasks = load_tasks(config.val_data, "--val-data") if config.val_data else []
        self.reward_fn = load_reward_fn(config.reward_fn)
        resume_from = self._resume_path()
        self.tokenizer = _load_tokenizer(config.model)
        self.model = _load_model(str(resume_from or config.model), config)
        self.reference = _frozen_copy(self.model, config) if config.kl_coef > 0 else None
        try:
            self.generator = HFGenerator(self.model, self.tokenizer, batch_size=config.rollout_batch_size)
        except BudgetError as error:
            raise TrainError(f"--model {config.model}: {error}") from None
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(), lr=config.lr, weight_decay=config.weight_decay
        )
        self.step = 0
        torch.manual_seed(config.seed)
        if resume_from is not None:
            self._restore(resume_from)

    def _resume_path(self) -> Path | None:
        if self.config.resume is None:
            if ckpt.latest_checkpoint(self.output_dir) is not None:
                raise TrainError(
                    f"--output-dir {self.output_dir} already holds checkpoints: add --resume to continue "
                    "that run, or choose another directory"
                )
            return None
        if self.config.resume == "latest":
            return ckpt.latest_checkpoint(self.output_dir)  # none yet: a fresh start
        path = Path(self.config.resume)
        if not (path / ckpt.STATE_FILE).is_file():
            raise TrainError(f"--resume {path}: not a checkpoint directory (no {ckpt.STATE_FILE})")
        return path

    def _restore(self, path: Path) -> None:
        """Optimizer, step and random states from the checkpoint (the model was loaded from it)."""
        state = ckpt.load_trainer_state(path)
        saved = state["data_order"]
        current = self._data_order()
        if saved != current:
            raise TrainError(f"--resume {path}: the run's data order changed ({saved} then, {current} now)")
        self.optimizer.load_state_dict(state["optimizer"])
        ckpt.set_rng_state(state["rng"])
        self.step = int(state["step"])

    def _data_order(self) -> dict[str, Any]:
        """What determines which prompts each step sees; a resume must not change it."""
        return {
            "seed": self.config.seed,
            "batch_size": self.config.batch_size,
            "num_tasks": len(self.train_tasks),
        }

    def fit(self) -> dict[str, float]:
        """Train from ``self.step`` to ``config.steps``; returns the last step's metrics."""
        from tqdm import tqdm

        config = self.config
        (self.output_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=2))
        log = MetricsLog(config, self.output_dir, self.step)
        metrics: dict[str, float] = {}
        if self.step == 0 and self.val_tasks and config.val_before_train:
            log.write(0, self.validate())
        bar = tqdm(
            total=config.steps, initial=self.step, desc="grpo", unit="step", disable=not config.progress
        )
        try:
            while self.step < config.steps:
                metrics = self.train_step()
                self.step += 1
                if self.val_tasks and (self.step % config.val_every == 0 or self.step == config.steps):
                    metrics |= self.validate()
                log.write(self.step, metrics)
                if self.step % config.save_every == 0 or self.step == config.steps:
                    extra = {"config": config.to_dict(), "data_order": self._data_order()}
                    ckpt.save_checkpoint(
                        self.output_dir, self.step, self.model, self.tokenizer, self.optimizer, extra
                    )
                bar.update(1)
                bar.set_postfix_str(_summary(metrics))
                if not config.progress:
                    print(f"step {self.step}: {_summary(metrics)}", file=sys.stderr)
        finally:
            bar.close()
            log.close()
        return metrics

    def train_step(self) -> dict[str, float]:
        """Rollout, reward, advantages, old/ref log-probs, then the mini-batch updates. Timings:
        ``rollout_s`` generation, ``reward_s`` grading, ``update_s`` log-probs and optimizer steps."""
        config = self.config
        started = time.perf_counter()
        indices = step_prompts(self.step, config.batch_size, len(self.train_tasks), config.seed)
        tasks = [self.train_tasks[i] for i in indices]
        prompts = [t.prompt for t in tasks]
        sampling = SamplingConfig(
            n=config.n, temperature=config.temperature, top_p=config.top_p, seed=config.seed + self.step
        )
        records = self.generator.generate(prompts, config.budget_plan, sampling)
        rolled = time.perf_counter()

        scored = [score(r, tasks[r.prompt_index], self.reward_fn, config.truncated_reward) for r in records]
        rewards, correct = [s[0] for s in scored], [s[1] for s in scored]
        rewarded = time.perf_counter()

        prompt_ids = encode_prompts(self.tokenizer, prompts)
        pad_id = self.generator.pad_id
        rollout = build_rollout(prompt_ids, records, rewards, pad_id, config.train_on_forced_tokens)
        rollout = rollout.to(self.model.device)
        rollout.advantages = grpo_advantages(rollout.rewards, rollout.loss_mask, rollout.group)
        rollout.old_log_probs = batched_log_probs(
            self.model, rollout, config.micro_batch_size, config.temperature
        )
        if self.reference is not None:
            rollout.ref_log_probs = batched_log_probs(
                self.reference, rollout, config.micro_batch_size, config.temperature
            )
        metrics = update_policy(self.model, self.optimizer, rollout, config)
        updated = time.perf_counter()

        metrics |= sample_metrics("rollout", records, rewards, correct, config.n)
        metrics |= {
            "rollout/loss_tokens": rollout.loss_mask.sum().item(),
            "rollout/forced_tokens": float(sum(sum(r.forced_mask) for r in records)),
            "timing/rollout_s": rolled - started,
            "timing/reward_s": rewarded - rolled,
            "timing/update_s": updated - rewarded,
        }
        return metrics

    def validate(self) -> dict[str, float]:
        """Budgeted generation over the whole validation set: accuracy (overall and per
        ``data_source``) and budget statistics."""
        config = self.config
        sampling = SamplingConfig(
            n=config.val_n, temperature=config.val_temperature, top_p=config.val_top_p, seed=config.seed
        )
        records = self.generator.generate([t.prompt for t in self.val_tasks], config.budget_plan, sampling)
        tasks = [self.val_tasks[r.prompt_index] for r in records]
        scored = [score(r, t, self.reward_fn, None) for r, t in zip(records, tasks, strict=True)]
        correct = [s[1] for s in scored]
        metrics = sample_metrics("val", records, [s[0] for s in scored], correct, config.val_n)
        by_source: dict[str, list[bool]] = defaultdict(list)
        for task, ok in zip(tasks, correct, strict=True):
            by_source[task.data_source or "unknown"].append(ok)
        metrics |= {f"val/acc/{source}": float(np.mean(oks)) for source, oks in sorted(by_source.items())}
        return metrics


def _summary(metrics: dict[str, float]) -> str:
    keys = {
        "actor/loss": "loss",
        "rollout/reward": "reward",
        "rollout/truncated_frac": "trunc",
        "val/acc": "val_acc",
    }
    return " ".join(f"{short}={metrics[key]:.4g}" for key, short in keys.items() if key in metrics)


def _load_tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    _check_model_path(path)
    try:
        return AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as error:
        raise TrainError(f"--model {path}: cannot load its tokenizer ({error})") from None


def _load_model(path: str, config: TrainConfig) -> Any:
    from transformers import AutoModelForCausalLM

    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=_DTYPES[config.dtype])
    except (OSError, ValueError) as error:
        raise TrainError(f"cannot load the model from {path} ({error})") from None
    # No dropout: the rollout's and the update's log-probs must come from the same function.
    return model.to(config.device).eval()


def _frozen_copy(model: Any, config: TrainConfig) -> Any:
    """The reference policy for the KL term: the initial weights (``--model``), frozen."""
    reference = _load_model(config.model, config) if config.resume else copy.deepcopy(model)
    for param in reference.parameters():
        param.requires_grad_(False)
    return reference


def _check_model_path(path: str) -> None:
    local = Path(path)
    looks_local = local.exists() or path.startswith((".", "/", "~")) or path.count("/") > 1
    if looks_local and not (local / "config.json").is_file():
        raise TrainError(f"--model {path}: not a Hugging Face model directory (no config.json)")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = parse_args(argv)
        Trainer(config).fit()
    except TrainError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
