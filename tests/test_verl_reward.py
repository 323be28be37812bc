"""The reward hook through verl's real reward path, and the E1 step metrics on its results.

verl 0.9.1 computes rule-based rewards while rolling out: each ``AgentLoopWorker`` sends finished
trajectories to a ``RewardLoopWorker`` Ray actor, whose ``NaiveRewardManager`` decodes the response
and calls ``reward.custom_reward_function`` (here ``pkg://rllm.trainer.verl_reward``). These tests
run that chain for real (a local Ray actor, real tokenized responses of the tiny model) with
responses steered to a correct, a wrong and an unanswered solution.
"""

from __future__ import annotations

from typing import Any

import pytest
from verl_fixtures import e1_overrides, prompt_batch, prompt_ids_of, run_worker, server_fixture  # noqa: F401

from rllm.trainer.verl_config import compose
from rllm.trainer.verl_metrics import Trajectory, e1_step_metrics
from rllm.trainer.verl_reward import compute_score

THINKING, SOLUTION, RESPONSE_LENGTH = 4, 40, 45
# case -> solution text the policy is steered to write after closing its thinking (None: no close,
# no answer: the thinking budget runs out, </think> is forced and the solution runs to its budget).
SOLUTIONS: dict[str, str | None] = {
    "right": " So the answer is \\boxed{42}.",
    "wrong": " So the answer is \\boxed{41}.",
    "unanswered": None,
}


@pytest.fixture(scope="module")
def ray_local():
    import ray

    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def rewarded(tiny_model_dir, tiny_tokenizer, server, ray_local):
    """Rollout + reward of four samples: right, right, wrong, unanswered (sources aime, aime, aime, math)."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    close, eos = tiny_tokenizer.convert_tokens_to_ids("</think>"), tiny_tokenizer.eos_token_id
    for case, text in SOLUTIONS.items():
        pins = {}
        if text is not None:
            solution = tiny_tokenizer.encode(text, add_special_tokens=False) + [eos]
            pins = {1: close} | {2 + k: token for k, token in enumerate(solution)}
        server.pins[tuple(prompt_ids_of(tiny_tokenizer, case))] = pins
    config = compose(
        e1_overrides(tiny_model_dir, thinking=THINKING, solution=SOLUTION, response_length=RESPONSE_LENGTH)
    )
    reward_worker = ray_local.remote(RewardLoopWorker).remote(config)
    cases = ["right", "right", "wrong", "unanswered"]
    batch = prompt_batch(cases, data_sources=["aime", "aime", "aime", "math"])
    yield cases, run_worker(config, server, batch, reward_handles=[reward_worker])
    ray_local.kill(reward_worker)


def test_scores_land_on_the_last_response_token(rewarded):
    cases, batch = rewarded
    prompt_length = batch.batch["prompts"].shape[1]
    lengths = batch.batch["attention_mask"][:, prompt_length:].sum(dim=1)
    scores = batch.batch["rm_scores"]
    for i, case in enumerate(cases):
        expected = 1.0 if case == "right" else 0.0
        assert scores[i].sum().item() == expected
        if expected:
            assert scores[i, lengths[i] - 1].item() == expected


def test_reward_extra_info_carries_grade_and_e1_fields(rewarded):
    cases, batch = rewarded
    for i, case in enumerate(cases):
        info = batch.non_tensor_batch["reward_extra_info"][i]
        assert info["acc"] == (1.0 if case == "right" else 0.0)
        assert info["reason"] == {"right": "correct", "wrong": "wrong", "unanswered": "no_answer"}[case]
        for key in ("e1_thinking_tokens", "e1_solution_tokens", "e1_forced_close", "e1_solution_truncated"):
            assert info[key] == float(batch.non_tensor_batch[key][i])
        assert info["e1_forced_close"] == (1.0 if case == "unanswered" else 0.0)
    assert set(batch.meta_info["reward_extra_keys"]) >= {"score", "acc", "reason", "e1_thinking_tokens"}


def test_step_metrics_from_the_rewarded_batch(rewarded):
    cases, batch = rewarded
    uids = ["p0", "p0", "p1", "p1"]  # p0: both right (solve_all); p1: wrong + unanswered (solve_none)
    fields = [
        {k: batch.non_tensor_batch[k][i] for k in batch.non_tensor_batch if k.startswith("e1_")}
        | {"reward_extra_info": batch.non_tensor_batch["reward_extra_info"][i]}
        for i in range(len(cases))
    ]
    trajectories = [
        Trajectory(uid, source, float(batch.batch["rm_scores"][i].sum()), fields[i])
        for i, (uid, source) in enumerate(zip(uids, ["aime", "aime", "aime", "math"], strict=True))
    ]
    metrics = e1_step_metrics(trajectories)
    thinking = [int(batch.non_tensor_batch["e1_thinking_tokens"][i]) for i in range(4)]
    assert metrics["e1/thinking_tokens/mean"] == pytest.approx(sum(thinking) / 4)
    assert thinking == [1, 1, 1, THINKING]
    assert metrics["e1/forced_close_rate"] == 0.25
    assert metrics["e1/reward/aime/mean"] == pytest.approx(2 / 3) and metrics["e1/reward/math/mean"] == 0.0
    assert (metrics["e1/solve_all"], metrics["e1/solve_none"], metrics["e1/solve_partial"]) == (0.5, 0.5, 0.0)


def test_hook_passes_e1_fields_and_ignores_verl_kwargs():
    extra = {
        "index": 3,
        "e1_thinking_tokens": 7,
        "e1_solution_tokens": 5,
        "e1_forced_close": True,
        "e1_eos_in_thinking": False,
        "e1_solution_truncated": False,
        "num_turns": 2,
    }
    result = compute_score("aime", "<think>hm</think> \\boxed{42}", "42", extra, reward_router_address=None)
    assert result == {
        "score": 1.0,
        "acc": 1.0,
        "reason": "correct",
        "e1_thinking_tokens": 7.0,
        "e1_solution_tokens": 5.0,
        "e1_forced_close": 1.0,
        "e1_eos_in_thinking": 0.0,
        "e1_solution_truncated": 0.0,
    }
    assert set(compute_score("math", "no answer", "42", None)) == {"score", "acc", "reason"}


def test_metrics_without_e1_fields_and_partial_groups():
    def t(uid: str, score: float, acc: Any = None) -> Trajectory:
        fields = {"reward_extra_info": {"acc": acc}} if acc is not None else {}
        return Trajectory(uid, "lcb", score, fields)

    metrics = e1_step_metrics([t("a", 1.0), t("a", 0.0), t("b", 0.5, acc=0.0), t("b", 0.0, acc=0.0)])
    assert not any(key.startswith("e1/thinking") or key.endswith("_rate") for key in metrics)
    assert (metrics["e1/solve_partial"], metrics["e1/solve_none"], metrics["e1/solve_all"]) == (0.5, 0.5, 0.0)
    assert metrics["e1/acc/lcb/mean"] == 0.25
    assert e1_step_metrics([]) == {}


def test_training_metrics_read_back_from_transfer_queue(rewarded, ray_local):
    """What the ``e1_sync`` trainer reads per step, stored the way verl's TransferQueue agent loop
    worker stores trajectories (``AgentLoopOutput.as_dict()`` plus the prompt's fields)."""
    tq = pytest.importorskip("transfer_queue", reason="verl's v1 trainer dependency (verl[verl-core])")
    from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    from rllm.trainer import verl_trainer

    cases, batch = rewarded
    uids, sources = ["p0", "p0", "p1", "p1"], ["aime", "aime", "aime", "math"]
    tq_config = compose(["actor_rollout_ref.rollout.name=vllm"]).transfer_queue
    tq_config.backend.SimpleStorage.num_data_storage_units = 1
    tq.init(tq_config)
    try:
        records, keys = [], []
        for i in range(len(cases)):
            prompt_length = batch.batch["prompts"].shape[1]
            valid = batch.batch["attention_mask"][i, prompt_length:].bool()
            response = batch.batch["responses"][i][valid].tolist()
            extra = {k: batch.non_tensor_batch[k][i] for k in batch.non_tensor_batch if k.startswith("e1_")}
            extra["reward_extra_info"] = batch.non_tensor_batch["reward_extra_info"][i]
            output = AgentLoopOutput(
                prompt_ids=[1, 2],
                response_ids=response,
                response_mask=batch.batch["response_mask"][i][valid].tolist(),
                reward_score=float(batch.batch["rm_scores"][i].sum()),
                num_turns=2,
                metrics={},
                extra_fields=extra,
            )
            records.append({**output.as_dict(), "uid": uids[i], "data_source": sources[i], "session_id": i})
            keys.append(f"{uids[i]}_{i}_0")
        tq.kv_batch_put(keys=keys, partition_id="train", fields=list_of_dict_to_tensordict(records))
        read = verl_trainer.read_trajectories(keys, "train")
    finally:
        tq.close()
    assert [(t.uid, t.data_source) for t in read] == list(zip(uids, sources, strict=True))
    metrics = e1_step_metrics(read)
    assert (metrics["e1/solve_all"], metrics["e1/solve_none"]) == (0.5, 0.5)
    assert metrics["e1/forced_close_rate"] == 0.25 and metrics["e1/reward/aime/mean"] == pytest.approx(2 / 3)
