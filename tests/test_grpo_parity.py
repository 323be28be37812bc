"""The single-device GRPO math equals verl's ``core_algos`` and an independent hand-written formula.

Expected values come two ways: by calling verl 0.9.1's functions directly (as its actor composes
them: ``pg_loss + kl_coef * kl_loss``, token-mean), and by plain formulas written out here, on a
small case whose ratios sit on both sides of the clip range and beyond the dual-clip bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from verl.trainer.ppo import core_algos
from verl.workers.config import ActorConfig

from rllm.trainer.grpo_loss import LossConfig, grpo_advantages, grpo_loss
from rllm.trainer.local import Rollout, TrainConfig, accumulate_gradients, response_log_probs

CLIP_LOW, CLIP_HIGH, DUAL_C, KL_COEF = 0.2, 0.28, 3.0, 0.1


def hand_advantages(rewards: list[float], group: list[int]) -> list[float]:
    """(r - group mean) / (unbiased group std + 1e-6); a lone sample keeps r / (1 + 1e-6)."""
    out = []
    for reward, g in zip(rewards, group, strict=True):
        members = [r for r, h in zip(rewards, group, strict=True) if h == g]
        if len(members) == 1:
            out.append(reward / (1 + 1e-6))
            continue
        mean = sum(members) / len(members)
        std = math.sqrt(sum((r - mean) ** 2 for r in members) / (len(members) - 1))
        out.append((reward - mean) / (std + 1e-6))
    return out


def hand_loss(log_probs, old, advantages, mask, ref):
    """PPO clip with dual clip, plus k3 KL, each a token mean over ``mask``; written out per token."""
    total_pg = total_kl = 0.0
    count = 0
    rows, cols = mask.shape
    for i in range(rows):
        for j in range(cols):
            if not mask[i, j]:
                continue
            a, lp = advantages[i, j], log_probs[i, j]
            ratio = torch.exp(lp - old[i, j])
            clipped = torch.clamp(ratio, 1 - CLIP_LOW, 1 + CLIP_HIGH)
            token = torch.maximum(-a * ratio, -a * clipped)
            if a < 0:
                token = torch.minimum(token, -a * DUAL_C)
            d = ref[i, j] - lp
            total_pg = total_pg + token
            total_kl = total_kl + (torch.exp(d) - d - 1)
            count += 1
    return total_pg / count + KL_COEF * total_kl / count


def verl_loss(log_probs, old, advantages, mask, ref):
    """verl's functions called directly on the whole batch (no global token count: a plain token-mean)."""
    actor = ActorConfig(
        strategy="fsdp",
        rollout_n=1,
        ppo_micro_batch_size_per_gpu=1,
        clip_ratio=CLIP_LOW,
        clip_ratio_low=CLIP_LOW,
        clip_ratio_high=CLIP_HIGH,
        clip_ratio_c=DUAL_C,
    )
    pg, _ = core_algos.compute_policy_loss_vanilla(
        old_log_prob=old, log_prob=log_probs, advantages=advantages, response_mask=mask.bool(), config=actor
    )
    kl = core_algos.kl_penalty(log_probs, ref, "low_var_kl")
    return pg + KL_COEF * core_algos.agg_loss(kl, mask.bool(), "token-mean")


LOSS = LossConfig(clip_ratio_low=CLIP_LOW, clip_ratio_high=CLIP_HIGH, clip_ratio_c=DUAL_C, kl_coef=KL_COEF)


def test_advantages_match_verl_and_hand_formula():
    rewards = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.5, 0.25]
    group = [0, 0, 0, 1, 1, 1, 2, 2, 3]
    mask = torch.ones(len(rewards), 4)
    mask[1, 2:] = 0
    ours = grpo_advantages(torch.tensor(rewards), mask, group)

    token_rewards = torch.zeros(len(rewards), 4)
    token_rewards[:, 0] = torch.tensor(rewards)
    verl, _ = core_algos.compute_grpo_outcome_advantage(token_rewards, mask, np.array(group))
    torch.testing.assert_close(ours, verl)
    expected = torch.tensor(hand_advantages(rewards, group)).unsqueeze(1) * mask
    torch.testing.assert_close(ours, expected)
    assert ours[3:6].abs().max() == 0  # an all-correct group teaches nothing


def small_case():
    """Four samples x three tokens: ratios inside, above and below the clip range (one, e^0.22,
    between 1 + CLIP_LOW and 1 + CLIP_HIGH), one beyond the dual-clip bound, positive and negative
    advantages, masked tokens."""
    old = torch.zeros(4, 3)
    log_probs = torch.tensor(
        [[0.1, 0.5, -0.4], [-0.5, 0.05, 1.5], [0.3, 0.22, 0.2], [0.0, -2.0, 0.4]], requires_grad=True
    )
    advantages = torch.tensor([[1.0] * 3, [-1.0] * 3, [0.5] * 3, [-0.7] * 3])
    mask = torch.tensor([[1, 1, 1], [1, 1, 1], [1, 1, 0], [1, 1, 0]], dtype=torch.float32)
    ref = torch.tensor([[0.0, 0.2, -0.1], [0.3, 0.0, 0.1], [-0.2, 0.1, 0.0], [0.05, -1.0, 0.0]])
    return log_probs, old, advantages, mask, ref


def test_loss_and_gradient_match_verl_and_hand_formula():
    log_probs, old, advantages, mask, ref = small_case()
    ours, metrics = grpo_loss(
        log_probs, old, advantages, mask, batch_num_tokens=mask.sum().item(), config=LOSS, ref_log_probs=ref
    )
    (grad_ours,) = torch.autograd.grad(ours, log_probs)
    verl = verl_loss(log_probs, old, advantages, mask, ref)
    (grad_verl,) = torch.autograd.grad(verl, log_probs)
    hand = hand_loss(log_probs, old, advantages, mask, ref)
    (grad_hand,) = torch.autograd.grad(hand, log_probs)

    torch.testing.assert_close(ours, verl)
    torch.testing.assert_close(ours, hand)
    torch.testing.assert_close(grad_ours, grad_verl)
    torch.testing.assert_close(grad_ours, grad_hand)
    assert metrics["pg_clipfrac"] > 0 and metrics["pg_clipfrac_lower"] > 0  # both clips are exercised
    assert grad_ours[2, 2] == 0 and grad_ours[3, 2] == 0  # masked tokens get no gradient
    # Clipped tokens keep only the KL gradient: ratio e^0.5 > 1.28 with A > 0 ...
    torch.testing.assert_close(grad_ours[0, 1], KL_COEF * (1 - torch.exp(ref[0, 1] - log_probs[0, 1])) / 10)


def tiny_rollout(tokenizer, generator: torch.Generator) -> Rollout:
    """8 rows (2 prompts x 4) of random tokens with ragged prompts and responses; forced-token
    holes in the loss mask; old/ref log-probs filled in later."""
    vocab = len(tokenizer)
    prompt_width, response_width, rows = 5, 7, 8
    input_ids = torch.randint(0, vocab, (rows, prompt_width + response_width), generator=generator)
    attention = torch.ones_like(input_ids)
    response_mask = torch.zeros(rows, response_width)
    for row in range(rows):
        prompt_len = 3 + row % 3
        response_len = 1 + (row * 3) % response_width
        attention[row, : prompt_width - prompt_len] = 0
        attention[row, prompt_width + response_len :] = 0
        response_mask[row, :response_len] = 1
    loss_mask = response_mask.clone()
    loss_mask[::3, 0] = 0  # as if a forced </think> opened these responses
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    group = [0, 0, 0, 0, 1, 1, 1, 1]
    return Rollout(input_ids, attention, response_mask, loss_mask, group, rewards)


@pytest.fixture(scope="module")
def model_and_rollout(tiny_model_dir, tiny_tokenizer):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.float32).eval()
    generator = torch.Generator().manual_seed(0)
    rollout = tiny_rollout(tiny_tokenizer, generator)
    with torch.no_grad():
        current = response_log_probs(model, rollout.input_ids, rollout.attention_mask, 7, 0.7)
    # Old and reference policies a little away from the current one, so ratios leave the clip range.
    rollout.old_log_probs = current + 0.3 * torch.randn(current.shape, generator=generator)
    rollout.ref_log_probs = current + 0.2 * torch.randn(current.shape, generator=generator)
    rollout.advantages = grpo_advantages(rollout.rewards, rollout.loss_mask, rollout.group)
    return model, rollout


def grads(model) -> torch.Tensor:
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


@pytest.mark.parametrize("micro_batch_size", [1, 3, 8])
def test_micro_batched_gradients_equal_verl_on_the_whole_batch(model_and_rollout, micro_batch_size):
    model, rollout = model_and_rollout
    config = TrainConfig(
        model="-", train_data="-", output_dir="-", batch_size=2, n=4, mini_batch_size=2,
        micro_batch_size=micro_batch_size, kl_coef=KL_COEF, clip_ratio=CLIP_LOW,
        clip_ratio_high=CLIP_HIGH, temperature=0.7,
    )  # fmt: skip

    model.zero_grad(set_to_none=True)
    metrics = accumulate_gradients(model, rollout, 0, 8, config)
    ours = grads(model)

    model.zero_grad(set_to_none=True)
    log_probs = response_log_probs(model, rollout.input_ids, rollout.attention_mask, 7, 0.7)
    args = (log_probs, rollout.old_log_probs, rollout.advantages, rollout.loss_mask, rollout.ref_log_probs)
    expected = verl_loss(*args)
    expected.backward()
    torch.testing.assert_close(torch.tensor(metrics["loss"]), expected.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ours, grads(model), rtol=1e-4, atol=1e-7)
    assert metrics["pg_clipfrac"] > 0

    model.zero_grad(set_to_none=True)
    log_probs = response_log_probs(model, rollout.input_ids, rollout.attention_mask, 7, 0.7)
    hand_loss(log_probs, *args[1:]).backward()
    torch.testing.assert_close(ours, grads(model), rtol=1e-4, atol=1e-7)


def test_mean_of_micro_batch_means_is_not_the_token_mean(model_and_rollout):
    """The original's normalisation (each micro-batch a token-mean, then averaged) gives other
    gradients when micro-batches hold different token counts: the tests above would catch it."""
    model, rollout = model_and_rollout
    model.zero_grad(set_to_none=True)
    for start in range(0, 8, 3):
        rows = rollout.rows(start, start + 3)
        log_probs = response_log_probs(model, rows["input_ids"], rows["attention_mask"], 7, 0.7)
        args = (log_probs, rows["old_log_probs"], rows["advantages"], rows["loss_mask"], rows["ref_log_probs"])
        (verl_loss(*args) / 3).backward()
    naive = grads(model)

    model.zero_grad(set_to_none=True)
    log_probs = response_log_probs(model, rollout.input_ids, rollout.attention_mask, 7, 0.7)
    verl_loss(log_probs, rollout.old_log_probs, rollout.advantages, rollout.loss_mask, rollout.ref_log_probs).backward()
    assert not torch.allclose(naive, grads(model), rtol=1e-3, atol=1e-6)
