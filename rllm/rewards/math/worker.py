"""Entry point of the symbolic worker process (``python -m rllm.rewards.math.worker``).

Protocol, one JSON object per line: the worker prints ``{"ready": true}`` once sympy is imported,
then answers each request ``{"op": name, "args": [...]}`` from stdin with ``{"result": value}``
(``null`` when the operation raised). It exits when stdin closes (its caller is gone); a worker
orphaned in the middle of a check ends after ``ORPHAN_LIMIT_SECONDS``. Memory is capped by rlimit.
"""

from __future__ import annotations

import json
import resource
import signal
import sys

MEMORY_LIMIT_BYTES = 4 * 1024**3
ORPHAN_LIMIT_SECONDS = 300
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
        # The caller kills a worker that misses its deadline; this alarm only matters if the caller
        # died mid-check, so an orphaned worker cannot compute forever (SIGALRM ends the process).
        signal.alarm(ORPHAN_LIMIT_SECONDS)
        try:
            request = json.loads(line)
            result = OPERATIONS[request["op"]](*request["args"])
        except Exception:  # any failure of a check is "undecided", never a crash
            result = None
        signal.alarm(0)
        out.write(json.dumps({"result": result}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
