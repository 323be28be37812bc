"""The E1 agent loop driven by verl's real AgentLoopWorker against a real tiny model.

The worker is verl 0.9.1's ``AgentLoopWorker`` (config composed from verl's ``ppo_trainer.yaml``,
prompt building, padding, masks and batch assembly all verl's). Only the LLM server is replaced:
``verl_fixtures.TinyModelServer`` generates with the session's tiny transformers model and implements what
verl's vLLM server promises the agent loop. Each E1 case is produced by steering the policy at
chosen response positions; every other token is the model's own greedy choice.
"""

from __future__ import annotations

from typing import Any

import pytest
from verl.protocol import DataProto
from verl_fixtures import (
    PROMPT_LENGTH,
    RESPONSE_LENGTH,
    THINKING,
    e1_overrides,
    prompt_batch,
    prompt_ids_of,
    run_worker,
    server_fixture,  # noqa: F401  (the `server` fixture: imported so pytest finds it)
)

from rllm.trainer.verl_config import compose

CASES = {
    # response position -> pinned token ("close" / "eos"); see the module docstring of the loop.
    "natural": {2: "close", 6: "eos"},  # closes after 2 thinking tokens, 4 solution tokens end in EOS
    "forced": {8: "eos"},  # 6 thinking tokens, </think> forced at 6, solution of 2 ends in EOS
    "eos_in_thinking": {1: "eos", 3: "eos"},  # EOS at 1 is dropped and </think> forced there
    "over_length": {},  # forced close at 6; the solution gets the 3 tokens left of 10 and is cut
}


@pytest.fixture(scope="module")
def e1_batch(tiny_model_dir, tiny_tokenizer, server):
    close, eos = tiny_tokenizer.convert_tokens_to_ids("</think>"), tiny_tokenizer.eos_token_id
    for case, pins in CASES.items():
        ids = {"close": close, "eos": eos}
        server.pins[tuple(prompt_ids_of(tiny_tokenizer, case))] = {k: ids[v] for k, v in pins.items()}
    server.requests.clear()
    config = compose(e1_overrides(tiny_model_dir))
    output = run_worker(config, server, prompt_batch(list(CASES)))
    return output, list(server.requests)


def row(batch: DataProto, i: int) -> dict[str, Any]:
    """One sample of the output batch, padding removed."""
    prompt_mask = batch.batch["attention_mask"][i, :PROMPT_LENGTH].bool()
    response_valid = batch.batch["attention_mask"][i, PROMPT_LENGTH:].bool()
    return {
        "prompt": batch.batch["prompts"][i][prompt_mask].tolist(),
        "response": batch.batch["responses"][i][response_valid].tolist(),
        "mask": batch.batch["response_mask"][i][response_valid].tolist(),
        "logprobs": batch.batch["rollout_log_probs"][i][response_valid].tolist(),
        "padding_mask": batch.batch["response_mask"][i][~response_valid].tolist(),
        **{k: batch.non_tensor_batch[k][i] for k in batch.non_tensor_batch if k.startswith("e1_")},
    }


def test_batch_shapes_and_prompts(e1_batch, tiny_tokenizer):
    batch, _ = e1_batch
    assert batch.batch["prompts"].shape == (4, PROMPT_LENGTH)
    assert batch.batch["responses"].shape == (4, RESPONSE_LENGTH)
    assert (
        batch.batch["input_ids"].shape
        == batch.batch["attention_mask"].shape
        == (4, PROMPT_LENGTH + RESPONSE_LENGTH)
    )
    for i, case in enumerate(CASES):
        sample = row(batch, i)
        assert sample["prompt"] == prompt_ids_of(tiny_tokenizer, case)  # one <think>, from the template
        assert sample["padding_mask"] == [0] * (RESPONSE_LENGTH - len(sample["response"]))


def test_natural_close(e1_batch, tiny_tokenizer):
    close, eos = tiny_tokenizer.convert_tokens_to_ids("</think>"), tiny_tokenizer.eos_token_id
    sample = row(e1_batch[0], 0)
    assert len(sample["response"]) == 7
    assert sample["response"][2] == close and sample["response"][-1] == eos
    assert sample["mask"] == [1] * 7
    assert (sample["e1_thinking_tokens"], sample["e1_solution_tokens"]) == (2, 4)
    assert not sample["e1_forced_close"] and not sample["e1_solution_truncated"]


def test_forced_close(e1_batch, tiny_tokenizer):
    close, eos = tiny_tokenizer.convert_tokens_to_ids("</think>"), tiny_tokenizer.eos_token_id
    sample = row(e1_batch[0], 1)
    assert len(sample["response"]) == 9
    assert (
        close not in sample["response"][:6]
        and sample["response"][6] == close
        and sample["response"][-1] == eos
    )
    assert sample["mask"] == [1] * 6 + [0] + [1] * 2  # the forced token gets no policy gradient
    assert sample["logprobs"][6] == 0.0 and all(lp < 0 for lp in sample["logprobs"][:6])
    assert (sample["e1_thinking_tokens"], sample["e1_solution_tokens"]) == (6, 2)
    assert (
        sample["e1_forced_close"] and not sample["e1_eos_in_thinking"] and not sample["e1_solution_truncated"]
    )


def test_eos_in_thinking_is_dropped_and_close_forced(e1_batch, tiny_tokenizer):
    close, eos = tiny_tokenizer.convert_tokens_to_ids("</think>"), tiny_tokenizer.eos_token_id
    sample = row(e1_batch[0], 2)
    assert len(sample["response"]) == 4
    assert sample["response"][1] == close and sample["response"][0] != eos and sample["response"][-1] == eos
    assert sample["mask"] == [1, 0, 1, 1]
    assert (sample["e1_thinking_tokens"], sample["e1_solution_tokens"]) == (1, 2)
    assert sample["e1_forced_close"] and sample["e1_eos_in_thinking"]


def test_over_length_is_cut_at_response_length(e1_batch, tiny_tokenizer):
    close, eos = tiny_tokenizer.convert_tokens_to_ids("</think>"), tiny_tokenizer.eos_token_id
    sample = row(e1_batch[0], 3)
    assert len(sample["response"]) == RESPONSE_LENGTH and sample["response"][6] == close
    assert eos not in sample["response"]
    assert sample["mask"] == [1] * 6 + [0] + [1] * 3
    assert (sample["e1_thinking_tokens"], sample["e1_solution_tokens"]) == (6, 3)
    assert sample["e1_forced_close"] and sample["e1_solution_truncated"]


def test_server_requests_follow_the_two_phase_protocol(e1_batch, tiny_tokenizer):
    close = tiny_tokenizer.convert_tokens_to_ids("</think>")
    _, requests = e1_batch
    by_prompt: dict[str, list[dict[str, Any]]] = {}
    for request in requests:
        by_prompt.setdefault(request["request_id"], []).append(request)
    assert len(by_prompt) == 4 and all(len(phases) == 2 for phases in by_prompt.values())
    solution_caps = []
    for phase1, phase2 in by_prompt.values():
        assert phase1["max_tokens"] == THINKING and phase1["stop_token_ids"] == [close]
        assert "stop_token_ids" not in phase2 and phase2["prompt_ids"][-1] == close
        assert phase2["prompt_ids"][: len(phase1["prompt_ids"])] == phase1["prompt_ids"]
        solution_caps.append(phase2["max_tokens"])
        assert phase1["logprobs"] and phase1["temperature"] == phase2["temperature"]
    # min(s, what is left of the response): natural/eos cases have room for s, the others do not.
    assert sorted(solution_caps) == [3, 3, 6, 6]


def test_switch_trains_on_the_forced_token(tiny_model_dir, tiny_tokenizer, server, e1_batch):
    config = compose(e1_overrides(tiny_model_dir, "+e1.train_on_forced_tokens=true"))
    batch = run_worker(config, server, prompt_batch(["forced"]))
    sample = row(batch, 0)
    assert sample["mask"] == [1] * 9 and sample["logprobs"][6] == 0.0
    assert sample["response"] == row(e1_batch[0], 1)["response"]


def test_missing_budget_names_the_override(tiny_model_dir, server):
    overrides = [o for o in e1_overrides(tiny_model_dir) if not o.startswith("+e1.solution_length")]
    with pytest.raises(Exception, match=r"\+e1.solution_length"):
        run_worker(compose(overrides), server, prompt_batch(["natural"]))


def test_import_verl_registers_the_loop_through_the_plugin_entry_point():
    import sys

    from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

    assert "rllm.trainer.verl_plugin" in sys.modules  # loaded by verl's "verl.plugins" discovery
    assert _agent_loop_registry["e1_agent"] == {"_target_": "rllm.trainer.e1_agent_loop.E1AgentLoop"}
