"""Shared fixtures: real tiny models built once per test session (no downloads)."""

from __future__ import annotations

import pytest

from rllm.testing.tiny_model import build_tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory):
    """A random Qwen2 model (head_dim 32) with an R1-style tokenizer, written to a temp dir."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny_model"), "tiny", seed=0)


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_model_dir))


@pytest.fixture(scope="session")
def hf_generator(tiny_model_dir):
    """The transformers backend on the tiny model in float32 (single pass)."""
    import torch

    from rllm.generation.hf import HFGenerator

    return HFGenerator.from_pretrained(tiny_model_dir, dtype=torch.float32, batch_size=64)
