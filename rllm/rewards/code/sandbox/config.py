"""Sandbox configuration: resource limits and the importable third-party modules."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

#: Distributions a sandboxed program may import (with their dependencies), by default:
#: ``sortedcontainers`` (LeetCode solutions use it), ``numpy`` (HumanEval+ checks use it) and
#: ``pytest`` (KodCode tests are pytest modules). Override with ``SandboxConfig(modules=...)`` or the
#: ``RLLM_SANDBOX_MODULES`` environment variable (comma-separated distribution names).
DEFAULT_MODULES = ("sortedcontainers", "numpy", "pytest")
#: Modules imported once in the fork server, so programs get them for free.
DEFAULT_PRELOAD = ("sortedcontainers", "numpy")


def _env_modules() -> tuple[str, ...]:
    raw = os.environ.get("RLLM_SANDBOX_MODULES")
    if raw is None:
        return DEFAULT_MODULES
    return tuple(name.strip() for name in raw.split(",") if name.strip())


@dataclass(frozen=True)
class SandboxConfig:
    """Limits applied to every sandboxed program (time limits are per job, set by the grader).

    memory_mb: address-space limit (RLIMIT_AS), MiB.
    max_processes: processes + threads of the program's private uid (RLIMIT_NPROC).
    output_limit_mb: largest file or output stream the program may write (RLIMIT_FSIZE), MiB.
    max_open_files: RLIMIT_NOFILE.
    tmpfs_mb: size of each private tmpfs (/tmp, /var/tmp, /dev/shm, /run/lock), MiB.
    hidden_paths: directories programs cannot see (an empty read-only tmpfs covers them; the
        interpreter and the allowed modules stay visible even when they live inside one).
    modules: importable third-party distributions (their dependencies are added automatically).
    preload: modules imported once in the fork server (must be importable).
    workers: fork servers per grading process (parallel programs); None = number of CPUs.
    uid_base, uid_count: range of private uids leased to fork servers when running as root.
    """

    memory_mb: int = 4096
    max_processes: int = 32
    output_limit_mb: int = 64
    max_open_files: int = 256
    tmpfs_mb: int = 512
    hidden_paths: tuple[str, ...] = ("/root", "/home")
    modules: tuple[str, ...] = field(default_factory=_env_modules)
    preload: tuple[str, ...] = DEFAULT_PRELOAD
    workers: int | None = None
    uid_base: int = 1_800_000_000
    uid_count: int = 4096

    def with_(self, **changes) -> SandboxConfig:
        return replace(self, **changes)

    @property
    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1
