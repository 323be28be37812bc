"""download_datasets against a real HTTP server on 127.0.0.1 and a local mirror directory.

The Google Drive path (gdown) needs the internet and is not exercised here.
"""

import functools
import json
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rllm.data.cli import download_main, run
from rllm.data.download import RAW_FILES, download_all, select_files

FIXTURES = Path(__file__).parent / "fixtures" / "data"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@pytest.fixture
def mirror(tmp_path) -> Path:
    """A directory holding every file under its Drive name, taken from the raw fixtures."""
    root = tmp_path / "mirror"
    root.mkdir()
    for file in RAW_FILES:
        shutil.copyfile(FIXTURES / "raw" / file.dest, root / file.name)
    return root


def _serve(directory: Path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def http_mirror(mirror):
    server, thread = _serve(mirror)
    yield f"http://127.0.0.1:{server.server_address[1]}/", mirror
    server.shutdown()
    server.server_close()
    thread.join()


def _leftovers(data_dir: Path) -> list[str]:
    """Anything in the raw tree that is not a final JSON file (staging dirs, partial files)."""
    return sorted(
        str(p.relative_to(data_dir)) for p in (data_dir / "raw").rglob("*") if p.name.startswith(".")
    )


def test_downloads_every_file_over_http_into_the_raw_tree(tmp_path, http_mirror, capsys):
    url, mirror = http_mirror
    data_dir = tmp_path / "data"
    assert run(download_main, ["--data-dir", str(data_dir), "--source", url]) == 0
    for file in RAW_FILES:
        dest = data_dir / "raw" / file.dest
        assert dest.read_bytes() == (mirror / file.name).read_bytes()
    assert (data_dir / "raw" / "train" / "code" / "taco.json").is_file()
    assert (data_dir / "raw" / "test" / "code" / "livecodebench.json").is_file()
    assert _leftovers(data_dir) == []
    out = capsys.readouterr().out
    assert "train_taco.json: downloaded to" in out and "(2 records)" in out


def test_present_valid_files_are_skipped(tmp_path, http_mirror, capsys):
    url, mirror = http_mirror
    data_dir = tmp_path / "data"
    assert run(download_main, ["--data-dir", str(data_dir), "--source", url]) == 0
    capsys.readouterr()
    # Remove the server's copies: a second run must not need them.
    for file in RAW_FILES:
        (mirror / file.name).unlink()
    assert run(download_main, ["--data-dir", str(data_dir), "--source", url]) == 0
    out = capsys.readouterr().out
    assert out.count("skipped") == len(RAW_FILES)
    assert "kodcode.json: present at" in out


def test_corrupt_downloads_fail_and_leave_nothing_behind(tmp_path, http_mirror, capsys):
    url, mirror = http_mirror
    for name in ("kodcode.json", "primeintellect.json", "olympiad.json"):
        shutil.copyfile(FIXTURES / "corrupt" / name, mirror / name)
    data_dir = tmp_path / "data"
    assert run(download_main, ["--data-dir", str(data_dir), "--source", url]) == 1
    raw = data_dir / "raw"
    assert not (raw / "train" / "code" / "kodcode.json").exists()
    assert not (raw / "train" / "code" / "primeintellect.json").exists()
    assert not (raw / "train" / "math" / "olympiad.json").exists()
    assert (raw / "train" / "code" / "taco.json").is_file()
    assert _leftovers(data_dir) == []
    captured = capsys.readouterr()
    assert "kodcode.json: failed: downloaded kodcode.json: not valid JSON" in captured.out
    assert "primeintellect.json: failed: downloaded primeintellect.json: contains no records" in captured.out
    assert "olympiad.json: failed: downloaded olympiad.json: expected a JSON list of records" in captured.out
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: 3 of 6 files failed: ")


def test_missing_on_server_is_an_http_error(tmp_path, http_mirror):
    url, mirror = http_mirror
    (mirror / "kodcode.json").unlink()
    outcomes = download_all(tmp_path, select_files(["kodcode"]), source=url, echo=lambda _: None)
    assert outcomes[0].status == "failed"
    assert outcomes[0].error.endswith("kodcode.json: HTTP 404")
    assert _leftovers(tmp_path) == []


def test_invalid_existing_file_is_fetched_again(tmp_path, http_mirror):
    url, mirror = http_mirror
    dest = tmp_path / "raw" / "train" / "code" / "taco.json"
    dest.parent.mkdir(parents=True)
    dest.write_text("[")
    outcomes = download_all(tmp_path, select_files(["train_taco.json"]), source=url, echo=lambda _: None)
    assert [o.status for o in outcomes] == ["downloaded"]
    assert json.loads(dest.read_text()) == json.loads((mirror / "train_taco.json").read_text())


def test_local_mirror_directory_and_only(tmp_path, mirror):
    data_dir = tmp_path / "data"
    status = run(
        download_main,
        ["--data-dir", str(data_dir), "--source", str(mirror), "--only", "kodcode", "olympiad.json"],
    )
    assert status == 0
    assert sorted(str(p.relative_to(data_dir)) for p in data_dir.rglob("*.json")) == [
        "raw/train/code/kodcode.json",
        "raw/train/math/olympiad.json",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "gsm8k"], "error: unknown file(s) gsm8k; choose from train_taco, olympiad"),
        (["--source", "/nonexistent/mirror"], "error: --source /nonexistent/mirror: not an http(s):// URL"),
    ],
)
def test_user_errors_are_one_line(tmp_path, capsys, args, message):
    assert run(download_main, ["--data-dir", str(tmp_path), *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_drive_ids_are_the_originals():
    assert {f.name: f.drive_id for f in RAW_FILES} == {
        "train_taco.json": "1XpZYH9MP7N-YR9mCLCxs9181zedxivOU",
        "olympiad.json": "1TxTUkXR5WIXS1586XbkrkfpKLEyHiNJS",
        "train_livecodebench.json": "1-lKdRfRjytdTltgLyAxTqVRoksI2cJfU",
        "test_livecodebench.json": "1B0sotl48BLd4gqlitL5HVJf1cy3RxpEV",
        "kodcode.json": "1STMAebzGjJtgl5OcOhG-4hjdAiLAWiY6",
        "primeintellect.json": "1o-4P5fUBZd75PM9qfSXInPYXzfW5dfYm",
    }


def test_downloaded_tree_feeds_the_code_converter(tmp_path, mirror):
    from rllm.data.cli import deepcoder_main

    data_dir = tmp_path / "data"
    assert run(download_main, ["--data-dir", str(data_dir), "--source", str(mirror)]) == 0
    args = [
        "--data-dir",
        str(data_dir),
        "--datasets",
        "test_livecodebench",
        "deepcoder_train",
        "train_kodcode",
    ]
    assert run(deepcoder_main, args) == 0
    assert sorted(p.name for p in (data_dir / "deepcoder").iterdir()) == [
        "deepcoder_train.parquet",
        "test_livecodebench.parquet",
        "train_kodcode.parquet",
    ]
