"""Reward hook for verl: ``reward.custom_reward_function.path=pkg://rllm.trainer.verl_reward``, ``.name=compute_score``.

verl's reward manager calls :func:`compute_score` with keyword arguments for every trajectory; its
``extra_info`` is the dataset row's ``extra_info`` merged with the agent loop's extra fields (the
E1 loop's ``e1_*`` token counts and flags). The returned dict's ``score`` is the reward; every other
key becomes per-sample ``reward_extra_info``, which verl stores with the trajectory and aggregates
per data source in validation (``val-core/<source>/acc/mean@N``, ``val-aux/<source>/e1_thinking_tokens/...``).
Only scalars are returned, so every key aggregates; grader details stay out.
"""

from __future__ import annotations

from typing import Any

from rllm.rewards import compute_score as grade
from rllm.trainer.verl_metrics import EXTRA_FIELDS


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Grade one response with :func:`rllm.rewards.compute_score`.

    Returns ``score`` (float reward), ``acc`` (1.0 correct / 0.0 not), ``reason`` (the grader's
    verdict, e.g. ``correct``, ``wrong``, ``no_answer``) and, when the trajectory came from the E1
    agent loop, its ``e1_*`` fields as numbers. ``kwargs`` (``reward_kwargs`` from the config and
    whatever verl adds) are passed to the grader, which ignores the ones it does not know.
    """
    extra_info = extra_info or {}
    result = grade(data_source, solution_str, ground_truth, extra_info, **kwargs)
    info: dict[str, Any] = {
        "score": float(result["score"]),
        "acc": float(bool(result.get("acc", False))),
        "reason": str(result.get("reason", "")),
    }
    for key in EXTRA_FIELDS:
        if key in extra_info:
            info[key] = float(extra_info[key])
    return info
