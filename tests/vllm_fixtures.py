"""One real vLLM CPU engine per test session, shared by every test module that uses it.

Test modules wrap :func:`shared_engine` in their own fixture. The engine lives in a module-level
cache rather than in a fixture: pytest keeps one value per fixture *definition*, and a fixture
imported into several modules is defined once per module, so a session-scoped fixture alone would
start one engine (a minute on the CPU) per module.
"""

from __future__ import annotations

import os
import random
import string
from pathlib import Path

ENGINE_MAX_MODEL_LEN = 1024
GENERATION_PROMPT = "<|im_start|>assistant\n<think>\n"
_engines: dict[str, object] = {}


def shared_engine(model_dir: Path):
    """The session's single-pass :class:`VLLMGenerator` on ``model_dir`` (started on first use).

    float32: vLLM would downcast "auto" to bfloat16 on the CPU, and the cross-backend test compares
    with transformers in float32.
    """
    key = str(model_dir)
    if key not in _engines:
        # Small KV cache: the machine is shared and the tiny model needs a few MB per sequence.
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        from rllm.generation.vllm import VLLMGenerator

        _engines[key] = VLLMGenerator(
            model_dir, dtype="float32", enforce_eager=True, max_model_len=ENGINE_MAX_MODEL_LEN, seed=0
        )
    return _engines[key]


def random_prompts(count: int, seed: int) -> list[str]:
    """Already-templated prompts with random user text, so the tiny model's outputs vary."""
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " "
    return [
        f"<|im_start|>user\n{''.join(rng.choices(alphabet, k=rng.randint(3, 60)))}<|im_end|>\n{GENERATION_PROMPT}"
        for _ in range(count)
    ]
