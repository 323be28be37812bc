"""The vLLM backend on a real CPU engine and a real tiny model: budget invariants in every mode,
single pass == two-phase under greedy decoding, seeds, streaming, bad input, and the logits
processor's batch bookkeeping driven with vLLM's own BatchUpdate objects."""

from __future__ import annotations

import math

import pytest
from vllm_fixtures import ENGINE_MAX_MODEL_LEN, random_prompts, shared_engine

from rllm.budget import Budget, BudgetError, Mode, SampleRecord, SpecialTokens
from rllm.generation import SamplingConfig

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

@pytest.fixture(scope="module")
def vllm_generator(tiny_model_dir):
    """Single pass on the session's engine."""
    return shared_engine(tiny_model_dir)


@pytest.fixture(scope="module")
def vllm_two_phase(vllm_generator):
    """The original two-phase method on the same engine."""
    return vllm_generator.sharing_engine(two_phase=True)


SAMPLED = SamplingConfig(n=4, temperature=1.0, top_p=1.0, seed=1234)
GREEDY = SamplingConfig(temperature=0.0)


def check_budgeted(record: SampleRecord, budget: Budget, tokens: SpecialTokens) -> None:
    """The E1 rule holds for one e1/s1 record."""
    ids = record.token_ids
    # Exactly one </think> ends thinking; the model may sample another in its answer (as in the
    # original), which is solution text like any other token.
    assert tokens.think_close in ids
    close = ids.index(tokens.think_close)
    assert record.thinking_tokens == close <= budget.thinking
    assert not any(t in tokens.eos for t in ids[:close]), "EOS inside thinking"
    # Forced iff the model did not sample </think> within t sampled thinking tokens (or, in
    # two-phase, sampled EOS there: the EOS is dropped and </think> alone is appended).
    at_budget = close == budget.thinking
    assert record.forced_close == (at_budget or record.eos_in_thinking)
    assert record.forced_mask[close] == record.forced_close
    forced_tail = list(tokens.cue) if budget.mode is Mode.S1 and at_budget else []
    assert ids[close + 1 : close + 1 + len(forced_tail)] == forced_tail
    solution = ids[close + 1 + len(forced_tail) :]
    assert record.solution_tokens == len(solution) <= budget.solution
    assert not any(t in tokens.eos for t in solution[:-1]), "tokens after EOS"
    ended = bool(solution) and solution[-1] in tokens.eos
    assert record.solution_truncated == (not ended and len(solution) == budget.solution)
    assert record.finish_reason == ("stop" if ended else "length")
    assert not any(record.forced_mask[close + 1 + len(forced_tail) :])


@pytest.mark.parametrize("mode", [Mode.E1, Mode.S1])
def test_budget_invariants_sampled(vllm_generator, mode):
    budget = Budget(24, 12, mode)
    tokens = vllm_generator.special_tokens(budget)
    records = vllm_generator.generate(random_prompts(32, seed=1), budget, SAMPLED)
    assert [(r.prompt_index, r.sample_index) for r in records] == [(i, j) for i in range(32) for j in range(4)]
    for record in records:
        check_budgeted(record, budget, tokens)
    forced = sum(r.forced_close for r in records)
    assert 0 < forced < len(records), "budgets should give both natural and forced closes"
    assert any(r.solution_truncated for r in records) and any(not r.solution_truncated for r in records)
    assert len({tuple(r.token_ids) for r in records}) > len(records) // 2, "samples should differ"


def test_none_mode_never_forces(vllm_generator):
    budget = Budget(mode="none", total=48)
    tokens = vllm_generator.special_tokens(budget)
    records = vllm_generator.generate(random_prompts(32, seed=2), budget, SAMPLED)
    assert len(records) == 128
    for record in records:
        assert not any(record.forced_mask)
        assert not record.forced_close
        assert len(record.token_ids) <= 48
        assert not any(t in tokens.eos for t in record.token_ids[:-1])
    # Unconstrained: EOS may end the answer while thinking, and </think> is only ever sampled.
    assert any(r.token_ids[-1] in tokens.eos and not r.think_closed for r in records)


def test_truncate_never_exceeds_total(vllm_generator):
    budget = Budget(mode="truncate", total=20)
    tokens = vllm_generator.special_tokens(budget)
    records = vllm_generator.generate(random_prompts(32, seed=3), budget, SAMPLED)
    for record in records:
        assert len(record.token_ids) <= 20
        assert not any(record.forced_mask)
        ended = record.token_ids[-1] in tokens.eos
        assert record.solution_truncated == (not ended and len(record.token_ids) == 20)
    assert any(r.solution_truncated for r in records)


@pytest.mark.parametrize("two_phase", [False, True])
def test_zero_thinking_forces_close_immediately(vllm_generator, two_phase):
    generator = vllm_generator.sharing_engine(two_phase=two_phase)
    budget = Budget(0, 8)
    tokens = generator.special_tokens(budget)
    for record in generator.generate(random_prompts(16, seed=4), budget, SAMPLED):
        assert record.token_ids[0] == tokens.think_close and record.forced_mask[0]
        assert record.thinking_tokens == 0 and record.forced_close
        check_budgeted(record, budget, tokens)


def test_two_phase_invariants_and_dropped_eos(vllm_two_phase):
    budget = Budget(24, 12)
    tokens = vllm_two_phase.special_tokens(budget)
    records = vllm_two_phase.generate(random_prompts(32, seed=5), budget, SAMPLED)
    for record in records:
        check_budgeted(record, budget, tokens)
    dropped = [r for r in records if r.eos_in_thinking]
    assert dropped, "no sample put EOS in its thinking: pick other prompts"
    for record in dropped:  # the EOS is gone and </think> was appended right where it was sampled
        assert record.token_ids[record.thinking_tokens] == tokens.think_close


def test_processor_stops_the_request_at_the_solution_budget(vllm_generator):
    """Raw engine output, bypassing build_record: the forced EOS is what ends the request."""
    from vllm import SamplingParams

    from rllm.generation.vllm_logits import request_payload

    budget = Budget(6, 5)
    tokens = vllm_generator.special_tokens(budget)
    params = SamplingParams(
        temperature=0.0, max_tokens=500, ignore_eos=False, extra_args={"e1": request_payload(budget, tokens)}
    )
    outputs = vllm_generator.llm.generate([{"prompt_token_ids": p} for p in _encoded(vllm_generator, 16)], params)
    lengths = set()
    for output in outputs:
        ids = list(output.outputs[0].token_ids)
        close = ids.index(tokens.think_close)
        assert close <= 6 and ids[-1] in tokens.eos and output.outputs[0].finish_reason == "stop"
        assert len(ids) - close - 1 <= budget.solution + 1
        lengths.add(len(ids) - close - 1)
    assert budget.solution + 1 in lengths, "some request should have run into the solution budget"


def test_request_without_token_ids_uses_the_engine_tokenizer(vllm_generator):
    """A bare budget (as a `vllm serve` client would send) is enforced with the engine's token ids."""
    from vllm import SamplingParams

    budget = Budget(3, 4)
    tokens = vllm_generator.special_tokens(budget)
    params = SamplingParams(temperature=0.0, max_tokens=500, extra_args={"e1": budget.to_extra_args()})
    for output in vllm_generator.llm.generate([{"prompt_token_ids": p} for p in _encoded(vllm_generator, 8)], params):
        ids = list(output.outputs[0].token_ids)
        assert tokens.think_close in ids[:4] and len(ids) <= 3 + 1 + 4 + 1


def test_untouched_requests_mixed_with_budgeted_ones(vllm_generator):
    """In one batch, requests without the budget are generated exactly as without the processor."""
    from vllm import SamplingParams

    from rllm.generation.vllm_logits import request_payload

    budget = Budget(2, 2)
    tokens = vllm_generator.special_tokens(budget)
    prompts = [{"prompt_token_ids": p} for p in _encoded(vllm_generator, 8)]
    plain = SamplingParams(temperature=0.0, max_tokens=30, ignore_eos=True)
    budgeted = SamplingParams(temperature=0.0, max_tokens=30, extra_args={"e1": request_payload(budget, tokens)})
    alone = [list(o.outputs[0].token_ids) for o in vllm_generator.llm.generate(prompts, plain)]
    mixed = vllm_generator.llm.generate(prompts + prompts, [plain] * 8 + [budgeted] * 8)
    assert [list(o.outputs[0].token_ids) for o in mixed[:8]] == alone
    assert all(len(o.outputs[0].token_ids) <= 6 for o in mixed[8:])


def _encoded(generator, count: int) -> list[list[int]]:
    from rllm.generation import encode_prompts

    return encode_prompts(generator.tokenizer, random_prompts(count, seed=99))


GREEDY_BUDGETS = [Budget(0, 6), Budget(3, 8), Budget(10, 10), Budget(40, 16), Budget(16, 8, Mode.S1)]


def test_greedy_single_pass_equals_two_phase(vllm_generator, vllm_two_phase):
    prompts = random_prompts(48, seed=6)
    natural = forced = eos_dropped = 0
    for budget in GREEDY_BUDGETS:
        single = vllm_generator.generate(prompts, budget, GREEDY)
        reference = vllm_two_phase.generate(prompts, budget, GREEDY)
        for a, b in zip(single, reference, strict=True):
            assert a.token_ids == b.token_ids, (budget, a.prompt_index)
            assert (a.thinking_tokens, a.solution_tokens, a.solution_truncated) == (
                b.thinking_tokens,
                b.solution_tokens,
                b.solution_truncated,
            )
            # An EOS sampled in thinking: two-phase drops it and forces </think>; the single pass
            # moved EOS's mass onto </think>, which greedy then picks. Same tokens; only two-phase
            # knows that an EOS was involved.
            if b.eos_in_thinking:
                eos_dropped += 1
            else:
                assert a.forced_close == b.forced_close
                forced += b.forced_close
                natural += not b.forced_close
    assert natural and forced and eos_dropped, (natural, forced, eos_dropped)


def test_seeded_samples_do_not_depend_on_the_batch(vllm_generator):
    budget = Budget(16, 8)
    prompts = random_prompts(6, seed=7)
    sampling = SamplingConfig(n=2, temperature=1.0, top_p=1.0, seed=11)
    together = vllm_generator.generate(prompts, budget, sampling)
    alone = vllm_generator.generate(prompts[:1], budget, sampling)
    assert [r.token_ids for r in alone] == [r.token_ids for r in together[:2]]
    other_seed = vllm_generator.generate(prompts[:1], budget, SamplingConfig(n=2, temperature=1.0, top_p=1.0, seed=12))
    assert [r.token_ids for r in other_seed] != [r.token_ids for r in alone]
    assert together[0].token_ids != together[1].token_ids, "the n samples of a prompt must differ"


@pytest.mark.parametrize("two_phase", [False, True])
def test_logprobs(vllm_generator, two_phase):
    generator = vllm_generator.sharing_engine(two_phase=two_phase)
    budget = Budget(8, 8)
    sampling = SamplingConfig(n=2, temperature=1.0, top_p=1.0, seed=3, logprobs=True)
    for record in generator.generate(random_prompts(8, seed=8), budget, sampling):
        assert record.logprobs is not None and len(record.logprobs) == len(record.token_ids)
        # vLLM reports the raw model logprob, also of a forced token; two-phase never scores those
        # (nor the </think> it appends after dropping an EOS, which build_record marks as sampled).
        appended = {i for i, forced in enumerate(record.forced_mask) if forced}
        if record.eos_in_thinking:
            appended.add(record.thinking_tokens)
        for i, value in enumerate(record.logprobs):
            assert math.isnan(value) if two_phase and i in appended else value <= 0.0


def test_iter_generate_streams_and_aborts_when_stopped_early(vllm_generator):
    stream = vllm_generator.iter_generate(random_prompts(16, seed=9), Budget(30, 30), SamplingConfig(n=4))
    first = next(stream)
    assert isinstance(first, SampleRecord)
    stream.close()
    assert not vllm_generator.engine.has_unfinished_requests()


def test_bad_input(vllm_generator, tiny_model_dir, tmp_path):
    with pytest.raises(BudgetError, match="empty"):
        vllm_generator.generate([], Budget(4, 4), GREEDY)
    with pytest.raises(BudgetError, match="max_model_len"):
        vllm_generator.generate(["x " * 10], Budget(ENGINE_MAX_MODEL_LEN, 8), GREEDY)
    from vllm import SamplingParams
    from vllm.exceptions import VLLMValidationError

    with pytest.raises(VLLMValidationError, match="'mode'"):
        vllm_generator.llm.generate([{"prompt_token_ids": [1, 2]}], SamplingParams(extra_args={"e1": {"t": 3}}))
    assert not vllm_generator.engine.has_unfinished_requests()


def test_tokenizer_without_think_close_fails_before_engine_start(tmp_path):
    from rllm.generation.vllm import VLLMGenerator
    from rllm.testing.tiny_model import build_tokenizer

    build_tokenizer(think_tokens=False).save_pretrained(tmp_path)
    with pytest.raises(BudgetError, match="</think>"):
        VLLMGenerator(tmp_path)


def _expected_row(raw, output, budget, tokens, temperature):
    """What the processor must make of one row: replay the rule over the row's real output ids."""
    import torch

    from rllm.budget import BudgetState

    state = BudgetState(budget, tokens)
    for token in output:
        if token < 0:
            break
        state.forced_token()
        state.advance(token)
    row = raw.clone()
    forced = state.forced_token()
    if forced is not None:
        row[:] = -float("inf")
        row[forced] = 0.0
    elif state.redirect_eos():
        pair = torch.stack([raw[tokens.think_close], raw[tokens.eos[0]]])
        row[tokens.think_close] = pair.max() if temperature == 0 else temperature * torch.logsumexp(pair / temperature, 0)
        row[tokens.eos[0]] = -float("inf")
    return row


def test_processor_bookkeeping_with_vllm_batch_updates(tiny_model_dir, tiny_tokenizer):
    """Adds, removals, swaps, one-way moves, re-adds with output so far, placeholders and discarded
    tokens, through vLLM's own BatchUpdate types, checked row by row against a replay of the rule."""
    import torch
    from vllm import SamplingParams
    from vllm.engine.arg_utils import EngineArgs
    from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality

    from rllm.generation.vllm_logits import E1LogitsProcessor, request_payload

    config = EngineArgs(model=str(tiny_model_dir), max_model_len=256, enforce_eager=True).create_engine_config()
    processor = E1LogitsProcessor(config, torch.device("cpu"), False)
    tokens = SpecialTokens.from_tokenizer(tiny_tokenizer)
    budget_a, budget_c = Budget(2, 2), Budget(0, 3, Mode.S1)
    a = (SamplingParams(temperature=0.7, extra_args={"e1": request_payload(budget_a, tokens)}), [], budget_a, 0.7)
    b = (SamplingParams(temperature=1.0), [], None, 1.0)
    c = (SamplingParams(temperature=0.0, extra_args={"e1": budget_c.to_extra_args()}), [], budget_c, 0.0)
    rows = [a, b, c]
    vocab = 600

    def check() -> None:
        raw = torch.randn(len(rows), vocab)
        out = processor.apply(raw.clone())
        for i, (_, output, budget, temperature) in enumerate(rows):
            want = raw[i] if budget is None else _expected_row(raw[i], output, budget, tokens, temperature)
            assert torch.allclose(out[i], want, equal_nan=True), (i, output)

    def update(removed=(), added=(), moved=()) -> None:
        processor.update_state(BatchUpdate(len(rows), removed, added, moved))

    update(added=[(i, params, None, output) for i, (params, output, _, _) in enumerate(rows)])
    check()  # a: EOS redirected at T=0.7; b: untouched; c: t=0, </think> forced at once
    c[1].append(tokens.think_close)
    a[1].append(5)
    check()  # c: the s1 cue is forced next
    a[1].append(-1)  # async-scheduling placeholder: not consumed
    check()
    a[1][-1] = 7  # the runner fills in the real id before sampling: a reaches t=2, </think> forced
    check()
    rows[0], rows[2] = rows[2], rows[0]
    update(moved=[(0, 2, MoveDirectionality.SWAP)])
    check()
    removed_b = rows.pop(1)
    update(removed=[1], moved=[(2, 1, MoveDirectionality.UNIDIRECTIONAL)])
    check()
    rows[0][1].extend(tokens.cue[:2])
    rows[1][1].extend([tokens.think_close, 11, 12])
    check()
    # a leaves the batch (unscheduled) and comes back with its output so far: replayed once.
    update(removed=[1])
    rows.append(rows.pop(1))
    rows.insert(1, removed_b)
    update(added=[(1, removed_b[0], None, removed_b[1]), (2, rows[2][0], None, rows[2][1])])
    check()
    del rows[2][1][-2:]  # the runner discarded output tokens: the state is rebuilt
    check()
    assert processor.requests[2].consumed == len(rows[2][1])
