"""``python -m rllm.codeforces {rate,prefetch} ...``: the same commands as the two scripts."""

from __future__ import annotations

import sys

from rllm.codeforces.cli import prefetch_main, rate_main

_COMMANDS = {"rate": rate_main, "prefetch": prefetch_main}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in _COMMANDS:
        print(f"usage: python -m rllm.codeforces {{{','.join(_COMMANDS)}}} [-h] ...", file=sys.stderr)
        return 2
    return _COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
