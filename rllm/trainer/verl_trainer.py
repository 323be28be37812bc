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
    ) -> None:
        super()._compute_metrics(batch, metrics, timing_raw, global_steps, epoch)
        # Padding rows duplicate real trajectories to fill data-parallel shards: leave them out.
        keys = [
            key for key, tag in zip(batch.keys, batch.tags, strict=True) if not tag.get("is_padding", False)
        ]
        if not keys:
            return
        trajectories = read_trajectories(keys, batch.partition_id)
        metrics.update(e1_step_metrics(trajectories))


def read_trajectories(keys: list[str], partition_id: str) -> list[Trajectory]:
    """The E1 metrics' view of stored trajectories ``keys`` in TransferQueue partition ``partition_id``."""
    data = tq.kv_batch_get(
        keys=keys,
        partition_id=partition_id,
        select_fields=["uid", "data_source", "rm_scores", "extra_fields"],
    )
    scores = data["rm_scores"].sum(dim=1).tolist()
    # Non-tensor fields come back as a list, a NonTensorStack or an array depending on the
    # TransferQueue backend; list() reads all of them.
    uids, sources, fields = (list(data[name]) for name in ("uid", "data_source", "extra_fields"))
    return [
        Trajectory(
            uid=str(_unwrap(uid)),
            data_source=str(_unwrap(source)),
            score=float(score),
            fields=_as_dict(extra),
        )
        for uid, source, score, extra in zip(uids, sources, scores, fields, strict=True)
    ]


def _unwrap(value: Any) -> Any:
    """A stored non-tensor value without TransferQueue's wrapper (``NonTensorData.data``), if any."""
    return getattr(value, "data", value)


def _as_dict(value: Any) -> dict[str, Any]:
    """A stored ``extra_fields`` entry as a plain dict."""
    value = _unwrap(value)
    return dict(value) if isinstance(value, dict) else {}
