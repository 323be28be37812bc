"""Crash-safe training checkpoints that resume exactly.

A checkpoint is a directory ``<output>/checkpoints/step_000010/`` holding the policy as a normal
Hugging Face model (``save_pretrained``: loadable for evaluation as is), its tokenizer, and
``trainer_state.pt``: optimizer state, step, the random states of python/numpy/torch (and CUDA when
present) and whatever the trainer adds (configuration, data-order fingerprint). Everything is
written into a temporary sibling directory that is renamed into place only when complete, so a
crash leaves either the previous checkpoint or the new one, never half of one; ``latest`` names
the newest complete checkpoint and is replaced atomically after the rename.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

STATE_FILE = "trainer_state.pt"
LATEST = "latest"


def checkpoint_dir(output_dir: Path, step: int) -> Path:
    return output_dir / "checkpoints" / f"step_{step:06d}"


def rng_state() -> dict[str, Any]:
    """Random states as plain Python values and tensors (loadable with ``weights_only=True``)."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {
        "python": random.getstate(),
        "numpy": (kind, keys.tolist(), pos, has_gauss, cached),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(_as_tuples(state["python"]))
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    output_dir: Path,
    step: int,
    model: Any,
    tokenizer: Any,
    optimizer: torch.optim.Optimizer,
    extra: dict[str, Any],
) -> Path:
    """Write the checkpoint of ``step`` atomically and point ``latest`` at it; return its path."""
    final = checkpoint_dir(output_dir, step)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        state = {"step": step, "optimizer": optimizer.state_dict(), "rng": rng_state(), **extra}
        torch.save(state, tmp / STATE_FILE)
        stale = final.with_name(f".{final.name}.old-{os.getpid()}")
        if final.exists():  # the same step run again after a resume: the new one wins
            final.rename(stale)
        tmp.rename(final)
        shutil.rmtree(stale, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _write_atomic(final.parent / LATEST, final.name)
    return final


def latest_checkpoint(output_dir: Path) -> Path | None:
    """The newest complete checkpoint under ``output_dir``, or None if there is none."""
    pointer = output_dir / "checkpoints" / LATEST
    if not pointer.exists():
        return None
    path = pointer.parent / pointer.read_text().strip()
    return path if (path / STATE_FILE).exists() else None


def load_trainer_state(path: Path) -> dict[str, Any]:
    """The ``trainer_state.pt`` of a checkpoint (optimizer, rng, step and the trainer's extras)."""
    return torch.load(path / STATE_FILE, map_location="cpu", weights_only=True)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def _as_tuples(value: Any) -> Any:
    """``random.setstate`` needs tuples; a saved state may come back with lists."""
    return tuple(_as_tuples(v) for v in value) if isinstance(value, list | tuple) else value
