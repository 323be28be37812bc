"""The single-device GRPO loop: data order, rollout layout, masks, rewards, CLI errors, and an
end-to-end run on a real tiny model that trains, checkpoints and resumes to identical weights."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from safetensors.torch import load_file

from rllm.budget import Budget, SampleRecord
from rllm.generation import SamplingConfig, encode_prompts
from rllm.rewards import compute_score
from rllm.trainer import checkpoint as ckpt
from rllm.trainer.grpo_loss import grpo_advantages
from rllm.trainer.local import (
    Task,
    TrainConfig,
    batched_log_probs,
    build_rollout,
    main,
    response_log_probs,
    score,
    step_prompts,
    update_policy,
)

REPO = Path(__file__).resolve().parents[1]


def write_math_parquet(path: Path, pairs: list[tuple[int, int]]) -> Path:
    """A tiny synthetic math task in verl's RL parquet layout: "What is a+b?" -> a+b."""
    rows = [
        {
            "data_source": "synthetic_add",
            "prompt": [{"role": "user", "content": f"What is {a}+{b}? Let's think step by step."}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": str(a + b)},
            "extra_info": {"split": "train", "index": i},
        }
        for i, (a, b) in enumerate(pairs)
    ]
    pd.DataFrame(rows).to_parquet(path)
    return path


# A random tiny model never writes \boxed{...}: with the math grader every reward is 0, every GRPO
# advantage 0 and nothing would be learned. This lenient grader of the same task (the answer's
# digits appear in the solution) gives the groups reward variance, so the loop really updates.
LENIENT_REWARD = '''
def contains_answer(data_source, solution_str, ground_truth, extra_info=None):
    hit = str(ground_truth) in solution_str.partition("</think>")[2]
    return {"score": float(hit), "acc": hit}
'''


def test_step_prompts_are_a_seeded_permutation_per_epoch():
    epoch = [i for step in range(5) for i in step_prompts(step, 2, 10, seed=3)]
    assert sorted(epoch) == list(range(10))
    assert step_prompts(7, 2, 10, seed=3) == step_prompts(7, 2, 10, seed=3)
    assert [i for step in range(5, 10) for i in step_prompts(step, 2, 10, seed=3)] != epoch
    assert step_prompts(0, 2, 10, seed=4) != step_prompts(0, 2, 10, seed=3)
    straddling = [i for step in range(10) for i in step_prompts(step, 3, 10, seed=3)]  # 3 epochs
    assert all(sorted(straddling[e * 10 : e * 10 + 10]) == list(range(10)) for e in range(3))


def test_random_states_round_trip_through_a_checkpoint(tmp_path):
    torch.save(ckpt.rng_state(), tmp_path / "rng.pt")
    first = (random.random(), np.random.rand(), torch.rand(1).item())
    ckpt.set_rng_state(torch.load(tmp_path / "rng.pt", weights_only=True))
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == first


def test_a_crash_while_saving_keeps_the_previous_checkpoint(tiny_model_dir, tiny_tokenizer, tmp_path):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir))
    optimizer = torch.optim.AdamW(model.parameters())
    ckpt.save_checkpoint(tmp_path, 1, model, tiny_tokenizer, optimizer, {})

    class Crashing:
        def save_pretrained(self, path, **_):
            Path(path).mkdir(parents=True)
            (Path(path) / "partial").write_text("half a model")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ckpt.save_checkpoint(tmp_path, 2, Crashing(), tiny_tokenizer, optimizer, {})
    assert ckpt.latest_checkpoint(tmp_path) == ckpt.checkpoint_dir(tmp_path, 1)
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["latest", "step_000001"]


@pytest.fixture(scope="module")
def records_and_prompts(hf_generator, tiny_tokenizer):
    """Real budgeted samples with forced closes (a 4-token thinking budget at temperature 1)."""
    prompts = [[{"role": "user", "content": "What is 2+3?"}], [{"role": "user", "content": "What is 10+7?"}]]
    sampling = SamplingConfig(n=4, temperature=1.0, top_p=1.0, seed=0, logprobs=True)
    records = hf_generator.generate(prompts, Budget(4, 6), sampling)
    assert any(r.forced_close for r in records)
    return records, encode_prompts(tiny_tokenizer, prompts)


def test_rollout_layout_and_forced_tokens_out_of_the_loss(records_and_prompts):
    records, prompt_ids = records_and_prompts
    rollout = build_rollout(prompt_ids, records, [0.0] * len(records), pad_id=0, train_on_forced=False)
    width = rollout.input_ids.shape[1] - rollout.response_width
    for row, record in enumerate(records):
        prompt, response = prompt_ids[record.prompt_index], record.token_ids
        assert rollout.input_ids[row, width - len(prompt) : width].tolist() == prompt
        assert rollout.input_ids[row, width : width + len(response)].tolist() == response
        assert rollout.attention_mask[row].sum() == len(prompt) + len(response)
        assert rollout.response_mask[row].sum() == len(response)
        sampled = [not forced for forced in record.forced_mask]
        assert rollout.loss_mask[row, : len(response)].bool().tolist() == sampled
    assert (rollout.response_mask - rollout.loss_mask).sum() == sum(sum(r.forced_mask) for r in records) > 0
    assert rollout.group == [0, 0, 0, 0, 1, 1, 1, 1]

    original = build_rollout(prompt_ids, records, [0.0] * len(records), pad_id=0, train_on_forced=True)
    assert torch.equal(original.loss_mask, original.response_mask)


def test_training_log_probs_equal_the_sampling_distribution(records_and_prompts, hf_generator):
    """With left-padded prompts, the training forward sees the positions ``generate`` saw: the
    log-probs of sampled tokens equal those recorded while sampling (temperature 1)."""
    records, prompt_ids = records_and_prompts
    rollout = build_rollout(prompt_ids, records, [0.0] * len(records), pad_id=0, train_on_forced=False)
    with torch.no_grad():
        log_probs = response_log_probs(
            hf_generator.model, rollout.input_ids, rollout.attention_mask, rollout.response_width, 1.0
        )
    for row, record in enumerate(records):
        for i, forced in enumerate(record.forced_mask):
            if not forced:
                assert log_probs[row, i].item() == pytest.approx(record.logprobs[i], abs=1e-4)


def test_ppo_ratio_leaves_one_after_the_first_mini_batch(records_and_prompts, hf_generator):
    """Old log-probs come from the rollout policy and each rollout feeds several optimizer steps,
    so later mini-batches see ratio != 1 and the clip bites (the original's ratio was always 1)."""
    records, prompt_ids = records_and_prompts
    rewards = [float(i % 2) for i in range(len(records))]
    rollout = build_rollout(prompt_ids, records, rewards, pad_id=0, train_on_forced=False)
    model = copy.deepcopy(hf_generator.model)  # the session's generator must stay untouched
    config = TrainConfig(
        model="-", train_data="-", output_dir="-", batch_size=2, n=4, mini_batch_size=1,
        micro_batch_size=2, ppo_epochs=2, kl_coef=0.0, temperature=1.0,
    )  # fmt: skip
    rollout.advantages = grpo_advantages(rollout.rewards, rollout.loss_mask, rollout.group)
    rollout.old_log_probs = batched_log_probs(model, rollout, config.micro_batch_size, config.temperature)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    metrics = update_policy(model, optimizer, rollout, config)
    assert metrics["actor/optimizer_steps"] == 4
    assert metrics["actor/pg_clipfrac"] > 0 and abs(metrics["actor/ppo_kl"]) > 1e-4


def make_record(text: str, truncated: bool) -> SampleRecord:
    return SampleRecord(0, 0, [1], [False], 1, 1, True, False, truncated, "stop", text=text)


def test_score_grades_with_compute_score_and_overrides_truncated():
    task = Task([{"role": "user", "content": "What is 2+3?"}], "synthetic_add", "5", {})
    assert score(make_record("think </think> so \\boxed{5}", False), task, compute_score, None) == (1.0, True)
    assert score(make_record("think </think> so \\boxed{6}", False), task, compute_score, None) == (0.0, False)
    assert score(make_record("</think> \\boxed{5}", True), task, compute_score, -1.0) == (-1.0, True)
    assert score(make_record("</think> \\boxed{5}", True), task, lambda **_: 0.5, None) == (0.5, True)


@pytest.fixture(scope="module")
def task_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("task")
    train = write_math_parquet(root / "train.parquet", [(a, b) for a in range(1, 5) for b in range(1, 4)])
    val = write_math_parquet(root / "val.parquet", [(2, 3), (4, 4)])
    (root / "reward.py").write_text(LENIENT_REWARD)
    return {"train": train, "val": val, "reward": f"{root / 'reward.py'}:contains_answer"}


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--train-data", "missing.parquet"], "--train-data missing.parquet: no such file"),
        (["--budget", "1k"], "must be THINKING+SOLUTION"),
        (["--budget", "1k+1k", "--thinking-length", "5"], "either --budget or --thinking-length"),
        (["--batch-size", "3", "--mini-batch-size", "2"], "not a multiple of --mini-batch-size 2"),
        (["--mode", "fast"], "--mode 'fast' is not one of"),
        (["--lr", "0"], "--lr must be > 0"),
        (["--reward-fn", "no_colon"], "--reward-fn 'no_colon': write module:function"),
        (["--resume", "nowhere"], "--resume nowhere: not a checkpoint directory"),
        (["--model", "./not-a-model"], "--model ./not-a-model: not a Hugging Face model directory"),
    ],
)
def test_bad_flags_give_one_line_errors(extra, message, task_files, tiny_model_dir, tmp_path, capsys):
    argv = ["--model", str(tiny_model_dir), "--train-data", str(task_files["train"]), "--output-dir", str(tmp_path)]
    assert main(argv + extra) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_cli_entry_point_reports_errors_in_one_line(tmp_path):
    argv = ["--model", "m", "--train-data", str(tmp_path / "x.parquet"), "--output-dir", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "rllm.trainer.local", *argv], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"error: --train-data {tmp_path / 'x.parquet'}: no such file (expected a verl RL parquet)"


def read_metrics(output_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (output_dir / "metrics.jsonl").read_text().splitlines()]


def weights(checkpoint: Path) -> dict[str, torch.Tensor]:
    return load_file(str(checkpoint / "model.safetensors"))


@pytest.mark.slow
def test_trains_end_to_end_and_resumes_exactly(task_files, tiny_model_dir, tmp_path):
    """Three steps in one go vs two steps, then ``--resume`` for the third: identical weights."""

    def run(output_dir: Path, steps: int, *extra: str) -> int:
        return main(
            [
                "--model", str(tiny_model_dir), "--train-data", str(task_files["train"]),
                "--val-data", str(task_files["val"]), "--output-dir", str(output_dir),
                "--reward-fn", task_files["reward"], "--steps", str(steps), "--batch-size", "2", "--n", "4",
                "--micro-batch-size", "3", "--ppo-epochs", "2", "--budget", "12+6", "--temperature", "1.0",
                "--lr", "1e-3", "--kl-coef", "0.01", "--val-every", "2", "--save-every", "2", "--seed", "1",
                "--no-progress", *extra,
            ]
        )  # fmt: skip

    whole, split = tmp_path / "whole", tmp_path / "split"
    assert run(whole, 3) == 0
    metrics = read_metrics(whole)
    assert [m["step"] for m in metrics] == [0, 1, 2, 3]
    assert "val/acc" in metrics[0] and "val/acc/synthetic_add" in metrics[2]
    for step in metrics[1:]:
        assert math.isfinite(step["actor/loss"]) and math.isfinite(step["actor/grad_norm"])
        assert step["actor/optimizer_steps"] == 4  # 2 mini-batches x 2 PPO epochs
        assert 0 <= step["rollout/truncated_frac"] <= 1
    assert any(m["rollout/reward"] not in (0.0, 1.0) for m in metrics[1:])  # groups had reward variance

    initial = load_file(str(tiny_model_dir / "model.safetensors"))
    final = weights(whole / "checkpoints" / "step_000003")
    assert any(not torch.equal(initial[k], final[k]) for k in initial)
    assert (whole / "checkpoints" / "latest").read_text() == "step_000003"
    assert run(whole, 3) == 2  # a fresh run would overwrite those checkpoints: refused

    assert run(split, 2) == 0
    assert run(split, 3, "--resume") == 0
    resumed = weights(split / "checkpoints" / "step_000003")
    assert all(torch.equal(final[k], resumed[k]) for k in final)
    resumed_metrics = read_metrics(split)
    assert [m["step"] for m in resumed_metrics] == [0, 1, 2, 3]
    assert resumed_metrics[-1]["actor/loss"] == metrics[-1]["actor/loss"]
