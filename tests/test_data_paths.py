"""Dataset name resolution and the default data directory."""

from pathlib import Path

import pytest

from rllm.data.errors import DataError
from rllm.data.paths import available_datasets, default_data_dir, find_dataset, repo_root


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


@pytest.fixture
def data_dir(tmp_path):
    for name in ("aime", "math", "deepscaler_train"):
        _touch(tmp_path / "deepscaler" / f"{name}.parquet")
    for name in ("test_livecodebench", "test_codeforces", "test_humanevalplus"):
        _touch(tmp_path / "deepcoder" / f"{name}.parquet")
    return tmp_path


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("aime", "deepscaler/aime.parquet"),
        ("AIME", "deepscaler/aime.parquet"),
        ("math.parquet", "deepscaler/math.parquet"),
        ("test_livecodebench", "deepcoder/test_livecodebench.parquet"),
        ("livecodebench", "deepcoder/test_livecodebench.parquet"),
        ("codeforces", "deepcoder/test_codeforces.parquet"),
        ("humanevalplus", "deepcoder/test_humanevalplus.parquet"),
    ],
)
def test_find_dataset_resolves_names_and_aliases(data_dir, name, expected):
    assert find_dataset(name, data_dir) == data_dir / expected


def test_flat_layout_of_the_original_wins(data_dir):
    flat = _touch(data_dir / "aime.parquet")
    assert find_dataset("aime", data_dir) == flat


def test_a_parquet_path_is_returned_as_is(data_dir):
    path = data_dir / "deepscaler" / "aime.parquet"
    assert find_dataset(str(path), "/nonexistent") == path
    with pytest.raises(DataError, match=r"^/nonexistent/aime.parquet: no such parquet file$"):
        find_dataset("/nonexistent/aime.parquet", data_dir)


def test_unknown_name_lists_what_is_available(data_dir):
    with pytest.raises(DataError) as err:
        find_dataset("gsm8k", data_dir)
    message = str(err.value)
    assert "'gsm8k' not found" in message
    assert "aime, deepscaler_train, math, test_codeforces, test_humanevalplus, test_livecodebench" in message
    assert "\n" not in message


def test_empty_data_dir_says_none_available(tmp_path):
    with pytest.raises(DataError, match=r"available: none"):
        find_dataset("aime", tmp_path)


def test_available_datasets(data_dir):
    assert available_datasets(data_dir) == [
        "aime",
        "deepscaler_train",
        "math",
        "test_codeforces",
        "test_humanevalplus",
        "test_livecodebench",
    ]


def test_default_data_dir_is_inside_the_checkout(monkeypatch):
    monkeypatch.delenv("E1_DATA_DIR", raising=False)
    root = repo_root()
    assert root is not None and (root / "rllm" / "data" / "paths.py").is_file()
    assert default_data_dir() == root / "data"


def test_default_data_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("E1_DATA_DIR", str(tmp_path))
    assert default_data_dir() == tmp_path
    _touch(tmp_path / "deepscaler" / "amc.parquet")
    assert find_dataset("amc") == tmp_path / "deepscaler" / "amc.parquet"
