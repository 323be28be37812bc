#!/usr/bin/env bash
# Evaluate a model under E1 budgets: a thin wrapper over `python -m rllm.eval` (same options).
#
# The original's flags and defaults:
#   --model PATH (~/DeepScaleR-1.5B-Preview)  --datasets NAME... (aime)  --output-dir DIR
#   --n N (1)  --max-length L (32768)  --tp TP (1)
#   --e1-mode True|False (True)  --e1-thinking-length T  --e1-solution-length S (1024 / 1024)
# Added: --backend vllm|hf  --data-dir DIR  --mode e1|none|truncate|s1  --budgets 0.5k+1k,1k+1k,...
#   --temperature 0.6  --top-p 0.95  --top-k -1  --seed N  --limit N  --batch-size N  --dtype D
#   --score-workers N  --no-progress  --no-plots
# Example:
#   scripts/eval/eval_model.sh --model Salesforce/E1-Math-1.5B --datasets aime math amc \
#       --output-dir ~/E1-Math-1.5B --tp 1 --n 16 --e1-mode True --e1-thinking-length 1024 --e1-solution-length 1024
# Run `scripts/eval/eval_model.sh --help` for every option; the output layout is in rllm/eval/layout.py.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# $PYTHON if set, else the checkout's .venv (scripts/setup_env.sh), else python3 on PATH.
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "${ROOT}/.venv/bin/python" ]]; then PYTHON="${ROOT}/.venv/bin/python"; else PYTHON=python3; fi
fi
# Run from the checkout without requiring `pip install -e .` (an installed rllm also works).
export PYTHONPATH="${ROOT}${PYTHONPATH:+:${PYTHONPATH}}"
exec "${PYTHON}" -m rllm.eval "$@"
