"""The evaluation pipeline: datasets -> budgeted generation -> grading (overlapped) -> outputs.

For every budget and dataset, :class:`Evaluation` generates only the samples its record store does
not hold yet, hands each finished sample to the :class:`~rllm.eval.scoring.ScoringPool` at once
(grading runs in worker processes while the engine keeps generating), and appends each graded
sample to the store. When a (dataset, budget) is complete, its metrics and output files are
written; at the end the run's summary, pass.csv, table and plots.
"""

from __future__ import annotations

import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from rllm.budget import Budget, Mode, SampleRecord
from rllm.eval import layout, report
from rllm.eval.dataset import EvalDataset
from rllm.eval.metrics import summarize
from rllm.eval.scoring import ScoringPool
from rllm.eval.store import RecordStore
from rllm.generation import Generator, SamplingConfig
from rllm.rewards import compute_score


@dataclass
class EvalConfig:
    """Everything a run needs besides the engine and the loaded datasets.

    ``model`` is recorded in outputs; ``model_identity`` and ``backend`` go into the settings
    fingerprint (different samplers give different samples).
    """

    model: str
    model_identity: str
    backend: str
    output_dir: Path
    budgets: list[Budget]
    sampling: SamplingConfig
    limit: int | None = None
    score_workers: int = 2
    progress: bool = True
    plots: bool = True
    score_fn: Callable[..., dict] = field(default=compute_score)


@dataclass
class RunResult:
    """What a run produced: one summary entry per (dataset, budget) and how many samples were
    generated now (the rest came from the record stores)."""

    entries: list[dict[str, Any]]
    generated: int
    reused: int


class Evaluation:
    def __init__(self, config: EvalConfig, generator: Generator, out: TextIO | None = None):
        self.config = config
        self.generator = generator
        self.out = out
        self._errors: list[BaseException] = []

    def settings(self, dataset: EvalDataset, budget: Budget) -> dict[str, Any]:
        """The settings that change results, hashed into the store's fingerprint."""
        sampling = self.config.sampling
        budget_settings: dict[str, Any] = budget.to_extra_args()
        if budget.mode is Mode.S1:
            budget_settings["cue"] = budget.cue
        return {
            "model": self.config.model_identity,
            "backend": self.config.backend,
            "budget": budget_settings,
            "n": sampling.n,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k,
            "seed": sampling.seed,
            "dataset": dataset.name,
            "dataset_sha256": dataset.content_hash,
            "limit": self.config.limit,
        }

    def run(self, datasets: Sequence[EvalDataset]) -> RunResult:
        """Evaluate every budget on every dataset (budget-major, one engine throughout)."""
        entries: list[dict[str, Any]] = []
        generated = reused = 0
        with ScoringPool(self.config.score_workers, self.config.score_fn) as pool:
            for budget in self.config.budgets:
                for dataset in datasets:
                    entry, new, old = self._evaluate(pool, dataset, budget)
                    entries.append(entry)
                    generated, reused = generated + new, reused + old
        self._write_run_outputs(entries)
        return RunResult(entries, generated, reused)

    def _evaluate(
        self, pool: ScoringPool, dataset: EvalDataset, budget: Budget
    ) -> tuple[dict[str, Any], int, int]:
        n = self.config.sampling.n
        key = layout.budget_key(budget)
        settings = self.settings(dataset, budget)
        with RecordStore.open(self.config.output_dir, dataset.name, key, settings) as store:
            reused = len(store)
            missing = {p: [s for s in range(n) if (p, s) not in store] for p in range(dataset.size)}
            todo = sum(len(v) for v in missing.values())
            if todo:
                self._generate(pool, store, dataset, budget, missing, todo)
            store.sync()
            records = store.records()
            store_dir = store.directory
        entry = {
            "dataset": dataset.name,
            "budget_key": key,
            "mode": budget.mode.value,
            "thinking": budget.thinking,
            "solution": budget.solution,
            "total": budget.total,
            "model": self.config.model,
            "settings": {**settings, "fingerprint": store.settings["fingerprint"]},
            "records": str(Path(store_dir, RecordStore.FILE).relative_to(self.config.output_dir)),
            "metrics": summarize(records, n),
        }
        directory = layout.budget_dir(self.config.output_dir, budget)
        report.write_dataset_outputs(directory, dataset.name, dataset.frame, records, n)
        if len(self.config.budgets) == 1:
            report.write_dataset_outputs(self.config.output_dir, dataset.name, dataset.frame, records, n)
        report.merge_summary(directory / layout.SUMMARY, self.config.model, [entry])
        report.update_pass_csv(directory / layout.PASS_CSV, [report.pass_row(entry)])
        return entry, todo, reused

    def _generate(
        self,
        pool: ScoringPool,
        store: RecordStore,
        dataset: EvalDataset,
        budget: Budget,
        missing: dict[int, list[int]],
        todo: int,
    ) -> None:
        """Generate the ``missing`` samples and grade each as soon as it is generated.

        Engines draw ``n`` samples per prompt, so prompts are grouped by how many samples they
        miss: a fresh run is one group, a resumed one adds a group per partial prompt count.
        """
        groups: dict[int, list[int]] = defaultdict(list)
        for prompt, samples in missing.items():
            if samples:
                groups[len(samples)].append(prompt)
        label = f"{dataset.name} {layout.budget_key(budget)}"
        disable = not self.config.progress
        gen_bar = tqdm(
            total=todo, desc=f"{label} generated", unit="sample", disable=disable, dynamic_ncols=True
        )
        score_bar = tqdm(
            total=todo, desc=f"{label} graded", unit="sample", disable=disable, dynamic_ncols=True
        )
        lock = threading.Lock()

        def on_graded(sample: dict[str, Any], grade: dict[str, Any]) -> None:
            try:
                store.add({**sample, **grade})
                with lock:
                    score_bar.update(1)
            except BaseException as exc:  # raised in a pool thread: hand it to the main thread
                self._errors.append(exc)

        try:
            for count, prompts in sorted(groups.items(), reverse=True):
                sampling = replace(self.config.sampling, n=count)
                stream = self.generator.iter_generate(
                    [dataset.items[p].prompt for p in prompts], budget, sampling
                )
                for record in stream:
                    prompt = prompts[record.prompt_index]
                    sample = sample_fields(
                        record, prompt, missing[prompt][record.sample_index], dataset, budget
                    )
                    item = dataset.items[prompt]
                    pool.submit(
                        item.data_source,
                        record.text,
                        item.ground_truth,
                        item.extra_info,
                        lambda grade, sample=sample: on_graded(sample, grade),
                    )
                    with lock:
                        gen_bar.update(1)
                    self._raise_errors()
            pool.wait()
            self._raise_errors()
        finally:
            gen_bar.close()
            score_bar.close()

    def _raise_errors(self) -> None:
        if self._errors:
            raise self._errors[0]

    def _write_run_outputs(self, entries: list[dict[str, Any]]) -> None:
        output_dir = self.config.output_dir
        summary = report.merge_summary(output_dir / layout.SUMMARY, self.config.model, entries)
        report.update_pass_csv(output_dir / layout.PASS_CSV, [report.pass_row(e) for e in entries])
        print(report.format_table(entries), file=self.out or sys.stdout)
        if self.config.plots:
            from rllm.eval import plots

            plots.write_run_plots(
                output_dir / layout.PLOTS, {Path(self.config.model.rstrip("/")).name: summary}
            )


def sample_fields(
    record: SampleRecord, prompt_index: int, sample_index: int, dataset: EvalDataset, budget: Budget
) -> dict[str, Any]:
    """The stored form of one generated sample (grading fields are added when it is graded)."""
    return {
        "prompt_index": prompt_index,
        "sample_index": sample_index,
        "data_source": dataset.items[prompt_index].data_source,
        "budget": layout.budget_key(budget),
        "response": record.text,
        "thinking_text": record.thinking_text,
        "solution_text": record.solution_text,
        "total_tokens": record.total_tokens,
        "thinking_tokens": record.thinking_tokens,
        "solution_tokens": record.solution_tokens,
        "think_closed": record.think_closed,
        "forced_close": record.forced_close,
        "solution_truncated": record.solution_truncated,
        "eos_in_thinking": record.eos_in_thinking,
        "finish_reason": record.finish_reason,
    }
