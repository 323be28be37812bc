"""Command line: ``rate`` (scripts/deepcoder/benchmark/cf_elo_calc.py) and ``prefetch`` (cf_prefetch.py).

Both exit 0 on success and 1 with a one-line ``error:`` message for anything the user can fix
(missing or malformed files, an unreachable API, contests missing from the cache offline).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

from tqdm import tqdm

from rllm.codeforces.api import DEFAULT_API_BASE, CodeforcesClient, RetryPolicy
from rllm.codeforces.cache import ResponseCache, default_cache_dir
from rllm.codeforces.contest import contest_calls, load_contest
from rllm.codeforces.errors import ApiError, CacheMissError, CodeforcesError
from rllm.codeforces.estimate import MIN_RATED_PARTICIPANTS, Estimate, estimate_rating, missing_contests
from rllm.codeforces.inputs import group_by_contest, load_metadata, load_ratings, load_results
from rllm.data.paths import default_data_dir

_DEFAULTS = RetryPolicy()


def _add_common_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metadata",
        type=Path,
        default=default_data_dir() / "codeforces" / "metadata_cf.json",
        help="JSON list of problem ids aligned with the results (default: %(default)s)",
    )
    parser.add_argument(
        "--api-base",
        default=DEFAULT_API_BASE,
        help="Codeforces API root, or a mirror or local server (default: %(default)s)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=default_cache_dir(),
        help="where API responses are cached (default: %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=_DEFAULTS.timeout,
        help="seconds to wait for each response (default: %(default)s)",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=_DEFAULTS.max_retries,
        help="retries of a failed call (default: %(default)s)",
    )
    parser.add_argument(
        "--retry-backoff",
        type=float,
        default=_DEFAULTS.backoff,
        help="seconds before the first retry, doubled for each next one (default: %(default)s)",
    )
    parser.add_argument(
        "--min-interval",
        type=float,
        default=_DEFAULTS.min_interval,
        help="least seconds between API calls; Codeforces allows one per 2 s (default: %(default)s)",
    )


def _policy(args: argparse.Namespace) -> RetryPolicy:
    if args.max_retries < 0 or args.timeout <= 0 or args.retry_backoff < 0 or args.min_interval < 0:
        raise CodeforcesError(
            "--max-retries, --retry-backoff and --min-interval must be >= 0 and --timeout > 0"
        )
    return RetryPolicy(
        max_retries=args.max_retries,
        backoff=args.retry_backoff,
        timeout=args.timeout,
        min_interval=args.min_interval,
    )


def rate_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Estimate a model's Codeforces rating and percentile from its per-problem attempt results."
    )
    parser.add_argument(
        "--results_path",
        "--results-path",
        type=Path,
        required=True,
        help="JSON list (aligned with --metadata) or {problem id: list} of 0/1 attempt scores",
    )
    parser.add_argument(
        "--pass_n",
        "--pass-n",
        type=int,
        default=1,
        help="attempts per problem that count; the first passing one scores (default: %(default)s)",
    )
    parser.add_argument(
        "--ratings",
        type=Path,
        default=default_data_dir() / "codeforces" / "ratings_2024.json",
        help="JSON {rating: number of users} for percentiles (default: %(default)s)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="use only cached API responses (fill the cache with cf_prefetch.py)",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the full report as JSON to OUT")
    _add_common_flags(parser)
    return parser


def prefetch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Download and cache the Codeforces API responses of every contest in a metadata file, "
        "so that cf_elo_calc.py --offline works without internet access."
    )
    _add_common_flags(parser)
    return parser


def rate(args: argparse.Namespace) -> Estimate:
    """Load the inputs, check the cache when offline, and estimate the rating."""
    if args.pass_n < 1:
        raise CodeforcesError(f"--pass_n must be at least 1, got {args.pass_n}")
    policy = _policy(args)
    metadata = load_metadata(args.metadata)
    grouped = group_by_contest(load_results(args.results_path, metadata))
    distribution = load_ratings(args.ratings)
    if args.offline:
        missing = missing_contests(ResponseCache(args.cache_dir), grouped)
        if missing:
            raise CacheMissError(
                f"--offline: the cache {args.cache_dir} lacks {len(missing)} of {len(grouped)} contests: "
                f"{', '.join(map(str, missing))}; run cf_prefetch.py --metadata {args.metadata} --cache-dir "
                f"{args.cache_dir} on a machine with internet access and copy the cache here"
            )
    client = CodeforcesClient(
        ResponseCache(args.cache_dir), args.api_base, offline=args.offline, policy=policy
    )
    try:
        return estimate_rating(
            grouped, partial(load_contest, client.call), args.pass_n, distribution, progress=True
        )
    finally:
        client.close()


def format_report(estimate: Estimate) -> str:
    """The printed summary: rating, percentile, contests used and skipped, per-contest table."""
    lines = [
        f"Codeforces rating estimate (pass_n={estimate.pass_n})",
        f"  rating:     {estimate.rating:.1f}",
        f"  percentile: {estimate.percentile:.1f}% (share of {estimate.rated_users} rated users below this rating)",
        f"  contests:   {len(estimate.contests)} used, {len(estimate.skipped)} skipped",
    ]
    if estimate.skipped:
        lines.append(
            f"  skipped (at most {MIN_RATED_PARTICIPANTS} rated participants): "
            + ", ".join(f"{s.contest_id} ({s.rated_participants})" for s in estimate.skipped)
        )
    if estimate.short_attempts:
        lines.append(
            f"  note: {len(estimate.short_attempts)} problems have fewer than {estimate.pass_n} attempts "
            f"(all of theirs were scored): {', '.join(estimate.short_attempts[:10])}"
            + (" ..." if len(estimate.short_attempts) > 10 else "")
        )
    lines.append("")
    lines.append(
        f"  {'contest':>7} {'rated':>6} {'solved':>7} {'points':>8} {'penalty':>7} {'rank':>6} {'rating':>6} {'pct':>5}"
    )
    for c in estimate.contests:
        lines.append(
            f"  {c.contest_id:>7} {c.rated_participants:>6} {f'{c.solved}/{c.problems}':>7} {c.points:>8g} "
            f"{c.penalty:>7} {c.rank:>6} {c.rating:>6} {c.percentile:>5.1f}"
        )
    return "\n".join(lines)


def rate_main(argv: list[str] | None = None) -> int:
    """``cf_elo_calc.py``: print the estimate and optionally write it as JSON."""
    parser = rate_parser()
    args = parser.parse_args(argv)
    try:
        estimate = rate(args)
        if args.json is not None:
            report = {
                **estimate.to_dict(),
                "results_path": str(args.results_path),
                "metadata": str(args.metadata),
                "ratings": str(args.ratings),
            }
            try:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            except OSError as err:
                raise CodeforcesError(f"cannot write --json {args.json}: {err.strerror}") from None
    except CodeforcesError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted; fetched responses are cached, re-run to resume", file=sys.stderr)
        return 130
    print(format_report(estimate))
    return 0


def prefetch(args: argparse.Namespace) -> tuple[int, int, dict[int, str]]:
    """Cache every contest of the metadata: (already cached, fetched, {failed contest: reason})."""
    policy = _policy(args)
    contest_ids = sorted({problem.contest_id for problem in load_metadata(args.metadata)})
    client = CodeforcesClient(ResponseCache(args.cache_dir), args.api_base, policy=policy)
    cached = fetched = 0
    failed: dict[int, str] = {}
    try:
        for contest_id in tqdm(contest_ids, desc="Prefetching contests", unit="contest", disable=None):
            if not missing_contests(client.cache, [contest_id]):
                cached += 1
                continue
            try:
                for method, params in contest_calls(contest_id):
                    client.call(method, params)
            except ApiError as err:
                failed[contest_id] = str(err)
            else:
                fetched += 1
    finally:
        client.close()
    return cached, fetched, failed


def prefetch_main(argv: list[str] | None = None) -> int:
    """``cf_prefetch.py``: fill the cache; exits 1 if any contest could not be fetched."""
    parser = prefetch_parser()
    args = parser.parse_args(argv)
    try:
        cached, fetched, failed = prefetch(args)
    except CodeforcesError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted; fetched responses are cached, re-run to resume", file=sys.stderr)
        return 130
    print(
        f"{cached + fetched + len(failed)} contests: {cached} already cached, {fetched} fetched, "
        f"{len(failed)} failed; cache: {args.cache_dir}"
    )
    for contest_id, reason in failed.items():
        print(f"{parser.prog}: error: contest {contest_id}: {reason}", file=sys.stderr)
    return 1 if failed else 0
