"""Where datasets live, and how a dataset name resolves to its parquet file.

The data directory defaults to ``data/`` at the root of the source checkout this package was
imported from (it is git-ignored there). ``$E1_DATA_DIR`` overrides it, and every command-line
tool takes ``--data-dir``. When the package is installed outside a checkout, the default is
``./data`` in the current working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from rllm.data.errors import DataError

DATA_DIR_ENV = "E1_DATA_DIR"

# Sub-directories of the data directory holding converted parquet files, searched in this order
# after the data directory itself (a flat directory is what the original wrote).
MATH_SUBDIR = "deepscaler"
CODE_SUBDIR = "deepcoder"
RAW_SUBDIR = "raw"
_SEARCH_SUBDIRS = ("", MATH_SUBDIR, CODE_SUBDIR)

# Names users type (eval_model.sh --datasets) that differ from the file stem.
ALIASES = {
    "livecodebench": "test_livecodebench",
    "lcb": "test_livecodebench",
    "codeforces": "test_codeforces",
    "humanevalplus": "test_humanevalplus",
    "code_contests": "test_code_contests",
    "leetcode": "test_leetcode",
    "olympiadbench": "olympiad_bench",
}


def repo_root() -> Path | None:
    """The source checkout containing this package, or None when installed elsewhere."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "rllm").is_dir() else None


def default_data_dir() -> Path:
    """``$E1_DATA_DIR`` if set, else ``<checkout>/data``, else ``./data``."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    root = repo_root()
    return (root if root is not None else Path.cwd()) / "data"


def raw_dir(data_dir: Path) -> Path:
    """Where raw JSON downloads go inside ``data_dir``."""
    return Path(data_dir) / RAW_SUBDIR


def find_dataset(name: str, data_dir: Path | str | None = None) -> Path:
    """Resolve a dataset name (``aime``, ``livecodebench``, ``test_codeforces``, ...) to its parquet.

    ``name`` may also be a path to a ``.parquet`` file (anything containing a ``/``), returned as is
    if it exists. Names are
    case-insensitive and may carry the ``.parquet`` suffix; aliases in :data:`ALIASES` apply. The
    file is looked up as ``<data_dir>/<name>.parquet``, then in the ``deepscaler/`` and
    ``deepcoder/`` sub-directories.

    Raises:
        DataError: nothing matches (the message lists the datasets available), or a given path
            does not exist.
    """
    if "/" in name or os.sep in name:
        as_path = Path(name).expanduser()
        if not as_path.is_file():
            raise DataError(f"{name}: no such parquet file")
        return as_path
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    stem = name.lower().removesuffix(".parquet")
    stem = ALIASES.get(stem, stem)
    for sub in _SEARCH_SUBDIRS:
        candidate = base / sub / f"{stem}.parquet"
        if candidate.is_file():
            return candidate
    available = available_datasets(base)
    listing = ", ".join(available) if available else "none"
    raise DataError(
        f"dataset '{name}' not found in {base} (available: {listing}); "
        "build it with scripts/data/deepscaler_dataset.py or scripts/data/deepcoder_dataset.py, "
        "or pass --data-dir"
    )


def available_datasets(data_dir: Path | str) -> list[str]:
    """Names of the parquet datasets :func:`find_dataset` can resolve in ``data_dir``, sorted."""
    base = Path(data_dir)
    names = {p.stem for sub in _SEARCH_SUBDIRS for p in (base / sub).glob("*.parquet") if p.is_file()}
    return sorted(names)
