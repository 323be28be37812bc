"""Compose and check a verl PPO config the way ``python -m verl.trainer.main_ppo`` does, without GPUs.

``compose(overrides)`` builds the config from verl's own ``ppo_trainer.yaml`` and Hydra overrides;
``validate(config)`` runs verl's ``validate_config`` (batch-size divisibility by the GPU count,
micro-batch settings, ...) and the E1 agent loop's settings check. ``python -m rllm.trainer.verl_config
OVERRIDES...`` does both and prints ``config OK`` or the error; the launch scripts' ``--check`` runs it
with their overrides, so a configuration can be checked on a laptop before a cluster job is queued.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig


def config_dir() -> Path:
    """verl's trainer config directory (``ppo_trainer.yaml`` and its groups)."""
    import verl.trainer

    return Path(verl.trainer.__file__).parent / "config"


def compose(overrides: Sequence[str], config_name: str = "ppo_trainer") -> DictConfig:
    """The config ``main_ppo`` would receive for these Hydra overrides."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(config_dir()), version_base=None):
        return hydra_compose(config_name=config_name, overrides=list(overrides))


def validate(config: DictConfig) -> None:
    """verl's own ``validate_config`` plus, when the E1 agent loop is selected, its settings.

    Raises what verl raises (AssertionError/ValueError naming the setting) or
    :class:`rllm.budget.BudgetError` for missing/invalid ``e1.*`` settings.
    """
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    validate_config(
        config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
    )
    from rllm.trainer.e1_agent_loop import AGENT_NAME, E1Settings

    if config.actor_rollout_ref.rollout.agent.default_agent_loop == AGENT_NAME:
        E1Settings.from_config(config)


def main(argv: Sequence[str] | None = None) -> int:
    overrides = list(sys.argv[1:] if argv is None else argv)
    try:
        validate(compose(overrides))
    except Exception as error:  # report any config error as one line, as a CLI check should
        print(f"config check failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    print("config OK")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
