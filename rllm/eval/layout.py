"""Where evaluation outputs go inside ``--output-dir``.

::

    OUTPUT_DIR/
      <dataset>.parquet            the original's output: dataset rows + ``responses`` (n texts per
                                   row) + ``scores``; written here (with results_<dataset>.json)
                                   when the run has one budget, as the original did
      pass.csv                     the original's table (model_path, dataset, pass@1, pass@n), one
                                   row per (model, dataset, mode, budget), plus token columns
      summary.json                 metrics keyed by dataset, then budget (merged across runs)
      plots/accuracy_vs_tokens.png accuracy vs mean tokens, one panel per dataset (paper Fig. 4)
      plots/token_split.png        thinking / solution tokens per budget (paper Fig. 7)
      <budget>/                    one folder per budget: 1024+1024 (e1), s1-1024+1024,
                                   none-32768, truncate-2048
        <dataset>.parquet          as above, for this budget
        results_<dataset>.json     per row, the 0/1 outcome of each attempt (cf_elo_calc input)
        summary.json, pass.csv     this budget only
      records/<dataset>/<budget>-<fingerprint>/samples.jsonl
                                   every scored sample, appended as it is graded (resume state)
"""

from __future__ import annotations

from pathlib import Path

from rllm.budget import Budget, Mode

SUMMARY = "summary.json"
PASS_CSV = "pass.csv"
PLOTS = "plots"


def budget_key(budget: Budget) -> str:
    """The folder / summary key of a budget; unique across modes."""
    if budget.mode is Mode.E1:
        return budget.label
    if budget.mode is Mode.S1:
        return f"s1-{budget.label}"
    return budget.label  # none-<total> / truncate-<total> already name their mode


def budget_dir(output_dir: Path, budget: Budget) -> Path:
    return Path(output_dir) / budget_key(budget)


def dataset_parquet(directory: Path, dataset: str) -> Path:
    return Path(directory) / f"{dataset}.parquet"


def results_json(directory: Path, dataset: str) -> Path:
    return Path(directory) / f"results_{dataset}.json"
