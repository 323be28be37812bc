"""The launch scripts' Hydra overrides compose with verl 0.9.1's config and pass its validate_config.

The overrides are the scripts' own, read from their ``--dry-run`` output (nothing is duplicated here);
validation uses each script's GPU and node counts, as ``main_ppo`` would on the cluster.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from rllm.budget import BudgetError
from rllm.trainer.verl_config import compose, validate

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {
    "math": ROOT / "scripts/e1-math/e1_math_1.5b_1k_1k.sh",
    "code": ROOT / "scripts/e1-code/e1_code_14b_1k_1k.sh",
}


def launch(script: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(script), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def dry_run_overrides(script: Path, *args: str) -> list[str]:
    """The Hydra overrides the script passes to ``python3 -m verl.trainer.main_ppo``."""
    result = launch(script, "--model", "/models/m", "--dry-run", *args)
    assert result.returncode == 0, result.stderr
    command = shlex.split(result.stdout)
    assert command[1:3] == ["-m", "verl.trainer.main_ppo"], command[:3]
    return command[3:]


@functools.cache
def script_config(name: str):
    """The config a script's default invocation gives ``main_ppo``."""
    return compose(dry_run_overrides(SCRIPTS[name]))


@pytest.fixture(params=sorted(SCRIPTS))
def composed(request):
    return request.param, script_config(request.param)


def test_scripts_compose_and_pass_verl_validation(composed):
    _, config = composed
    validate(config)


def test_e1_settings_and_plugin_wiring(composed):
    name, config = composed
    rollout = config.actor_rollout_ref.rollout
    assert rollout.agent.default_agent_loop == "e1_agent"
    assert (config.e1.thinking_length, config.e1.solution_length, config.e1.train_on_forced_tokens) == (
        1024,
        1024,
        False,
    )
    assert rollout.response_length == 1024 + 1 + 1024  # thinking, </think>, solution
    assert config.reward.custom_reward_function.path == "pkg://rllm.trainer.verl_reward"
    trainer_source = (ROOT / "rllm/trainer/verl_trainer.py").read_text()
    assert re.search(rf'TRAINER_NAME = "{config.trainer.v1.trainer_mode}"', trainer_source)
    assert config.actor_rollout_ref.model.path == "/models/m"
    assert config.data.train_files.endswith(
        {
            "math": "data/deepscaler/deepscaler_train.parquet",
            "code": "data/deepcoder/deepcoder_train.parquet",
        }[name]
    )
    assert config.data.val_files.endswith(
        {"math": "data/deepscaler/aime.parquet", "code": "data/deepcoder/test_livecodebench.parquet"}[name]
    )


def test_math_recipe():
    config = script_config("math")
    actor, rollout = config.actor_rollout_ref.actor, config.actor_rollout_ref.rollout
    assert config.algorithm.adv_estimator == "grpo" and actor.optim.lr == 1e-6
    assert (config.data.train_batch_size, rollout.n, actor.ppo_mini_batch_size) == (128, 8, 64)
    assert actor.use_kl_loss and actor.kl_loss_type == "low_var_kl" and actor.kl_loss_coef == 0.001
    assert rollout.temperature == 0.6 and rollout.val_kwargs.temperature == 0.6 and rollout.val_kwargs.n == 8
    trainer = config.trainer
    assert trainer.val_before_train and (
        trainer.test_freq,
        trainer.save_freq,
        trainer.total_training_steps,
    ) == (
        10,
        10,
        200,
    )
    assert (trainer.n_gpus_per_node, trainer.nnodes) == (8, 1)


def test_code_recipe():
    config = script_config("code")
    actor, rollout = config.actor_rollout_ref.actor, config.actor_rollout_ref.rollout
    assert (actor.clip_ratio_low, actor.clip_ratio_high) == (0.2, 0.28)
    assert not actor.use_kl_loss and rollout.n == 8 and rollout.temperature == 0.6
    assert (config.trainer.n_gpus_per_node, config.trainer.nnodes) == (8, 4)


def test_flags_budgets_and_user_overrides():
    overrides = dry_run_overrides(
        SCRIPTS["math"],
        "--gpus",
        "4",
        "--nodes",
        "2",
        "--thinking-length",
        "512",
        "--solution-length",
        "256",
        "trainer.logger=[console]",
        "e1.train_on_forced_tokens=true",
    )
    config = compose(overrides)
    validate(config)
    assert (config.trainer.n_gpus_per_node, config.trainer.nnodes) == (4, 2)
    assert (config.e1.thinking_length, config.e1.solution_length, config.data.max_response_length) == (
        512,
        256,
        769,
    )
    assert list(config.trainer.logger) == ["console"] and config.e1.train_on_forced_tokens is True


def test_env_dry_run_and_data_dir():
    result = launch(SCRIPTS["code"], "--data-dir", "/elsewhere", env={"E1_DRY_RUN": "1"})
    assert result.returncode == 0, result.stderr
    assert "data.val_files=/elsewhere/deepcoder/test_livecodebench.parquet" in shlex.split(result.stdout)


def test_validation_uses_the_gpu_count():
    # With dynamic batch sizes (the scripts' setting) verl checks nothing that depends on the GPU
    # count; with fixed ones, 128 prompts x 8 samples cannot be split over 3 GPUs and verl refuses.
    fixed = [
        "actor_rollout_ref.actor.use_dynamic_bsz=false",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
    ]
    config = compose(dry_run_overrides(SCRIPTS["math"], "--gpus", "3", *fixed))
    with pytest.raises(AssertionError, match=r"divisible by minimal possible batch size \(3\)"):
        validate(config)


def test_missing_e1_budget_is_reported():
    overrides = [o for o in dry_run_overrides(SCRIPTS["math"]) if not o.startswith("+e1.thinking_length")]
    with pytest.raises(BudgetError, match=r"\+e1.thinking_length"):
        validate(compose(overrides))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpus", "0"], "--gpus takes a positive whole number"),
        (["--bogus"], "unknown flag --bogus"),
        (["--model"], "--model needs a value"),
    ],
)
def test_bad_flags_fail_with_a_message(args, message):
    result = launch(SCRIPTS["math"], "--dry-run", *args)
    assert result.returncode == 2 and message in result.stderr


def test_missing_data_names_the_fix(tmp_path):
    result = launch(SCRIPTS["math"], "--data-dir", str(tmp_path), env={"PYTHON": "false"})
    assert result.returncode == 2
    assert f"missing {tmp_path}/deepscaler/deepscaler_train.parquet" in result.stderr
    assert "scripts/data/deepscaler_dataset.py" in result.stderr


def test_check_flag_validates_the_script_config_without_gpus():
    import sys

    result = launch(SCRIPTS["code"], "--check", "--thinking-length", "2048", env={"PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("config OK")


def test_invalid_e1_budget_is_reported():
    overrides = dry_run_overrides(SCRIPTS["math"], "e1.thinking_length=lots")
    with pytest.raises(BudgetError, match="e1.thinking_length 'lots' is not a token count"):
        validate(compose(overrides))
