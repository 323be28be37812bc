"""Transformers backend: budgeted generation in one ``generate`` call per batch.

A :class:`BudgetLogitsProcessor` keeps one :class:`~rllm.budget.BudgetState` per row and, at each
step, forces the token the budget requires (``</think>`` at the thinking budget, EOS at the
solution budget) and turns EOS into ``</think>`` during thinking. transformers (5.x) runs custom
logits processors *before* its temperature/top-k/top-p warpers, so the redirect merges the two
tokens' mass at the sampling temperature ``T``: ``l = T * logaddexp(l_close / T, l_eos / T)``.
After the warper divides by ``T``, ``p(</think>)`` is exactly ``p(</think>) + p(EOS)``: the
outcome of "EOS dropped, ``</think>`` forced" (greedy: the larger of the two logits).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessor, LogitsProcessorList

from rllm.budget import Budget, BudgetState, SampleRecord, SpecialTokens, build_record, close_phase_one
from rllm.generation import Prompt, SamplingConfig, collect, encode_prompts


class BudgetLogitsProcessor(LogitsProcessor):
    """Enforces one budget per batch row. Per step it reads only the newest token of each row."""

    def __init__(self, states: list[BudgetState], prompt_length: int, temperature: float):
        self.states = states
        self.prompt_length = prompt_length
        self.temperature = temperature

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.shape[1] > self.prompt_length:
            last = input_ids[:, -1].tolist()
            for state, token in zip(self.states, last, strict=True):
                state.advance(token)
        forced_rows, forced_ids, redirect_rows = [], [], []
        for row, state in enumerate(self.states):
            forced = state.forced_token()
            if forced is not None:
                forced_rows.append(row)
                forced_ids.append(forced)
            elif state.redirect_eos():
                redirect_rows.append(row)
        if redirect_rows or forced_rows:
            scores = scores.clone()  # generate keeps the raw logits tensor for output_logits
        if redirect_rows:
            tokens = self.states[redirect_rows[0]].tokens
            rows = torch.tensor(redirect_rows, device=scores.device)
            eos = torch.tensor(tokens.eos, device=scores.device)
            candidates = torch.cat([scores[rows, tokens.think_close].unsqueeze(1), scores[rows][:, eos]], dim=1)
            if self.temperature > 0:
                merged = self.temperature * torch.logsumexp(candidates / self.temperature, dim=1)
            else:
                merged = candidates.max(dim=1).values
            scores[rows, tokens.think_close] = merged
            scores[rows.unsqueeze(1), eos.unsqueeze(0)] = -float("inf")
        if forced_rows:
            rows = torch.tensor(forced_rows, device=scores.device)
            scores[rows] = -float("inf")
            scores[rows, torch.tensor(forced_ids, device=scores.device)] = 0.0
        return scores


class HFGenerator:
    """Budgeted generation with a transformers causal LM (CPU default; any torch device works).

    ``batch_size`` is the number of *prompts* per ``generate`` call (each expanded to ``n`` rows).
    ``two_phase=True`` runs the original's two ``generate`` calls per batch instead of the single
    pass (phase 1 stops at ``</think>``, EOS or ``t`` tokens; ``</think>`` is appended if missing;
    phase 2 continues for at most ``s`` tokens): the reference the single pass is tested against.
    Seeding: ``sampling.seed`` seeds torch once per ``generate`` call, so a run is reproducible
    for the same prompts, batch size and device.
    """

    def __init__(self, model: Any, tokenizer: Any, *, batch_size: int = 16, two_phase: bool = False):
        self.model = model.eval()
        self.two_phase = two_phase
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        eos = model.generation_config.eos_token_id if getattr(model, "generation_config", None) else None
        self._extra_eos = tuple(eos if isinstance(eos, list) else [] if eos is None else [eos])
        self.tokens = SpecialTokens.from_tokenizer(tokenizer, extra_eos=self._extra_eos)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.tokens.eos[0]

    def tokens_for(self, budget: Budget) -> SpecialTokens:
        """Token ids for ``budget`` (its s1 cue included); generation-config EOS ids count as EOS."""
        return SpecialTokens.from_tokenizer(self.tokenizer, budget.cue, self._extra_eos)

    @classmethod
    def from_pretrained(
        cls, path: str | Path, *, dtype: torch.dtype | str = "auto", device: str = "cpu", **kwargs: Any
    ) -> HFGenerator:
        tokenizer = AutoTokenizer.from_pretrained(str(path))
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype).to(device)
        return cls(model, tokenizer, **kwargs)

    def generate(self, prompts: Sequence[Prompt], budget: Budget, sampling: SamplingConfig) -> list[SampleRecord]:
        return collect(self.iter_generate(prompts, budget, sampling))

    def iter_generate(
        self, prompts: Sequence[Prompt], budget: Budget, sampling: SamplingConfig
    ) -> Iterator[SampleRecord]:
        """Yield records batch by batch (prompt-major within a batch)."""
        encoded = encode_prompts(self.tokenizer, prompts)
        if sampling.seed is not None:
            torch.manual_seed(sampling.seed)
        for start in range(0, len(encoded), self.batch_size):
            yield from self._generate_batch(encoded[start : start + self.batch_size], start, budget, sampling)

    def _generate_batch(
        self, batch: list[list[int]], first_index: int, budget: Budget, sampling: SamplingConfig
    ) -> list[SampleRecord]:
        if self.two_phase and budget.budgeted:
            return self._generate_two_phase(batch, first_index, budget, sampling)
        tokens = self.tokens_for(budget)
        rows = len(batch) * sampling.n
        states = [BudgetState(budget, tokens) for _ in range(rows)]
        generated, logprobs = self._run(
            batch, sampling, budget.max_new_tokens(len(tokens.cue)), list(tokens.eos), states
        )
        records = []
        for row, ids in enumerate(generated):
            emitted = _until_first_eos(ids, tokens.eos)
            records.append(
                build_record(
                    emitted,
                    budget,
                    tokens,
                    self.tokenizer,
                    prompt_index=first_index + row // sampling.n,
                    sample_index=row % sampling.n,
                    logprobs=logprobs[row][: len(emitted)] if logprobs is not None else None,
                    length_capped=len(emitted) == len(ids) and (not emitted or emitted[-1] not in tokens.eos),
                )
            )
        return records

    def _generate_two_phase(
        self, batch: list[list[int]], first_index: int, budget: Budget, sampling: SamplingConfig
    ) -> list[SampleRecord]:
        tokens = self.tokens_for(budget)
        close, eos = tokens.think_close, tokens.eos
        if budget.thinking == 0:
            thinking = [[] for _ in range(len(batch) * sampling.n)]
        else:
            thinking, _ = self._run(batch, sampling, budget.thinking, [close, *eos], None)
        prefixes, eos_dropped = [], []
        for row, ids in enumerate(thinking):
            ids = _until_first_eos(ids, (close, *eos))
            kept, forced = close_phase_one(ids, budget, tokens)
            prefixes.append(batch[row // sampling.n] + kept + forced)
            eos_dropped.append(len(kept) < len(ids))
        answers, _ = self._run(prefixes, SamplingConfig(1, *_sampling_tail(sampling)), budget.solution, list(eos), None)
        records = []
        for row, (prefix, answer) in enumerate(zip(prefixes, answers, strict=True)):
            response = prefix[len(batch[row // sampling.n]) :] + _until_first_eos(answer, eos)
            records.append(
                build_record(
                    response,
                    budget,
                    tokens,
                    self.tokenizer,
                    prompt_index=first_index + row // sampling.n,
                    sample_index=row % sampling.n,
                    eos_in_thinking=eos_dropped[row],
                )
            )
        return records

    @torch.no_grad()
    def _run(
        self,
        batch: list[list[int]],
        sampling: SamplingConfig,
        max_new_tokens: int,
        stop_ids: list[int],
        states: list[BudgetState] | None,
    ) -> tuple[list[list[int]], list[list[float]] | None]:
        """One left-padded ``generate`` call; returns the new tokens of each row (padding included).

        Each prompt is repeated ``sampling.n`` times (rather than ``num_return_sequences``, which
        transformers refuses for greedy decoding), giving ``len(batch) * n`` rows, prompt-major.
        """
        device = self.model.device
        batch = [ids for ids in batch for _ in range(sampling.n)]
        width = max(len(ids) for ids in batch)
        input_ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ids in enumerate(batch):  # left padding: every prompt ends at the same column
            input_ids[row, width - len(ids) :] = torch.tensor(ids)
            attention[row, width - len(ids) :] = 1
        processors = [BudgetLogitsProcessor(states, width, sampling.temperature)] if states is not None else []
        out = self.model.generate(
            input_ids=input_ids.to(device),
            attention_mask=attention.to(device),
            logits_processor=LogitsProcessorList(processors),
            max_new_tokens=max_new_tokens,
            do_sample=not sampling.greedy,
            temperature=sampling.temperature if not sampling.greedy else None,
            top_p=sampling.top_p if not sampling.greedy else None,
            top_k=sampling.top_k if sampling.top_k > 0 and not sampling.greedy else None,
            eos_token_id=stop_ids,
            pad_token_id=self.pad_id,
            return_dict_in_generate=True,
            output_logits=sampling.logprobs,
        )
        generated = out.sequences[:, width:]
        logprobs = self._token_logprobs(out.logits, generated) if sampling.logprobs else None
        return generated.tolist(), logprobs

    @staticmethod
    def _token_logprobs(logits: tuple[torch.Tensor, ...], tokens: torch.Tensor) -> list[list[float]]:
        """Log-probability of each emitted token under the model's raw (unprocessed) distribution."""
        steps = torch.stack(logits, dim=1).float().log_softmax(dim=-1)
        return steps.gather(2, tokens[:, : steps.shape[1]].unsqueeze(2)).squeeze(2).tolist()


def _sampling_tail(sampling: SamplingConfig) -> tuple:
    """The SamplingConfig fields after ``n``, to continue each row as a single sample."""
    return (sampling.temperature, sampling.top_p, sampling.top_k, None, sampling.logprobs)


def _until_first_eos(ids: list[int], eos: tuple[int, ...]) -> list[int]:
    """Emitted tokens up to and including the first EOS; what follows is padding."""
    for i, token in enumerate(ids):
        if token in eos:
            return ids[: i + 1]
    return ids
