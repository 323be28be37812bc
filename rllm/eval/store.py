"""Resumable per-sample records: one JSONL file per (dataset, budget, settings fingerprint).

Layout under the output directory::

    records/<dataset>/<budget dir>-<fingerprint[:12]>/settings.json   what the fingerprint covers
    records/<dataset>/<budget dir>-<fingerprint[:12]>/samples.jsonl   one scored sample per line

The fingerprint is a SHA-256 of every setting that changes results (see :func:`fingerprint`), so a
re-run with the same settings finds its finished samples and one with different settings gets a
fresh directory and never sees stale ones. Each record is written as one line and flushed before
the next is accepted, so an interrupt loses at most the samples still being generated or graded;
a line cut short by a crash is dropped on the next open.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# Bump when the meaning of stored records changes, so old records are not reused.
SCHEMA_VERSION = 1


def fingerprint(settings: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of ``settings`` serialised canonically (sorted keys, no whitespace)."""
    payload = json.dumps({"schema": SCHEMA_VERSION, **settings}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


class RecordStore:
    """Append-only JSONL of scored samples keyed by ``(prompt_index, sample_index)``.

    Thread-safe: :meth:`add` may be called from grader callback threads.
    """

    FILE = "samples.jsonl"

    def __init__(self, directory: Path, settings: Mapping[str, Any]):
        self.directory = Path(directory)
        self.path = self.directory / self.FILE
        self.settings = dict(settings)
        self._lock = threading.Lock()
        self._records: dict[tuple[int, int], dict[str, Any]] = {}
        self.directory.mkdir(parents=True, exist_ok=True)
        settings_path = self.directory / "settings.json"
        if not settings_path.exists():
            settings_path.write_text(json.dumps(self.settings, indent=2, sort_keys=True) + "\n")
        self._load()
        self._handle = open(self.path, "a", encoding="utf-8")

    @classmethod
    def open(cls, root: Path, dataset: str, budget_dir: str, settings: Mapping[str, Any]) -> RecordStore:
        """The store for these settings under ``root/records`` (created if new)."""
        key = fingerprint(settings)
        return cls(
            Path(root) / "records" / dataset / f"{budget_dir}-{key[:12]}", {**settings, "fingerprint": key}
        )

    def _load(self) -> None:
        if not self.path.exists():
            return
        raw = self.path.read_bytes()
        complete = raw[: raw.rfind(b"\n") + 1]
        if len(complete) != len(raw):  # a line cut short by a crash: drop it before appending
            with open(self.path, "r+b") as handle:
                handle.truncate(len(complete))
        for line in complete.decode("utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                self._records[(record["prompt_index"], record["sample_index"])] = record

    def __contains__(self, key: tuple[int, int]) -> bool:
        return key in self._records

    def __len__(self) -> int:
        return len(self._records)

    def records(self) -> list[dict[str, Any]]:
        """All records, ordered by prompt then sample."""
        with self._lock:
            return [self._records[key] for key in sorted(self._records)]

    def add(self, record: dict[str, Any]) -> None:
        """Append one record and flush it to the OS before returning."""
        line = json.dumps(record, ensure_ascii=False, default=_json_default) + "\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()
            self._records[(record["prompt_index"], record["sample_index"])] = record

    def sync(self) -> None:
        """Make appended records durable (fsync); called at the end of a dataset/budget."""
        with self._lock:
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                self._handle.close()

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_default(value: Any) -> Any:
    """Grader details may hold numpy scalars/arrays or other objects; store them readably."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)
