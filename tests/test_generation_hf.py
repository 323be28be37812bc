"""Budgeted generation with the transformers backend on a real tiny model (no mocks)."""

from __future__ import annotations

import random

import pytest

from rllm.budget import Budget, BudgetError, Mode
from rllm.generation import SamplingConfig
from rllm.generation.hf import HFGenerator


def random_prompts(tokenizer, count: int, seed: int = 0) -> list[str]:
    """Templated prompts that end in random text, so greedy continuations differ between prompts."""
    rng = random.Random(seed)
    vocab = [i for i in range(3, 500)]
    prompts = []
    for _ in range(count):
        body = tokenizer.decode([rng.choice(vocab) for _ in range(rng.randint(3, 12))])
        tail = tokenizer.decode([rng.choice(vocab) for _ in range(rng.randint(1, 4))])
        templated = tokenizer.apply_chat_template([{"role": "user", "content": body}], tokenize=False, add_generation_prompt=True)
        prompts.append(templated + tail)
    return prompts


@pytest.fixture(scope="module")
def prompts(tiny_tokenizer):
    return random_prompts(tiny_tokenizer, 32)


@pytest.fixture(scope="module")
def two_phase(hf_generator):
    return HFGenerator(hf_generator.model, hf_generator.tokenizer, batch_size=64, two_phase=True)


SAMPLED = SamplingConfig(n=4, temperature=1.0, top_p=1.0, seed=0)


@pytest.mark.parametrize("budget_text", ["0+8", "6+8", "24+12"])
def test_e1_invariants_on_sampled_responses(hf_generator, prompts, budget_text):
    budget = Budget.parse(budget_text)
    records = hf_generator.generate(prompts, budget, SAMPLED)
    tokens = hf_generator.tokens
    assert len(records) == len(prompts) * SAMPLED.n
    assert [(r.prompt_index, r.sample_index) for r in records] == [(p, s) for p in range(len(prompts)) for s in range(4)]
    for r in records:
        assert r.token_ids.count(tokens.think_close) >= 1
        close_at = r.token_ids.index(tokens.think_close)
        assert r.thinking_tokens == close_at <= budget.thinking
        assert r.forced_close == (close_at == budget.thinking and r.forced_mask[close_at])
        assert r.solution_tokens <= budget.solution
        assert not any(t in tokens.eos for t in r.token_ids[:close_at]), "EOS inside thinking"
        assert r.solution_truncated == (r.finish_reason == "length")
        assert sum(r.forced_mask) == int(r.forced_close)
        # exactly one </think> that the budget accounts for: anything after it is solution
        assert r.total_tokens == r.thinking_tokens + 1 + r.solution_tokens
    if budget.thinking == 0:
        assert all(r.forced_close and r.thinking_tokens == 0 for r in records)
    else:
        # both outcomes occur, so the checks above covered natural closes and forced closes
        assert any(r.forced_close for r in records) and any(not r.forced_close for r in records)


def test_none_mode_never_forces_and_respects_max_length(hf_generator, prompts):
    records = hf_generator.generate(prompts, Budget.parse("40", "none"), SAMPLED)
    assert all(not r.forced_close and not any(r.forced_mask) for r in records)
    assert all(r.total_tokens <= 40 for r in records)
    assert any(r.finish_reason == "stop" for r in records)


def test_truncate_never_exceeds_total(hf_generator, prompts):
    records = hf_generator.generate(prompts, Budget.parse("12", "truncate"), SAMPLED)
    assert all(r.total_tokens <= 12 and not any(r.forced_mask) for r in records)
    assert all(r.solution_truncated == (r.finish_reason == "length") for r in records)


def test_s1_appends_cue_after_forced_close(hf_generator, prompts):
    budget = Budget.parse("6+8", "s1")
    tokens = hf_generator.tokens
    records = hf_generator.generate(prompts[:8], budget, SAMPLED)
    for r in records:
        close_at = r.token_ids.index(tokens.think_close)
        if r.forced_close:
            cue = r.token_ids[close_at + 1 : close_at + 1 + len(tokens.cue)]
            assert tuple(cue) == tokens.cue and "**Final Answer**" in r.text
        assert r.solution_tokens <= budget.solution


def test_greedy_single_pass_equals_two_phase(hf_generator, two_phase, prompts):
    greedy = SamplingConfig(temperature=0)
    seen = {"natural": 0, "forced": 0, "eos_in_thinking": 0}
    for budget_text in ["0+6", "3+6", "10+8", "30+10"]:
        budget = Budget.parse(budget_text)
        single = hf_generator.generate(prompts, budget, greedy)
        reference = two_phase.generate(prompts, budget, greedy)
        for a, b in zip(single, reference, strict=True):
            assert a.token_ids == b.token_ids, f"budget {budget_text} prompt {a.prompt_index}"
            assert (a.thinking_tokens, a.solution_tokens, a.solution_truncated) == (
                b.thinking_tokens, b.solution_tokens, b.solution_truncated)
            seen["forced"] += a.forced_close
            seen["natural"] += not a.forced_close and not b.eos_in_thinking
            seen["eos_in_thinking"] += b.eos_in_thinking
    assert all(seen.values()), seen


def test_greedy_s1_single_pass_equals_two_phase(hf_generator, two_phase, prompts):
    budget, greedy = Budget.parse("4+6", "s1"), SamplingConfig(temperature=0)
    single = hf_generator.generate(prompts[:12], budget, greedy)
    reference = two_phase.generate(prompts[:12], budget, greedy)
    assert [r.token_ids for r in single] == [r.token_ids for r in reference]


def test_seeded_sampling_is_reproducible(hf_generator, prompts):
    budget = Budget.parse("8+8")
    first = hf_generator.generate(prompts[:4], budget, SAMPLED)
    second = hf_generator.generate(prompts[:4], budget, SAMPLED)
    assert [r.token_ids for r in first] == [r.token_ids for r in second]


def test_chat_messages_are_templated_once(hf_generator):
    records = hf_generator.generate([[{"role": "user", "content": "What is 2+3?"}]], Budget.parse("4+4"), SamplingConfig(temperature=0))
    assert records[0].token_ids.count(hf_generator.tokens.think_close) >= 1
    # the template's own <think> is in the prompt; the response never opens a second one by force
    assert not any(records[0].forced_mask[i] for i in range(records[0].thinking_tokens))


def test_logprobs_are_raw_model_logprobs(hf_generator, prompts):
    records = hf_generator.generate(prompts[:2], Budget.parse("3+4"), SamplingConfig(temperature=0, logprobs=True))
    for r in records:
        assert len(r.logprobs) == r.total_tokens
        assert all(lp <= 0 for lp in r.logprobs)


def test_iter_generate_streams_batches(tiny_model_dir, prompts):
    generator = HFGenerator.from_pretrained(tiny_model_dir, batch_size=4)
    stream = generator.iter_generate(prompts[:8], Budget.parse("4+4"), SamplingConfig(n=2, temperature=0))
    first = [next(stream) for _ in range(8)]
    assert {r.prompt_index for r in first} == {0, 1, 2, 3}
    assert len(list(stream)) == 8


def test_bad_inputs_are_clear_errors(hf_generator):
    with pytest.raises(BudgetError, match="prompt list is empty"):
        hf_generator.generate([], Budget.parse("4+4"), SamplingConfig())
    with pytest.raises(BudgetError, match="n must be"):
        SamplingConfig(n=0)
    with pytest.raises(BudgetError, match="solution budget"):
        Budget(4, 0, Mode.E1)
