"""The quickstart end to end (``--preset ci``) and its task, on real components.

The end-to-end test checks that every stage ran and the report is complete and well-formed; it
does not check that the paper's findings reproduce (the report states that, with numbers).
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from rllm.quickstart.__main__ import main
from rllm.quickstart.pipeline import PRESETS, Layout, build_stages
from rllm.quickstart.task import DATA_SOURCE, Problem, sample_problems, write_task
from rllm.rewards import compute_score


def test_problem_steps_and_answer():
    problem = Problem(7, (5, -3, 9))
    assert problem.question == "7 +5 -3 +9 =?"
    assert problem.states == [2, 9, 8]
    assert problem.thinking(verbose=False) == "7+5=2\n2-3=9\n9+9=8\n"
    assert problem.thinking(verbose=True) == "7+5=2;2-5=7\n2-3=9;9+3=2\n9+9=8;8-9=9\n"
    assert problem.response(verbose=False).endswith("</think>\n\nThe answer is \\boxed{8}.")


def test_sampled_problems_are_seeded_and_have_distinct_operations():
    problems = sample_problems(50, 2, 6, seed=3)
    assert problems == sample_problems(50, 2, 6, seed=3)
    assert all(2 <= len(p.operations) <= 6 for p in problems)
    assert all(len(set(p.operations)) == len(p.operations) for p in problems)


def test_written_task_is_graded_by_the_math_reward(tmp_path):
    paths = write_task(tmp_path, train_size=20, test_size=5, seed=1)
    sft, test = pd.read_parquet(paths["sft"]), pd.read_parquet(paths["test"])
    assert len(sft) == 20 and len(test) == 5 and len(pd.read_parquet(paths["train"])) == 20
    row = test.iloc[0]
    assert row["data_source"] == DATA_SOURCE
    truth = row["reward_model"]["ground_truth"]
    good = f"1+1=2\n</think>\n\nThe answer is \\boxed{{{truth}}}."
    wrong = f"</think>\n\nThe answer is \\boxed{{{(int(truth) + 1) % 10}}}."
    assert compute_score(DATA_SOURCE, good, truth)["score"] == 1.0
    assert compute_score(DATA_SOURCE, wrong, truth)["score"] == 0.0


def test_bad_flags_are_one_line_errors(tmp_path, capsys):
    assert main(["--out", str(tmp_path), "--train-budget", "24"]) == 1
    assert main(["--out", str(tmp_path), "--model-size", "huge"]) == 1
    assert main(["--out", str(tmp_path), "--thinking-budgets", "8,x"]) == 1
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("error: ") for line in errors)


def test_stages_are_the_real_commands(tmp_path):
    stages = build_stages(PRESETS["default"], Layout(tmp_path))
    modules = [s.module for s in stages]
    assert modules[:3] == ["rllm.quickstart.task", "rllm.testing.tiny_model", "rllm.trainer.sft"]
    assert modules.count("rllm.eval") == 8 and "rllm.trainer.local" in modules
    assert all(s.command.startswith(f"python -m {s.module} ") for s in stages)


@pytest.mark.slow
def test_ci_preset_end_to_end(tmp_path):
    out = tmp_path / "quickstart"
    assert main(["--out", str(out), "--preset", "ci"]) == 0
    report = out / "report"
    summary = json.loads((report / "summary.json").read_text())
    settings = PRESETS["ci"]

    names = [stage["name"] for stage in summary["stages"]]
    assert names[:4] == ["task", "init", "sft", "eval-sft-none"] and names[-1] == "eval-e1-e1"
    assert all(stage["wall_s"] >= 0 and not stage["skipped"] for stage in summary["stages"])
    assert set(summary["results"]) == {"sft", "e1"}
    budgets = len(set(settings.thinking_budgets))
    for entries in summary["results"].values():
        assert len(entries) == 3 * budgets + 1  # truncate, s1, e1 per budget; none once
        assert all(0.0 <= e["acc"] <= 1.0 and e["samples"] == settings.test_size for e in entries.values())
    assert len(summary["budget_table"]) == 2 * budgets
    assert len(summary["grpo"]) == settings.grpo_steps
    assert [type(f["reproduced"]) for f in summary["findings"]] == [bool] * 4
    for plot in summary["plots"]:
        assert (report / plot).read_bytes().startswith(b"\x89PNG")
    assert len(summary["plots"]) == 3

    markdown = (report / "report.md").read_text()
    for heading in ("## Budgeted accuracy", "## Unconstrained", "## Findings", "## Stages", "## The same stages on real models"):
        assert heading in markdown
    assert "scripts/eval/eval_model.sh" in markdown and "python -m rllm.trainer.local" in markdown
    table_rows = [line for line in markdown.splitlines() if re.match(r"\| (sft|e1) \| \d+\+\d+ \|", line)]
    assert len(table_rows) == 2 * budgets

    # a second run with the same settings skips every stage and rewrites the same report
    assert main(["--out", str(out), "--preset", "ci"]) == 0
    again = json.loads((report / "summary.json").read_text())
    assert all(stage["skipped"] for stage in again["stages"])
    assert again["results"] == summary["results"]
