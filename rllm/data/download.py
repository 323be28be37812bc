"""Download the raw JSON datasets the original used, verify them, and place them in the raw tree.

Each file comes from Google Drive (through ``gdown``) or, with ``source``, from
``<source>/<file name>`` on a plain HTTP(S) server or in a local mirror directory. A file is
fetched into a temporary directory next to its destination, verified (valid JSON, a non-empty list
of records) and only then renamed into place, so an interrupted or corrupt download never leaves a
file behind. Files already present and valid are skipped; present but invalid ones are fetched
again.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import requests
from tqdm import tqdm

from rllm.data.errors import DataError
from rllm.data.paths import raw_dir
from rllm.data.raw import load_records

CHUNK_BYTES = 1 << 20
HTTP_TIMEOUT = (15, 120)  # seconds: connect, read between chunks

Echo = Callable[[str], None]


@dataclass(frozen=True)
class RawFile:
    """A downloadable file: its name (on Drive and on mirrors), Drive id, and place in the raw tree."""

    name: str
    drive_id: str
    dest: str


# Destinations follow the original's rllm/data/{train,test}/{math,code}/ tree.
RAW_FILES = (
    RawFile("train_taco.json", "1XpZYH9MP7N-YR9mCLCxs9181zedxivOU", "train/code/taco.json"),
    RawFile("olympiad.json", "1TxTUkXR5WIXS1586XbkrkfpKLEyHiNJS", "train/math/olympiad.json"),
    RawFile("train_livecodebench.json", "1-lKdRfRjytdTltgLyAxTqVRoksI2cJfU", "train/code/livecodebench.json"),
    RawFile("test_livecodebench.json", "1B0sotl48BLd4gqlitL5HVJf1cy3RxpEV", "test/code/livecodebench.json"),
    RawFile("kodcode.json", "1STMAebzGjJtgl5OcOhG-4hjdAiLAWiY6", "train/code/kodcode.json"),
    RawFile("primeintellect.json", "1o-4P5fUBZd75PM9qfSXInPYXzfW5dfYm", "train/code/primeintellect.json"),
)


@dataclass
class FileOutcome:
    """``status`` is ``present`` (kept as is), ``downloaded`` or ``failed`` (then ``error`` says why)."""

    file: RawFile
    path: Path
    status: str
    records: int = 0
    error: str | None = None


def select_files(only: Sequence[str] | None) -> list[RawFile]:
    """The files named in ``only`` (with or without ``.json``), or all of them."""
    if not only:
        return list(RAW_FILES)
    by_name = {f.name.removesuffix(".json"): f for f in RAW_FILES}
    unknown = [n for n in only if n.removesuffix(".json") not in by_name]
    if unknown:
        raise DataError(f"unknown file(s) {', '.join(unknown)}; choose from {', '.join(by_name)}")
    return [by_name[n.removesuffix(".json")] for n in dict.fromkeys(only)]


def check_source(source: str | None) -> None:
    """Reject a ``source`` that is neither an HTTP(S) URL nor an existing directory."""
    if source is None or _is_url(source) or Path(source).expanduser().is_dir():
        return
    raise DataError(f"--source {source}: not an http(s):// URL or an existing directory")


def verify(path: Path, label: str | None = None) -> int:
    """Number of records in a raw file; raises :class:`DataError` unless it is a non-empty JSON list.

    Messages start with ``label`` (default: the path).
    """
    count = len(load_records(path, label))
    if count == 0:
        raise DataError(f"{label or path}: contains no records")
    return count


def download_all(
    data_dir: Path, files: Sequence[RawFile], *, source: str | None = None, echo: Echo = print
) -> list[FileOutcome]:
    """Make every file in ``files`` present and verified under ``<data_dir>/raw``; never raises for
    one file's failure (it is reported in its outcome and the others still run)."""
    check_source(source)
    return [_ensure(f, raw_dir(data_dir) / f.dest, source, echo) for f in files]


def _ensure(file: RawFile, dest: Path, source: str | None, echo: Echo) -> FileOutcome:
    if dest.exists():
        try:
            count = verify(dest)
        except DataError as exc:
            echo(f"{file.name}: existing {dest} is invalid ({exc}); downloading again")
        else:
            echo(f"{file.name}: present at {dest} ({count} records), skipped")
            return FileOutcome(file, dest, "present", count)
    try:
        count = _fetch_verified(file, source, dest)
    except DataError as exc:
        echo(f"{file.name}: failed: {exc}")
        return FileOutcome(file, dest, "failed", error=str(exc))
    except OSError as exc:
        error = f"cannot write {dest} ({exc.strerror or exc})"
        echo(f"{file.name}: failed: {error}")
        return FileOutcome(file, dest, "failed", error=error)
    echo(f"{file.name}: downloaded to {dest} ({count} records)")
    return FileOutcome(file, dest, "downloaded", count)


def _fetch_verified(file: RawFile, source: str | None, dest: Path) -> int:
    """Fetch into a staging directory beside ``dest``, verify, rename into place; the record count."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}."))
    try:
        fetched = staging / file.name
        _fetch(file, source, fetched)
        count = verify(fetched, label=f"downloaded {file.name}")
        fetched.replace(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count


def _fetch(file: RawFile, source: str | None, out: Path) -> None:
    if source is None:
        _fetch_drive(file, out)
    elif _is_url(source):
        _fetch_http(f"{source.rstrip('/')}/{file.name}", out)
    else:
        origin = Path(source).expanduser() / file.name
        if not origin.is_file():
            raise DataError(f"{origin}: not found in the mirror directory")
        shutil.copyfile(origin, out)


def _fetch_drive(file: RawFile, out: Path) -> None:
    try:
        import gdown
        from gdown.exceptions import DownloadError
    except ImportError:
        raise DataError("Google Drive downloads need gdown (pip install gdown); or use --source") from None

    try:
        gdown.download(id=file.drive_id, output=str(out), quiet=False)
    except (DownloadError, requests.RequestException, OSError) as exc:
        raise DataError(
            f"Google Drive download of id {file.drive_id} failed ({exc}); retry later or use --source"
        ) from None
    if not out.is_file():
        raise DataError(
            f"Google Drive download of id {file.drive_id} produced no file; retry later or use --source"
        )


def _fetch_http(url: str, out: Path) -> None:
    try:
        with requests.get(url, stream=True, timeout=HTTP_TIMEOUT) as response:
            response.raise_for_status()
            total = int(response.headers.get("Content-Length") or 0) or None
            with (
                out.open("wb") as f,
                tqdm(total=total, unit="B", unit_scale=True, desc=out.name, leave=False, disable=None) as bar,
            ):
                for chunk in response.iter_content(CHUNK_BYTES):
                    f.write(chunk)
                    bar.update(len(chunk))
    except requests.HTTPError as exc:
        raise DataError(f"{url}: HTTP {exc.response.status_code}") from None
    except requests.RequestException as exc:
        raise DataError(f"{url}: {type(exc).__name__}: {exc}") from None


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))
