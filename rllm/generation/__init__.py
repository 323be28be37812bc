"""Budgeted generation over engines.

Every backend takes prompts (chat messages or already-templated text), a :class:`~rllm.budget.Budget`
and a :class:`SamplingConfig`, and returns one :class:`~rllm.budget.SampleRecord` per sample,
``n`` samples per prompt, ordered prompt-major (prompt 0 samples 0..n-1, prompt 1, ...).
``iter_generate`` yields records as they finish so callers can score while generating.

Backends: :mod:`rllm.generation.hf` (transformers, single pass with a ``LogitsProcessor``) and
:mod:`rllm.generation.vllm` (vLLM, single pass with a v1 logits processor, or the original
two-phase mode).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rllm.budget import Budget, BudgetError, SampleRecord

Prompt = str | list[dict[str, str]]


@dataclass(frozen=True)
class SamplingConfig:
    """Sampling settings shared by all backends (vLLM conventions: ``top_k=-1`` disables top-k,
    ``temperature=0`` is greedy)."""

    n: int = 1
    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int = -1
    seed: int | None = None
    logprobs: bool = False

    def __post_init__(self) -> None:
        if self.n < 1:
            raise BudgetError(f"n must be >= 1 samples per prompt, got {self.n}")
        if self.temperature < 0:
            raise BudgetError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise BudgetError(f"top_p must be in (0, 1], got {self.top_p}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


class Generator(Protocol):
    def iter_generate(
        self, prompts: Sequence[Prompt], budget: Budget, sampling: SamplingConfig
    ) -> Iterator[SampleRecord]: ...

    def generate(self, prompts: Sequence[Prompt], budget: Budget, sampling: SamplingConfig) -> list[SampleRecord]: ...


def encode_prompts(tokenizer: Any, prompts: Sequence[Prompt]) -> list[list[int]]:
    """Token ids of each prompt, ending with the chat template's generation prompt.

    Chat messages go through ``apply_chat_template(add_generation_prompt=True)``; plain strings
    are taken as already templated. Nothing is appended: for R1-style templates the generation
    prompt already ends in ``<think>\\n`` and a second ``<think>`` must not be inserted.
    """
    if len(prompts) == 0:
        raise BudgetError("no prompts to generate from: the prompt list is empty")
    encoded = []
    for i, prompt in enumerate(prompts):
        if isinstance(prompt, str):
            ids = tokenizer.encode(prompt, add_special_tokens=False)
        else:
            ids = tokenizer.apply_chat_template(list(prompt), add_generation_prompt=True, tokenize=True)
            if isinstance(ids, dict) or hasattr(ids, "input_ids"):
                ids = ids["input_ids"]
        if len(ids) == 0:
            raise BudgetError(f"prompt {i} is empty after templating")
        encoded.append([int(t) for t in ids])
    return encoded


def collect(records: Iterator[SampleRecord]) -> list[SampleRecord]:
    """All records of an ``iter_generate`` stream, in prompt-major order."""
    return sorted(records, key=lambda r: (r.prompt_index, r.sample_index))
