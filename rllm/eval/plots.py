"""PNG plots from ``summary.json`` contents (matplotlib, Agg backend: no display needed).

- :func:`plot_accuracy_vs_tokens`: avg@n accuracy against mean response tokens across budgets,
  one panel per dataset, one line per model (the paper's Figure 4 style).
- :func:`plot_token_split`: mean thinking and solution tokens per budget, stacked, one panel per
  dataset, one bar group per model (the paper's Figure 7 style).

A *summary* is the parsed ``summary.json``: ``{"model": ..., "datasets": {dataset: {budget_key:
entry}}}`` with each entry's ``metrics`` as produced by :func:`rllm.eval.metrics.summarize`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen before pyplot loads)

Summaries = Mapping[str, Mapping[str, Any]]

ACCURACY_PNG = "accuracy_vs_tokens.png"
TOKEN_SPLIT_PNG = "token_split.png"


def write_run_plots(directory: Path, summaries: Summaries) -> list[Path]:
    """Both plots into ``directory``; returns the files written (none if there is nothing to plot)."""
    if not _datasets(summaries):
        return []
    directory.mkdir(parents=True, exist_ok=True)
    return [
        plot_accuracy_vs_tokens(summaries, directory / ACCURACY_PNG),
        plot_token_split(summaries, directory / TOKEN_SPLIT_PNG),
    ]


def plot_accuracy_vs_tokens(summaries: Summaries, out: Path) -> Path:
    datasets = _datasets(summaries)
    fig, axes = _panels(len(datasets))
    for ax, dataset in zip(axes, datasets, strict=False):
        for model, summary in summaries.items():
            entries = _entries(summary, dataset)
            if not entries:
                continue
            xs = [e["metrics"]["mean_total_tokens"] for e in entries]
            ys = [100 * e["metrics"]["avg@n"] for e in entries]
            order = sorted(range(len(xs)), key=xs.__getitem__)
            ax.plot([xs[i] for i in order], [ys[i] for i in order], marker="o", label=model)
            for x, y, entry in zip(xs, ys, entries, strict=True):
                ax.annotate(
                    entry["budget_key"], (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7
                )
        ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))  # accuracy is never negative
        ax.set_title(dataset)
        ax.set_xlabel("mean response tokens")
        ax.set_ylabel("accuracy avg@n (%)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, out)


def plot_token_split(summaries: Summaries, out: Path) -> Path:
    datasets = _datasets(summaries)
    fig, axes = _panels(len(datasets))
    models = list(summaries)
    width = 0.8 / max(1, len(models))
    for ax, dataset in zip(axes, datasets, strict=False):
        keys = _budget_order(
            {k for s in summaries.values() for k in s.get("datasets", {}).get(dataset, {})},
            summaries,
            dataset,
        )
        for m, model in enumerate(models):
            entries = summaries[model].get("datasets", {}).get(dataset, {})
            xs = [i + (m - (len(models) - 1) / 2) * width for i, key in enumerate(keys) if key in entries]
            present = [key for key in keys if key in entries]
            thinking = [entries[k]["metrics"]["mean_thinking_tokens"] for k in present]
            solution = [entries[k]["metrics"]["mean_solution_tokens"] for k in present]
            prefix = f"{model}: " if len(models) > 1 else ""
            ax.bar(xs, thinking, width, label=f"{prefix}thinking", color=f"C{2 * m}")
            ax.bar(xs, solution, width, bottom=thinking, label=f"{prefix}solution", color=f"C{2 * m + 1}")
        ax.set_xticks(range(len(keys)), keys, rotation=30, ha="right", fontsize=8)
        ax.set_title(dataset)
        ax.set_ylabel("mean tokens per sample")
        ax.legend(fontsize=7)
    return _save(fig, out)


def _datasets(summaries: Summaries) -> list[str]:
    return sorted({d for s in summaries.values() for d, budgets in s.get("datasets", {}).items() if budgets})


def _entries(summary: Mapping[str, Any], dataset: str) -> list[Mapping[str, Any]]:
    budgets = summary.get("datasets", {}).get(dataset, {})
    return [budgets[key] for key in _budget_order(set(budgets), {"": summary}, dataset)]


def _budget_order(keys: set[str], summaries: Summaries, dataset: str) -> list[str]:
    """Budgets ordered by mode, then thinking, solution and total budget."""

    def rank(key: str) -> tuple:
        for summary in summaries.values():
            entry = summary.get("datasets", {}).get(dataset, {}).get(key)
            if entry is not None:
                return (
                    entry["mode"],
                    entry.get("thinking") or 0,
                    entry.get("solution") or 0,
                    entry.get("total") or 0,
                )
        return ("", 0, 0, 0)

    return sorted(keys, key=lambda k: (rank(k), k))


def _panels(count: int) -> tuple[Any, list[Any]]:
    cols = min(3, max(1, count))
    rows = math.ceil(max(1, count) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat


def _save(fig: Any, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
