"""The evaluation pipeline end to end on the CPU: tiny model, HF backend, real graders, real files.

The tiny model's output is random, so its accuracy is ~0: scoring and alignment are checked with a
generator that replays known responses (built into records by the real tokenizer and budget
accounting), and resumption with the real generator wrapped to count what it is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rllm.budget import Budget, SampleRecord, build_record
from rllm.eval import layout
from rllm.eval.cli import main
from rllm.eval.dataset import load_dataset
from rllm.eval.runner import EvalConfig, Evaluation
from rllm.eval.scoring import ScoringPool
from rllm.generation import SamplingConfig

ADD_PROGRAM = "a, b = map(int, input().split())\nprint(a + b)\n"
MUL_PROGRAM = "a, b = map(int, input().split())\nprint(a * b)\n"


def rl_row(source, content, ground_truth, index, ability="math"):
    return {
        "data_source": source,
        "prompt": [{"role": "user", "content": content}],
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": ground_truth},
        "extra_info": {"split": "test", "index": index},
    }


def stdin_tests(*pairs):
    return json.dumps([{"input": i, "output": o, "testtype": "stdin"} for i, o in pairs])


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval_data")
    math_rows = [
        rl_row(
            "aime",
            f"What is {a} + {b}? Let's think step by step and output the final answer within \\boxed{{}}.",
            str(a + b),
            i,
        )
        for i, (a, b) in enumerate([(1, 2), (3, 4), (5, 6)])
    ]
    code_rows = [
        rl_row(
            "livecodebench",
            "Read a and b, print a + b.",
            stdin_tests(("1 2\n", "3\n"), ("5 7\n", "12\n")),
            0,
            "code",
        ),
        rl_row(
            "livecodebench",
            "Read a and b, print a * b.",
            stdin_tests(("2 3\n", "6\n"), ("4 5\n", "20\n")),
            1,
            "code",
        ),
    ]
    pq.write_table(pa.Table.from_pylist(math_rows), root / "toymath.parquet")
    pq.write_table(pa.Table.from_pylist(code_rows), root / "test_toycode.parquet")
    return root


SWEEP = ("--datasets", "toymath", "test_toycode", "--n", "2", "--budgets", "16+8,32+16")


def run_cli(tiny_model_dir, data_dir, out, *argv):
    base = [
        "--model",
        str(tiny_model_dir),
        "--data-dir",
        str(data_dir),
        "--output-dir",
        str(out),
        "--backend",
        "hf",
    ]
    return main([*base, "--dtype", "float32", "--seed", "0", "--score-workers", "2", "--no-progress", *argv])


def test_cli_end_to_end_math_and_code_budget_sweep(tiny_model_dir, data_dir, tmp_path, capsys):
    out = tmp_path / "out"
    code = run_cli(tiny_model_dir, data_dir, out, *SWEEP)
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "toymath" in printed and "32+16" in printed and "20 samples generated, 0 reused" in printed

    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["datasets"]) == {"toymath", "test_toycode"}
    for dataset, prompts in [("toymath", 3), ("test_toycode", 2)]:
        for budget, (t, s) in [("16+8", (16, 8)), ("32+16", (32, 16))]:
            entry = summary["datasets"][dataset][budget]
            m = entry["metrics"]
            assert (m["prompts"], m["samples"], m["n"]) == (prompts, 2 * prompts, 2)
            assert 0 <= m["avg@n"] <= m["pass@2"] <= 1
            assert m["mean_thinking_tokens"] <= t and m["mean_solution_tokens"] <= s
            assert m["mean_total_tokens"] <= t + s + 1  # + the </think>, sampled or forced
            assert set(m["by_data_source"]) == {"aime" if dataset == "toymath" else "livecodebench"}
            records = [json.loads(line) for line in (out / entry["records"]).read_text().splitlines()]
            assert len(records) == 2 * prompts
            assert all(r["thinking_tokens"] <= t and r["solution_tokens"] <= s for r in records)

            folder = out / budget
            frame = pd.read_parquet(folder / f"{dataset}.parquet")
            assert len(frame) == prompts and all(len(r) == 2 for r in frame["responses"])
            assert list(frame["data_source"]) == list(
                pd.read_parquet(data_dir / f"{dataset}.parquet")["data_source"]
            )
            results = json.loads((folder / f"results_{dataset}.json").read_text())
            assert len(results) == prompts and all(len(r) == 2 and set(r) <= {0, 1} for r in results)
    passes = pd.read_csv(out / "pass.csv")
    assert len(passes) == 4 and {"model_path", "dataset", "pass@1", "pass@2", "budget"} <= set(passes.columns)
    assert not (out / "toymath.parquet").exists()  # a sweep writes per-budget folders only
    assert (out / "plots" / "accuracy_vs_tokens.png").stat().st_size > 0
    assert (out / "plots" / "token_split.png").stat().st_size > 0

    # the same command again reuses every sample
    assert run_cli(tiny_model_dir, data_dir, out, *SWEEP) == 0
    assert "0 samples generated, 20 reused" in capsys.readouterr().out


class ReplayGenerator:
    """Known response texts per (prompt, sample), turned into records by the real tokenizer and
    the budget accounting, yielded in a shuffled order as an engine finishing requests would."""

    def __init__(self, tokenizer, texts: dict[str, list[list[str]]]):
        from rllm.budget import SpecialTokens

        self.tokenizer = tokenizer
        self.tokens = SpecialTokens.from_tokenizer(tokenizer)
        self.texts = texts

    def iter_generate(
        self, prompts: Sequence, budget: Budget, sampling: SamplingConfig
    ) -> Iterator[SampleRecord]:
        order = [(p, s) for p in range(len(prompts)) for s in range(sampling.n)]
        for p, s in reversed(order):
            content = prompts[p][-1]["content"]
            text = self.texts[content][s]
            ids = self.tokenizer.encode(text, add_special_tokens=False) + list(self.tokens.eos)
            yield build_record(
                ids, Budget(10_000, 10_000), self.tokens, self.tokenizer, prompt_index=p, sample_index=s
            )


def test_known_responses_are_graded_and_aligned_with_rows(tiny_tokenizer, data_dir, tmp_path):
    fence = "Here it is:\n```python\n{}```"
    texts = {
        # toymath: prompt 0 right on sample 1 only; prompt 1 right twice; prompt 2 never boxed
        "What is 1 + 2? Let's think step by step and output the final answer within \\boxed{}.": [
            "2</think>\\boxed{4}",
            "1+2</think>The answer is \\boxed{3}.",
        ],
        "What is 3 + 4? Let's think step by step and output the final answer within \\boxed{}.": [
            "</think>\\boxed{7}",
            "</think>\\boxed{7.0}",
        ],
        "What is 5 + 6? Let's think step by step and output the final answer within \\boxed{}.": [
            "</think>11",
            "11",
        ],
        # code: the add program passes problem 0 and fails problem 1; sample 1 has no code
        "Read a and b, print a + b.": ["</think>" + fence.format(ADD_PROGRAM), "</think>no code here"],
        "Read a and b, print a * b.": [
            "</think>" + fence.format(ADD_PROGRAM),
            "</think>" + fence.format(MUL_PROGRAM),
        ],
    }
    datasets = [load_dataset("toymath", data_dir), load_dataset("test_toycode", data_dir)]
    config = EvalConfig(
        model="replay",
        model_identity="replay",
        backend="replay",
        output_dir=tmp_path,
        budgets=[Budget(10_000, 10_000)],
        sampling=SamplingConfig(n=2),
        score_workers=2,
        progress=False,
        plots=False,
    )
    result = Evaluation(config, ReplayGenerator(tiny_tokenizer, texts)).run(datasets)
    assert json.loads((tmp_path / "results_toymath.json").read_text()) == [[0, 1], [1, 1], [0, 0]]
    assert json.loads((tmp_path / "results_test_toycode.json").read_text()) == [[1, 0], [0, 1]]
    math_metrics, code_metrics = (e["metrics"] for e in result.entries)
    assert math_metrics["avg@n"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert math_metrics["pass@2"] == pytest.approx(2 / 3)
    assert math_metrics["reasons"] == {"correct": 3, "no_answer": 2, "wrong": 1}
    assert math_metrics["format_error_rate"] == pytest.approx(2 / 6)
    assert code_metrics["avg@n"] == pytest.approx(0.5)
    assert code_metrics["reasons"] == {"correct": 2, "no_code": 1, "wrong": 1}
    frame = pd.read_parquet(tmp_path / "toymath.parquet")  # one budget: the original's top-level file
    assert list(frame["responses"][0]) == texts[frame["prompt"][0][0]["content"]]
    assert list(frame["scores"][1]) == [1.0, 1.0]


def test_scoring_pool_grades_in_worker_threads():
    results = []
    with ScoringPool(2) as pool:
        pool.submit("aime", "</think>\\boxed{3}", "3", None, results.append)
        pool.submit("aime", "</think>\\boxed{4}", "3", None, results.append)
        pool.submit("aime", "</think>x", ["3"], None, results.append)
        pool.submit("aime", "</think>\\boxed{3}", {"not": "an answer"}, None, results.append)  # grader raises
        pool.wait()
    assert sorted(r["reason"] for r in results) == ["correct", "grader_error", "no_answer", "wrong"]
    error = next(r for r in results if r["reason"] == "grader_error")
    assert error["score"] == 0.0 and "ground_truth" in error["details"]["error"]


class Counting:
    """Wraps the real generator: counts the samples it yields; optionally stops like Ctrl-C."""

    def __init__(self, generator, interrupt_after: int | None = None):
        self.generator = generator
        self.interrupt_after = interrupt_after
        self.yielded = 0

    def iter_generate(self, prompts, budget, sampling):
        for record in self.generator.iter_generate(prompts, budget, sampling):
            if self.interrupt_after is not None and self.yielded == self.interrupt_after:
                raise KeyboardInterrupt
            self.yielded += 1
            yield record


def make_config(out: Path, temperature: float = 0.6) -> EvalConfig:
    return EvalConfig(
        model="tiny",
        model_identity="tiny",
        backend="hf",
        output_dir=out,
        budgets=[Budget(16, 8)],
        sampling=SamplingConfig(n=2, temperature=temperature, seed=0),
        score_workers=1,
        progress=False,
        plots=False,
    )


def test_resume_generates_only_missing_samples(hf_generator, data_dir, tmp_path):
    dataset = load_dataset("toymath", data_dir)
    first = Evaluation(make_config(tmp_path), hf_generator).run([dataset])
    store_file = tmp_path / first.entries[0]["records"]
    lines = store_file.read_text().splitlines()
    assert len(lines) == 6
    # keep 3 finished samples and a line cut short by a crash
    store_file.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])
    kept = {(json.loads(x)["prompt_index"], json.loads(x)["sample_index"]) for x in lines[:3]}

    counting = Counting(hf_generator)
    second = Evaluation(make_config(tmp_path), counting).run([dataset])
    assert counting.yielded == 3 and (second.generated, second.reused) == (3, 3)
    records = [json.loads(x) for x in store_file.read_text().splitlines()]
    assert len(records) == 6 and {(r["prompt_index"], r["sample_index"]) for r in records} == {
        (p, s) for p in range(3) for s in range(2)
    }
    old = {(json.loads(x)["prompt_index"], json.loads(x)["sample_index"]): json.loads(x) for x in lines[:3]}
    assert all(
        old[key] == next(r for r in records if (r["prompt_index"], r["sample_index"]) == key) for key in kept
    )
    frame = pd.read_parquet(tmp_path / "toymath.parquet")
    assert len(frame) == 3 and all(len(r) == 2 for r in frame["responses"])
    assert second.entries[0]["metrics"]["samples"] == first.entries[0]["metrics"]["samples"] == 6


def test_interrupt_keeps_graded_samples_and_resumes(hf_generator, data_dir, tmp_path):
    dataset = load_dataset("toymath", data_dir)
    interrupted = Counting(hf_generator, interrupt_after=4)
    with pytest.raises(KeyboardInterrupt):
        Evaluation(make_config(tmp_path), interrupted).run([dataset])
    (store_dir,) = (tmp_path / "records" / "toymath").iterdir()
    saved = len((store_dir / "samples.jsonl").read_text().splitlines())
    assert saved <= 4  # the interrupt lost at most the samples still being graded

    counting = Counting(hf_generator)
    result = Evaluation(make_config(tmp_path), counting).run([dataset])
    assert counting.yielded == 6 - saved and result.reused == saved
    assert result.entries[0]["metrics"]["samples"] == 6


def test_changed_settings_never_reuse_records(hf_generator, data_dir, tmp_path):
    dataset = load_dataset("toymath", data_dir, limit=2)
    Evaluation(make_config(tmp_path), hf_generator).run([dataset])
    counting = Counting(hf_generator)
    result = Evaluation(make_config(tmp_path, temperature=1.0), counting).run([dataset])
    assert counting.yielded == 4 and result.reused == 0
    assert len(list((tmp_path / "records" / "toymath").iterdir())) == 2
    assert layout.budget_key(Budget(16, 8)) == "16+8"


def test_ctrl_c_then_rerun_resumes(tiny_model_dir, data_dir, tmp_path):
    """A real SIGINT to the command mid-run: exit 130, graded samples kept, the re-run finishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    argv = [
        sys.executable, "-m", "rllm.eval", "--model", str(tiny_model_dir), "--data-dir", str(data_dir),
        "--datasets", "toymath", "--output-dir", str(out), "--backend", "hf", "--dtype", "float32",
        "--n", "4", "--budgets", "384+192", "--batch-size", "1", "--seed", "0", "--score-workers", "1",
        "--no-progress", "--no-plots",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    records = out / "records" / "toymath"
    while time.monotonic() < deadline and process.poll() is None:
        files = list(records.glob("*/samples.jsonl"))
        if files and files[0].read_text().count("\n") >= 1:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err[-2000:]
    assert f"saved under {out / 'records'}; re-run the same command to resume" in err
    (store,) = records.glob("*/samples.jsonl")
    saved = store.read_text().count("\n")
    assert 1 <= saved < 12

    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{12 - saved} samples generated, {saved} reused" in done.stdout
    frame = pd.read_parquet(out / "toymath.parquet")
    assert len(frame) == 3 and all(len(r) == 4 for r in frame["responses"])


@pytest.mark.vllm
@pytest.mark.slow
def test_eval_model_sh_with_vllm_backend(tiny_model_dir, data_dir, tmp_path):
    """scripts/eval/eval_model.sh --backend vllm, in its own process so the engine is torn down."""
    import os
    import subprocess
    import sys

    pytest.importorskip("vllm")
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "out"
    argv = [
        str(root / "scripts/eval/eval_model.sh"),
        "--model", str(tiny_model_dir), "--datasets", "toymath", "test_toycode", "--data-dir", str(data_dir),
        "--output-dir", str(out), "--backend", "vllm", "--n", "2", "--e1-mode", "True",
        "--e1-thinking-length", "16", "--e1-solution-length", "8", "--seed", "0", "--dtype", "float32",
        "--enforce-eager", "--max-model-len", "512", "--gpu-memory-utilization", "0.1",
        "--score-workers", "1", "--no-progress",
    ]  # fmt: skip
    env = {**os.environ, "PYTHON": sys.executable, "VLLM_CPU_KVCACHE_SPACE": "1"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "10 samples generated, 0 reused" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    for dataset, prompts in [("toymath", 3), ("test_toycode", 2)]:
        metrics = summary["datasets"][dataset]["16+8"]["metrics"]
        assert metrics["samples"] == 2 * prompts and metrics["mean_thinking_tokens"] <= 16
        frame = pd.read_parquet(out / f"{dataset}.parquet")
        assert len(frame) == prompts and all(len(r) == 2 for r in frame["responses"])
