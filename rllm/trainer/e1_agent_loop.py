"""E1 budget-constrained rollout as a verl agent loop (``actor_rollout_ref.rollout.agent.default_agent_loop=e1_agent``).

Per sample, with thinking budget ``t``, solution budget ``s`` and ``L = rollout.response_length``:

1. phase 1 asks the server for at most ``min(t, L - 1)`` tokens with ``stop_token_ids=[</think>]``
   (one slot of ``L`` is kept for ``</think>``, so a response always closes its thinking);
2. verl's server reports both a stop and the length limit as ``"completed"``, so the outcome is read
   from the last token (vLLM keeps the stop token in the output): ``</think>`` closed the thinking
   naturally; an EOS (the tokenizer's or one of the generation config's, at which vLLM also stops)
   is dropped, since an EOS during thinking does not end the answer, and ``</think>`` is forced;
   anything else hit the budget and ``</think>`` is forced. A forced token was not sampled: ``response_mask`` 0 and log-prob 0.0 (the
   placeholder verl's own loops give tokens they insert), unless ``e1.train_on_forced_tokens`` is set,
   which reproduces the original (mask 1);
3. phase 2 continues from prompt + thinking + ``</think>`` for at most ``min(s, L - used)`` tokens
   (skipped when nothing is left), ending at EOS or at the budget.

Settings come from the top-level ``e1`` block of the trainer config (Hydra overrides
``+e1.thinking_length=1024 +e1.solution_length=1024 [+e1.train_on_forced_tokens=true]``). Every
sample carries the ``e1_*`` extra fields of :data:`rllm.trainer.verl_metrics.EXTRA_FIELDS` (token
counts and flags); verl hands them to the reward function inside ``extra_info`` and stores them
with the trajectory for the metrics.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from omegaconf import DictConfig
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
from verl.utils.model import get_generation_config
from verl.utils.profiler import simple_timer
from verl.workers.rollout.replica import TokenOutput

from rllm.budget import Budget, BudgetError, SpecialTokens, parse_tokens
from rllm.trainer.verl_metrics import EXTRA_FIELDS

AGENT_NAME = "e1_agent"


@dataclass(frozen=True)
class E1Settings:
    """The ``e1`` block of the trainer config (budgets as token counts: ``1024``, ``1k``, ``0.5k``)."""

    thinking_length: int
    solution_length: int
    train_on_forced_tokens: bool = False

    @classmethod
    def from_config(cls, config: DictConfig) -> E1Settings:
        """Read ``config.e1``; a missing or invalid block raises :class:`BudgetError` naming the fix."""
        block = config.get("e1")
        if block is None or block.get("thinking_length") is None or block.get("solution_length") is None:
            raise BudgetError(
                f"the {AGENT_NAME} agent loop needs the E1 budgets: add the Hydra overrides "
                "+e1.thinking_length=T +e1.solution_length=S (token counts)"
            )
        budget = Budget(
            parse_tokens(block.thinking_length, "e1.thinking_length"),
            parse_tokens(block.solution_length, "e1.solution_length"),
        )
        return cls(budget.thinking, budget.solution, bool(block.get("train_on_forced_tokens", False)))  # type: ignore[arg-type]


@dataclass
class E1Rollout:
    """The response of one two-phase rollout, before the cut to ``response_length``."""

    token_ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    logprobs: list[float] | None = field(default_factory=list)
    thinking_tokens: int = 0
    solution_tokens: int = 0
    forced_close: bool = False
    eos_in_thinking: bool = False
    solution_truncated: bool = True
    num_preempted: int = 0
    engine_fields: dict[str, Any] = field(default_factory=dict)

    def append_sampled(self, output: TokenOutput) -> None:
        self.token_ids += output.token_ids
        self.mask += [1] * len(output.token_ids)
        if self.logprobs is not None and output.log_probs is not None:
            self.logprobs += list(output.log_probs)
        else:
            self.logprobs = None
        self.num_preempted += output.num_preempted or 0
        # The engine's weight-version bookkeeping spans both phases: keep the first phase's minimum.
        merged = {**output.extra_fields, **self.engine_fields}
        if "max_global_steps" in output.extra_fields:
            merged["max_global_steps"] = output.extra_fields["max_global_steps"]
        self.engine_fields = merged

    def append_forced(self, token: int, trained: bool) -> None:
        self.token_ids.append(token)
        self.mask.append(1 if trained else 0)
        if self.logprobs is not None:
            self.logprobs.append(0.0)

    def extra_fields(self) -> dict[str, Any]:
        values = (
            self.thinking_tokens,
            self.solution_tokens,
            self.forced_close,
            self.eos_in_thinking,
            self.solution_truncated,
        )
        return dict(zip(EXTRA_FIELDS, values, strict=True))


@register(AGENT_NAME)
class E1AgentLoop(AgentLoopBase):
    """Single-turn chat completion under an E1 (thinking + solution) budget; see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.settings = E1Settings.from_config(self.config)
        self.tokens = SpecialTokens.from_tokenizer(
            self.tokenizer, extra_eos=_generation_eos_ids(self.tokenizer.name_or_path)
        )
        self.response_length: int = self.rollout_config.response_length

    async def run(self, sampling_params: dict[str, Any], priority: int = 0, **kwargs: Any) -> AgentLoopOutput:
        priority = int(priority)  # may arrive as np.int64 from the non-tensor batch
        prompt_ids = await self.ct_build_initial_tokens(list(kwargs["raw_prompt"]))
        request_id = (
            f"det-{priority}" if getattr(self.rollout_config, "full_determinism", False) else uuid4().hex
        )
        metrics: dict[str, Any] = {}
        with simple_timer("generate_sequences", metrics):
            rollout = await self.generate(request_id, prompt_ids, sampling_params, priority)
        metrics["num_preempted"] = rollout.num_preempted
        cut = self.response_length
        if len(rollout.token_ids) > cut:
            rollout.solution_truncated = True
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=rollout.token_ids[:cut],
            response_mask=rollout.mask[:cut],
            response_logprobs=rollout.logprobs[:cut] if rollout.logprobs is not None else None,
            num_turns=2,
            metrics=metrics,
            # turn_scores/tool_rewards keep the schema of verl's own loops (batches are concatenated).
            extra_fields={
                **rollout.engine_fields,
                "turn_scores": [],
                "tool_rewards": [],
                **rollout.extra_fields(),
            },
        )

    async def generate(
        self, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any], priority: int = 0
    ) -> E1Rollout:
        """Run both phases for one prompt (same ``request_id``, so the server keeps the prefix cached)."""
        close, eos = self.tokens.think_close, self.tokens.eos
        rollout = E1Rollout(logprobs=[] if sampling_params.get("logprobs") else None)

        think_cap = min(self.settings.thinking_length, self.response_length - 1)
        thinking: list[int] = []
        if think_cap > 0:
            stop = [*(sampling_params.get("stop_token_ids") or ()), close]
            output = await self.server_manager.generate(
                request_id=request_id,
                prompt_ids=prompt_ids,
                sampling_params={**sampling_params, "max_tokens": think_cap, "stop_token_ids": stop},
                priority=priority,
            )
            output = _truncated(output, think_cap)
            thinking = list(output.token_ids)
            if close in thinking:  # the engine stops at </think>; cut defensively all the same
                output = _truncated(output, thinking.index(close) + 1)
            elif thinking and thinking[-1] in eos:
                output = _truncated(output, len(thinking) - 1)
                rollout.eos_in_thinking = True
            rollout.append_sampled(output)
            thinking = list(output.token_ids)
        if thinking and thinking[-1] == close:
            rollout.thinking_tokens = len(thinking) - 1
        else:
            rollout.thinking_tokens = len(thinking)
            rollout.forced_close = True
            rollout.append_forced(close, self.settings.train_on_forced_tokens)

        solution_cap = min(self.settings.solution_length, self.response_length - len(rollout.token_ids))
        if solution_cap > 0:
            output = await self.server_manager.generate(
                request_id=request_id,
                prompt_ids=prompt_ids + rollout.token_ids,
                sampling_params={**sampling_params, "max_tokens": solution_cap},
                priority=priority,
            )
            output = _truncated(output, solution_cap)
            rollout.append_sampled(output)
            rollout.solution_tokens = len(output.token_ids)
            rollout.solution_truncated = not (output.token_ids and output.token_ids[-1] in eos)
        return rollout


@functools.cache
def _generation_eos_ids(model_dir: str) -> tuple[int, ...]:
    """The model's generation-config EOS ids: vLLM stops at these too, besides the tokenizer's EOS."""
    config = get_generation_config(model_dir)
    eos = getattr(config, "eos_token_id", None) if config is not None else None
    if eos is None:
        return ()
    return (int(eos),) if isinstance(eos, int) else tuple(int(e) for e in eos)


def _truncated(output: TokenOutput, length: int) -> TokenOutput:
    """``output`` with its tokens (and log-probs) cut to ``length``."""
    if len(output.token_ids) <= length:
        return output
    log_probs = output.log_probs[:length] if output.log_probs is not None else None
    return output.model_copy(update={"token_ids": list(output.token_ids[:length]), "log_probs": log_probs})
