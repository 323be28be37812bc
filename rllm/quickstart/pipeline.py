"""The quickstart's stages, each one real command of the project, run in order and timed.

Stages (``OUT`` is ``--out``):

1. ``task``       ``python -m rllm.quickstart.task``   -> ``OUT/task/{sft,train,test}.parquet``
2. ``init``       ``python -m rllm.testing.tiny_model`` -> ``OUT/models/init`` (random Qwen2)
   ``sft``        ``python -m rllm.trainer.sft``        -> ``OUT/models/sft`` (warm start)
3. ``eval-sft-*`` ``python -m rllm.eval`` per mode (none, truncate, s1, e1) -> ``OUT/eval/sft``
4. ``grpo``       ``python -m rllm.trainer.local``      -> ``OUT/runs/e1`` (E1 rollout at t*+s*)
   ``eval-e1-*``  the same sweep on the trained model   -> ``OUT/eval/e1``

Each stage calls the tool's ``main(argv)`` in this process: the same code path as its command
line, without paying for interpreter start-up and imports once per stage. A stage that finished
with the same command is skipped on a re-run (its record is in ``OUT/stages/``); a stage whose
command changed runs again from a clean output directory, and so does every stage after it.
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rllm.budget import Budget, BudgetError, Mode


class QuickstartError(Exception):
    """A bad setting or a failed stage; the command line prints it as one line."""


@dataclass(frozen=True)
class Settings:
    """Everything a quickstart run depends on. Defaults fit 15 minutes on 2 busy cores (measured:
    about 3 minutes at load 2, most of it SFT).

    The E1 training budget t* = 32 lets every concise trace finish (5 steps = 30 tokens) but only
    the shortest verbose ones; a t* that cuts concise traces too (e.g. 20) also shortens responses,
    but costs accuracy on the longest problems even when thinking is unconstrained.
    """

    seed: int = 0
    # the task
    train_size: int = 2000
    test_size: int = 200
    min_steps: int = 2
    max_steps: int = 5
    verbose_fraction: float = 0.5
    max_operand: int = 3
    # the warm start
    model_size: str = "tiny"
    sft_steps: int = 1200
    sft_batch_size: int = 32
    sft_lr: float = 3e-3
    # budgeted evaluation: e1/s1 at t+s for each t, truncate at the same totals t+s
    thinking_budgets: tuple[int, ...] = (8, 12, 16, 20, 24, 32, 48)
    solution_budget: int = 16
    max_length: int = 128
    eval_n: int = 2
    temperature: float = 0.6
    # E1 training
    train_thinking: int = 32
    train_solution: int = 16
    grpo_steps: int = 40
    grpo_batch_size: int = 16
    grpo_n: int = 8
    grpo_lr: float = 2e-4
    kl_coef: float = 0.001
    # torch threads: these models are so small that extra threads mostly wait on each other
    threads: int = 1

    def check(self) -> None:
        """Raise QuickstartError naming the first unusable setting."""
        positive = ("train_size", "test_size", "sft_steps", "sft_batch_size", "solution_budget",
                    "max_length", "eval_n", "train_solution", "grpo_steps", "grpo_batch_size", "grpo_n",
                    "threads")
        for name in positive:
            if getattr(self, name) < 1:
                raise QuickstartError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if not self.thinking_budgets or min(self.thinking_budgets) < 0:
            raise QuickstartError(f"--thinking-budgets must list token counts >= 0, got {self.thinking_budgets}")
        from rllm.testing.tiny_model import SIZES

        if self.model_size not in SIZES:
            raise QuickstartError(f"--model-size {self.model_size!r}: choose one of {', '.join(sorted(SIZES))}")
        if self.grpo_n < 2:
            raise QuickstartError(f"--grpo-n must be >= 2 (GRPO compares samples of a prompt), got {self.grpo_n}")
        if self.temperature <= 0:
            raise QuickstartError(f"--temperature must be > 0 (GRPO samples), got {self.temperature}")

    @property
    def train_budget(self) -> Budget:
        return Budget(self.train_thinking, self.train_solution, Mode.E1)

    def budgets(self, mode: Mode) -> list[Budget]:
        """The sweep of ``mode``: e1/s1 at ``t+s``, truncate at total ``t+s``, none at ``max_length``."""
        if mode is Mode.NONE:
            return [Budget(mode=mode, total=self.max_length)]
        totals = sorted(set(self.thinking_budgets))
        if mode is Mode.TRUNCATE:
            return [Budget(mode=mode, total=t + self.solution_budget) for t in totals]
        return [Budget(t, self.solution_budget, mode) for t in totals]


PRESETS: dict[str, Settings] = {
    "default": Settings(),
    # .ci/run: the whole pipeline on a small task with a smaller model, in a few minutes
    "ci": Settings(
        train_size=300,
        test_size=48,
        model_size="tiny",
        sft_steps=150,
        sft_batch_size=16,
        sft_lr=3e-3,
        thinking_budgets=(8, 20),
        train_thinking=20,
        max_length=96,
        eval_n=1,
        grpo_steps=3,
        grpo_batch_size=4,
        grpo_n=4,
    ),
}

EVAL_MODES = (Mode.NONE, Mode.TRUNCATE, Mode.S1, Mode.E1)
ENTRY_POINTS = {"rllm.eval": "rllm.eval.cli"}


@dataclass
class Stage:
    """One command: ``python -m <module> <argv>``; ``output`` is the directory it owns."""

    name: str
    module: str
    argv: list[str]
    output: Path

    @property
    def entry(self) -> str:
        """The module whose ``main(argv)`` the command runs (a package's ``__main__`` delegates)."""
        return ENTRY_POINTS.get(self.module, self.module)

    @property
    def command(self) -> str:
        return shlex.join(["python", "-m", self.module, *self.argv])


@dataclass
class StageRecord:
    name: str
    command: str
    wall_s: float
    cpu_s: float
    load_before: list[float]
    load_after: list[float]
    skipped: bool = False


@dataclass
class Layout:
    """Where each stage writes inside ``--out``."""

    root: Path

    task: Path = field(init=False)
    init_model: Path = field(init=False)
    sft_model: Path = field(init=False)
    grpo_run: Path = field(init=False)
    stages: Path = field(init=False)
    report: Path = field(init=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.task = self.root / "task"
        self.init_model = self.root / "models" / "init"
        self.sft_model = self.root / "models" / "sft"
        self.grpo_run = self.root / "runs" / "e1"
        self.stages = self.root / "stages"
        self.report = self.root / "report"

    def eval_dir(self, model: str) -> Path:
        return self.root / "eval" / model

    @property
    def trained_model(self) -> Path:
        """The final GRPO checkpoint (a normal Hugging Face model directory)."""
        return self.grpo_run / "checkpoints" / "final"


def build_stages(settings: Settings, layout: Layout) -> list[Stage]:
    """The whole pipeline as commands, in order. The GRPO model is evaluated from its final
    checkpoint, which :func:`run` links to ``runs/e1/checkpoints/final`` after training."""
    s = settings
    stages = [
        Stage("task", "rllm.quickstart.task", [
            "--out", str(layout.task), "--train-size", str(s.train_size), "--test-size", str(s.test_size),
            "--min-steps", str(s.min_steps), "--max-steps", str(s.max_steps),
            "--verbose-fraction", str(s.verbose_fraction), "--max-operand", str(s.max_operand),
            "--seed", str(s.seed),
        ], layout.task),
        Stage("init", "rllm.testing.tiny_model", [
            "--out", str(layout.init_model), "--size", s.model_size, "--init", "standard", "--seed", str(s.seed),
        ], layout.init_model),
        Stage("sft", "rllm.trainer.sft", [
            "--model", str(layout.init_model), "--data", str(layout.task / "sft.parquet"),
            "--output-dir", str(layout.sft_model), "--steps", str(s.sft_steps),
            "--batch-size", str(s.sft_batch_size), "--lr", str(s.sft_lr), "--seed", str(s.seed),
        ], layout.sft_model),
    ]
    stages += eval_stages("sft", layout.sft_model, settings, layout)
    stages.append(Stage("grpo", "rllm.trainer.local", [
        "--model", str(layout.sft_model), "--train-data", str(layout.task / "train.parquet"),
        "--output-dir", str(layout.grpo_run), "--mode", "e1", "--budget", s.train_budget.label,
        "--steps", str(s.grpo_steps), "--batch-size", str(s.grpo_batch_size), "--n", str(s.grpo_n),
        "--micro-batch-size", str(s.grpo_batch_size * s.grpo_n // 2), "--lr", str(s.grpo_lr),
        "--kl-coef", str(s.kl_coef), "--temperature", str(s.temperature), "--seed", str(s.seed),
        "--save-every", str(s.grpo_steps), "--rollout-batch-size", str(s.grpo_batch_size),
    ], layout.grpo_run))
    stages += eval_stages("e1", layout.trained_model, settings, layout)
    return stages


def eval_stages(model_name: str, model: Path, settings: Settings, layout: Layout) -> list[Stage]:
    """One ``python -m rllm.eval`` per mode, all into ``OUT/eval/<model_name>`` (the summaries merge)."""
    stages = []
    for mode in EVAL_MODES:
        budgets = ",".join(b.label if b.budgeted else str(b.total) for b in settings.budgets(mode))
        stages.append(Stage(f"eval-{model_name}-{mode.value}", "rllm.eval", [
            "--backend", "hf", "--model", str(model), "--datasets", str(layout.task / "test.parquet"),
            "--mode", mode.value, "--budgets", budgets, "--n", str(settings.eval_n),
            "--temperature", str(settings.temperature), "--seed", str(settings.seed),
            "--batch-size", str(settings.test_size), "--score-workers", "0", "--no-plots",
            "--output-dir", str(layout.eval_dir(model_name)),
        ], layout.eval_dir(model_name)))
    return stages


def run(settings: Settings, out: Path, log: Callable[[str], None] = print) -> list[StageRecord]:
    """Run (or skip, when already done with the same command) every stage; return their records."""
    settings.check()
    _set_threads(settings.threads)
    layout = Layout(Path(out))
    layout.stages.mkdir(parents=True, exist_ok=True)
    records: list[StageRecord] = []
    rerun_rest = False
    cleared: set[Path] = set()
    for stage in build_stages(settings, layout):
        marker = layout.stages / f"{stage.name}.json"
        done = _read_json(marker)
        if not rerun_rest and done is not None and done.get("command") == stage.command:
            log(f"[quickstart] {stage.name}: done earlier, skipped ({stage.command})")
            records.append(StageRecord(**{**done, "skipped": True}))
            continue
        rerun_rest = True
        if stage.output not in cleared:  # eval stages of one model share a directory
            shutil.rmtree(stage.output, ignore_errors=True)
            cleared.add(stage.output)
        log(f"[quickstart] {stage.name}: {stage.command}")
        record = _run_stage(stage)
        if stage.name == "grpo":
            _link_final_checkpoint(layout)
        marker.write_text(json.dumps(asdict(record), indent=1) + "\n")
        log(f"[quickstart] {stage.name}: {record.wall_s:.1f} s wall, {record.cpu_s:.1f} s CPU, "
            f"load {record.load_after[0]:.1f}")
        records.append(record)
    return records


def _run_stage(stage: Stage) -> StageRecord:
    main = importlib.import_module(stage.entry).main
    load_before = list(os.getloadavg())
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        code = main(stage.argv)
    except SystemExit as exit_:  # argparse errors and sys.exit("message") in the tools
        code = exit_.code
    if code not in (None, 0):
        detail = f": {code}" if isinstance(code, str) else f" (exit status {code})"
        raise QuickstartError(f"stage {stage.name} failed{detail}; rerun it alone with: {stage.command}")
    return StageRecord(stage.name, stage.command, time.perf_counter() - wall, time.process_time() - cpu,
                       load_before, list(os.getloadavg()))


def _link_final_checkpoint(layout: Layout) -> None:
    """Point ``checkpoints/final`` at the run's newest checkpoint (a relative symlink)."""
    from rllm.trainer.checkpoint import latest_checkpoint

    latest = latest_checkpoint(layout.grpo_run)
    if latest is None:
        raise QuickstartError(f"stage grpo wrote no checkpoint under {layout.grpo_run}")
    final = layout.trained_model
    final.unlink(missing_ok=True)
    final.symlink_to(latest.name, target_is_directory=True)


def _set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    os.environ["OMP_NUM_THREADS"] = str(threads)  # for any worker process a tool starts


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def parse_budget(text: str, flag: str) -> tuple[int, int]:
    """``T+S`` as two token counts; QuickstartError naming ``flag`` otherwise."""
    try:
        budget = Budget.parse(text, Mode.E1)
    except BudgetError as error:
        raise QuickstartError(f"{flag}: {error}") from None
    return budget.thinking or 0, budget.solution or 0
