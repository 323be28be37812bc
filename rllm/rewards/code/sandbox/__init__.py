"""Process sandbox for untrusted programs: a pool of warm fork servers (see ``zygote.py``)."""

from .config import DEFAULT_MODULES, DEFAULT_PRELOAD, SandboxConfig
from .pool import SandboxPool, close_pools, get_pool
from .server import ForkServer, RunResult, SandboxError

__all__ = [
    "DEFAULT_MODULES",
    "DEFAULT_PRELOAD",
    "ForkServer",
    "RunResult",
    "SandboxConfig",
    "SandboxError",
    "SandboxPool",
    "close_pools",
    "get_pool",
]
