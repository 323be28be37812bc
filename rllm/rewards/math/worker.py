"""Entry point of the symbolic worker process (``python -m rllm.rewards.math.worker``).

Protocol, one JSON object per line: the worker prints ``{"ready": true}`` once sympy is imported,
then answers each request ``{"op": name, "args": [...]}`` from stdin with ``{"result": value}``
(``null`` when the operation raised). It exits when stdin closes, so it never outlives its parent.
"""

from __future__ import annotations

import json
import resource
import sys

MEMORY_LIMIT_BYTES = 4 * 1024**3
_WARM_UP = (
    ("\\sum_{k=0}^{n-1}F_kF_{n-k-1}", "\\frac{\\sqrt{2}}{2}+x^{2}"),
    ("\\int_0^1x^2dx", "\\ln(2)\\cdot\\sin\\theta"),
    ("f(x)=\\binom{n}{2}", "g(y)=\\prod_{i=1}^{n}a_i"),
    ("x\\in[-\\frac{3}{2},-1]\\cup(1,\\infty)", "1\\le|x|\\le2"),
)


def main() -> None:
    # A runaway simplification should fail with MemoryError, not take the machine down.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    from rllm.rewards.math.symbolic import OPERATIONS

    # The LaTeX parser builds its prediction tables lazily, construct by construct (the first sum
    # costs ~0.5 s); build them before declaring readiness so real checks are not charged for it.
    for a, b in _WARM_UP:
        OPERATIONS["sets_equal" if "\\le" in b else "expressions_equal"](a, b)
    out = sys.stdout
    out.write('{"ready": true}\n')
    out.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
            result = OPERATIONS[request["op"]](*request["args"])
        except Exception:  # any failure of a check is "undecided", never a crash
            result = None
        out.write(json.dumps({"result": result}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
