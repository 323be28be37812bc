"""The quickstart's report: ``summary.json``, plots and ``report.md`` from the stages' own outputs.

Inputs are what the real tools wrote: the evaluation summaries (``OUT/eval/<model>/summary.json``
and their sample records) and the GRPO run's ``metrics.jsonl``. The findings compare measured
numbers against the paper's claims and say plainly when a claim did not hold at this scale; a
difference is called significant only when it exceeds twice its standard error.
"""

from __future__ import annotations

import json
import math
import os
import platform
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rllm.budget import Mode
from rllm.quickstart.pipeline import Layout, Settings, StageRecord

MODELS = {"sft": "after SFT (warm start)", "e1": "after E1 training"}
MODE_ORDER = (Mode.TRUNCATE, Mode.S1, Mode.E1)
SUMMARY = "summary.json"
REPORT = "report.md"
ACCURACY_PNG = "accuracy_vs_tokens.png"
TOKEN_SPLIT_PNG = "token_split.png"
TRAINING_PNG = "grpo_training.png"

Entries = dict[str, dict[str, Any]]  # budget key -> eval summary entry


def load_entries(layout: Layout) -> dict[str, Entries]:
    """Per model, the evaluation entries of its (single) dataset, keyed by budget key."""
    models: dict[str, Entries] = {}
    for model in MODELS:
        summary = json.loads((layout.eval_dir(model) / "summary.json").read_text())
        datasets = summary["datasets"]
        if len(datasets) != 1:
            raise ValueError(f"{layout.eval_dir(model)}: expected one dataset, found {sorted(datasets)}")
        models[model] = next(iter(datasets.values()))
    return models


def verbose_fraction(layout: Layout, entry: Mapping[str, Any]) -> float:
    """Fraction of samples whose thinking uses the verbose style (a ``;`` check on some line)."""
    path = layout.eval_dir(entry["model_name"]) / entry["records"]
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return sum(";" in r["thinking_text"] for r in records) / max(1, len(records))


def _acc(entry: Mapping[str, Any]) -> float:
    return 100.0 * entry["metrics"]["avg@n"]


def _se(entry: Mapping[str, Any]) -> float:
    """Standard error of the accuracy in points (binomial, over all samples)."""
    p, count = entry["metrics"]["avg@n"], max(1, entry["metrics"]["samples"])
    return 100.0 * math.sqrt(p * (1 - p) / count)


def _key(mode: Mode, thinking: int, solution: int) -> str:
    if mode is Mode.E1:
        return f"{thinking}+{solution}"
    if mode is Mode.S1:
        return f"s1-{thinking}+{solution}"
    return f"truncate-{thinking + solution}"


def budget_rows(settings: Settings, models: Mapping[str, Entries]) -> list[dict[str, Any]]:
    """One row per (model, thinking budget): accuracy and mean tokens of each mode at t+s."""
    rows = []
    for model, entries in models.items():
        for t in sorted(set(settings.thinking_budgets)):
            row: dict[str, Any] = {"model": model, "thinking": t, "solution": settings.solution_budget}
            for mode in MODE_ORDER:
                entry = entries[_key(mode, t, settings.solution_budget)]
                row[mode.value] = {"acc": _acc(entry), "tokens": entry["metrics"]["mean_total_tokens"],
                                   "se": _se(entry)}
            rows.append(row)
    return rows


def findings(settings: Settings, models: Mapping[str, Entries], none: Mapping[str, Mapping[str, Any]]) -> list[dict]:
    """The paper's four claims, each with the numbers that decide it here."""
    s = settings.solution_budget
    budgets = sorted(set(settings.thinking_budgets))
    sft, e1 = models["sft"], models["e1"]
    natural = none["sft"]["metrics"]["mean_thinking_tokens"]
    tight = [t for t in budgets if t < natural] or budgets[:1]
    truncate_curve = sorted((e["metrics"]["mean_total_tokens"], _acc(e)) for e in sft.values()
                            if e["mode"] == Mode.TRUNCATE.value)
    ordering = []
    for t in tight:
        accs = {mode.value: _acc(sft[_key(mode, t, s)]) for mode in MODE_ORDER}
        e1_tokens = sft[_key(Mode.E1, t, s)]["metrics"]["mean_total_tokens"]
        ordering.append({"budget": f"{t}+{s}", **accs,
                         "holds": accs["e1"] >= accs["s1"] >= accs["truncate"],
                         "e1_tokens": e1_tokens,
                         "truncate_at_e1_tokens": _interpolate(truncate_curve, e1_tokens)})
    result = [{
        "claim": "Figure 1 ordering at tight budgets (e1 >= s1 >= truncate), warm-started model",
        "tight_budgets": f"t below the unconstrained mean thinking length ({natural:.1f} tokens)",
        "per_budget": ordering,
        "holds_at": f"{sum(o['holds'] for o in ordering)} of {len(ordering)} tight budgets",
        "reproduced": all(o["holds"] for o in ordering),
    }]

    def change(t: int) -> dict[str, Any]:
        before, after = sft[_key(Mode.E1, t, s)], e1[_key(Mode.E1, t, s)]
        delta = _acc(after) - _acc(before)
        se = math.hypot(_se(before), _se(after))
        return {"budget": f"{t}+{s}", "before": _acc(before), "after": _acc(after), "delta": delta,
                "two_se": 2 * se, "significant": abs(delta) > 2 * se}

    trained = change(settings.train_thinking) if settings.train_thinking in budgets else None
    result.append({
        "claim": f"E1 training at {settings.train_budget.label} raises accuracy at that budget",
        "per_budget": [trained] if trained else [],
        "reproduced": bool(trained and trained["delta"] > 0 and trained["significant"]),
    })
    others = [change(t) for t in budgets if t != settings.train_thinking]
    risen = [o for o in others if o["delta"] > 0 and o["significant"]]
    result.append({
        "claim": "the gain generalises to thinking budgets not trained on",
        "per_budget": others,
        "reproduced": bool(others) and len(risen) * 2 > len(others),
        "risen_significantly": f"{len(risen)} of {len(others)}",
    })
    before, after = none["sft"], none["e1"]
    tokens_before, tokens_after = before["metrics"]["mean_total_tokens"], after["metrics"]["mean_total_tokens"]
    result.append({
        "claim": "unconstrained responses get shorter after E1 training",
        "mean_tokens_before": tokens_before,
        "mean_tokens_after": tokens_after,
        "change_pct": 100.0 * (tokens_after - tokens_before) / max(tokens_before, 1e-9),
        "acc_before": _acc(before),
        "acc_after": _acc(after),
        "verbose_traces_before_pct": 100.0 * before["verbose_fraction"],
        "verbose_traces_after_pct": 100.0 * after["verbose_fraction"],
        "reproduced": tokens_after < tokens_before,
    })
    return result


def _interpolate(curve: list[tuple[float, float]], x: float) -> float | None:
    """``y`` at ``x`` on the piecewise-linear ``curve`` (sorted by x); None outside its range."""
    for (x0, y0), (x1, y1) in zip(curve, curve[1:], strict=False):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return None


def write_report(settings: Settings, layout: Layout, records: Sequence[StageRecord]) -> Path:
    """Write ``OUT/report/{summary.json, report.md, *.png}``; returns the report directory."""
    out = layout.report
    out.mkdir(parents=True, exist_ok=True)
    models = load_entries(layout)
    none = {}
    for model, entries in models.items():
        entry = dict(entries[f"none-{settings.max_length}"], model_name=model)
        entry["verbose_fraction"] = verbose_fraction(layout, entry)
        none[model] = entry
    rows = budget_rows(settings, models)
    claims = findings(settings, models, none)
    training = _read_jsonl(layout.grpo_run / "metrics.jsonl")
    plots = _write_plots(out, settings, models, training)
    summary = {
        "settings": {**asdict(settings), "thinking_budgets": list(settings.thinking_budgets)},
        "machine": machine(),
        "stages": [asdict(r) for r in records],
        "wall_s": sum(r.wall_s for r in records),  # every stage, as timed when it ran
        "wall_s_this_invocation": sum(r.wall_s for r in records if not r.skipped),
        "budget_table": rows,
        "unconstrained": {m: _brief(e) | {"verbose_fraction": e["verbose_fraction"]} for m, e in none.items()},
        "results": {m: {k: _brief(e) for k, e in entries.items()} for m, entries in models.items()},
        "grpo": training,
        "findings": claims,
        "plots": [p.name for p in plots],
    }
    (out / SUMMARY).write_text(json.dumps(summary, indent=1) + "\n")
    (out / REPORT).write_text(render_markdown(settings, layout, records, rows, none, claims, plots))
    return out


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "load_average": list(os.getloadavg())}


def _brief(entry: Mapping[str, Any]) -> dict[str, Any]:
    m = entry["metrics"]
    return {"mode": entry["mode"], "thinking": entry["thinking"], "solution": entry["solution"],
            "total": entry["total"], "acc": m["avg@n"], "samples": m["samples"],
            "mean_total_tokens": m["mean_total_tokens"], "mean_thinking_tokens": m["mean_thinking_tokens"],
            "mean_solution_tokens": m["mean_solution_tokens"], "forced_close_rate": m["forced_close_rate"],
            "solution_truncated_rate": m["solution_truncated_rate"], "format_error_rate": m["format_error_rate"]}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- plots


def _write_plots(out: Path, settings: Settings, models: Mapping[str, Entries],
                 training: list[dict[str, Any]]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rllm.eval.plots import plot_token_split

    written = []
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4.2), sharey=True, squeeze=False)
    for ax, (model, entries) in zip(axes[0], models.items(), strict=True):
        for mode in MODE_ORDER:
            # joined in budget order, as a sweep (tokens used need not grow with the budget)
            points = sorted((e["thinking"] or e["total"], e["metrics"]["mean_total_tokens"], _acc(e))
                            for e in entries.values() if e["mode"] == mode.value)
            ax.plot([p[1] for p in points], [p[2] for p in points], marker="o", label=mode.value)
        unconstrained = entries[f"none-{settings.max_length}"]
        ax.scatter([unconstrained["metrics"]["mean_total_tokens"]], [_acc(unconstrained)], marker="*", s=150,
                   color="black", label="none (unconstrained)", zorder=3)
        ax.set_title(MODELS[model])
        ax.set_xlabel("mean response tokens")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    axes[0][0].set_ylabel("accuracy (%)")
    fig.tight_layout()
    written.append(out / ACCURACY_PNG)
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    split = {MODELS[m]: {"datasets": {"digit chain": {k: e for k, e in entries.items()
                                                      if e["mode"] in (Mode.E1.value, Mode.NONE.value)}}}
             for m, entries in models.items()}
    written.append(plot_token_split(split, out / TOKEN_SPLIT_PNG))

    steps = [r for r in training if "rollout/reward" in r]
    if steps:
        fig, ax = plt.subplots(figsize=(6, 4))
        xs = [r["step"] for r in steps]
        ax.plot(xs, [100 * r["rollout/reward"] for r in steps], color="C0", label="rollout reward (%)")
        ax.set_xlabel("GRPO step")
        ax.set_ylabel("rollout reward (%)")
        twin = ax.twinx()
        twin.plot(xs, [r["rollout/thinking_tokens"] for r in steps], color="C1", label="thinking tokens")
        twin.plot(xs, [100 * r["rollout/forced_close_frac"] for r in steps], color="C2", linestyle="--",
                  label="forced </think> (%)")
        twin.set_ylabel("tokens / %")
        lines = ax.get_lines() + twin.get_lines()
        ax.legend(lines, [line.get_label() for line in lines], fontsize=8, loc="lower left")
        ax.set_title(f"E1 rollout at {settings.train_budget.label}")
        fig.tight_layout()
        written.append(out / TRAINING_PNG)
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)
    return written


# --------------------------------------------------------------------------- markdown


def render_markdown(settings: Settings, layout: Layout, records: Sequence[StageRecord],
                    rows: list[dict[str, Any]], none: Mapping[str, Mapping[str, Any]],
                    claims: list[dict], plots: list[Path]) -> str:
    s = settings
    n_samples = s.test_size * s.eval_n
    lines = [
        "# Elastic Reasoning quickstart",
        "",
        f"Digit-chain task ({s.min_steps}-{s.max_steps} operations, {s.train_size} training / {s.test_size} "
        f"test problems, {100 * s.verbose_fraction:.0f}% verbose SFT traces), `{s.model_size}` Qwen2 model, "
        f"{s.sft_steps} SFT steps, {s.grpo_steps} GRPO steps at t*+s* = {s.train_budget.label}. "
        f"Accuracy is avg@{s.eval_n} over {s.test_size} test problems ({n_samples} samples per cell, "
        f"temperature {s.temperature}); with that many samples one standard error is up to "
        f"{50 / math.sqrt(n_samples):.1f} points.",
        "",
        "## Budgeted accuracy (%, mean response tokens in brackets)",
        "",
        "truncate cuts the whole response at t+s; s1 forces `</think>` and an answer cue at t; e1 forces "
        "`</think>` at t and gives the solution its own s tokens.",
        "",
        "| model | t+s | truncate | s1 | e1 |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        cells = [f"{row[m.value]['acc']:.1f} ({row[m.value]['tokens']:.0f})" for m in MODE_ORDER]
        lines.append(f"| {row['model']} | {row['thinking']}+{row['solution']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Unconstrained (`--mode none`)",
        "",
        "| model | accuracy % | mean tokens | thinking | solution | verbose traces % |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for model, entry in none.items():
        m = entry["metrics"]
        lines.append(f"| {model} | {_acc(entry):.1f} | {m['mean_total_tokens']:.1f} | "
                     f"{m['mean_thinking_tokens']:.1f} | {m['mean_solution_tokens']:.1f} | "
                     f"{100 * entry['verbose_fraction']:.0f} |")
    lines += ["", "## Findings", ""]
    for claim in claims:
        verdict = "reproduced" if claim["reproduced"] else "**not reproduced**"
        lines.append(f"- {claim['claim']}: {verdict}. {_claim_numbers(claim)}")
    lines += ["", "## Plots", ""]
    lines += [f"- `{p.name}`: {_PLOT_TEXT[p.name]}" for p in plots]
    lines += ["", "## Stages", "",
              f"Machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} when the report was "
              "written (other work on the machine slows every stage).", "",
              f"Total: {sum(r.wall_s for r in records):.0f} s wall, {sum(r.cpu_s for r in records):.0f} s CPU. "
              f"Every stage ran in one process with {settings.threads} torch thread(s); to rerun one alone "
              f"as fast, prefix its command with `OMP_NUM_THREADS={settings.threads}`.", "",
              "| stage | wall s | CPU s | load (1 min) | command |", "| --- | --- | --- | --- | --- |"]
    for r in records:
        wall = f"{r.wall_s:.1f}" + (" (earlier run)" if r.skipped else "")
        lines.append(f"| {r.name} | {wall} | {r.cpu_s:.1f} | {r.load_after[0]:.1f} | `{r.command}` |")
    lines += ["", "## The same stages on real models", "", "```bash", *_real_commands(settings), "```", ""]
    return "\n".join(lines)


def _claim_numbers(claim: Mapping[str, Any]) -> str:
    if "mean_tokens_before" in claim:
        return (f"Mean response tokens {claim['mean_tokens_before']:.1f} -> {claim['mean_tokens_after']:.1f} "
                f"({claim['change_pct']:+.0f}%), accuracy {claim['acc_before']:.1f}% -> {claim['acc_after']:.1f}%, "
                f"verbose traces {claim['verbose_traces_before_pct']:.0f}% -> {claim['verbose_traces_after_pct']:.0f}%.")
    parts = []
    for b in claim["per_budget"]:
        if "delta" in b:
            mark = "" if b["significant"] else ", within noise"
            parts.append(f"{b['budget']}: {b['before']:.1f} -> {b['after']:.1f} "
                         f"({b['delta']:+.1f} ± {b['two_se']:.1f}{mark})")
        else:
            same = b["truncate_at_e1_tokens"]
            tokens = "" if same is None else f"; truncate at e1's {b['e1_tokens']:.0f} tokens {same:.1f}"
            parts.append(f"{b['budget']}: e1 {b['e1']:.1f}, s1 {b['s1']:.1f}, truncate {b['truncate']:.1f}"
                         f"{'' if b['holds'] else ' (order broken)'}{tokens}")
    summary = f" Holds at {claim['holds_at']}." if "holds_at" in claim else ""
    risen = f" Significant rise at {claim['risen_significantly']}." if "risen_significantly" in claim else ""
    return "; ".join(parts) + "." + summary + risen


_PLOT_TEXT = {
    ACCURACY_PNG: "accuracy against mean response tokens, one panel per model, one line per mode "
                  "(truncate, s1, e1) joining the budget sweep in budget order; the star is the "
                  "unconstrained run.",
    TOKEN_SPLIT_PNG: "mean thinking and solution tokens (stacked) at each e1 budget and unconstrained, "
                     "both models side by side.",
    TRAINING_PNG: "GRPO with E1 rollout: rollout reward, mean thinking tokens and forced-`</think>` rate "
                  "per step.",
}


def _real_commands(settings: Settings) -> list[str]:
    """The stages' counterparts at paper scale (GPU machines, downloaded data and models)."""
    return [
        "# data: python scripts/data/download_datasets.py && python scripts/data/deepscaler_dataset.py",
        "# budgeted evaluation (stage 3), one sweep per mode:",
        "for mode in truncate s1 e1; do",
        "  bash scripts/eval/eval_model.sh --model agentica-org/DeepScaleR-1.5B-Preview \\",
        "    --datasets aime amc math minerva olympiad_bench --n 16 --mode $mode \\",
        "    --budgets 0.5k+1k,1k+1k,2k+1k,3k+1k --output-dir ~/e1_eval/DeepScaleR-1.5B",
        "done",
        "bash scripts/eval/eval_model.sh --model agentica-org/DeepScaleR-1.5B-Preview --e1-mode False \\",
        "  --max-length 32768 --datasets aime --output-dir ~/e1_eval/DeepScaleR-1.5B",
        "# E1 training (stage 4) on one device:",
        "python -m rllm.trainer.local --model agentica-org/DeepScaleR-1.5B-Preview \\",
        "  --train-data data/deepscaler/deepscaler_train.parquet --val-data data/deepscaler/aime.parquet \\",
        "  --output-dir runs/e1-math-1k-1k --mode e1 --budget 1k+1k --steps 200 --batch-size 8 --n 8 \\",
        "  --lr 1e-6 --kl-coef 0.001 --device cuda --dtype bfloat16",
        "# ... or on a GPU node with verl (the paper's setting):",
        "bash scripts/e1-math/e1_math_1.5b_1k_1k.sh --model agentica-org/DeepScaleR-1.5B-Preview",
        "# then evaluate the trained model with the loop above: --model runs/e1-math-1k-1k/checkpoints/step_000200",
    ]
