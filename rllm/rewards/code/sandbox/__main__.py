"""``python -m rllm.rewards.code.sandbox``: start one fork server and print the isolation obtained.

Exit status 0 when every layer is active (network namespace, private /tmp, private uid), 1 when
the sandbox runs degraded (the reasons are printed), 2 when it cannot start at all.
"""

from __future__ import annotations

import json
import sys

from .config import SandboxConfig
from .server import ForkServer, SandboxError


def main() -> int:
    server = ForkServer(SandboxConfig(workers=1))
    try:
        result = server.run(
            {"mode": "script", "code": "import sys; print(sys.version)", "time_limit": 10, "nonce": ""}
        )
    except SandboxError as exc:
        print(f"sandbox unavailable: {exc}", file=sys.stderr)
        return 2
    finally:
        server.close()
    iso = server.isolation
    print(
        json.dumps({**iso, "python": result.stdout.strip(), "modules": list(server.config.modules)}, indent=2)
    )
    separated = iso.get("uid") is not None or iso.get("pid_namespace")
    complete = iso.get("network_namespace") and iso.get("private_tmp") and separated
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
