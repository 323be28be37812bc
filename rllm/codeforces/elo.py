"""The rating algorithm, free of I/O: the model's contest score, its rank, its rating, its percentile.

The model is placed into a contest's official standings as one extra participant. Its rating for
that contest is the rating at which Codeforces' expected seed — ``1 + Σ_i P(participant i beats
the model)`` with the Elo win probability ``1 / (1 + 10^((r - old_i) / 400))`` — still reaches
the rank the model actually took: the largest integer such rating, searched in
``[0, max old rating + 100)``.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# A problem solved on attempt i (0-based) scores `points - 50 * i` (never below 0) in contests
# with point values, or costs `10 * i` penalty minutes in ICPC-style contests: the Codeforces
# price of i wrong submissions, with the submission time taken as zero.
WRONG_ATTEMPT_POINTS = 50
WRONG_ATTEMPT_PENALTY = 10

# The search range ends this far above the strongest participant's old rating.
SEARCH_HEADROOM = 100


@dataclass(frozen=True)
class Score:
    """A contest result: ``points`` (solved count in ICPC-style contests) and penalty minutes."""

    points: float
    penalty: int


@dataclass(frozen=True)
class ModelResult:
    """The model's score in one contest and how many of its problems it solved."""

    score: Score
    solved: int


def model_score(
    problem_points: Mapping[str, float | None], attempts: Mapping[str, Sequence[int]], pass_n: int
) -> ModelResult:
    """Score the model's attempts on one contest's problems.

    ``problem_points`` maps each problem index of the contest to its point value, or None for an
    ICPC-style problem; every index of ``attempts`` must be a key of it. A problem counts as
    solved at its first passing attempt ``i`` among the first ``pass_n`` (fewer if fewer were
    made), which earns ``max(0, points - 50 i)``, or one point and ``10 i`` penalty minutes.
    """
    if pass_n < 1:
        raise ValueError(f"pass_n must be at least 1, got {pass_n}")
    points = 0.0
    penalty = 0
    solved = 0
    for index, scores in attempts.items():
        first_pass = next((i for i, score in enumerate(scores[:pass_n]) if score == 1), None)
        if first_pass is None:
            continue
        solved += 1
        value = problem_points[index]
        if value is None:
            points += 1
            penalty += WRONG_ATTEMPT_PENALTY * first_pass
        else:
            points += max(0, value - WRONG_ATTEMPT_POINTS * first_pass)
    return ModelResult(Score(points, penalty), solved)


def beats(model: Score, row: Score) -> bool:
    """Whether the model places above ``row``: more points, or equal points and less penalty.

    A full tie is not a win: the model is placed after everyone it ties with.
    """
    return row.points < model.points or (row.points == model.points and row.penalty > model.penalty)


def model_rank(rows: Sequence[Score], model: Score) -> int:
    """The model's 1-based rank among ``rows`` (official standings, best first).

    The model takes the place of the first row it beats: rank ``k + 1`` when that row is
    ``rows[k]``, so rank 1 beats everybody; a model that beats nobody ranks ``len(rows) + 1``.
    (The original script used ``k``, the 0-based position, and ``len(rows)`` for beating nobody:
    one place too good, which raised every per-contest rating slightly.)
    """
    return next((k + 1 for k, row in enumerate(rows) if beats(model, row)), len(rows) + 1)


def expected_seed(rating: float, old_ratings: Sequence[float]) -> float:
    """``1 + Σ_i 1 / (1 + 10^((rating - old_i) / 400))``: strictly decreasing in ``rating``."""
    return 1 + sum(1 / (1 + 10 ** ((rating - old) / 400)) for old in old_ratings)


def rating_for_rank(rank: int, old_ratings: Sequence[float]) -> int:
    """The largest integer r in ``[0, max(old_ratings) + 100)`` with ``expected_seed(r) >= rank``.

    When no r in the range qualifies (the rank is worse than even rating 0 predicts) or the range
    is empty, the answer is 0, the floor of the range. ``old_ratings`` must not be empty.
    """
    low, high = 0, max(old_ratings) + SEARCH_HEADROOM
    # Invariant: low is the floor 0 or qualifies; high is the range end or does not qualify.
    # The seed decreases in r, so everything below a qualifying r qualifies: bisection is exact.
    while high - low > 1:
        middle = (low + high) // 2
        if expected_seed(middle, old_ratings) >= rank:
            low = middle
        else:
            high = middle
    return int(low)


class RatingDistribution:
    """A population of ratings given as ``{rating: number of users}``."""

    def __init__(self, counts: Mapping[float, int]):
        self._ratings = sorted(rating for rating, count in counts.items() if count > 0)
        # _below[k] = number of users rated strictly below self._ratings[k].
        self._below = [0, *itertools.accumulate(counts[r] for r in self._ratings)]
        self.total = self._below[-1]
        if self.total == 0:
            raise ValueError("a rating distribution needs at least one user")

    def percentile(self, rating: float) -> float:
        """The percentage (0-100, unrounded) of users whose rating is strictly below ``rating``."""
        return 100 * self._below[bisect.bisect_left(self._ratings, rating)] / self.total
