"""Build a real, randomly initialised Qwen2 causal LM and a real fast tokenizer, offline.

The tokenizer is a byte-level BPE trained on a small built-in corpus, with ``<think>``,
``</think>``, ``<|im_start|>``, ``<|im_end|>`` and the EOS ``<|endoftext|>`` as single tokens, and
a chat template whose generation prompt ends in ``<think>\\n`` (as DeepSeek-R1-Distill models do).
``<think>``/``</think>`` are added as *non-special* tokens, as in R1-distill tokenizers, so they
survive ``skip_special_tokens=True`` decoding. The model loads in transformers and in vLLM
(head_dim 32 for ``tiny``, 64 for ``small``; both in vLLM's CPU attention's supported set).

Usage: ``python -m rllm.testing.tiny_model --out DIR [--size tiny|small] [--seed 0]``
"""

from __future__ import annotations

import argparse
import string
from pathlib import Path

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
EOS = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}"
)

SIZES = {
    # hidden_size / num_attention_heads = head_dim
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2,
                 num_key_value_heads=1),
    "small": dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=2),
}


def _corpus() -> list[str]:
    """Text the BPE is trained on: digits, arithmetic, LaTeX answer markup and some prose."""
    lines = [
        "Let's think step by step and output the final answer within \\boxed{}.",
        "The answer is \\boxed{42}. So the final answer is \\boxed{\\frac{1}{2}}.",
        "First, we compute 12 + 30 = 42. Then 42 * 2 = 84. Therefore x = 84.",
        "def solve():\n    n = int(input())\n    print(n * 2)\n",
        "```python\nprint('hello world')\n```",
        string.ascii_letters + string.digits + string.punctuation,
    ]
    lines += [f"{a} + {b} = {a + b}" for a in range(0, 60, 7) for b in range(0, 60, 11)]
    return lines * 4


def build_tokenizer(vocab_size: int = 1024, think_tokens: bool = True):
    """A real ``PreTrainedTokenizerFast`` with the E1 control tokens as single tokens.

    ``think_tokens=False`` leaves ``<think>``/``</think>`` out, as in a non-reasoning tokenizer.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS, IM_START, IM_END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(_corpus(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        eos_token=EOS,
        pad_token=EOS,
        bos_token=None,
        unk_token=None,
    )
    if think_tokens:
        tokenizer.add_tokens([THINK_OPEN, THINK_CLOSE], special_tokens=False)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_model(out: str | Path, size: str = "tiny", seed: int = 0, noisy: bool = True) -> Path:
    """Write a random Qwen2 model, its tokenizer and generation config to ``out``; return the path.

    ``noisy=True`` (for tests) gives a varied output distribution that closes ``</think>`` and
    emits EOS now and then; ``noisy=False`` keeps transformers' default init, best to train from.
    """
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}: choose one of {sorted(SIZES)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer()
    # Round the vocabulary up so the embedding shape is friendly to kernels; extra rows are unused.
    vocab_size = (len(tokenizer) + 63) // 64 * 64
    config = Qwen2Config(
        vocab_size=vocab_size,
        max_position_embeddings=4096,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="float32",
        **SIZES[size],
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    # A random tiny model with the default init decodes near-uniform noise. This init gives it
    # a varied, context-dependent next-token distribution in which </think> and EOS are sampled
    # now and then (at temperature 1, roughly half the samples close thinking within 60 tokens),
    # so natural closes, forced closes and EOS-in-thinking all occur in tests.
    think_close = tokenizer.convert_tokens_to_ids(THINK_CLOSE)
    with torch.no_grad():
        if noisy:
            model.model.embed_tokens.weight.normal_(0.0, 1.0)
            model.lm_head.weight.normal_(0.0, 0.2)
            for token_id in (think_close, tokenizer.eos_token_id):
                model.lm_head.weight[token_id] *= 1.5
        model.lm_head.weight[len(tokenizer):] = 0.0  # padding rows of the rounded-up vocabulary
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    GenerationConfig(eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id).save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory to write the model and tokenizer to")
    parser.add_argument("--size", default="tiny", choices=sorted(SIZES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init", choices=["noisy", "standard"], default="noisy",
                        help="noisy: varied outputs for testing budgets; standard: transformers' init, to train from")
    args = parser.parse_args(argv)
    path = build_tiny_model(args.out, args.size, args.seed, noisy=args.init == "noisy")
    print(f"wrote {args.size} Qwen2 model and tokenizer to {path}")


if __name__ == "__main__":
    main()
