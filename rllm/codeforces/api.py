"""A Codeforces API client: cache first, then polite, retried HTTP calls.

Codeforces answers ``{"status": "OK", "result": ...}`` or ``{"status": "FAILED", "comment":
...}`` and allows about one call per two seconds; over that limit it answers FAILED with a
comment like "Call limit exceeded". The client spaces calls by ``min_interval`` seconds and
retries, with exponential backoff, on timeouts, connection errors, HTTP 429 and 5xx, non-JSON
bodies and call-limit failures. Any other FAILED answer (an unknown contest, say) is final.
Only OK responses are cached.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import requests

from rllm.codeforces.cache import ResponseCache
from rllm.codeforces.errors import ApiError, CacheMissError

DEFAULT_API_BASE = "https://codeforces.com/api"


@dataclass(frozen=True)
class RetryPolicy:
    """How hard and how politely to call the API.

    ``max_retries`` extra attempts follow a failed one, the k-th after ``min(backoff * 2**k,
    max_backoff)`` seconds; each attempt waits ``timeout`` seconds at most for a response; attempts
    (retries included) start at least ``min_interval`` seconds apart.
    """

    max_retries: int = 5
    backoff: float = 2.0
    max_backoff: float = 60.0
    timeout: float = 60.0
    min_interval: float = 2.0


_TRANSIENT_ERRORS = (
    requests.Timeout,
    requests.ConnectionError,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


class _Retryable(Exception):
    """A failure worth another attempt."""


class CodeforcesClient:
    """Answers API calls from ``cache``, fetching (unless ``offline``) and caching what is missing."""

    def __init__(
        self,
        cache: ResponseCache,
        api_base: str = DEFAULT_API_BASE,
        *,
        offline: bool = False,
        policy: RetryPolicy = RetryPolicy(),
    ):
        self.cache = cache
        self.api_base = api_base.rstrip("/")
        self.offline = offline
        self.policy = policy
        self._session = requests.Session()
        self._last_start = float("-inf")

    def call(self, method: str, params: dict[str, str]) -> Any:
        """The ``result`` of ``method`` with ``params``, from the cache or else the network.

        Raises :class:`CacheMissError` offline when the call is not cached, and :class:`ApiError`
        when the API refuses the call or every attempt fails.
        """
        cached = self.cache.load(method, params)
        if cached is not None:
            return cached
        if self.offline:
            raise CacheMissError(f"offline and {self.cache.path(method, params)} is not cached")
        body = self._fetch(method, params)
        self.cache.store(method, params, body)
        return body["result"]

    def close(self) -> None:
        """Release the HTTP connections."""
        self._session.close()

    def _fetch(self, method: str, params: dict[str, str]) -> dict[str, Any]:
        url = f"{self.api_base}/{method}"
        described = f"{method}?{'&'.join(f'{k}={v}' for k, v in params.items())}"
        attempts = self.policy.max_retries + 1
        for attempt in range(attempts):
            self._wait_for_turn()
            try:
                return self._attempt(url, params, described)
            except _Retryable as failure:
                last_failure = str(failure)
            if attempt + 1 < attempts:
                time.sleep(min(self.policy.backoff * 2**attempt, self.policy.max_backoff))
        raise ApiError(f"{described} at {self.api_base} failed {attempts} times; last: {last_failure}")

    def _wait_for_turn(self) -> None:
        wait = self._last_start + self.policy.min_interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last_start = time.monotonic()

    def _attempt(self, url: str, params: dict[str, str], described: str) -> dict[str, Any]:
        """One HTTP call: the OK body, or :class:`_Retryable`, or :class:`ApiError` if final."""
        try:
            response = self._session.get(url, params=params, timeout=self.policy.timeout)
        except _TRANSIENT_ERRORS as err:
            raise _Retryable(f"{type(err).__name__}: {err}") from None
        except requests.RequestException as err:
            # A malformed URL, a bad scheme, a redirect loop: no retry can fix those.
            raise ApiError(
                f"{described}: cannot call {url} ({type(err).__name__}: {err}); check --api-base"
            ) from None
        try:
            body = response.json()
        except ValueError:
            body = None
        status = response.status_code
        transient = status == 429 or status >= 500
        if not isinstance(body, dict):
            snippet = f"HTTP {status}, not a JSON object: {response.text[:120]!r}"
            # Overloaded servers and proxies answer HTML pages; a 4xx page means a wrong URL.
            if transient or status == 200:
                raise _Retryable(snippet)
            raise ApiError(f"{described}: {snippet} from {url}; check --api-base")
        comment = str(body.get("comment", ""))
        if status == 200 and body.get("status") == "OK" and "result" in body:
            return body
        if transient or "call limit" in comment.lower():
            raise _Retryable(f"HTTP {status}: {comment or body.get('status')}")
        raise ApiError(f"{described}: Codeforces refused the call (HTTP {status}): {comment or body}")
