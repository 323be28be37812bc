"""The estimate over all contests: rate each one, skip the small ones, average, report."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from tqdm import tqdm

from rllm.codeforces.cache import ResponseCache
from rllm.codeforces.contest import ContestData, contest_calls
from rllm.codeforces.elo import RatingDistribution, model_rank, model_score, rating_for_rank
from rllm.codeforces.errors import CodeforcesError, InputError
from rllm.codeforces.inputs import Attempts

# Contests with at most this many rated official participants are skipped: their ratings are
# too noisy to place a model with.
MIN_RATED_PARTICIPANTS = 200


@dataclass(frozen=True)
class ContestRating:
    """How the model did in one contest; ``rank`` is 1-based among ``rated_participants`` + 1."""

    contest_id: int
    rated_participants: int
    problems: int
    solved: int
    points: float
    penalty: int
    rank: int
    rating: int
    percentile: float


@dataclass(frozen=True)
class SkippedContest:
    """A contest left out of the estimate, and why."""

    contest_id: int
    rated_participants: int
    reason: str


@dataclass(frozen=True)
class Estimate:
    """The mean rating over the used contests, its percentile, and the per-contest details.

    ``percentile`` is the share of the ``rated_users`` of the distribution rated below ``rating``.
    ``short_attempts`` names the problems with fewer than ``pass_n`` attempts; only the attempts
    they have were scored.
    """

    rating: float
    percentile: float
    rated_users: int
    pass_n: int
    contests: list[ContestRating]
    skipped: list[SkippedContest]
    short_attempts: list[str]

    def to_dict(self) -> dict:
        """A JSON-ready dictionary of every field."""
        return asdict(self)


def rate_contest(
    data: ContestData, attempts: dict[str, Attempts], pass_n: int, distribution: RatingDistribution
) -> ContestRating | SkippedContest:
    """Rate the model's ``attempts`` (by problem index) in one contest, or say why it is skipped.

    Raises :class:`InputError` if an attempted problem index is not one of the contest's problems.
    """
    unknown = sorted(set(attempts) - set(data.problem_points))
    if unknown:
        raise InputError(
            f"problems {', '.join(f'{data.contest_id}{index}' for index in unknown)} are not in contest "
            f"{data.contest_id}, whose problems are {', '.join(data.problem_points)}; check the metadata"
        )
    participants = len(data.rows)
    if participants <= MIN_RATED_PARTICIPANTS:
        return SkippedContest(
            data.contest_id,
            participants,
            f"{participants} rated participants (needs more than {MIN_RATED_PARTICIPANTS})",
        )
    result = model_score(data.problem_points, attempts, pass_n)
    rank = model_rank(data.rows, result.score)
    rating = rating_for_rank(rank, data.old_ratings)
    return ContestRating(
        contest_id=data.contest_id,
        rated_participants=participants,
        problems=len(attempts),
        solved=result.solved,
        points=result.score.points,
        penalty=result.score.penalty,
        rank=rank,
        rating=rating,
        percentile=distribution.percentile(rating),
    )


def missing_contests(cache: ResponseCache, contest_ids: Iterable[int]) -> list[int]:
    """The contests for which ``cache`` lacks at least one of the two API responses."""
    return [cid for cid in contest_ids if not all(cache.has(*call) for call in contest_calls(cid))]


def estimate_rating(
    grouped: dict[int, dict[str, Attempts]],
    load: Callable[[int], ContestData],
    pass_n: int,
    distribution: RatingDistribution,
    *,
    progress: bool = False,
) -> Estimate:
    """Rate every contest of ``grouped`` (``{contest id: {index: attempts}}``) and average.

    ``load`` supplies a contest's data (see :func:`rllm.codeforces.contest.load_contest`). The
    estimate is the plain mean of the per-contest ratings, and its percentile that of the mean.
    Raises :class:`CodeforcesError` when every contest is skipped.
    """
    rated: list[ContestRating] = []
    skipped: list[SkippedContest] = []
    contests = tqdm(
        grouped.items(), desc="Codeforces contests", unit="contest", disable=None if progress else True
    )
    for contest_id, attempts in contests:
        outcome = rate_contest(load(contest_id), attempts, pass_n, distribution)
        (rated if isinstance(outcome, ContestRating) else skipped).append(outcome)
    if not rated:
        raise CodeforcesError(
            f"all {len(skipped)} contests were skipped (each has at most {MIN_RATED_PARTICIPANTS} rated "
            "participants); no rating can be estimated"
        )
    mean = sum(contest.rating for contest in rated) / len(rated)
    short = [
        f"{contest_id}{index}"
        for contest_id, attempts in grouped.items()
        for index, scores in attempts.items()
        if len(scores) < pass_n
    ]
    return Estimate(mean, distribution.percentile(mean), distribution.total, pass_n, rated, skipped, short)
