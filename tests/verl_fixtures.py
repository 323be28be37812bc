"""Shared by the verl plugin tests: a real-model stand-in for verl's LLM server and batch builders."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
import torch
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.protocol import DataProto
from verl.workers.rollout.replica import TokenOutput

THINKING, SOLUTION, RESPONSE_LENGTH, PROMPT_LENGTH = 6, 6, 10, 64


class TinyModelServer:
    """Test double of verl's LLM server client (``LLMServerClient.generate``), backed by a real model.

    As verl's vLLM server: at most ``max_tokens`` tokens (which must be >= 1: vLLM rejects less, and
    verl clamps it up to 1); generation stops after EOS or a ``stop_token_ids`` token, which is kept
    in ``token_ids``; ``stop_reason`` is ``"completed"`` for a stop and for the length limit alike;
    ``log_probs`` holds the model's log-probability of each emitted token when ``logprobs`` is set.

    Decoding is greedy. ``pins[prompt][k] = token`` makes the policy emit ``token`` at response
    position ``k`` of ``prompt`` (positions count from the end of the original prompt, across
    requests that continue it); elsewhere ``</think>`` and EOS are masked, so the model closes its
    thinking or stops only where a test pins it.
    """

    def __init__(self, model: Any, think_close: int, eos: int):
        self.model, self.think_close, self.eos = model, think_close, eos
        self.pins: dict[tuple[int, ...], dict[int, int]] = {}
        self.requests: list[dict[str, Any]] = []

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any
    ):
        self.requests.append({"request_id": request_id, "prompt_ids": list(prompt_ids), **sampling_params})
        max_tokens = sampling_params["max_tokens"]
        assert max_tokens >= 1, f"max_tokens={max_tokens}: vLLM rejects it (verl would silently ask for 1)"
        stops = {self.eos, *sampling_params.get("stop_token_ids", ())}
        prefix = next((p for p in self.pins if tuple(prompt_ids[: len(p)]) == p), None)
        pins = self.pins.get(prefix, {}) if prefix is not None else {}
        offset = len(prompt_ids) - (len(prefix) if prefix is not None else len(prompt_ids))
        ids, tokens, log_probs = list(prompt_ids), [], []
        with torch.no_grad():
            for _step in range(max_tokens):
                logits = self.model(torch.tensor([ids])).logits[0, -1].float()
                logp = torch.log_softmax(logits, dim=-1)
                token = pins.get(offset + len(tokens))
                if token is None:
                    masked = logits.clone()
                    masked[[self.think_close, self.eos]] = -float("inf")
                    token = int(masked.argmax())
                tokens.append(token)
                log_probs.append(float(logp[token]))
                ids.append(token)
                if token in stops:
                    break
        return TokenOutput(
            token_ids=tokens,
            log_probs=log_probs if sampling_params.get("logprobs") else None,
            stop_reason="completed",
            num_preempted=0,
            extra_fields={"global_steps": 3, "min_global_steps": 3, "max_global_steps": 3},
        )


def e1_overrides(
    model_dir,
    *extra: str,
    thinking: int = THINKING,
    solution: int = SOLUTION,
    response_length: int = RESPONSE_LENGTH,
) -> list[str]:
    """Overrides of verl's ppo_trainer.yaml for an E1 rollout on the tiny model; ``extra`` go last."""
    return [
        f"actor_rollout_ref.model.path={model_dir}",
        "actor_rollout_ref.rollout.name=vllm",
        f"data.max_prompt_length={PROMPT_LENGTH}",
        f"data.max_response_length={response_length}",
        "actor_rollout_ref.rollout.agent.default_agent_loop=e1_agent",
        f"+e1.thinking_length={thinking}",
        f"+e1.solution_length={solution}",
        "reward.custom_reward_function.path=pkg://rllm.trainer.verl_reward",
        *extra,
    ]


def messages(case: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"What is 12 + 30? ({case}) Let's think step by step."}]


def prompt_batch(
    cases: list[str], ground_truth: str = "42", data_sources: list[str] | None = None
) -> DataProto:
    """A prompt batch as verl's RL dataset yields it (one row per case, math reward fields)."""

    def column(values: list[Any]) -> np.ndarray:
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array

    return DataProto.from_dict(
        non_tensors={
            "raw_prompt": column([messages(case) for case in cases]),
            "data_source": column(data_sources or ["aime"] * len(cases)),
            "reward_model": column([{"ground_truth": ground_truth, "style": "rule"}] * len(cases)),
            "extra_info": column([{"index": i} for i in range(len(cases))]),
            "index": np.arange(len(cases)),
        },
        meta_info={"global_steps": 3, "validate": False},
    )


def run_worker(config, server: TinyModelServer, batch: DataProto, reward_handles=None) -> DataProto:
    worker = AgentLoopWorker(config, server, reward_loop_worker_handles=reward_handles)
    return asyncio.run(worker.generate_sequences(batch))


def prompt_ids_of(tokenizer, case: str) -> list[int]:
    return list(
        tokenizer.apply_chat_template(messages(case), add_generation_prompt=True, tokenize=True)["input_ids"]
    )


@pytest.fixture(scope="module", name="server")
def server_fixture(tiny_model_dir, tiny_tokenizer):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.float32).eval()
    return TinyModelServer(
        model, tiny_tokenizer.convert_tokens_to_ids("</think>"), tiny_tokenizer.eos_token_id
    )
