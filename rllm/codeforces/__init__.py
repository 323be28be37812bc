"""Codeforces rating estimation for code models.

Given per-problem attempt results on Codeforces problems, :mod:`rllm.codeforces` places the model
in each problem's contest (official standings and rating changes from the Codeforces API, cached
on disk), solves for the rating whose expected seed matches that place, and averages over
contests. Modules:

- :mod:`~rllm.codeforces.inputs`: loading and validating results, problem ids and ratings files;
- :mod:`~rllm.codeforces.elo`: the pure algorithm (score, rank, rating search, percentile);
- :mod:`~rllm.codeforces.contest`: turning API responses into the algorithm's inputs;
- :mod:`~rllm.codeforces.cache` and :mod:`~rllm.codeforces.api`: the on-disk cache and the client;
- :mod:`~rllm.codeforces.estimate`: the per-contest loop and the report;
- :mod:`~rllm.codeforces.cli`: the ``rate`` and ``prefetch`` commands.
"""
