"""Reading raw dataset files: one JSON list of record objects per file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rllm.data.errors import DataError


def load_records(path: Path | str, label: str | None = None) -> list[Any]:
    """Load a raw dataset file and return its records (a JSON list; items are checked later).

    Error messages start with ``label`` (default: the path).

    Raises:
        DataError: the file is missing, unreadable, not valid JSON, or not a JSON list.
    """
    path = Path(path)
    label = label or str(path)
    if not path.is_file():
        raise DataError(f"{label}: file not found")
    try:
        with path.open("rb") as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"{label}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{label}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise DataError(f"{label}: cannot read ({exc.strerror})") from None
    if not isinstance(data, list):
        raise DataError(f"{label}: expected a JSON list of records, found a JSON {type(data).__name__}")
    return data
