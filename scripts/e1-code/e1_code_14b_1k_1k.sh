#!/usr/bin/env bash
# E1 budget-constrained GRPO on code, DeepCoder-style: DeepCoder-14B, 1024 thinking + 1024 solution
# tokens, DeepCoder training data, LiveCodeBench validation every 10 steps; clip 0.2/0.28, no KL loss.
#
# Usage: scripts/e1-code/e1_code_14b_1k_1k.sh [--model PATH] [--gpus N] [--nodes N]
#            [--thinking-length T] [--solution-length S] [--data-dir DIR] [--dry-run|--check] [hydra overrides...]
# Defaults: agentica-org/DeepCoder-14B-Preview on 4 nodes x 8 GPUs; data/deepcoder/*.parquet.

set -euo pipefail
MODEL_PATH="agentica-org/DeepCoder-14B-Preview"
GPUS=8
NODES=4
THINKING=1024
SOLUTION=1024
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e1_verl_launch.sh"
e1_parse_args "$@"

TRAIN_FILE="$DATA_DIR/deepcoder/deepcoder_train.parquet"
VAL_FILE="$DATA_DIR/deepcoder/test_livecodebench.parquet"
e1_require_data "$TRAIN_FILE" "$VAL_FILE"

# Code rewards run untrusted programs in sandboxes: allow many open files, as the original did.
ulimit -n 1048576 2>/dev/null || ulimit -n "$(ulimit -Hn)"

OVERRIDES=(
    algorithm.adv_estimator=grpo
    "data.train_files=$TRAIN_FILE"
    "data.val_files=$VAL_FILE"
    data.train_batch_size=128
    data.max_prompt_length=2048
    "actor_rollout_ref.model.path=$MODEL_PATH"
    actor_rollout_ref.model.use_remove_padding=true
    actor_rollout_ref.model.enable_gradient_checkpointing=true
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.ppo_epochs=1
    actor_rollout_ref.actor.use_dynamic_bsz=true
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000
    actor_rollout_ref.actor.use_kl_loss=false
    actor_rollout_ref.actor.kl_loss_coef=0
    actor_rollout_ref.actor.entropy_coeff=0
    actor_rollout_ref.actor.grad_clip=1.0
    actor_rollout_ref.actor.clip_ratio_low=0.2
    actor_rollout_ref.actor.clip_ratio_high=0.28
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=2
    actor_rollout_ref.actor.fsdp_config.param_offload=false
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=false
    actor_rollout_ref.ref.fsdp_config.param_offload=true
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.gpu_memory_utilization=0.8
    actor_rollout_ref.rollout.temperature=0.6
    actor_rollout_ref.rollout.top_p=1.0
    actor_rollout_ref.rollout.n=8
    actor_rollout_ref.rollout.val_kwargs.do_sample=true
    actor_rollout_ref.rollout.val_kwargs.temperature=0.6
    actor_rollout_ref.rollout.val_kwargs.top_p=0.95
    actor_rollout_ref.rollout.val_kwargs.n=2
    "${E1_OVERRIDES[@]}"
    trainer.critic_warmup=0
    "trainer.logger=[console,wandb]"
    trainer.project_name=e1
    trainer.experiment_name=e1-code-14b-${THINKING}-${SOLUTION}
    trainer.val_before_train=false
    trainer.test_freq=10
    trainer.save_freq=10
    trainer.total_training_steps=300
    trainer.total_epochs=100
)
e1_launch
