"""Errors a user can cause or fix; the command line prints them as one line, without a traceback."""

from __future__ import annotations


class CodeforcesError(Exception):
    """Base class: the message names the problem and, where there is one, the fix."""


class InputError(CodeforcesError):
    """A results, metadata or ratings file is missing or malformed, or the files disagree."""


class ApiError(CodeforcesError):
    """The Codeforces API refused a call or kept failing after all retries."""


class CacheMissError(CodeforcesError):
    """Offline mode needs API responses that are not in the cache."""
