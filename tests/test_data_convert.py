"""Raw JSON fixtures -> verl RL parquet through the real command-line entry points."""

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rllm.data.cli import deepcoder_main, deepscaler_main, run
from rllm.data.prompts import livecodebench_prompt
from rllm.rewards import code_format_of

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "data"
RAW = FIXTURES / "raw"
MATH_SUFFIX = " Let's think step by step and output the final answer within \\boxed{}."


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def _convert(main, tmp_path, *args) -> int:
    return run(main, ["--data-dir", str(tmp_path), "--raw-dir", str(RAW), *args])


def test_math_outputs_rows_and_schema(tmp_path, capsys):
    assert _convert(deepscaler_main, tmp_path) == 0
    out = tmp_path / "deepscaler"
    assert sorted(p.name for p in out.iterdir()) == [
        "aime.parquet",
        "amc.parquet",
        "deepscaler_train.parquet",
        "math.parquet",
        "minerva.parquet",
        "olympiad_bench.parquet",
    ]
    schema = pq.read_schema(out / "aime.parquet")
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    assert schema.field("prompt").type == pa.list_(
        pa.struct([("role", pa.string()), ("content", pa.string())])
    )
    assert schema.field("reward_model").type.field("ground_truth").type == pa.string()
    assert schema.field("extra_info").type == pa.struct([("split", pa.string()), ("index", pa.int64())])
    assert pq.read_schema(out / "minerva.parquet").field("reward_model").type.field("ground_truth").type == (
        pa.list_(pa.string())
    )

    assert _rows(out / "aime.parquet")[0] == {
        "data_source": "aime",
        "prompt": [{"role": "user", "content": "Find $1+1$." + MATH_SUFFIX}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": "2"},
        "extra_info": {"split": "test", "index": 0},
    }
    assert [r["reward_model"]["ground_truth"] for r in _rows(out / "amc.parquet")] == ["142", "0.5"]
    assert [r["reward_model"]["ground_truth"] for r in _rows(out / "minerva.parquet")] == [
        ["9.6"],
        ["3e8", "300000000"],
    ]
    train = _rows(out / "deepscaler_train.parquet")
    assert [(r["data_source"], r["extra_info"]) for r in train] == [
        ("deepscaler", {"split": "train", "index": i}) for i in range(3)
    ]
    summary = capsys.readouterr().out
    assert "aime.json: kept 2 of 2, skipped 0" in summary
    assert f"wrote {out / 'aime.parquet'} (2 rows)" in summary


def test_math_sources_are_graded_as_math():
    names = ["aime", "amc", "math", "minerva", "olympiad_bench", "deepscaler"]
    assert [code_format_of(name) for name in names] == [None] * len(names)


def test_code_outputs_and_ground_truth_shapes(tmp_path):
    assert _convert(deepcoder_main, tmp_path) == 0
    out = tmp_path / "deepcoder"
    assert sorted(p.stem for p in out.iterdir()) == [
        "deepcoder_train",
        "test_codeforces",
        "test_humanevalplus",
        "test_livecodebench",
        "train_livecodebench",
        "train_primeintellect",
        "train_taco",
    ]
    lcb = _rows(out / "test_livecodebench.parquet")
    raw_lcb = json.loads((RAW / "test" / "code" / "livecodebench.json").read_text())
    assert [r["prompt"][0]["content"] for r in lcb] == [
        livecodebench_prompt(rec["problem"], rec.get("starter_code")) for rec in raw_lcb
    ]
    assert json.loads(lcb[0]["reward_model"]["ground_truth"]) == [
        {"input": "3\n", "output": "4\n", "testtype": "stdin"}
    ]
    assert json.loads(lcb[1]["reward_model"]["ground_truth"]) == [
        {"input": "[1, 2]", "output": "3", "testtype": "functional", "metadata": {"func_name": "sumOf"}},
        {"input": "[5]", "output": "5", "testtype": "functional", "metadata": {"func_name": "sumOf"}},
    ]
    assert {r["data_source"] for r in lcb} == {"livecodebench"}

    cf = _rows(out / "test_codeforces.parquet")
    assert json.loads(cf[0]["reward_model"]["ground_truth"]) == [
        {"input": "1 9", "output": "1 9"},
        {"input": "8 4", "output": "4 8"},
    ]
    raw_cf = json.loads((RAW / "test" / "code" / "codeforces.json").read_text())
    assert cf[0]["prompt"] == [{"role": "user", "content": raw_cf[0]["problem"]}]

    he = _rows(out / "test_humanevalplus.parquet")
    assert json.loads(he[0]["reward_model"]["ground_truth"]) == (
        "def check(candidate):\n    assert candidate(1, 2) == 3\n\ncheck(add)"
    )
    assert he[0]["data_source"] == "humanevalplus" and he[0]["ability"] == "code"

    train = _rows(out / "deepcoder_train.parquet")
    assert [(r["data_source"], r["extra_info"]["index"]) for r in train] == [
        ("primeintellect", 0),
        ("primeintellect", 1),
        ("taco", 0),
        ("taco", 1),
        ("livecodebench", 0),
    ]
    assert {r["extra_info"]["split"] for r in train} == {"train"}
    assert json.loads(train[3]["reward_model"]["ground_truth"]) == {
        "inputs": [[3]],
        "outputs": [[9]],
        "fn_name": "square",
    }
    assert json.loads(train[4]["reward_model"]["ground_truth"])[0]["metadata"] == {"func_name": "maxOf"}
    assert [code_format_of(r["data_source"]) for r in train] == [r["data_source"] for r in train]


def test_extra_code_sets_by_name(tmp_path):
    args = ["--datasets", "test_code_contests", "test_leetcode", "train_kodcode"]
    assert _convert(deepcoder_main, tmp_path, *args) == 0
    leetcode = _rows(tmp_path / "deepcoder" / "test_leetcode.parquet")
    assert set(json.loads(leetcode[0]["reward_model"]["ground_truth"])) == {"functional"}
    kodcode = _rows(tmp_path / "deepcoder" / "train_kodcode.parquet")
    assert json.loads(kodcode[0]["reward_model"]["ground_truth"]).startswith("from solution import inc")


def test_invalid_records_are_skipped_and_reported(tmp_path, capsys):
    args = [
        "--datasets",
        "deepscaler_train",
        "--input",
        f"deepscaler_train={FIXTURES / 'invalid' / 'math.json'}",
    ]
    assert _convert(deepscaler_main, tmp_path, *args) == 0
    out = capsys.readouterr().out
    assert "math.json: kept 2 of 11, skipped 9 (empty_answer: 2, missing_field: 3, wrong_type: 4)" in out
    assert "  record 7: wrong_type: record is a str, expected an object" in out
    rows = _rows(tmp_path / "deepscaler" / "deepscaler_train.parquet")
    # One record has a list of answers, so the column is a list column and the single answer a one-element list.
    assert [(r["extra_info"]["index"], r["reward_model"]["ground_truth"]) for r in rows] == [
        (0, ["1"]),
        (10, ["1", "2"]),
    ]


def test_strict_fails_with_one_line_and_writes_nothing(tmp_path, capsys):
    bad = FIXTURES / "invalid" / "math.json"
    args = ["--strict", "--datasets", "aime", "deepscaler_train", "--input", f"deepscaler_train={bad}"]
    assert _convert(deepscaler_main, tmp_path, *args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and err[0].startswith(f"error: {bad}: kept 2 of 11, skipped 9") and "--strict" in err[0]
    )
    # aime is valid, but --strict validates everything before writing anything.
    assert not (tmp_path / "deepscaler").exists()


def test_missing_raw_file_is_reported_and_the_rest_is_written(tmp_path, capsys):
    raw = tmp_path / "raw"
    (raw / "test" / "math").mkdir(parents=True)
    (raw / "test" / "math" / "aime.json").write_text((RAW / "test" / "math" / "aime.json").read_text())
    status = run(deepscaler_main, ["--data-dir", str(tmp_path), "--datasets", "aime", "amc"])
    captured = capsys.readouterr()
    assert status == 1
    assert (tmp_path / "deepscaler" / "aime.parquet").is_file()
    assert not (tmp_path / "deepscaler" / "amc.parquet").exists()
    assert f"skipped amc: no raw file at {raw / 'test' / 'math' / 'amc.json'}" in captured.out
    assert captured.err.startswith("error: 1 of 2 datasets not written: amc (no raw file")


def test_deepcoder_train_needs_every_part(tmp_path, capsys):
    raw = tmp_path / "raw" / "train" / "code"
    raw.mkdir(parents=True)
    for name in ("primeintellect", "taco"):
        (raw / f"{name}.json").write_text((RAW / "train" / "code" / f"{name}.json").read_text())
    assert run(deepcoder_main, ["--data-dir", str(tmp_path), "--datasets", "deepcoder_train"]) == 1
    assert not (tmp_path / "deepcoder" / "deepcoder_train.parquet").exists()
    assert "livecodebench.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input", "gsm8k=x.json"], "error: --input names unknown dataset(s) gsm8k"),
        (["--input", "aime"], "error: --input aime: expected NAME=PATH"),
        (["--input", "aime=/nonexistent.json", "--strict"], "error: no raw file at /nonexistent.json"),
    ],
)
def test_user_errors_are_one_line(tmp_path, capsys, args, message):
    assert _convert(deepscaler_main, tmp_path, *args) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_rerun_replaces_outputs_and_leaves_no_temp_files(tmp_path):
    for _ in range(2):
        assert _convert(deepscaler_main, tmp_path, "--datasets", "aime") == 0
    assert [p.name for p in (tmp_path / "deepscaler").iterdir()] == ["aime.parquet"]


def test_scripts_run_as_programs(tmp_path):
    for script in ("deepscaler_dataset.py", "deepcoder_dataset.py", "download_datasets.py"):
        result = subprocess.run(
            [sys.executable, str(REPO / "scripts" / "data" / script), "--help"],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0 and "--data-dir" in result.stdout
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "data" / "deepscaler_dataset.py"),
            "--data-dir",
            str(tmp_path),
            "--raw-dir",
            str(RAW),
            "--output-dir",
            str(tmp_path / "flat"),
            "--datasets",
            "aime",
            "math",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "flat").iterdir()) == ["aime.parquet", "math.parquet"]


def test_verl_rl_dataset_reads_the_parquet(tmp_path, tiny_tokenizer):
    pytest.importorskip("verl")
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    assert _convert(deepscaler_main, tmp_path, "--datasets", "aime", "minerva") == 0
    assert _convert(deepcoder_main, tmp_path, "--datasets", "test_livecodebench") == 0
    config = OmegaConf.create(
        {
            "prompt_key": "prompt",
            "max_prompt_length": 4096,
            "filter_overlong_prompts": False,
            "cache_dir": str(tmp_path / "cache"),
            "return_raw_chat": True,
        }
    )
    # Files with string ground truths can be combined in one verl dataset (math and code alike).
    files = [
        str(tmp_path / "deepscaler" / "aime.parquet"),
        str(tmp_path / "deepcoder" / "test_livecodebench.parquet"),
    ]
    dataset = RLHFDataset(files, tiny_tokenizer, config)
    assert len(dataset) == 5
    first, last = dataset[0], dataset[4]
    assert (first["data_source"], first["reward_model"]["ground_truth"]) == ("aime", "2")
    assert first["raw_prompt"] == [{"role": "user", "content": "Find $1+1$." + MATH_SUFFIX}]
    assert last["data_source"] == "livecodebench"
    assert json.loads(last["reward_model"]["ground_truth"])[0]["testtype"] == "stdin"

    minerva = RLHFDataset([str(tmp_path / "deepscaler" / "minerva.parquet")], tiny_tokenizer, config)
    assert [list(minerva[i]["reward_model"]["ground_truth"]) for i in range(2)] == [
        ["9.6"],
        ["3e8", "300000000"],
    ]
