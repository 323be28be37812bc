"""Plots: the multi-directory plot command over real summary.json files."""

from __future__ import annotations

import json

from rllm.eval.plot import main


def entry(dataset, thinking, accuracy, think_tokens, solve_tokens):
    return {
        "dataset": dataset,
        "budget_key": f"{thinking}+1024",
        "mode": "e1",
        "thinking": thinking,
        "solution": 1024,
        "total": None,
        "metrics": {
            "avg@n": accuracy,
            "mean_total_tokens": think_tokens + solve_tokens + 1,
            "mean_thinking_tokens": think_tokens,
            "mean_solution_tokens": solve_tokens,
        },
    }


def write_summary(directory, model, scale):
    directory.mkdir()
    datasets = {
        dataset: {f"{t}+1024": entry(dataset, t, scale * t / 4096, 0.9 * t, 300) for t in (512, 1024, 2048)}
        for dataset in ("aime", "livecodebench")
    }
    (directory / "summary.json").write_text(json.dumps({"model": model, "datasets": datasets}))


def test_plot_command_draws_several_models(tmp_path, capsys):
    write_summary(tmp_path / "e1", "E1-Math-1.5B", 1.0)
    write_summary(tmp_path / "base", "DeepScaleR-1.5B", 0.6)
    out = tmp_path / "plots"
    assert (
        main([str(tmp_path / "e1"), str(tmp_path / "base"), "--out", str(out), "--labels", "E1", "base"]) == 0
    )
    written = capsys.readouterr().out.split()
    assert written == [str(out / "accuracy_vs_tokens.png"), str(out / "token_split.png")]
    for name in written:
        with open(name, "rb") as handle:
            assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_command_reports_a_directory_without_summary(tmp_path, capsys):
    assert main([str(tmp_path), "--out", str(tmp_path / "plots")]) == 1
    assert "summary.json not found" in capsys.readouterr().err
