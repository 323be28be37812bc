"""The original's user prompts, character for character (no system prompt is used anywhere).

Math problems get an instruction suffix; LiveCodeBench questions get LiveCodeBench's own
instruction wrapper (with or without starter code); every other code source (Codeforces,
HumanEval+, TACO, PrimeIntellect, ...) is used as is, because its ``problem`` field is already a
complete prompt.
"""

from __future__ import annotations

MATH_INSTRUCTION = "Let's think step by step and output the final answer within \\boxed{}."

LCB_SYSTEM_MESSAGE = (
    "You are an expert Python programmer. You will be given a question (problem specification) "
    "and will generate a correct Python program that matches the specification and passes all tests."
)
LCB_WITH_STARTER_CODE = (
    "You will use the following starter code to write the solution to the problem and enclose "
    "your code within delimiters."
)
LCB_WITHOUT_STARTER_CODE = (
    "Read the inputs from stdin solve the problem and write the answer to stdout (do not directly "
    "test on the sample inputs). Enclose your code within delimiters as follows. Ensure that when "
    "the python program runs, it reads the inputs, runs the algorithm and writes output to STDOUT."
)
LCB_ANSWER_LINE = "### Answer: (use the provided format with backticks)\n\n"


def math_prompt(problem: str) -> str:
    """``"<problem> Let's think step by step and output the final answer within \\boxed{}."``"""
    return f"{problem} {MATH_INSTRUCTION}"


def livecodebench_prompt(question: str, starter_code: str | None) -> str:
    """LiveCodeBench's generation prompt; an empty or missing starter code means stdin/stdout."""
    prompt = f"{LCB_SYSTEM_MESSAGE}\n\n{question}"
    if starter_code:
        prompt += f"### Format: {LCB_WITH_STARTER_CODE}\n```python\n{starter_code}\n```\n\n"
    else:
        prompt += f"### Format: {LCB_WITHOUT_STARTER_CODE}\n```python\n# YOUR CODE HERE\n```\n\n"
    return prompt + LCB_ANSWER_LINE


def raw_prompt(problem: str) -> str:
    """The statement as stored (Codeforces, HumanEval+ and the training sets other than LCB)."""
    return problem
