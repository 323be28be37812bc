"""From Codeforces API responses to what the rating algorithm needs about one contest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rllm.codeforces.elo import Score
from rllm.codeforces.errors import ApiError

ApiCall = tuple[str, dict[str, str]]
"""An API method name and its query parameters."""


def contest_calls(contest_id: int) -> tuple[ApiCall, ApiCall]:
    """The two API calls describing a contest: official standings, then rating changes."""
    return (
        ("contest.standings", {"contestId": str(contest_id), "showUnofficial": "false"}),
        ("contest.ratingChanges", {"contestId": str(contest_id)}),
    )


@dataclass(frozen=True)
class ContestData:
    """One contest, restricted to its rated official participants.

    ``rows`` are their standings in order (best first) and ``old_ratings[k]`` is the pre-contest
    rating of the participant of ``rows[k]``. ``problem_points`` maps each problem index to its
    point value, or None for ICPC-style problems.
    """

    contest_id: int
    problem_points: dict[str, float | None]
    rows: list[Score]
    old_ratings: list[int]


def parse_contest(contest_id: int, standings: Any, rating_changes: Any) -> ContestData:
    """Build :class:`ContestData` from the ``result`` payloads of the two :func:`contest_calls`.

    A participant counts when the handle of a standings row (its party's first member, as
    Codeforces rounds are individual) also has a rating change. Raises :class:`ApiError` if a
    payload lacks a field the algorithm needs.
    """
    try:
        problem_points = {problem["index"]: problem.get("points") for problem in standings["problems"]}
        old_rating = {change["handle"]: change["oldRating"] for change in rating_changes}
        rows, old_ratings = [], []
        for row in standings["rows"]:
            handle = row["party"]["members"][0]["handle"]
            if handle in old_rating:
                rows.append(Score(row["points"], row["penalty"]))
                old_ratings.append(old_rating[handle])
    except (KeyError, IndexError, TypeError) as err:
        raise ApiError(
            f"contest {contest_id}: malformed API response ({type(err).__name__}: {err}); "
            "delete its cached files and fetch again"
        ) from None
    return ContestData(contest_id, problem_points, rows, old_ratings)


def load_contest(call: Callable[[str, dict[str, str]], Any], contest_id: int) -> ContestData:
    """Fetch (through ``call(method, params) -> result``) and parse one contest."""
    standings_call, changes_call = contest_calls(contest_id)
    return parse_contest(contest_id, call(*standings_call), call(*changes_call))
