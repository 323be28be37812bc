"""The rating algorithm and input validation, against hand-computed values and brute force."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from rllm.codeforces.contest import ContestData
from rllm.codeforces.elo import (
    RatingDistribution,
    Score,
    expected_seed,
    model_rank,
    model_score,
    rating_for_rank,
)
from rllm.codeforces.errors import CodeforcesError, InputError
from rllm.codeforces.estimate import ContestRating, SkippedContest, estimate_rating, rate_contest
from rllm.codeforces.inputs import ProblemId, group_by_contest, load_metadata, load_ratings, load_results

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "codeforces"
POINTS = {"A": 500.0, "B": 1000.0, "C": 1500.0}
ICPC = {"A": None, "B": None, "C": None}


# --- contest score -------------------------------------------------------------------------


def test_points_problems_score_the_first_pass_within_pass_n():
    attempts = {"A": [1, 1], "B": [0, 1], "C": [0, 0, 1]}
    # pass_n=2: A on attempt 0 (500), B on attempt 1 (1000 - 50), C's pass is attempt 2: too late.
    assert model_score(POINTS, attempts, pass_n=2).score == Score(1450, 0)
    assert model_score(POINTS, attempts, pass_n=2).solved == 2
    # pass_n=3 adds C at 1500 - 100.
    assert model_score(POINTS, attempts, pass_n=3).score == Score(2850, 0)
    assert model_score(POINTS, attempts, pass_n=1).score == Score(500, 0)


def test_points_never_go_below_zero():
    result = model_score({"A": 100.0}, {"A": [0, 0, 0, 1]}, pass_n=4)
    assert result.score == Score(0, 0)  # 100 - 150 is clamped; the problem still counts as solved
    assert result.solved == 1


def test_icpc_problems_count_solved_and_penalty():
    attempts = {"A": [1], "B": [0, 0, 1], "C": [0, 0, 0]}
    assert model_score(ICPC, attempts, pass_n=3).score == Score(2, 20)
    assert model_score(ICPC, attempts, pass_n=2).score == Score(1, 0)


def test_fewer_attempts_than_pass_n_and_empty_attempts():
    assert model_score(ICPC, {"A": [0, 1], "B": []}, pass_n=8).score == Score(1, 10)


def test_pass_n_must_be_positive():
    with pytest.raises(ValueError, match="pass_n"):
        model_score(POINTS, {"A": [1]}, pass_n=0)


# --- rank ----------------------------------------------------------------------------------

ROWS = [Score(3, 10), Score(2, 5), Score(2, 20), Score(1, 0)]


@pytest.mark.parametrize(
    ("model", "rank"),
    [
        (Score(4, 0), 1),  # beats everybody
        (Score(3, 9), 1),  # equal points, less penalty
        (Score(3, 10), 2),  # full tie with row 1: placed after it
        (Score(2, 10), 3),  # between the two 2-point rows
        (Score(2, 20), 4),  # tie with row 3, beats row 4
        (Score(1, 0), 5),  # ties the last row: beats nobody
        (Score(0, 0), 5),  # beats nobody: len(rows) + 1
    ],
)
def test_rank_is_one_plus_the_position_of_the_first_row_beaten(model, rank):
    assert model_rank(ROWS, model) == rank


def test_rank_after_a_block_of_point_ties():
    rows = [Score(1950, 0), Score(1450, 0), Score(1450, 0), Score(1450, 0), Score(1000, 0)]
    assert model_rank(rows, Score(1450, 0)) == 5
    assert model_rank([], Score(0, 0)) == 1


# --- rating --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rank", "rating"),
    [
        # Ten participants rated 2000: seed(r) = 1 + 10 / (1 + 10^((r - 2000)/400)) >= rank
        # <=> r <= 2000 + 400 log10(10 / (rank - 1) - 1), searched in [0, 2100).
        (1, 2099),  # every r qualifies: the top of the range
        (3, 2099),  # 2000 + 240.8 is clamped to the range
        (6, 2000),  # seed(2000) = 6 exactly
        (9, 1759),  # 2000 - 240.8
        (10, 1618),  # 2000 - 381.7
        (11, 0),  # beats nobody: seed > 11 never holds, the floor of the range
    ],
)
def test_rating_for_rank_hand_computed(rank, rating):
    assert rating_for_rank(rank, [2000] * 10) == rating
    if 1 < rank < 11:
        closed_form = 2000 + 400 * math.log10(10 / (rank - 1) - 1)
        assert rating == min(math.floor(closed_form), 2099)


def brute_force_rating(rank: int, old_ratings: list[int]) -> int:
    qualifying = [r for r in range(0, max(old_ratings) + 100) if expected_seed(r, old_ratings) >= rank]
    return max(qualifying, default=0)


def test_rating_for_rank_matches_a_brute_force_scan():
    rng = random.Random(0)
    for _ in range(6):
        old = [rng.randint(-50, 3000) for _ in range(rng.randint(1, 12))]
        for rank in range(1, len(old) + 2):
            assert rating_for_rank(rank, old) == brute_force_rating(rank, old), (rank, old)


def test_rating_range_empty_or_below_zero():
    assert rating_for_rank(1, [-150]) == 0  # range [0, -50) is empty
    assert rating_for_rank(1, [-99]) == 0  # range [0, 1) holds only 0


def test_expected_seed_decreases():
    old = [1200, 1500, 2100]
    seeds = [expected_seed(r, old) for r in range(0, 4000, 50)]
    assert all(a > b for a, b in zip(seeds, seeds[1:], strict=False))
    assert expected_seed(1500, [1500, 1500]) == 2.0


# --- percentile ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rating", "percentile"),
    [(999, 0.0), (1000, 0.0), (1000.5, 20.0), (1500, 20.0), (1501, 50.0), (2000, 50.0), (2001, 100.0)],
)
def test_percentile_is_the_share_strictly_below(rating, percentile):
    distribution = RatingDistribution({1000: 2, 1500: 3, 2000: 5, 1800: 0})
    assert distribution.total == 10
    assert distribution.percentile(rating) == percentile


# --- one contest and the estimate ----------------------------------------------------------


def contest(participants: int, points=None) -> ContestData:
    rows = [Score(2 - k * 2 // participants, k) for k in range(participants)]
    return ContestData(7, points or dict(ICPC), rows, [1500] * participants)


def test_contests_with_at_most_200_rated_participants_are_skipped():
    distribution = RatingDistribution({1500: 1})
    skipped = rate_contest(contest(200), {"A": [1]}, 1, distribution)
    assert isinstance(skipped, SkippedContest) and skipped.rated_participants == 200
    used = rate_contest(contest(201), {"A": [1]}, 1, distribution)
    assert isinstance(used, ContestRating) and used.rated_participants == 201


def test_contest_rating_details():
    data = contest(201)
    rating = rate_contest(data, {"A": [0, 1], "B": [1]}, 2, RatingDistribution({1000: 1, 2000: 1}))
    assert (rating.points, rating.penalty, rating.solved, rating.problems) == (2, 10, 2, 2)
    assert rating.rank == model_rank(data.rows, Score(2, 10))
    assert rating.rating == brute_force_rating(rating.rank, data.old_ratings)
    assert rating.percentile == 50.0


def test_problem_not_in_the_contest_is_an_error():
    with pytest.raises(InputError, match=r"7Z are not in contest 7, whose problems are A, B, C"):
        rate_contest(contest(201), {"Z": [1]}, 1, RatingDistribution({1: 1}))


def test_estimate_is_the_mean_and_reports_skips_and_short_attempts():
    contests = {1: contest(300), 2: contest(150), 3: contest(250)}
    contests = {cid: ContestData(cid, c.problem_points, c.rows, c.old_ratings) for cid, c in contests.items()}
    grouped = {1: {"A": [1]}, 2: {"A": [1]}, 3: {"A": [0], "B": [1, 1]}}
    distribution = RatingDistribution({1000: 1, 1500: 1, 2000: 2})
    estimate = estimate_rating(grouped, contests.__getitem__, 2, distribution)
    assert [c.contest_id for c in estimate.contests] == [1, 3]
    assert [(s.contest_id, s.rated_participants) for s in estimate.skipped] == [(2, 150)]
    assert estimate.rating == (estimate.contests[0].rating + estimate.contests[1].rating) / 2
    assert estimate.percentile == distribution.percentile(estimate.rating)
    assert estimate.short_attempts == ["1A", "2A", "3A"]
    assert json.loads(json.dumps(estimate.to_dict()))["contests"][0]["contest_id"] == 1


def test_estimate_fails_when_every_contest_is_skipped():
    with pytest.raises(CodeforcesError, match="all 1 contests were skipped"):
        estimate_rating({7: {"A": [1]}}, lambda cid: contest(10), 1, RatingDistribution({1: 1}))


# --- input files ---------------------------------------------------------------------------


def write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_problem_ids_parse():
    assert ProblemId.parse("1972D1") == ProblemId(1972, "D1")
    assert str(ProblemId.parse("1971A")) == "1971A"
    for bad in ["A1971", "1971", "1971a", " 1971A", 1971]:
        with pytest.raises(InputError, match="invalid problem id"):
            ProblemId.parse(bad)


def test_metadata_errors(tmp_path):
    with pytest.raises(
        InputError, match=r"metadata file not found: .*nope.json \(pass its path with --metadata\)"
    ):
        load_metadata(tmp_path / "nope.json")
    with pytest.raises(InputError, match="not valid JSON"):
        load_metadata(write(tmp_path, "m.json", "[1971A"))
    with pytest.raises(InputError, match="non-empty JSON list"):
        load_metadata(write(tmp_path, "m.json", {"1971A": 1}))
    with pytest.raises(InputError, match="entry 1: invalid problem id 'x'"):
        load_metadata(write(tmp_path, "m.json", ["1971A", "x"]))
    with pytest.raises(InputError, match="lists problem 1971A twice"):
        load_metadata(write(tmp_path, "m.json", ["1971A", "1971A"]))


def test_results_list_and_dict_forms_agree(tmp_path):
    metadata = [ProblemId(1971, "A"), ProblemId(1972, "D1")]
    as_list = load_results(write(tmp_path, "l.json", [[1, 0], [0.0, True]]), metadata)
    as_dict = load_results(write(tmp_path, "d.json", {"1972D1": [0, 1], "1971A": [1.0, False]}), metadata)
    assert as_list == as_dict == {metadata[0]: [1, 0], metadata[1]: [0, 1]}
    assert group_by_contest(as_list) == {1971: {"A": [1, 0]}, 1972: {"D1": [0, 1]}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([[1]], r"has 1 entries but the metadata lists 2 problems"),
        ([[1], [0.5]], r"problem 1972D1: score 0.5 is not 0 or 1"),
        ([[1], [2]], r"score 2 is not 0 or 1"),
        ([[1], ["1"]], r"score '1' is not 0 or 1"),
        ([[1], 1], r"problem 1972D1: expected a list of 0/1 scores"),
        ({"1971A": [1], "1972D1": [0], "1999B": [1]}, r"ids not in the metadata: 1999B"),
        ({"1971A": [1]}, r"lacks metadata problems: 1972D1"),
        ("5", r"must hold a list of attempt lists"),
    ],
)
def test_results_errors(tmp_path, data, message):
    metadata = [ProblemId(1971, "A"), ProblemId(1972, "D1")]
    with pytest.raises(InputError, match=message):
        load_results(write(tmp_path, "r.json", data), metadata)


def test_ratings_file(tmp_path):
    distribution = load_ratings(write(tmp_path, "r.json", {"-5": 1, "1500": 3}))
    assert distribution.total == 4 and distribution.percentile(0) == 25.0
    for data, message in [
        ([1], "non-empty JSON object"),
        ({"high": 1}, "key 'high' is not a rating"),
        ({"1500": -1}, "count -1 for rating 1500"),
        ({"1500": 1.5}, "count 1.5"),
        ({"1500": 0}, "counts no users"),
    ]:
        with pytest.raises(InputError, match=message):
            load_ratings(write(tmp_path, "r.json", data))


# --- the real files ------------------------------------------------------------------------


@pytest.mark.realdata
def test_real_metadata_and_ratings():
    metadata_path, ratings_path = SHARED / "metadata_cf.json", SHARED / "ratings_2024.json"
    if not (metadata_path.is_file() and ratings_path.is_file()):
        pytest.skip(f"real Codeforces files not found in {SHARED}")
    metadata = load_metadata(metadata_path)
    assert len(metadata) == len(json.loads(metadata_path.read_text()))
    grouped = group_by_contest({problem: [0] for problem in metadata})
    assert sum(len(problems) for problems in grouped.values()) == len(metadata)
    assert all(1 <= len(problems) <= 12 for problems in grouped.values())
    assert list(grouped) == sorted(grouped)

    distribution = load_ratings(ratings_path)
    counts = json.loads(ratings_path.read_text())
    assert distribution.total == sum(counts.values())
    assert distribution.percentile(-10_000) == 0.0 and distribution.percentile(10_000) == 100.0
    below_1500 = sum(count for rating, count in counts.items() if float(rating) < 1500)
    assert distribution.percentile(1500) == pytest.approx(100 * below_1500 / distribution.total)
    samples = [distribution.percentile(r) for r in range(-100, 4000, 25)]
    assert samples == sorted(samples)
