"""Per-record validation of raw datasets, with counts by reason and a readable report.

A *check* is a function that turns one raw record into the clean item a converter needs, or raises
:class:`RecordError` with a short machine-readable ``reason`` (``missing_field``, ``wrong_type``,
``empty_answer``, ``unparsable_tests``, ...) and a human-readable detail. :func:`validate_records`
runs a check over a whole file and returns the clean items with their record positions plus a
:class:`ValidationReport`; nothing is dropped without being counted there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tqdm import tqdm

from rllm.data.errors import DataError

T = TypeVar("T")

# Files with at least this many records show a progress bar (on a terminal).
PROGRESS_MIN_RECORDS = 5000


class RecordError(ValueError):
    """One record is unusable: ``reason`` is a short category, ``detail`` says what is wrong."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Issue:
    """A skipped record: its position in the raw file, the reason and the detail."""

    index: int
    reason: str
    detail: str


@dataclass
class ValidationReport:
    """What happened to the records of one input file."""

    name: str
    total: int = 0
    issues: list[Issue] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return self.total - len(self.issues)

    @property
    def skipped(self) -> int:
        return len(self.issues)

    def counts(self) -> Counter[str]:
        """Skipped records per reason."""
        return Counter(issue.reason for issue in self.issues)

    def summary(self) -> str:
        """One line: ``<name>: kept N of T, skipped M (reason: k, ...)``."""
        line = f"{self.name}: kept {self.kept} of {self.total}, skipped {self.skipped}"
        if self.issues:
            reasons = ", ".join(f"{reason}: {n}" for reason, n in sorted(self.counts().items()))
            line += f" ({reasons})"
        return line

    def details(self, limit: int | None = 20) -> list[str]:
        """One line per skipped record (the first ``limit``; None for all), then how many remain."""
        shown = self.issues if limit is None else self.issues[:limit]
        lines = [f"  record {i.index}: {i.reason}: {i.detail}" for i in shown]
        if len(shown) < len(self.issues):
            lines.append(f"  ... and {len(self.issues) - len(shown)} more (--max-issues 0 lists all)")
        return lines

    def raise_if_strict(self, strict: bool) -> None:
        """Under ``strict``, turn any skipped record into a one-line :class:`DataError`."""
        if strict and self.issues:
            first = self.issues[0]
            raise DataError(
                f"{self.summary()}; first: record {first.index}: {first.detail} "
                "(--strict refuses invalid records; drop --strict to skip and report them)"
            )


def validate_records(
    name: str, records: Sequence[Any], check: Callable[[Any], T]
) -> tuple[list[tuple[int, T]], ValidationReport]:
    """Run ``check`` on every record; return ``(position, item)`` for the good ones and the report."""
    report = ValidationReport(name=name, total=len(records))
    kept: list[tuple[int, T]] = []
    for index, record in _progress(name, records):
        try:
            kept.append((index, check(record)))
        except RecordError as exc:
            report.issues.append(Issue(index, exc.reason, exc.detail))
    return kept, report


def _progress(name: str, records: Sequence[Any]) -> Iterable[tuple[int, Any]]:
    items = enumerate(records)
    if len(records) < PROGRESS_MIN_RECORDS:
        return items
    # disable=None hides the bar when stderr is not a terminal (logs, CI).
    return tqdm(items, total=len(records), desc=f"validating {name}", unit="rec", leave=False, disable=None)


# Field checks shared by the math and code checks.


def require_mapping(record: Any) -> dict[str, Any]:
    """The record as a dict, or ``wrong_type`` if it is not a JSON object."""
    if not isinstance(record, dict):
        raise RecordError("wrong_type", f"record is a {type(record).__name__}, expected an object")
    return record


def require_text(record: dict[str, Any], key: str) -> str:
    """A non-blank string field: ``missing_field``, ``wrong_type`` or ``empty_field`` otherwise."""
    if key not in record or record[key] is None:
        raise RecordError("missing_field", f"no '{key}' field")
    value = record[key]
    if not isinstance(value, str):
        raise RecordError("wrong_type", f"'{key}' is a {type(value).__name__}, expected a string")
    if not value.strip():
        raise RecordError("empty_field", f"'{key}' is empty")
    return value
