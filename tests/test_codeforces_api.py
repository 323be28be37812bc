"""The API client, its cache, offline mode and the commands, against a real local HTTP server.

The server (``http.server`` on 127.0.0.1, port 0) answers from ``tests/fixtures/codeforces`` in
the Codeforces API's shape and can be scripted to fail first: HTTP 500, call-limit FAILED
answers, slow responses. Nothing here reaches the internet.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from rllm.codeforces.api import CodeforcesClient, RetryPolicy
from rllm.codeforces.cache import ResponseCache
from rllm.codeforces.cli import prefetch_main, rate_main
from rllm.codeforces.contest import contest_calls, parse_contest
from rllm.codeforces.elo import expected_seed
from rllm.codeforces.errors import ApiError, CacheMissError, CodeforcesError

FIXTURES = Path(__file__).parent / "fixtures" / "codeforces"
REPO = Path(__file__).resolve().parents[1]
FAST = RetryPolicy(max_retries=3, backoff=0.01, max_backoff=0.05, timeout=5, min_interval=0)
STANDINGS = contest_calls(1001)[0]
LIMIT_EXCEEDED = {"status": "FAILED", "comment": "Call limit exceeded"}


class FixtureServer(ThreadingHTTPServer):
    """Serves ``/api/<method>?contestId=<id>`` from the fixtures; records every request.

    ``script[(method, contest id)]`` is a list of answers given, in order, before the fixture:
    ``(status, body)`` with a dict body sent as JSON, or ``("sleep", seconds)``.
    """

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[float, str, dict[str, str]]] = []
        self.script: dict[tuple[str, str], list] = {}
        self.lock = threading.Lock()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api"

    def count(self, method: str | None = None) -> int:
        return sum(1 for _, m, _ in self.requests if method in (None, m))


class _Handler(BaseHTTPRequestHandler):
    server: FixtureServer

    def do_GET(self):  # noqa: N802 - the http.server hook name
        url = urlsplit(self.path)
        method = url.path.removeprefix("/api/")
        params = dict(parse_qsl(url.query))
        contest_id = params.get("contestId", "")
        with self.server.lock:
            self.server.requests.append((time.monotonic(), method, params))
            queue = self.server.script.get((method, contest_id), [])
            answer = queue.pop(0) if queue else None
        if answer is not None and answer[0] == "sleep":
            time.sleep(answer[1])
            answer = None
        if answer is not None:
            return self._send(*answer)
        if not url.path.startswith("/api/"):
            return self._send(404, "<html>Not Found</html>")
        fixture = FIXTURES / f"{method}_{contest_id}.json"
        if not fixture.is_file():
            return self._send(
                400, {"status": "FAILED", "comment": f"contestId: Contest with id {contest_id} not found"}
            )
        return self._send(200, fixture.read_bytes())

    def _send(self, status: int, body):
        data = (
            json.dumps(body).encode()
            if isinstance(body, dict)
            else body
            if isinstance(body, bytes)
            else body.encode()
        )
        self.send_response(status)
        self.send_header(
            "Content-Type", "application/json" if isinstance(body, (dict, bytes)) else "text/html"
        )
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def server() -> Iterator[FixtureServer]:
    httpd = FixtureServer()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def fixture_result(method: str, contest_id: int):
    return json.loads((FIXTURES / f"{method}_{contest_id}.json").read_text())["result"]


def client(
    server: FixtureServer, cache_dir: Path, policy: RetryPolicy = FAST, offline=False
) -> CodeforcesClient:
    return CodeforcesClient(ResponseCache(cache_dir), server.api_base, offline=offline, policy=policy)


# --- client and cache ----------------------------------------------------------------------


def test_fetches_once_then_answers_from_the_cache(server, tmp_path):
    api = client(server, tmp_path)
    assert api.call(*STANDINGS) == fixture_result("contest.standings", 1001)
    assert api.call(*STANDINGS) == fixture_result("contest.standings", 1001)
    assert server.count() == 1
    assert server.requests[0][2] == {"contestId": "1001", "showUnofficial": "false"}
    stored = tmp_path / "contest.standings_contestId=1001_showUnofficial=false.json.gz"
    body = json.loads(gzip.decompress(stored.read_bytes()))
    assert body["status"] == "OK" and body["result"]["contest"]["id"] == 1001
    # A fresh client (a new run) reads the same file without calling the server.
    assert client(server, tmp_path).call(*STANDINGS)["problems"][0]["points"] == 500.0
    assert server.count() == 1
    assert [p.name for p in tmp_path.iterdir()] == [stored.name]  # no temporary files left


def test_retries_a_server_error_then_succeeds(server, tmp_path):
    server.script[("contest.standings", "1001")] = [(500, "<html>Internal Server Error</html>")]
    assert client(server, tmp_path).call(*STANDINGS)["contest"]["id"] == 1001
    assert server.count() == 2


def test_retries_the_call_limit_failure(server, tmp_path):
    server.script[("contest.standings", "1001")] = [(503, LIMIT_EXCEEDED), (200, LIMIT_EXCEEDED)]
    assert client(server, tmp_path).call(*STANDINGS)["contest"]["id"] == 1001
    assert server.count() == 3


def test_retries_a_timeout(server, tmp_path):
    server.script[("contest.standings", "1001")] = [("sleep", 1.0)]
    policy = RetryPolicy(max_retries=2, backoff=0.01, timeout=0.3, min_interval=0)
    assert client(server, tmp_path, policy).call(*STANDINGS)["contest"]["id"] == 1001
    assert server.count() == 2


def test_gives_up_after_the_retries_and_caches_nothing(server, tmp_path):
    server.script[("contest.standings", "1001")] = [(502, "bad gateway")] * 4
    with pytest.raises(
        ApiError,
        match=r"contest.standings\?contestId=1001&showUnofficial=false at .* failed 4 times; last: HTTP 502",
    ):
        client(server, tmp_path).call(*STANDINGS)
    assert server.count() == 4
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_backoff_doubles_between_attempts(server, tmp_path):
    server.script[("contest.standings", "1001")] = [(500, "x")] * 3
    policy = RetryPolicy(max_retries=3, backoff=0.1, max_backoff=10, timeout=5, min_interval=0)
    client(server, tmp_path, policy).call(*STANDINGS)
    times = [t for t, _, _ in server.requests]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert [round(g, 1) >= want for g, want in zip(gaps, [0.1, 0.2, 0.4], strict=True)] == [True] * 3


def test_calls_are_spaced_by_the_minimum_interval(server, tmp_path):
    policy = RetryPolicy(max_retries=0, timeout=5, min_interval=0.25)
    api = client(server, tmp_path, policy)
    for contest_id in (1001, 1002, 1003):
        api.call(*contest_calls(contest_id)[1])
    times = [t for t, _, _ in server.requests]
    assert all(b - a >= 0.24 for a, b in zip(times, times[1:], strict=False))


def test_a_refused_call_is_final_and_not_cached(server, tmp_path):
    with pytest.raises(
        ApiError, match=r"Codeforces refused the call \(HTTP 400\): contestId: Contest with id 4242 not found"
    ):
        client(server, tmp_path).call(*contest_calls(4242)[0])
    assert server.count() == 1
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_a_wrong_api_base_is_reported_without_retries(server, tmp_path):
    api = CodeforcesClient(
        ResponseCache(tmp_path), server.api_base.removesuffix("/api") + "/wrong", policy=FAST
    )
    with pytest.raises(ApiError, match=r"HTTP 404, not a JSON object.*check --api-base"):
        api.call(*STANDINGS)
    assert server.count() == 1


def test_a_malformed_api_base_is_final(tmp_path):
    api = CodeforcesClient(ResponseCache(tmp_path), "127.0.0.1/api", policy=FAST)
    with pytest.raises(
        ApiError, match=r"cannot call 127.0.0.1/api/contest.standings \(MissingSchema.*check --api-base"
    ):
        api.call(*STANDINGS)


def test_unreachable_server_fails_after_retries(tmp_path):
    api = CodeforcesClient(ResponseCache(tmp_path), "http://127.0.0.1:9/api", policy=FAST)
    with pytest.raises(ApiError, match=r"failed 4 times; last: ConnectionError"):
        api.call(*STANDINGS)


def test_offline_client_never_calls_the_network(server, tmp_path):
    with pytest.raises(CacheMissError, match="offline and .* is not cached"):
        client(server, tmp_path, offline=True).call(*STANDINGS)
    assert server.count() == 0


def test_a_failed_write_leaves_the_old_cache_entry_intact(tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path)
    cache.store(*STANDINGS, {"status": "OK", "result": {"old": True}})

    def crash(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(
        CodeforcesError, match=r"cannot write the cache file .*: disk full; pass a writable --cache-dir"
    ):
        cache.store(*STANDINGS, {"status": "OK", "result": {"new": True}})
    monkeypatch.undo()
    assert cache.load(*STANDINGS) == {"old": True}
    assert len(list(tmp_path.iterdir())) == 1  # the temporary file was removed


def test_an_unwritable_cache_is_a_clear_error(server, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(CodeforcesError, match=r"cannot write the cache file .*file/cache/contest.standings"):
        client(server, blocker / "cache").call(*STANDINGS)


def test_a_corrupt_cache_file_is_named(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.path(*STANDINGS).write_bytes(b"not gzip")
    with pytest.raises(CodeforcesError, match=r"contest.standings_contestId=1001.*unreadable.*delete it"):
        cache.load(*STANDINGS)


def test_contest_parsing_keeps_handles_with_a_rating_change():
    data = parse_contest(
        1001, fixture_result("contest.standings", 1001), fixture_result("contest.ratingChanges", 1001)
    )
    assert len(data.rows) == len(data.old_ratings) == 239  # 244 rows, 5 unrated; 3 changes without a row
    assert data.problem_points == {"A": 500.0, "B": 1000.0, "C": 1500.0, "D": 2000.0}
    icpc = parse_contest(
        1002, fixture_result("contest.standings", 1002), fixture_result("contest.ratingChanges", 1002)
    )
    assert set(icpc.problem_points.values()) == {None}
    with pytest.raises(ApiError, match=r"contest 5: malformed API response \(KeyError: 'rows'\)"):
        parse_contest(5, {"problems": []}, [])


# --- the commands --------------------------------------------------------------------------


def rate_args(server: FixtureServer, cache_dir: Path, *extra: str, pass_n: int = 1) -> list[str]:
    return [
        "--results_path", str(FIXTURES / "results.json"),
        "--pass_n", str(pass_n),
        "--metadata", str(FIXTURES / "metadata.json"),
        "--ratings", str(FIXTURES / "ratings.json"),
        "--api-base", server.api_base,
        "--cache-dir", str(cache_dir),
        "--retry-backoff", "0.01",
        "--min-interval", "0",
        *extra,
    ]  # fmt: skip


def oracle(contest_id: int, points: float, penalty: int) -> tuple[int, int]:
    """Rank and rating by brute force straight from the fixture files."""
    ratings = {c["handle"]: c["oldRating"] for c in fixture_result("contest.ratingChanges", contest_id)}
    rows = [
        r
        for r in fixture_result("contest.standings", contest_id)["rows"]
        if r["party"]["members"][0]["handle"] in ratings
    ]
    old = [ratings[r["party"]["members"][0]["handle"]] for r in rows]
    # Standings are sorted, so the rows placed above the model are exactly those it does not beat.
    ahead = sum(
        1 for r in rows if not (r["points"] < points or (r["points"] == points and r["penalty"] > penalty))
    )
    rank = ahead + 1
    rating = max((r for r in range(max(old) + 100) if expected_seed(r, old) >= rank), default=0)
    return rank, rating


def test_rate_end_to_end_then_offline(server, tmp_path, capsys):
    cache_dir, out = tmp_path / "cache", tmp_path / "report.json"
    assert rate_main(rate_args(server, cache_dir, "--json", str(out), pass_n=2)) == 0
    assert server.count() == 6  # two calls for each of the three contests
    report = json.loads(out.read_text())
    # pass_n=2: contest 1001 scores A (500) + B on the second attempt (950) = 1450, tying the
    # four-way block at 1450 points; contest 1002 solves A and B (second attempt: 10 minutes).
    by_id = {c["contest_id"]: c for c in report["contests"]}
    assert (by_id[1001]["points"], by_id[1001]["penalty"], by_id[1001]["solved"]) == (1450, 0, 2)
    assert (by_id[1002]["points"], by_id[1002]["penalty"], by_id[1002]["solved"]) == (2, 10, 2)
    assert (by_id[1001]["rated_participants"], by_id[1002]["rated_participants"]) == (239, 221)
    for contest_id in (1001, 1002):
        rank, rating = oracle(contest_id, by_id[contest_id]["points"], by_id[contest_id]["penalty"])
        assert (by_id[contest_id]["rank"], by_id[contest_id]["rating"]) == (rank, rating)
    assert report["rating"] == (by_id[1001]["rating"] + by_id[1002]["rating"]) / 2
    assert report["skipped"] == [
        {
            "contest_id": 1003,
            "rated_participants": 30,
            "reason": "30 rated participants (needs more than 200)",
        }
    ]
    assert report["rated_users"] == 77 and report["pass_n"] == 2
    printed = capsys.readouterr().out
    assert f"rating:     {report['rating']:.1f}" in printed
    assert "2 used, 1 skipped" in printed and "1003 (30)" in printed

    # The same run offline, against a stopped server: identical report from the cache.
    server.shutdown()
    out_offline = tmp_path / "offline.json"
    assert rate_main(rate_args(server, cache_dir, "--offline", "--json", str(out_offline), pass_n=2)) == 0
    assert json.loads(out_offline.read_text()) == report


def test_pass_n_one_scores_only_first_attempts(server, tmp_path):
    out = tmp_path / "r.json"
    assert rate_main(rate_args(server, tmp_path / "cache", "--json", str(out))) == 0
    by_id = {c["contest_id"]: c for c in json.loads(out.read_text())["contests"]}
    assert (by_id[1001]["points"], by_id[1002]["points"], by_id[1002]["penalty"]) == (500, 1, 0)


def test_offline_names_every_missing_contest(server, tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    ResponseCache(cache_dir).store(*contest_calls(1002)[0], {"status": "OK", "result": {}})  # half of 1002
    assert rate_main(rate_args(server, cache_dir, "--offline")) == 1
    error = capsys.readouterr().err
    assert "error: --offline: the cache" in error and "lacks 3 of 3 contests: 1001, 1002, 1003" in error
    assert "cf_prefetch.py --metadata" in error and "Traceback" not in error
    assert server.count() == 0


def test_prefetch_then_rate_offline(server, tmp_path, capsys):
    cache_dir = tmp_path / "cache"
    server.script[("contest.ratingChanges", "1002")] = [(503, LIMIT_EXCEEDED)]
    args = ["--metadata", str(FIXTURES / "metadata.json"), "--api-base", server.api_base,
            "--cache-dir", str(cache_dir), "--retry-backoff", "0.01", "--min-interval", "0"]  # fmt: skip
    assert prefetch_main(args) == 0
    assert "3 contests: 0 already cached, 3 fetched, 0 failed" in capsys.readouterr().out
    assert server.count() == 7  # one retry
    assert prefetch_main(args) == 0
    assert "3 already cached, 0 fetched" in capsys.readouterr().out
    assert server.count() == 7
    assert rate_main(rate_args(server, cache_dir, "--offline")) == 0


def test_prefetch_keeps_going_past_a_failing_contest(server, tmp_path, capsys):
    metadata = tmp_path / "m.json"
    metadata.write_text(json.dumps(["1001A", "4242A", "1003A"]))
    cache_dir = tmp_path / "cache"
    args = [
        "--metadata",
        str(metadata),
        "--api-base",
        server.api_base,
        "--cache-dir",
        str(cache_dir),
        "--min-interval",
        "0",
    ]
    assert prefetch_main(args) == 1
    captured = capsys.readouterr()
    assert "3 contests: 0 already cached, 2 fetched, 1 failed" in captured.out
    assert (
        "contest 4242: contest.standings?contestId=4242&showUnofficial=false: Codeforces refused"
        in captured.err
    )
    assert len(list(cache_dir.glob("*.json.gz"))) == 4


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"--results_path": "missing.json"},
            "results file not found: missing.json (pass its path with --results_path)",
        ),
        ({"--metadata": str(FIXTURES / "ratings.json")}, "must hold a non-empty JSON list of problem ids"),
        ({"--pass_n": "0"}, "--pass_n must be at least 1, got 0"),
        ({"--timeout": "0"}, "--timeout > 0"),
    ],
)
def test_user_errors_are_one_line(server, tmp_path, capsys, change, message):
    args = rate_args(server, tmp_path) + [
        item for pair in change.items() for item in pair
    ]  # the last one wins
    assert rate_main(args) == 1
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
    assert server.count() == 0


def test_the_script_runs_and_reports_errors_without_a_traceback(server, tmp_path):
    script = REPO / "scripts" / "deepcoder" / "benchmark" / "cf_elo_calc.py"
    ok = subprocess.run(
        [sys.executable, str(script), *rate_args(server, tmp_path)], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    assert "Codeforces rating estimate (pass_n=1)" in ok.stdout
    results = tmp_path / "bad.json"
    results.write_text(json.dumps([[1]] * 10 + [[0, 3]]))
    args = rate_args(server, tmp_path)
    args[args.index("--results_path") + 1] = str(results)
    bad = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    assert bad.returncode == 1
    assert (
        bad.stderr.strip()
        == f"cf_elo_calc.py: error: results file {results}, problem 1003B: score 3 is not 0 or 1"
    )


def test_module_entry_point_runs_both_commands(server, tmp_path):
    def module(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "rllm.codeforces", *args], capture_output=True, text=True
        )

    usage = module()
    assert usage.returncode == 2 and "usage: python -m rllm.codeforces {rate,prefetch}" in usage.stderr
    cache = str(tmp_path / "cache")
    fetched = module("prefetch", "--metadata", str(FIXTURES / "metadata.json"), "--api-base", server.api_base,
                     "--cache-dir", cache, "--min-interval", "0")  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    rated = module("rate", *rate_args(server, tmp_path / "cache", "--offline"))
    assert rated.returncode == 0 and "2 used, 1 skipped" in rated.stdout
