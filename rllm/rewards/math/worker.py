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


def main() -> None:
    # A runaway simplification should fail with MemoryError, not take the machine down.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    from rllm.rewards.math.symbolic import OPERATIONS

    # The first parse builds the LaTeX grammar's tables; do it before declaring readiness so the
    # first real check is not charged for it.
    OPERATIONS["expressions_equal"]("\\sum_{k=1}^{n}x_k", "\\frac{1}{2}")
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
