"""GRPO's math through verl's ``core_algos``, so one device computes what a cluster step computes.

Shapes: ``B`` samples (``prompts * n``, prompt-major), ``R`` response positions. Masks are (B, R)
with 1 where a token counts: ``response_mask`` covers every response token, the *loss mask* only
those that receive policy gradient (forced tokens are removed from it, see ``rllm.trainer.local``).

The functions here are thin adapters: advantages are verl's ``compute_grpo_outcome_advantage``,
the clipped objective is verl's ``compute_policy_loss_vanilla`` (dual-clip included), the KL term
is verl's ``kl_penalty`` aggregated with ``agg_loss``, composed as verl's actor composes them
(``verl.workers.utils.losses.ppo_loss``): ``loss = pg_loss + kl_coef * kl_loss``.

Token-mean across micro-batches: verl normalises every micro-batch's token *sum* by the token count
of the whole mini-batch (``global_batch_info["batch_num_tokens"]``), so the gradients accumulated
over the micro-batches equal those of one token-mean over the mini-batch. :func:`grpo_loss` takes
that count as ``batch_num_tokens`` for the same reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from verl.trainer.ppo import core_algos
from verl.workers.config import ActorConfig

# verl's defaults: the std floor in GRPO's normalisation, and the dual-clip bound for A < 0.
GRPO_EPSILON = 1e-6
DUAL_CLIP_C = 3.0


@dataclass(frozen=True)
class LossConfig:
    """The knobs of the GRPO objective (verl's ``actor_rollout_ref.actor`` names in comments)."""

    clip_ratio_low: float = 0.2  # clip_ratio_low: ratio floor is 1 - low
    clip_ratio_high: float = 0.2  # clip_ratio_high: ratio ceiling is 1 + high (DAPO's clip-higher)
    clip_ratio_c: float = DUAL_CLIP_C  # clip_ratio_c: dual-clip bound for negative advantages
    kl_coef: float = 0.0  # kl_loss_coef; 0 disables the KL term (use_kl_loss=False)
    kl_type: str = "low_var_kl"  # kl_loss_type

    def actor_config(self) -> ActorConfig:
        """The verl ``ActorConfig`` its policy-loss functions read the clip ranges from."""
        return ActorConfig(
            strategy="fsdp",  # required by the dataclass; unused by the loss functions
            rollout_n=1,
            ppo_micro_batch_size_per_gpu=1,
            use_torch_compile=False,
            clip_ratio=self.clip_ratio_low,
            clip_ratio_low=self.clip_ratio_low,
            clip_ratio_high=self.clip_ratio_high,
            clip_ratio_c=self.clip_ratio_c,
            loss_agg_mode="token-mean",
            use_kl_loss=self.kl_coef > 0,
            kl_loss_coef=self.kl_coef,
            kl_loss_type=self.kl_type,
        )


def grpo_advantages(rewards: torch.Tensor, mask: torch.Tensor, group: Sequence[int]) -> torch.Tensor:
    """Group-normalised advantages, (B, R): ``(r - mean_g) / (std_g + 1e-6)`` on every masked token.

    ``rewards`` is (B,), one scalar per sample; ``group[i]`` names the prompt of sample ``i``
    (``std`` is the unbiased one; a group of one sample gets advantage ``r``, as in verl).
    """
    token_rewards = torch.zeros_like(mask, dtype=torch.float32)
    token_rewards[:, -1] = rewards.float()  # verl sums over positions; where it sits is irrelevant
    advantages, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards=token_rewards,
        response_mask=mask.float(),
        index=np.asarray(group),
        epsilon=GRPO_EPSILON,
        norm_adv_by_std_in_grpo=True,
    )
    return advantages


def grpo_loss(
    log_probs: torch.Tensor,
    old_log_probs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    batch_num_tokens: int | float,
    config: LossConfig,
    actor: ActorConfig | None = None,
    ref_log_probs: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """The loss of one micro-batch and its metrics; all tensors (b, R) for the micro-batch's rows.

    ``batch_num_tokens`` is the number of masked tokens in the whole *mini-batch* the micro-batch
    belongs to: summing the returned losses (and their gradients) over the mini-batch's
    micro-batches gives the mini-batch's token-mean loss. ``actor`` may be passed to reuse one
    ``config.actor_config()`` across calls. ``ref_log_probs`` is required when ``kl_coef > 0``.
    """
    actor = actor or config.actor_config()
    actor.global_batch_info.update(
        dp_size=1, batch_num_tokens=batch_num_tokens, global_batch_size=None, loss_scale_factor=None
    )
    mask = mask.bool()
    pg_loss, pg_metrics = core_algos.compute_policy_loss_vanilla(
        old_log_prob=old_log_probs,
        log_prob=log_probs,
        advantages=advantages,
        response_mask=mask,
        loss_agg_mode="token-mean",
        config=actor,
    )
    metrics = {"pg_loss": pg_loss.item(), **{k.removeprefix("actor/"): v for k, v in pg_metrics.items()}}
    loss = pg_loss
    if config.kl_coef > 0:
        if ref_log_probs is None:
            raise ValueError("kl_coef > 0 needs ref_log_probs (log-probs under the reference model)")
        kl = core_algos.kl_penalty(logprob=log_probs, ref_logprob=ref_log_probs, kl_penalty=config.kl_type)
        kl_loss = core_algos.agg_loss(
            loss_mat=kl, loss_mask=mask, loss_agg_mode="token-mean", **actor.global_batch_info
        )
        loss = loss + config.kl_coef * kl_loss
        metrics["kl_loss"] = kl_loss.item()
    return loss, metrics
