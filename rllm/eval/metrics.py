"""Evaluation metrics over scored samples: avg@n, unbiased pass@k, token and budget statistics.

Pure Python (no engine, no numpy needed): the input is a list of :class:`ScoredSample`-like
mappings, one per (prompt, sample), as the record store keeps them.

- **avg@n** (the paper's Pass@1): the mean over prompts of the fraction of correct samples.
- **pass@k**, unbiased (Chen et al., 2021): per prompt with ``n`` samples of which ``c`` are
  correct, ``1 - C(n-c, k) / C(n, k)``, averaged over prompts. Computed as the product
  ``prod_{i=n-c+1}^{n} (1 - k/i)``, which never forms a binomial coefficient and so stays exact
  in floating point for any ``n``.
- token statistics (mean / median of total, thinking and solution tokens), the forced-``</think>``
  rate, the solution-truncated rate, the format-error rate and a histogram of grader reasons.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Grader reasons that mean "the response had no gradable answer" rather than "a wrong answer".
FORMAT_ERROR_REASONS = frozenset({"format_error", "no_answer", "no_code"})

TOKEN_FIELDS = ("total_tokens", "thinking_tokens", "solution_tokens")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of pass@k for one prompt with ``n`` samples, ``c`` of them correct.

    Raises ValueError unless ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0  # every size-k subset contains a correct sample
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def k_values(n: int) -> list[int]:
    """The k reported for ``n`` samples: 1, 2, 4, ... up to ``n``, and ``n`` itself."""
    ks = [1 << p for p in range(n.bit_length()) if 1 << p <= n]
    return ks if ks[-1] == n else [*ks, n]


def summarize(samples: Sequence[Mapping[str, Any]], n: int) -> dict[str, Any]:
    """Metrics of one dataset at one budget, overall and per ``data_source``.

    Each sample needs ``prompt_index``, ``acc`` (bool), ``reason``, ``data_source``, the token
    counts in :data:`TOKEN_FIELDS`, ``forced_close`` and ``solution_truncated``. ``n`` is the
    number of samples drawn per prompt; a prompt with a different count raises ValueError (the
    caller reports only complete runs).
    """
    result = _metrics(samples, n)
    by_source: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for sample in samples:
        by_source[str(sample.get("data_source", ""))].append(sample)
    result["by_data_source"] = {source: _metrics(group, n) for source, group in sorted(by_source.items())}
    return result


def _metrics(samples: Sequence[Mapping[str, Any]], n: int) -> dict[str, Any]:
    correct: dict[int, int] = defaultdict(int)
    drawn: Counter[int] = Counter()
    for sample in samples:
        drawn[sample["prompt_index"]] += 1
        correct[sample["prompt_index"]] += bool(sample["acc"])
    incomplete = {p: c for p, c in drawn.items() if c != n}
    if incomplete:
        prompt, count = next(iter(incomplete.items()))
        raise ValueError(f"{len(incomplete)} prompts do not have n={n} samples (prompt {prompt} has {count})")
    prompts = sorted(drawn)
    count = len(samples)
    metrics: dict[str, Any] = {
        "prompts": len(prompts),
        "samples": count,
        "n": n,
        "avg@n": _mean(correct[p] / n for p in prompts),
    }
    for k in k_values(n):
        metrics[f"pass@{k}"] = _mean(pass_at_k(n, correct[p], k) for p in prompts)
    for field in TOKEN_FIELDS:
        values = [int(sample[field]) for sample in samples]
        metrics[f"mean_{field}"] = _mean(values)
        metrics[f"median_{field}"] = float(statistics.median(values)) if values else 0.0
    metrics["forced_close_rate"] = _rate(samples, lambda s: bool(s["forced_close"]))
    metrics["solution_truncated_rate"] = _rate(samples, lambda s: bool(s["solution_truncated"]))
    metrics["format_error_rate"] = _rate(samples, lambda s: s.get("reason") in FORMAT_ERROR_REASONS)
    metrics["reasons"] = dict(sorted(Counter(str(s.get("reason")) for s in samples).items()))
    return metrics


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


def _rate(samples: Sequence[Mapping[str, Any]], predicate: Any) -> float:
    return sum(1 for s in samples if predicate(s)) / len(samples) if samples else 0.0
