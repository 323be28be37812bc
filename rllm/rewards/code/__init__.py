"""Sandboxed code grading: ``grade_code`` (one response) and ``grade_code_batch`` (many, in parallel).

See ``grader.grade_code`` for the contract, ``formats.FORMATS`` for per-format defaults and
``sandbox`` for the isolation of the programs.
"""

from .extract import extract_code
from .formats import FORMATS, FormatSpec
from .grader import grade_code, grade_code_batch
from .sandbox import SandboxConfig, close_pools

__all__ = [
    "FORMATS",
    "FormatSpec",
    "SandboxConfig",
    "close_pools",
    "extract_code",
    "grade_code",
    "grade_code_batch",
]
