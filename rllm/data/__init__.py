"""Datasets for E1: download of the raw JSON, validation, and conversion to verl's RL parquet.

Layout of a data directory (default: ``data/`` in the repository, see :mod:`rllm.data.paths`)::

    raw/train/{math,code}/<name>.json    raw records as downloaded (the original's rllm/data tree)
    raw/test/{math,code}/<name>.json
    deepscaler/{aime,amc,math,minerva,olympiad_bench,deepscaler_train}.parquet
    deepcoder/{test_livecodebench,test_codeforces,test_humanevalplus,deepcoder_train,...}.parquet

:func:`rllm.data.paths.find_dataset` resolves a dataset name to its parquet file.
"""
