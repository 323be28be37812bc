"""Choosing and starting a generation backend for evaluation.

Engines are imported only when chosen: the vLLM backend pulls in vLLM (and a minute of engine
start-up), the HF backend pulls in transformers; metrics and reports import neither.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from rllm.generation import Generator

BACKENDS = ("vllm", "hf")


class EngineError(RuntimeError):
    """The model or backend cannot be started; the message says why and what to do."""


def vllm_available() -> bool:
    """True when vLLM and the project's vLLM backend module are importable."""
    return (
        importlib.util.find_spec("vllm") is not None
        and importlib.util.find_spec("rllm.generation.vllm") is not None
    )


def default_backend() -> str:
    """``vllm`` where it is installed (GPU nodes, the CPU build), else ``hf``."""
    return "vllm" if vllm_available() else "hf"


def model_identity(model: str) -> str:
    """What the settings fingerprint records for a model: the absolute path of a local
    directory, or the hub id as given."""
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


def check_model(model: str) -> None:
    """Fail early (before datasets are read or an engine starts) on a missing model directory.

    A name shaped like a hub id (``org/name``, not an existing path) is left to the engine.
    """
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            raise EngineError(f"--model {model}: not a model directory (no config.json in it)")
        return
    looks_like_hub_id = model.count("/") == 1 and not model.startswith((".", "/", "~"))
    if not looks_like_hub_id:
        raise EngineError(
            f"--model {model}: directory not found; pass a local checkpoint dir or a hub id org/name"
        )


def load_generator(
    backend: str,
    model: str,
    *,
    tp: int = 1,
    dtype: str = "auto",
    batch_size: int = 64,
    seed: int | None = None,
    vllm_options: dict[str, Any] | None = None,
) -> Generator:
    """Start ``backend`` on ``model``. ``batch_size`` applies to the HF backend (prompts per
    ``generate`` call); ``tp`` and ``vllm_options`` (keyword arguments of
    :class:`~rllm.generation.vllm.VLLMGenerator`, e.g. ``gpu_memory_utilization``) to vLLM.
    Raises EngineError with a one-line reason."""
    if backend == "hf":
        if tp != 1:
            raise EngineError(f"--tp {tp} needs --backend vllm (the HF backend runs on one device)")
        from rllm.generation.hf import HFGenerator

        return _start(
            lambda: HFGenerator.from_pretrained(model, dtype=_torch_dtype(dtype), batch_size=batch_size),
            model,
        )
    if backend == "vllm":
        if not vllm_available():
            raise EngineError(
                "--backend vllm: vLLM (or rllm.generation.vllm) is not installed here; use --backend hf"
            )
        from rllm.generation.vllm import VLLMGenerator

        kwargs: dict[str, Any] = {"tensor_parallel_size": tp, **(vllm_options or {})}
        if dtype != "auto":
            kwargs["dtype"] = dtype
        if seed is not None:
            kwargs["seed"] = seed
        return _start(lambda: VLLMGenerator(model, **kwargs), model)
    raise EngineError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")


def _torch_dtype(dtype: str) -> Any:
    if dtype == "auto":
        return "auto"
    import torch

    value = getattr(torch, dtype, None)
    if not isinstance(value, torch.dtype):
        raise EngineError(f"--dtype {dtype}: not a torch dtype (use auto, float32, bfloat16 or float16)")
    return value


def _start(factory: Any, model: str) -> Generator:
    try:
        return factory()
    except (OSError, ValueError, RuntimeError) as exc:  # how transformers/vLLM report unloadable models
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EngineError(f"cannot load model {model}: {first}") from exc
