"""The eval command line: the original flags' meaning, budget sweeps, and one-line user errors."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rllm.budget import Budget, Mode
from rllm.eval.cli import build_parser, main, resolve_budgets


def budgets(*argv):
    return resolve_budgets(build_parser().parse_args(list(argv)))


def test_original_flags_map_to_budgets():
    assert budgets() == [Budget(1024, 1024, Mode.E1)]  # the original's defaults
    assert budgets("--e1-mode", "True", "--e1-thinking-length", "512", "--e1-solution-length", "1k") == [
        Budget(512, 1024, Mode.E1)
    ]
    assert budgets("--e1-mode", "False") == [Budget(mode=Mode.NONE, total=32768)]
    assert budgets("--e1-mode", "False", "--max-length", "8k") == [Budget(mode=Mode.NONE, total=8192)]


def test_e1_flags_equal_mode_and_budgets():
    original = budgets("--e1-mode", "True", "--e1-thinking-length", "1024", "--e1-solution-length", "512")
    assert original == budgets("--mode", "e1", "--budgets", "1k+0.5k")


def test_budget_sweeps_and_modes():
    assert budgets("--budgets", "0.5k+1k, 1k+1k,1k+1k") == [Budget(512, 1024), Budget(1024, 1024)]
    assert budgets("--mode", "s1", "--budgets", "1k+1k") == [Budget(1024, 1024, Mode.S1)]
    assert budgets("--mode", "truncate", "--budgets", "2k,4k") == [
        Budget(mode=Mode.TRUNCATE, total=2048),
        Budget(mode=Mode.TRUNCATE, total=4096),
    ]


@pytest.fixture
def data_dir(tmp_path):
    row = {
        "data_source": "aime",
        "prompt": [{"role": "user", "content": "1+1?"}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": "2"},
        "extra_info": {"split": "test", "index": 0},
    }
    pq.write_table(pa.Table.from_pylist([row]), tmp_path / "aime.parquet")
    pq.write_table(pa.Table.from_pylist([row]), tmp_path / "math.parquet")
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--budgets", "1k-1k"], "must be THINKING+SOLUTION"),
        (["--budgets", "1x+1k"], "is not a token count"),
        (
            ["--e1-mode", "True"],
            "--e1-mode True needs both --e1-thinking-length T and --e1-solution-length S",
        ),
        (["--e1-thinking-length", "512"], "needs both"),
        (["--e1-mode", "maybe"], "write True or False"),
        (["--e1-mode", "False", "--mode", "e1"], "contradicts --mode e1"),
        (["--budgets", "1k+1k", "--e1-thinking-length", "1k"], "pass one or the other"),
        (["--n", "0"], "n must be >= 1"),
        (["--limit", "0"], "--limit must be >= 1"),
    ],
)
def test_flag_errors_are_one_line(argv, message, capsys, tiny_model_dir, data_dir):
    code = main(["--model", str(tiny_model_dir), "--data-dir", str(data_dir), "--backend", "hf", *argv])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_missing_model_dir(capsys, tmp_path, data_dir):
    code = main(["--model", str(tmp_path / "no_such_model"), "--data-dir", str(data_dir)])
    err = capsys.readouterr().err
    assert code == 1 and "directory not found" in err and err.count("\n") == 1


def test_unknown_dataset_lists_available(capsys, tiny_model_dir, data_dir, tmp_path):
    argv = ["--model", str(tiny_model_dir), "--data-dir", str(data_dir), "--datasets", "aime", "gsm9k"]
    code = main([*argv, "--output-dir", str(tmp_path / "out"), "--backend", "hf"])
    err = capsys.readouterr().err
    assert code == 1 and "dataset 'gsm9k' not found" in err and "available: aime, math" in err


def test_tensor_parallel_needs_vllm(capsys, tiny_model_dir, data_dir, tmp_path):
    argv = [
        "--model",
        str(tiny_model_dir),
        "--data-dir",
        str(data_dir),
        "--output-dir",
        str(tmp_path / "out"),
    ]
    code = main([*argv, "--backend", "hf", "--tp", "2"])
    assert code == 1 and "--tp 2 needs --backend vllm" in capsys.readouterr().err
