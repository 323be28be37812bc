#!/usr/bin/env bash
# E1 budget-constrained GRPO on math: DeepScaleR-1.5B, 1024 thinking + 1024 solution tokens,
# DeepScaleR training data, AIME validation before training and every 10 steps, 200 steps.
#
# Usage: scripts/e1-math/e1_math_1.5b_1k_1k.sh [--model PATH] [--gpus N] [--nodes N]
#            [--thinking-length T] [--solution-length S] [--data-dir DIR] [--dry-run|--check] [hydra overrides...]
# Defaults: agentica-org/DeepScaleR-1.5B-Preview on 1 node x 8 GPUs; data/deepscaler/*.parquet.

set -euo pipefail
MODEL_PATH="agentica-org/DeepScaleR-1.5B-Preview"
GPUS=8
NODES=1
THINKING=1024
SOLUTION=1024
source "$(dirname "${BASH_SOURCE[0]}")/../lib/e1_verl_launch.sh"
e1_parse_args "$@"

TRAIN_FILE="$DATA_DIR/deepscaler/deepscaler_train.parquet"
VAL_FILE="$DATA_DIR/deepscaler/aime.parquet"
e1_require_data "$TRAIN_FILE" "$VAL_FILE"

OVERRIDES=(
    algorithm.adv_estimator=grpo
    "data.train_files=$TRAIN_FILE"
    "data.val_files=$VAL_FILE"
    data.train_batch_size=128
    data.max_prompt_length=1024
    "actor_rollout_ref.model.path=$MODEL_PATH"
    actor_rollout_ref.model.use_remove_padding=true
    actor_rollout_ref.model.enable_gradient_checkpointing=true
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.use_dynamic_bsz=true
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=32768
    actor_rollout_ref.actor.use_kl_loss=true
    actor_rollout_ref.actor.kl_loss_coef=0.001
    actor_rollout_ref.actor.kl_loss_type=low_var_kl
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=1
    actor_rollout_ref.actor.fsdp_config.param_offload=false
    actor_rollout_ref.actor.fsdp_config.optimizer_offload=false
    actor_rollout_ref.ref.fsdp_config.param_offload=true
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    actor_rollout_ref.rollout.gpu_memory_utilization=0.85
    actor_rollout_ref.rollout.temperature=0.6
    actor_rollout_ref.rollout.top_p=1.0
    actor_rollout_ref.rollout.n=8
    actor_rollout_ref.rollout.val_kwargs.do_sample=true
    actor_rollout_ref.rollout.val_kwargs.temperature=0.6
    actor_rollout_ref.rollout.val_kwargs.top_p=0.95
    actor_rollout_ref.rollout.val_kwargs.n=8
    "${E1_OVERRIDES[@]}"
    trainer.critic_warmup=0
    "trainer.logger=[console,wandb]"
    trainer.project_name=e1
    trainer.experiment_name=e1-math-1.5b-${THINKING}-${SOLUTION}
    trainer.val_before_train=true
    trainer.test_freq=10
    trainer.save_freq=10
    trainer.total_training_steps=200
    trainer.total_epochs=30
)
e1_launch
