#!/usr/bin/env bash
# Elastic Reasoning in miniature on a CPU, end to end: synthetic task, warm start, budgeted
# evaluation (truncate / s1 / e1), E1 GRPO, the same evaluation again, and a report.
#
# Usage: bash scripts/quickstart.sh [--out DIR] [--preset default|ci] [overrides...]
#   Defaults: --out outputs/quickstart, about 5 minutes on 2 cores (the target is 15). Every flag:
#   .venv/bin/python -m rllm.quickstart --help. The report is DIR/report/report.md.
# Sets up .venv with scripts/setup_env.sh first if it is missing. Re-running skips finished stages.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [[ ! -x .venv/bin/python ]]; then
    echo "quickstart: no .venv yet, setting it up (scripts/setup_env.sh)" >&2
    bash scripts/setup_env.sh
fi
export PYTHONPATH="${ROOT}${PYTHONPATH:+:${PYTHONPATH}}"
# A later --out in "$@" wins (argparse keeps the last one).
exec .venv/bin/python -m rllm.quickstart --out outputs/quickstart "$@"
