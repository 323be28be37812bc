"""The E1 budget as a vLLM v1 logits processor (single pass, one request per sample).

Load it into an engine with ``LLM(logits_processors=[PROCESSOR])``; it runs in the engine
process. A request opts in with ``SamplingParams(extra_args={"e1": request_payload(budget,
tokens)})``; requests without the ``"e1"`` key are never touched.

Per request the processor keeps one :class:`~rllm.budget.BudgetState` and a count of the output
tokens it has consumed; each step it feeds the state only the tokens appended since, so the cost
is O(1) per request and step whatever the budget. Each step, per request:

- a forced token (``</think>`` at the thinking budget, the s1 cue, EOS at the solution budget)
  becomes the only finite logit of its row;
- during thinking, EOS's probability moves onto ``</think>``. vLLM applies the temperature
  *after* custom logits processors, so the merge is ``l = T * logaddexp(l_close / T, l_eos / T)``
  with the request's own ``T``: after division by ``T`` the ``</think>`` probability is exactly
  ``p(</think>) + p(EOS)`` (greedy: the larger logit), then EOS gets ``-inf``.

Token ids: :func:`request_payload` puts the ids of ``</think>``, EOS and the cue into the request,
taken from the tokenizer that encodes the prompts and builds the records, so the engine and the
records can never disagree (and per-budget cues need no tokenizer in the engine). A request that
carries only a budget (e.g. ``vllm serve`` clients sending ``vllm_xargs``) falls back to ids from
the engine's own tokenizer, loaded once at start-up.

Placeholders: with async scheduling (GPU; vLLM 0.27 turns it off on CPU) the runner appends
``-1`` for a token whose id is still on the device, and replaces it with the real id before the
sampler calls :meth:`E1LogitsProcessor.apply`. The processor therefore consumes tokens in
``apply`` only, and stops at the first negative id, so a placeholder is never fed to the state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from rllm.budget import Budget, BudgetError, BudgetState, SpecialTokens

if TYPE_CHECKING:
    from vllm.config import VllmConfig

PROCESSOR = "rllm.generation.vllm_logits:E1LogitsProcessor"
EXTRA_ARGS_KEY = "e1"
# vLLM's own threshold below which a request is sampled greedily (vllm.v1.sample.sampler).
_GREEDY_EPS = 1e-5


def request_payload(budget: Budget, tokens: SpecialTokens) -> dict[str, Any]:
    """What a request carries in ``SamplingParams.extra_args["e1"]``: the budget and its token ids."""
    return {
        **budget.to_extra_args(),
        "think_close": tokens.think_close,
        "eos": list(tokens.eos),
        "cue": list(tokens.cue),
    }


def _payload(params: SamplingParams) -> dict[str, Any] | None:
    return (params.extra_args or {}).get(EXTRA_ARGS_KEY)


def _budget(payload: dict[str, Any]) -> Budget:
    if not isinstance(payload, dict) or "mode" not in payload:
        raise BudgetError(
            f"extra_args[{EXTRA_ARGS_KEY!r}] must be a dict with 'mode', 'thinking', 'solution', 'total'"
            f" (Budget.to_extra_args()), got {payload!r}"
        )
    return Budget.from_extra_args(payload)


def _payload_tokens(payload: dict[str, Any]) -> SpecialTokens | None:
    if "think_close" not in payload:
        return None
    return SpecialTokens(int(payload["think_close"]), tuple(payload["eos"]), tuple(payload.get("cue", ())))


@dataclass
class _Tracked:
    """One budgeted request: its rule, the engine's live output list, and how much of it was read."""

    budget: Budget
    tokens: SpecialTokens
    output: list[int]
    temperature: float
    state: BudgetState = field(init=False)
    consumed: int = 0
    # forced_token()'s answer for the current state; valid while ``asked`` (until the next advance()).
    forced: int | None = None
    asked: bool = False

    def __post_init__(self) -> None:
        self.state = BudgetState(self.budget, self.tokens)

    def next_forced(self) -> int | None:
        """Sync, then the token the rule forces at this step (None: sample freely)."""
        output = self.output
        if len(output) < self.consumed:
            # The runner discarded output tokens (KV-load failure, async spec-decode correction):
            # rare, so replay the remaining list rather than keep undo information.
            self.state = BudgetState(self.budget, self.tokens)
            self.consumed, self.asked = 0, False
        while self.consumed < len(output):
            token = output[self.consumed]
            if token < 0:
                break  # async-scheduling placeholder: its id is not known yet
            # advance() relies on forced_token() having been asked first (it is what turns a
            # full thinking budget into the forcing phase); a replay of several tokens must ask
            # before each one. The answer from the previous step still holds for its token.
            if not self.asked:
                self.state.forced_token()
            self.state.advance(token)
            self.consumed += 1
            self.asked = False
        if not self.asked:
            self.forced, self.asked = self.state.forced_token(), True
        return self.forced


class E1LogitsProcessor(LogitsProcessor):
    """Enforces each opted-in request's E1 budget in one pass (see the module docstring)."""

    def __init__(self, vllm_config: VllmConfig, device: torch.device, is_pin_memory: bool):
        self.device = device
        self.requests: dict[int, _Tracked] = {}
        self.default_tokens, self.default_tokens_error = _engine_tokens(vllm_config)

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Reject a malformed budget when the request is submitted, not inside the engine loop."""
        payload = _payload(sampling_params)
        if payload is not None:
            _budget(payload)

    def is_argmax_invariant(self) -> bool:
        return False  # forcing and the EOS redirect change the greedy choice

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        if batch_update is None:
            return
        for index in batch_update.removed:
            self.requests.pop(index, None)
        for index, params, _, output in batch_update.added:
            payload = _payload(params)
            if payload is None:
                self.requests.pop(index, None)  # an untouched request may take a budgeted one's slot
                continue
            # A re-added (preempted or unscheduled) request arrives with its output so far;
            # consumed=0 makes the first sync replay it once.
            self.requests[index] = _Tracked(_budget(payload), self._tokens(payload), output, params.temperature)
        for source, target, direction in batch_update.moved:
            moving = self.requests.pop(source, None)
            displaced = self.requests.pop(target, None)
            if moving is not None:
                self.requests[target] = moving
            if displaced is not None and direction == MoveDirectionality.SWAP:
                self.requests[source] = displaced

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        if not self.requests:
            return logits
        forced_rows: list[int] = []
        forced_ids: list[int] = []
        # Rows to redirect, grouped so each group is a few vectorised ops with a scalar temperature
        # (a batch usually holds one group).
        redirects: dict[tuple[SpecialTokens, float], list[int]] = {}
        for row, tracked in self.requests.items():
            forced = tracked.next_forced()
            if forced is not None:
                forced_rows.append(row)
                forced_ids.append(forced)
            elif tracked.state.redirect_eos():
                redirects.setdefault((tracked.tokens, tracked.temperature), []).append(row)
        for (tokens, temperature), rows in redirects.items():
            _redirect_eos(logits, tokens, torch.tensor(rows, device=logits.device), temperature)
        if forced_rows:
            rows_t = torch.tensor(forced_rows, device=logits.device)
            logits.index_fill_(0, rows_t, -float("inf"))
            logits[rows_t, torch.tensor(forced_ids, device=logits.device)] = 0.0
        return logits

    def _tokens(self, payload: dict[str, Any]) -> SpecialTokens:
        tokens = _payload_tokens(payload)
        if tokens is not None:
            return tokens
        if self.default_tokens is None:
            raise BudgetError(
                f"an E1 request carries no token ids and the engine's tokenizer gives none "
                f"({self.default_tokens_error}); send them with rllm.generation.vllm_logits.request_payload"
            )
        return self.default_tokens


def _engine_tokens(vllm_config: VllmConfig) -> tuple[SpecialTokens | None, str]:
    """Token ids from the engine's tokenizer, for requests that carry only a budget."""
    model_config = vllm_config.model_config
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(
            model_config.tokenizer,
            revision=model_config.tokenizer_revision,
            trust_remote_code=model_config.trust_remote_code,
        )
        return SpecialTokens.from_tokenizer(tokenizer), ""
    except Exception as error:  # noqa: BLE001 - reported when a request needs these ids
        return None, f"{type(error).__name__}: {error}"


def _redirect_eos(logits: torch.Tensor, tokens: SpecialTokens, rows: torch.Tensor, temperature: float) -> None:
    """Move the EOS tokens' probability mass at ``temperature`` onto ``</think>`` in ``rows``."""
    merged = logits[rows, tokens.think_close]
    greedy = temperature < _GREEDY_EPS
    if not greedy:
        merged = merged / temperature
    for eos in tokens.eos:
        other = logits[rows, eos]
        merged = torch.maximum(merged, other) if greedy else torch.logaddexp(merged, other / temperature)
    logits[rows, tokens.think_close] = merged if greedy else merged * temperature
    for eos in tokens.eos:
        logits[rows, eos] = -float("inf")
