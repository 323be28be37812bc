"""Math answer grading: extract the last boxed answer and compare it with the reference.

``grade_math(solution_str, ground_truth, **kwargs)`` is what ``rllm.rewards.compute_score`` calls
for every non-code data source; ``answers_equal(pred, gold)`` compares two bare answers. Modules:
:mod:`.extract` (answer extraction), :mod:`.normalize` (canonical strings), :mod:`.structure`
(lists, tuples, intervals, matrices, relations), :mod:`.inequalities` (inequalities as intervals),
:mod:`.expr` (fast in-process evaluation), :mod:`.equivalence` (the rules), :mod:`.symbolic` and
:mod:`.worker` (sympy, out of process), :mod:`.timeout` (the process-safe time bound) and
:mod:`.grader` (``grade_math``).
"""

from rllm.rewards.math.equivalence import answers_equal
from rllm.rewards.math.grader import grade_math, reference_answers, warm_up

__all__ = ["answers_equal", "grade_math", "reference_answers", "warm_up"]
