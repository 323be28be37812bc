"""An on-disk cache of Codeforces API responses, one gzip-compressed JSON file per call.

A file is named after the call (``contest.standings_contestId=1971_showUnofficial=false.json.gz``)
and holds the API's whole successful response body. Files are written to a temporary name in
the same directory and renamed into place, so a crash or a failed fetch leaves either the
complete old state or the complete new file, never a torn one. Contest results do not change
after ratings are applied, so entries never expire; the API base is not part of the key, so a
mirror and the public API share a cache.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import secrets
import zlib
from pathlib import Path
from typing import Any

from rllm.codeforces.errors import CodeforcesError
from rllm.data.paths import default_data_dir


def default_cache_dir() -> Path:
    """``codeforces_cache`` inside the project data directory (``$E1_DATA_DIR`` or ``<repo>/data``)."""
    return default_data_dir() / "codeforces_cache"


class ResponseCache:
    """Successful API responses stored under ``root`` (created on the first write)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def path(self, method: str, params: dict[str, str]) -> Path:
        """The file holding the response to ``method`` with ``params``."""
        query = "_".join(f"{key}={params[key]}" for key in sorted(params))
        return self.root / f"{method}_{query}.json.gz"

    def has(self, method: str, params: dict[str, str]) -> bool:
        """Whether the response to ``method`` with ``params`` is cached."""
        return self.path(method, params).is_file()

    def load(self, method: str, params: dict[str, str]) -> Any | None:
        """The cached ``result`` payload, or None when the call is not cached."""
        path = self.path(method, params)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as file:
                body = json.load(file)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, EOFError, zlib.error, json.JSONDecodeError, UnicodeDecodeError) as err:
            raise CodeforcesError(
                f"cached response {path} is unreadable ({err}); delete it to fetch it again"
            ) from None
        if not isinstance(body, dict) or "result" not in body:
            raise CodeforcesError(f"cached response {path} has no 'result'; delete it to fetch it again")
        return body["result"]

    def store(self, method: str, params: dict[str, str], body: dict[str, Any]) -> None:
        """Atomically write ``body`` (the full response) as the answer to ``method`` with ``params``.

        Raises :class:`CodeforcesError` when the cache directory cannot be written.
        """
        path = self.path(method, params)
        payload = gzip.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"), mtime=0)
        # A unique name in the same directory (so the rename is atomic), opened exclusively; unlike
        # mkstemp's private 0600 files, the umask applies, so a copied or shared cache stays readable.
        temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with open(temp, "xb") as file:
                file.write(payload)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, path)
        except OSError as err:
            _discard(temp)
            raise CodeforcesError(
                f"cannot write the cache file {path}: {err}; pass a writable --cache-dir"
            ) from None
        except BaseException:
            _discard(temp)
            raise


def _discard(temp: Path) -> None:
    # Cleanup must not mask the error being raised; a leftover never shadows a real entry.
    with contextlib.suppress(OSError):
        temp.unlink()
