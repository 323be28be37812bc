"""Loading and validating the three input files: problem ids, attempt results, rating distribution.

Formats:

- metadata: a JSON list of Codeforces problem ids such as ``"1971A"`` or ``"1972D1"`` — the
  contest id (leading digits) followed by the problem index (an upper-case letter, then letters
  or digits). Ids must be unique.
- results: either the list the evaluation writes, aligned with the metadata (``results[k]`` holds
  the attempts on ``metadata[k]``), or an object mapping every metadata id to its attempts (order
  free; it must name exactly the metadata ids). Attempts are lists of scores, each 0 or 1
  (``true``/``false`` and ``0.0``/``1.0`` are accepted too), in the order they were sampled.
- ratings: a JSON object ``{rating: number of users}``, e.g. ``{"1500": 312, "-12": 1}``.

Every check raises :class:`~rllm.codeforces.errors.InputError` naming the file and the entry.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rllm.codeforces.elo import RatingDistribution
from rllm.codeforces.errors import InputError

_PROBLEM_ID = re.compile(r"(\d+)([A-Z][A-Z0-9]*)")


@dataclass(frozen=True, order=True)
class ProblemId:
    """A Codeforces problem: ``contest_id`` 1971 and ``index`` ``"D1"`` for ``1971D1``."""

    contest_id: int
    index: str

    @classmethod
    def parse(cls, text: str) -> ProblemId:
        """Parse ``"1971D1"``; raises :class:`InputError` for anything else."""
        match = _PROBLEM_ID.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise InputError(
                f"invalid problem id {text!r}: expected contest digits then an index, like '1971A' or '1972D1'"
            )
        return cls(int(match.group(1)), match.group(2))

    def __str__(self) -> str:
        return f"{self.contest_id}{self.index}"


Attempts = list[int]
"""Scores of one problem's attempts, each 0 or 1, in sampling order."""


def read_json(path: Path, what: str) -> Any:
    """The parsed JSON at ``path``; a missing, unreadable or invalid file is an :class:`InputError`.

    ``what`` names the file's role and the command-line flag that sets it (``"metadata"`` and
    ``--metadata``; the results file is ``--results_path``).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        flag = "--results_path" if what == "results" else f"--{what}"
        raise InputError(f"{what} file not found: {path} (pass its path with {flag})") from None
    except OSError as err:
        raise InputError(f"cannot read {what} file {path}: {err.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{what} file {path} is not valid JSON: {err.msg} at line {err.lineno}") from None


def load_metadata(path: Path) -> list[ProblemId]:
    """The problem ids of a metadata file, in file order."""
    data = read_json(path, "metadata")
    if not isinstance(data, list) or not data:
        raise InputError(f"metadata file {path} must hold a non-empty JSON list of problem ids like '1971A'")
    ids = []
    for position, text in enumerate(data):
        try:
            ids.append(ProblemId.parse(text))
        except InputError as err:
            raise InputError(f"metadata file {path}, entry {position}: {err}") from None
    seen: set[ProblemId] = set()
    for problem in ids:
        if problem in seen:
            raise InputError(f"metadata file {path} lists problem {problem} twice")
        seen.add(problem)
    return ids


def load_results(path: Path, metadata: list[ProblemId]) -> dict[ProblemId, Attempts]:
    """Each metadata problem's validated attempts, in metadata order (list or object form)."""
    data = read_json(path, "results")
    if isinstance(data, list):
        if len(data) != len(metadata):
            raise InputError(
                f"results file {path} has {len(data)} entries but the metadata lists {len(metadata)} "
                "problems; the list must be aligned with the metadata (pass the matching --metadata)"
            )
        pairs = zip(metadata, data, strict=True)
    elif isinstance(data, dict):
        by_text = {str(problem): problem for problem in metadata}
        unknown = sorted(key for key in data if key not in by_text)
        if unknown:
            raise InputError(f"results file {path} has ids not in the metadata: {_preview(unknown)}")
        missing = [text for text in by_text if text not in data]
        if missing:
            raise InputError(f"results file {path} lacks metadata problems: {_preview(missing)}")
        pairs = ((problem, data[str(problem)]) for problem in metadata)
    else:
        raise InputError(
            f"results file {path} must hold a list of attempt lists (aligned with the metadata) "
            "or an object mapping problem ids to attempt lists"
        )
    return {problem: _attempts(path, problem, value) for problem, value in pairs}


def _attempts(path: Path, problem: ProblemId, value: Any) -> Attempts:
    if not isinstance(value, list):
        raise InputError(
            f"results file {path}, problem {problem}: expected a list of 0/1 scores, got {value!r}"
        )
    scores = []
    for score in value:
        # bool is an int subclass; 1.0 compares equal to 1, so floats written by graders pass.
        if isinstance(score, (int, float)) and score in (0, 1):
            scores.append(int(score))
        else:
            raise InputError(f"results file {path}, problem {problem}: score {score!r} is not 0 or 1")
    return scores


def load_ratings(path: Path) -> RatingDistribution:
    """The ``{rating: count}`` distribution of a ratings file."""
    data = read_json(path, "ratings")
    if not isinstance(data, dict) or not data:
        raise InputError(f"ratings file {path} must hold a non-empty JSON object {{rating: number of users}}")
    counts: dict[float, int] = {}
    for key, count in data.items():
        try:
            rating = float(key)
        except ValueError:
            raise InputError(f"ratings file {path}: key {key!r} is not a rating") from None
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError(
                f"ratings file {path}: count {count!r} for rating {key} is not a non-negative integer"
            )
        counts[rating] = counts.get(rating, 0) + count
    if sum(counts.values()) == 0:
        raise InputError(f"ratings file {path} counts no users")
    return RatingDistribution(counts)


def group_by_contest(results: dict[ProblemId, Attempts]) -> dict[int, dict[str, Attempts]]:
    """``{contest_id: {problem index: attempts}}``, contests in ascending id order."""
    grouped: dict[int, dict[str, Attempts]] = {}
    for problem in sorted(results):
        grouped.setdefault(problem.contest_id, {})[problem.index] = results[problem]
    return grouped


def _preview(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"
