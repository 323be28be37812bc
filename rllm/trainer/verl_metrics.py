"""E1 training metrics for one step, computed from per-trajectory records (no verl import).

The E1 agent loop reports :data:`EXTRA_FIELDS` per trajectory; the reward hook adds ``acc``.
:func:`e1_step_metrics` turns a step's trajectories into the numbers logged beyond verl's own:

- ``e1/thinking_tokens/{mean,max,min}``, ``e1/solution_tokens/{mean,max,min}``;
- ``e1/forced_close_rate``, ``e1/eos_in_thinking_rate``, ``e1/solution_truncated_rate``;
- ``e1/reward/<data_source>/mean`` and ``e1/acc/<data_source>/mean`` (an empty source is ``unknown``);
- ``e1/solve_none``, ``e1/solve_all``, ``e1/solve_partial``: the fractions of prompts (trajectories
  grouped by ``uid``) none / all / some of whose samples are correct. Correct means ``acc`` when the
  reward reported it, else a positive score.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# Per-trajectory fields the E1 agent loop adds to verl's AgentLoopOutput.extra_fields.
EXTRA_FIELDS = (
    "e1_thinking_tokens",  # sampled thinking tokens (a dropped EOS and the close are not counted)
    "e1_solution_tokens",  # sampled solution tokens, a final EOS included
    "e1_forced_close",  # </think> was forced, not sampled
    "e1_eos_in_thinking",  # an EOS sampled during thinking was dropped
    "e1_solution_truncated",  # the solution ended at its budget (or the response length), not at EOS
)

_RATES = ("e1_forced_close", "e1_eos_in_thinking", "e1_solution_truncated")
_COUNTS = ("e1_thinking_tokens", "e1_solution_tokens")


@dataclass(frozen=True)
class Trajectory:
    """What the metrics need of one trajectory.

    ``fields`` is the agent loop's extra fields for it (``e1_*`` keys, and ``reward_extra_info``
    with the reward hook's ``acc`` once the reward ran).
    """

    uid: str
    data_source: str
    score: float
    fields: Mapping[str, Any]

    @property
    def correct(self) -> bool:
        reward_info = self.fields.get("reward_extra_info") or {}
        acc = reward_info.get("acc")
        return bool(acc) if acc is not None else self.score > 0


def e1_step_metrics(trajectories: Sequence[Trajectory]) -> dict[str, float]:
    """The E1 metrics of one step (see the module docstring); ``{}`` for no trajectories.

    Token and rate metrics appear only when the trajectories carry the E1 fields (they come from
    the ``e1_agent`` loop), so a run with another agent loop still gets the reward metrics.
    """
    if not trajectories:
        return {}
    metrics: dict[str, float] = {}
    if all(key in t.fields for t in trajectories for key in EXTRA_FIELDS):
        for key in _COUNTS:
            values = np.array([t.fields[key] for t in trajectories], dtype=np.float64)
            name = key.removeprefix("e1_")
            metrics.update(
                {
                    f"e1/{name}/mean": values.mean(),
                    f"e1/{name}/max": values.max(),
                    f"e1/{name}/min": values.min(),
                }
            )
        for key in _RATES:
            metrics[f"e1/{key.removeprefix('e1_')}_rate"] = float(
                np.mean([bool(t.fields[key]) for t in trajectories])
            )

    by_source: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        by_source[t.data_source or "unknown"].append(t)
    for source, group in sorted(by_source.items()):
        metrics[f"e1/reward/{source}/mean"] = float(np.mean([t.score for t in group]))
        metrics[f"e1/acc/{source}/mean"] = float(np.mean([t.correct for t in group]))

    by_prompt: dict[str, list[bool]] = defaultdict(list)
    for t in trajectories:
        by_prompt[t.uid].append(t.correct)
    solved = np.array([np.mean(group) for group in by_prompt.values()])
    metrics["e1/solve_none"] = float(np.mean(solved == 0))
    metrics["e1/solve_all"] = float(np.mean(solved == 1))
    metrics["e1/solve_partial"] = float(np.mean((solved > 0) & (solved < 1)))
    return {key: float(value) for key, value in metrics.items()}
