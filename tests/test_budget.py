"""The engine-agnostic budget: parsing, the per-token rule, and record accounting (real tokenizer)."""

from __future__ import annotations

import pytest

from rllm.budget import (
    Budget,
    BudgetError,
    BudgetState,
    Mode,
    Phase,
    SpecialTokens,
    build_record,
    close_phase_one,
)


@pytest.fixture(scope="module")
def special(tiny_tokenizer) -> SpecialTokens:
    return SpecialTokens.from_tokenizer(tiny_tokenizer)


@pytest.mark.parametrize(
    ("text", "thinking", "solution"),
    [("1024+1024", 1024, 1024), ("1k+1k", 1024, 1024), ("0.5k+1k", 512, 1024), (" 2K + 512 ", 2048, 512), ("0+64", 0, 64)],
)
def test_parse_e1_budgets(text, thinking, solution):
    budget = Budget.parse(text)
    assert (budget.thinking, budget.solution, budget.mode) == (thinking, solution, Mode.E1)
    assert budget.label == f"{thinking}+{solution}"


def test_parse_total_budgets():
    assert Budget.parse("2k", "truncate").total == 2048
    assert Budget.parse("1k+1k", "truncate").total == 2048
    assert Budget.parse("32768", "none").label == "none-32768"


@pytest.mark.parametrize("text", ["", "1k", "1k+", "abc+1k", "1k+1k+1k", "0.3+5", "-5+10"])
def test_malformed_budget_strings_are_clear_errors(text):
    with pytest.raises(BudgetError, match="budget"):
        Budget.parse(text)


def test_invalid_budget_values():
    with pytest.raises(BudgetError, match="thinking budget must be >= 0"):
        Budget(-1, 10)
    with pytest.raises(BudgetError, match="solution budget must be > 0"):
        Budget(10, 0)
    with pytest.raises(BudgetError, match="total budget"):
        Budget(mode="truncate")


def test_extra_args_round_trip():
    budget = Budget.parse("0.5k+1k", "s1")
    assert Budget.from_extra_args(budget.to_extra_args()) == budget


def test_special_tokens_come_from_the_tokenizer(tiny_tokenizer, special):
    assert special.think_close == tiny_tokenizer.convert_tokens_to_ids("</think>")
    assert special.eos == (tiny_tokenizer.eos_token_id,)
    assert tiny_tokenizer.decode(list(special.cue)) == "\n\n**Final Answer**\n"


def test_tokenizer_without_single_token_think_close_is_rejected():
    from rllm.testing.tiny_model import build_tokenizer

    plain = build_tokenizer(think_tokens=False)
    assert len(plain.encode("</think>", add_special_tokens=False)) > 1
    with pytest.raises(BudgetError, match="as one token"):
        SpecialTokens.from_tokenizer(plain)


def test_tokenizer_without_eos_is_rejected(tiny_tokenizer):
    class NoEos:
        eos_token_id = None

        def encode(self, text, add_special_tokens=False):
            return tiny_tokenizer.encode(text, add_special_tokens=add_special_tokens)

    with pytest.raises(BudgetError, match="no EOS"):
        SpecialTokens.from_tokenizer(NoEos())


def _drive(state: BudgetState, proposals: list[int]) -> list[int]:
    """Run the rule as an engine would: a forced token overrides the proposal; EOS is redirected."""
    emitted = []
    for proposal in proposals:
        if state.phase is Phase.DONE:
            break
        token = state.forced_token()
        if token is None:
            token = state.tokens.think_close if (state.redirect_eos() and proposal in state.tokens.eos) else proposal
        emitted.append(token)
        state.advance(token)
    return emitted


def test_forced_close_at_thinking_budget_then_eos_at_solution_budget(special):
    state = BudgetState(Budget(3, 2), special)
    emitted = _drive(state, [10, 11, 12, 13, 14, 15, 16, 17])
    # a forced step discards the model's proposal (13), as an engine discards its sample
    assert emitted == [10, 11, 12, special.think_close, 14, 15, special.eos[0]]
    assert state.forced_close and state.forced_eos and state.phase is Phase.DONE
    record = build_record(emitted, Budget(3, 2), special)
    assert record.token_ids == emitted[:-1]  # the stopping EOS is not part of the response
    assert record.forced_mask == [False, False, False, True, False, False]
    assert (record.thinking_tokens, record.solution_tokens) == (3, 2)
    assert record.forced_close and record.solution_truncated and record.finish_reason == "length"


def test_natural_close_and_sampled_eos(special):
    close, eos = special.think_close, special.eos[0]
    emitted = _drive(BudgetState(Budget(5, 4), special), [10, close, 11, eos, 12])
    record = build_record(emitted, Budget(5, 4), special)
    assert record.token_ids == [10, close, 11, eos]
    assert not record.forced_close and record.think_closed and not record.solution_truncated
    assert (record.thinking_tokens, record.solution_tokens, record.finish_reason) == (1, 2, "stop")


def test_close_sampled_as_last_thinking_token_is_not_forced(special):
    close = special.think_close
    record = build_record([1, 2, close, 3], Budget(3, 5), special)
    assert record.think_closed and not record.forced_close and record.thinking_tokens == 2


def test_eos_in_thinking_becomes_think_close(special):
    close, eos = special.think_close, special.eos[0]
    emitted = _drive(BudgetState(Budget(8, 4), special), [10, eos, 11, eos])
    assert emitted == [10, close, 11, eos]
    assert eos not in build_record(emitted, Budget(8, 4), special).token_ids[:2]


def test_thinking_budget_zero_forces_close_immediately(special):
    emitted = _drive(BudgetState(Budget(0, 3), special), [10, 11, 12, 13])
    assert emitted[0] == special.think_close
    record = build_record(emitted, Budget(0, 3), special)
    assert record.thinking_tokens == 0 and record.forced_close


def test_s1_forces_close_and_cue_and_counts_only_sampled_solution(special):
    budget = Budget(2, 3, Mode.S1)
    emitted = _drive(BudgetState(budget, special), list(range(10, 60)))
    cue = list(special.cue)
    assert emitted[:3 + len(cue)] == [10, 11, special.think_close, *cue]
    record = build_record(emitted, budget, special)
    assert record.solution_tokens == 3 and record.forced_mask.count(True) == 1 + len(cue)


@pytest.mark.parametrize("mode", [Mode.NONE, Mode.TRUNCATE])
def test_unbudgeted_modes_never_force(special, mode):
    budget = Budget(mode=mode, total=6)
    state = BudgetState(budget, special)
    emitted = _drive(state, [10, special.eos[0], 11, 12, 13, 14])
    assert state.forced_token() is None
    assert emitted[1] == special.eos[0]  # EOS is not redirected without a budget
    record = build_record(emitted[:2], budget, special)
    assert not record.forced_close and record.finish_reason == "stop"


def test_truncate_record_marks_cut(special):
    budget = Budget(mode=Mode.TRUNCATE, total=4)
    record = build_record([10, 11, 12, 13], budget, special)
    assert record.solution_truncated and record.finish_reason == "length" and not record.think_closed


def test_state_advances_in_constant_time_per_token(special):
    # The rule keeps counters, never the token history: its state has no per-token storage.
    state = BudgetState(Budget(10_000, 10_000), special)
    for _ in range(20_000):
        if state.forced_token() is None:
            state.advance(7)
        else:
            state.advance(state.forced_token())
    assert state.thinking_sampled == 10_000 and state.solution_sampled == 9_999
    assert not state._queue


def test_queries_have_no_side_effects_so_advance_alone_replays(special):
    # t = 0 in s1: the close and the cue are due before any token is emitted.
    budget = Budget(0, 4, Mode.S1)
    state = BudgetState(budget, special)
    for token in [special.think_close, *special.cue]:
        assert state.phase is Phase.FORCING
        state.advance(token)
    assert state.phase is Phase.SOLUTION and state.forced_close
    # asking repeatedly never changes the answer
    state = BudgetState(Budget(2, 4), special)
    state.advance(10)
    assert [state.forced_token() for _ in range(3)] == [None] * 3
    state.advance(11)
    assert state.forced_token() == special.think_close == state.forced_token()


def test_two_phase_eos_in_thinking_marks_the_appended_close_forced(special):
    record = build_record([10, special.think_close, 11, special.eos[0]], Budget(8, 4), special, eos_in_thinking=True)
    assert record.forced_close and record.forced_mask == [False, True, False, False]
    assert record.thinking_tokens == 1 and record.eos_in_thinking


def test_two_phase_close_of_thinking(special):
    close, eos, cue = special.think_close, special.eos[0], list(special.cue)
    e1, s1 = Budget(3, 4), Budget(3, 4, Mode.S1)
    assert cue, "the s1 cue must tokenize to something for this test to mean anything"
    # a sampled </think> is kept, nothing forced (in s1 too: the cue is only for the budget)
    assert close_phase_one([10, close], s1, special) == ([10, close], [])
    # a sampled EOS is dropped and replaced by </think> alone, never the cue
    assert close_phase_one([10, eos], s1, special) == ([10], [close])
    # at the budget (or t = 0): </think> forced, plus the cue in s1
    assert close_phase_one([10, 11, 12], e1, special) == ([10, 11, 12], [close])
    assert close_phase_one([10, 11, 12], s1, special) == ([10, 11, 12], [close, *cue])
    assert close_phase_one([], s1, special) == ([], [close, *cue])
