"""The prompt builders reproduce the original's prompts character for character.

Expected strings are written out in full here (from DESIGN.md's protocol constants), not built from
the module's constants, so a change to either side shows up.
"""

from rllm.data.prompts import livecodebench_prompt, math_prompt, raw_prompt

LCB_HEAD = (
    "You are an expert Python programmer. You will be given a question (problem specification) and will "
    "generate a correct Python program that matches the specification and passes all tests.\n\n"
)


def test_math_prompt_appends_instruction_after_one_space():
    assert math_prompt("Find $x$.") == (
        "Find $x$. Let's think step by step and output the final answer within \\boxed{}."
    )


def test_math_prompt_keeps_problem_whitespace():
    assert math_prompt("Find $x$.\n") == (
        "Find $x$.\n Let's think step by step and output the final answer within \\boxed{}."
    )


def test_livecodebench_prompt_with_starter_code():
    starter = "class Solution:\n    def f(self, x: int) -> int:\n        "
    assert livecodebench_prompt("Question text.", starter) == (
        LCB_HEAD
        + "Question text."
        + "### Format: You will use the following starter code to write the solution to the problem and "
        "enclose your code within delimiters.\n```python\n"
        + starter
        + "\n```\n\n### Answer: (use the provided format with backticks)\n\n"
    )


def test_livecodebench_prompt_without_starter_code():
    expected = (
        LCB_HEAD
        + "Question text."
        + "### Format: Read the inputs from stdin solve the problem and write the answer to stdout (do not "
        "directly test on the sample inputs). Enclose your code within delimiters as follows. Ensure that "
        "when the python program runs, it reads the inputs, runs the algorithm and writes output to STDOUT."
        "\n```python\n# YOUR CODE HERE\n```\n\n### Answer: (use the provided format with backticks)\n\n"
    )
    assert livecodebench_prompt("Question text.", None) == expected
    # An empty starter code is no starter code, as in the original.
    assert livecodebench_prompt("Question text.", "") == expected


def test_raw_prompt_is_the_statement_unchanged():
    statement = "\nYou are given...\n\nTime Limit: 1000 ms\nMemory Limit: 256 MB\n"
    assert raw_prompt(statement) is statement
