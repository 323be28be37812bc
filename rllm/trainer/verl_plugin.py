"""verl plugin entry point (``verl.plugins: e1``), imported by ``import verl`` in every process.

Importing it registers the E1 extensions under the names the launch scripts select:

- agent loop ``e1_agent`` (``actor_rollout_ref.rollout.agent.default_agent_loop=e1_agent``);
- trainer ``e1_sync`` (``trainer.v1.trainer_mode=e1_sync``): verl's synchronous trainer plus the E1
  metrics. Registered only where verl's v1 trainer can be imported (it needs ``transfer_queue``),
  i.e. wherever that trainer can run at all.

Nothing else happens on import. The reward hook needs no registration: it is loaded by path
(``reward.custom_reward_function.path=pkg://rllm.trainer.verl_reward``).
"""

from importlib.util import find_spec

import rllm.trainer.e1_agent_loop  # noqa: F401  (registers the agent loop)

if find_spec("transfer_queue") is not None:
    import rllm.trainer.verl_trainer  # noqa: F401  (registers the trainer)
