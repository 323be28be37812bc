"""verl's synchronous PPO trainer plus the E1 metrics, registered as ``trainer.v1.trainer_mode=e1_sync``.

verl 0.9.1 logs a fixed set of training metrics and aggregates ``reward_extra_info`` only for
validation. Its v1 trainer registry (``register_trainer``) is the extension point for more: this
subclass lets verl compute its metrics, then reads the step's trajectories back from the
TransferQueue (the fields verl itself stores: ``uid``, ``data_source``, ``rm_scores``,
``extra_fields``) and adds :func:`rllm.trainer.verl_metrics.e1_step_metrics`. Nothing else changes.
Needs ``transfer_queue`` (verl's v1 trainer does); imported by the plugin only where it exists.
"""

from __future__ import annotations

from typing import Any

import transfer_queue as tq
from verl.trainer.ppo.v1.trainer_base import register_trainer
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

from rllm.trainer.verl_metrics import Trajectory, e1_step_metrics

TRAINER_NAME = "e1_sync"


@register_trainer(TRAINER_NAME)
class E1PPOTrainerSync(PPOTrainerSync):
    """:class:`PPOTrainerSync` that also logs the E1 metrics of every training step."""

    def _compute_metrics(
        self, batch: tq.KVBatchMeta, metrics: dict, timing_raw: dict, global_steps: int, epoch: int
    ):
        super()._compute_metrics(batch, metrics, timing_raw, global_steps, epoch)
        # Padding rows duplicate real trajectories to fill data-parallel shards: leave them out.
        keys = [
            key for key, tag in zip(batch.keys, batch.tags, strict=True) if not tag.get("is_padding", False)
        ]
        if not keys:
            return
        data = tq.kv_batch_get(
            keys=keys,
            partition_id=batch.partition_id,
            select_fields=["uid", "data_source", "rm_scores", "extra_fields"],
        )
        scores = data["rm_scores"].sum(dim=1).tolist()
        trajectories = [
            Trajectory(uid=str(uid), data_source=str(source), score=float(score), fields=_as_dict(fields))
            for uid, source, score, fields in zip(
                data["uid"].tolist(),
                data["data_source"].tolist(),
                scores,
                data["extra_fields"].tolist(),
                strict=True,
            )
        ]
        metrics.update(e1_step_metrics(trajectories))


def _as_dict(value: Any) -> dict[str, Any]:
    """A stored ``extra_fields`` entry as a plain dict (TransferQueue may wrap non-tensor data)."""
    value = getattr(value, "data", value)
    return dict(value) if isinstance(value, dict) else {}
