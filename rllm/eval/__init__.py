"""Evaluation of reasoning models under E1 budgets: generate -> grade -> metrics -> reports/plots.

Modules: :mod:`~rllm.eval.cli` (``python -m rllm.eval``), :mod:`~rllm.eval.runner` (the
pipeline), :mod:`~rllm.eval.dataset` (parquet in), :mod:`~rllm.eval.engines` (backend choice),
:mod:`~rllm.eval.scoring` (graders in worker processes), :mod:`~rllm.eval.store` (resumable
per-sample records), :mod:`~rllm.eval.metrics` (avg@n, pass@k, token statistics),
:mod:`~rllm.eval.report` and :mod:`~rllm.eval.layout` (output files), :mod:`~rllm.eval.plots` and
:mod:`~rllm.eval.plot` (PNG plots, ``python -m rllm.eval.plot``).
"""
